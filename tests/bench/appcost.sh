#!/usr/bin/env bash
# What a sample costs in app code against kernel code: the kernel's `run spin -n UNITS` and
# the same loop as an app (tests/apps/spinapp, linked in with make APPS=), each without
# profiling and with NMI sampling at 10 kHz (depth 16, a reader streaming to /dev/null), on
# one core under -icount shift=0 (one instruction a nanosecond: exact, repeatable times).
# A sample's cost is the run's extra time over the samples taken, in instructions. The app
# runs on its own stack with SSE in use; the sampling path saves no FPU state, so the two
# should match. ROUNDS (default 3) interleaved rounds; medians.
set -u
cd "$(dirname "$0")/../.."
B=build/bench-apps
ROUNDS=${ROUNDS:-3}
UNITS=${UNITS:-3000}
make -s -j2 B=$B APPS=tests/apps/spinapp $B/kern.iso >&2 || exit 1
log=build/bench/appcost.log
mkdir -p build/bench
ISO=$B/kern.iso NCPU=1 MEM=512M ACCEL=tcg ROUNDS=$ROUNDS UNITS=$UNITS expect -c '
	source tests/lib/kern.tcl
	log_user 0
	set timeout 600
	boot -smp 1 -icount shift=0,align=off,sleep=off
	set n $env(UNITS)
	for {set r 1} {$r <= $env(ROUNDS)} {incr r} {
		foreach c {off on} {
			foreach code {kernel app} {
				if {$c eq "on"} {
					cmd "cat /dev/oprofile > /dev/null &"
					cmd "oprofile start -m nmi -f 10000 -d 16"
				}
				if {$code eq "kernel"} {
					set out [cmd "run spin -n [expr {$n * 10000}]" 600]	;# spin counts iterations
					regexp {\(\d+ in (\d+) us\)} $out -> us
				} else {
					set out [cmd "run spinapp -- $n" 600]
					regexp {status 0 in (\d+)\.(\d+) s} $out -> s frac
					set us [expr {$s * 1000000 + [scan $frac %d]}]
				}
				set taken 0
				if {$c eq "on"} {
					cmd "oprofile stop" 120
					for {set i 0} {[regexp { cat\M} [cmd "ps"]]} {incr i} { cmd "sleep 0.2" }
					regexp -line {^cpu0\.taken (\d+)$} [cmd "cat /dev/oprofilestat"] -> taken
				}
				puts "RES $code $c $r $us $taken"
			}
		}
	}
	poweroff
' > "$log" 2>&1 || { echo "appcost: the boot failed; see $log" >&2; exit 1; }

. tests/lib/bench.sh	# median
echo "## Sampling app code against kernel code (one core, -icount shift=0, NMI at 10 kHz, depth 16)"
echo
echo "The same loop as the kernel's spin workload and as an app (tests/apps/spinapp), $UNITS units;"
echo "cost of a sample = (time with sampling - time without) / samples taken, in instructions"
echo "(1 ns each). Medians of $ROUNDS interleaved rounds."
echo
echo "| code sampled | run without (us) | run with (us) | samples | instructions per sample | vs kernel | target |"
echo "|---|---:|---:|---:|---:|---:|---|"
for code in kernel app; do
	off=$(awk -v c=$code '$1 == "RES" && $2 == c && $3 == "off" {print $5}' "$log" | median)
	on=$(awk -v c=$code '$1 == "RES" && $2 == c && $3 == "on" {print $5}' "$log" | median)
	per=$(awk -v c=$code '$1 == "RES" && $2 == c && $3 == "on" {print $5, $6}' "$log" |
		while read -r us taken; do echo "$us $taken"; done |
		awk -v off="$off" '{printf "%.0f\n", ($1 - off) * 1000 / $2}' | median)
	taken=$(awk -v c=$code '$1 == "RES" && $2 == c && $3 == "on" {print $6}' "$log" | median)
	[ "$code" = kernel ] && kper=$per
	ratio=$(awk -v a="$per" -v k="$kper" 'BEGIN {printf "%.2fx", a / k}')
	target=$([ "$code" = app ] && echo "0.9x-1.1x" || echo "-")
	echo "| $code | $off | $on | $taken | $per | $ratio | $target |"
done
