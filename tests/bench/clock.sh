#!/usr/bin/env bash
# The price of the right answer: host wall time of the same fixed work under the default
# clock (guest time = instructions, -icount shift=1, what scripts/RUN, make qemu and
# scripts/profile boot) and under plain TCG (ICOUNT=0), -smp 2 as RUN boots on this host:
# `run matrix -c all -n UNITS` (both cores busy), then `run split -c 1 -n ROUNDS_SPLIT`
# (one busy, one idle), each unprofiled and profiled the README's way (`oprofile start`,
# the default NMI source at 1 kHz, a reader streaming to /dev/null). Boots alternate
# between the clocks; medians of ROUNDS. Wall time is what a user waits, from sending the
# command to its prompt, measured on the host.
set -u
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-3}
UNITS=${UNITS:-1000}
SPLIT=${SPLIT:-1000000}
work=build/bench/clock
mkdir -p "$work"
log=$work/runs.log
: > "$log"

# measure CLOCK(icount|plain) ROUND: one boot, each load unprofiled then profiled
measure() {
	local ic=1
	[ "$1" = plain ] && ic=0
	ICOUNT=$ic NCPU=2 MEM=512M ACCEL=tcg UNITS=$UNITS SPLIT=$SPLIT L=$1 R=$2 expect -c '
		set timeout 600
		log_user 0
		set prompt "kern> "
		spawn -noecho scripts/qemu
		expect -ex $prompt
		proc timed {line} {
			global prompt
			set t0 [clock milliseconds]
			send -- "$line\r"
			expect -re "\r\n(.*)$prompt"
			return [expr {[clock milliseconds] - $t0}]
		}
		foreach {name line} [list matrix "run matrix -c all -n $env(UNITS)" \
					  split "run split -c 1 -n $env(SPLIT)"] {
			puts "RES $env(L) $name off $env(R) [timed $line]"
			timed "cat /dev/oprofile > /dev/null &"
			timed "oprofile start"
			puts "RES $env(L) $name on $env(R) [timed $line]"
			timed "oprofile stop"
			timed "sleep 0.2"
		}
		send "poweroff\r"
		expect eof
	' 2>/dev/null | tr -d '\r' | grep '^RES' >> "$log"
}

for ((r = 1; r <= ROUNDS; r++)); do
	if ((r % 2)); then measure icount $r; measure plain $r; else measure plain $r; measure icount $r; fi
done
med() {	# med CLOCK LOAD PROF: the median wall time in s
	awk -v c=$1 -v l=$2 -v p=$3 '$2 == c && $3 == l && $4 == p {print $6}' "$log" | sort -n |
		awk '{v[NR] = $1} END {if (NR) printf "%.2f", v[int((NR + 1) / 2)] / 1000; else printf "-"}'
}
echo "## The price of the exact clock: wall time of fixed work (-smp 2)"
echo
echo "Host seconds from sending the command to its prompt, median of $ROUNDS boots per clock,"
echo "the clocks' boots alternating. Default: -icount shift=1 (guest time = instructions, what"
echo "scripts/RUN, make qemu and scripts/profile boot); plain TCG: ICOUNT=0. Profiled: the"
echo "README's session (\`oprofile start\`: NMI, 1 kHz, depth 16), a reader streaming to"
echo "/dev/null."
echo
echo "| load | clock | unprofiled (s) | profiled (s) | default / plain, profiled |"
echo "|---|---|---|---|---|"
for l in matrix split; do
	case $l in
	matrix) what="run matrix -c all -n $UNITS (2 cores busy)" ;;
	split) what="run split -c 1 -n $SPLIT (1 core busy)" ;;
	esac
	ratio=$(awk -v a="$(med icount $l on)" -v b="$(med plain $l on)" 'BEGIN {
		if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }')
	echo "| $what | default (instructions) | $(med icount $l off) | $(med icount $l on) | $ratio |"
	echo "| | plain TCG (ICOUNT=0) | $(med plain $l off) | $(med plain $l on) | |"
done
