#!/usr/bin/env bash
# The profiler's benchmarks, in two boots under plain TCG (ICOUNT=0: cycles are the host's):
#  1. -smp 8: cycles per record on the hot path (opbench) with depth 0 and 16, with 1, 2,
#     4 and 8 cores recording at once, and the same for the design it replaced (a block
#     allocated per sample on one global locked queue), all in the same boot.
#  2. -smp 2 (one vCPU per host core, so the host's scheduling does not blur the numbers):
#     samples lost at 1, 10 and 20 kHz on every core with a reader streaming to /dev/null;
#     and the drain rate of worker + reader for a backlog built at 10 kHz, depth 64.
# (The overhead on the profiled workload: tests/bench/overhead.sh.)
# Targets (goals, not assertions): <= 100 / <= 400 cycles at depth 0 / 16; 8-core cost
# <= 1.2x 1-core; >= 10x cheaper than the old design at 8 cores; 0 lost at 10 kHz.
cd "$(dirname "$0")/../.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT

ACCEL=tcg expect -c '
	source tests/lib/kern.tcl
	log_user 0
	boot -smp 8 -plaintcg
	foreach c {"opbench -d 0 -c 1" "opbench -d 16 -c 1" "opbench -d 16 -c 2" "opbench -d 16 -c 4"
		   "opbench -d 16 -c 8" "opbench -o -d 0 -c 1" "opbench -o -d 16 -c 1"
		   "opbench -o -d 16 -c 2" "opbench -o -d 16 -c 4" "opbench -o -d 16 -c 8"} {
		puts [cmd $c 120]
	}
	poweroff
' > "$log" 2>&1 || { cat "$log" >&2; exit 1; }

cyc() { tr -d '\r' < "$log" | sed -n "s/^opbench: $1 depth $2 cores $3: \([0-9]*\) cycles.*/\1/p" | head -1; }
echo "## Profiler hot path: cycles per record (TCG, -smp 8, one boot)"
echo
echo "| design | depth | cores recording | cycles/record | vs depth 16, 1 core | target |"
echo "|---|---|---|---|---|---|"
n1=$(cyc per-core 16 1)
for d in 0 16; do
	for c in 1 2 4 8; do
		v=$(cyc per-core $d $c); [ -n "$v" ] || continue
		t="-"; [ $c = 1 ] && t=$([ $d = 0 ] && echo "<= 100" || echo "<= 400")
		[ $c = 8 ] && t="<= 1.2x 1-core"
		echo "| per-core blocks | $d | $c | $v | $(awk -v a=$v -v b=$n1 'BEGIN {printf "%.2fx", a / b}') | $t |"
	done
done
o1=$(cyc global-lock 16 1)
for d in 0 16; do
	for c in 1 2 4 8; do
		v=$(cyc global-lock $d $c); [ -n "$v" ] || continue
		echo "| block per sample, global lock | $d | $c | $v | $(awk -v a=$v -v b=$o1 'BEGIN {printf "%.2fx", a / b}') | - |"
	done
done
new8=$(cyc per-core 16 8); old8=$(cyc global-lock 16 8)
echo
echo "At 8 cores, depth 16: the per-core design costs $new8 cycles/record, the old one $old8:"\
	"$(awk -v a=$old8 -v b=$new8 'BEGIN {printf "%.1fx", a / b}') cheaper (target >= 10x)."
echo "Under TCG every instruction is emulated, so absolute cycles are far above hardware's;"
echo "the ratios are the comparison this table is for. 8 vCPUs share 2 host cores here."
echo

ACCEL=tcg expect -c '
	source tests/lib/kern.tcl
	log_user 0
	boot -smp 2 -plaintcg
	foreach hz {1000 10000 20000} {
		cmd "cat /dev/oprofile > /dev/null &"
		cmd "oprofile start -f $hz"
		cmd "run spin -c all -t 5" 60
		cmd "oprofile stop"
		cmd "sleep 1"
		puts "LOSS $hz [cmd "cat /dev/oprofilestat"]"
	}
	cmd "oprofile start -f 10000 -d 64"
	cmd "run fib -c all -t 10" 60
	cmd "oprofile stop"
	set s [cmd "cat /dev/oprofilestat"]
	regexp {stream_bytes ([0-9]+)} $s -> bytes
	regexp {up ([0-9.]+) s} [cmd uptime] -> t0
	cmd "cat /dev/oprofile > /dev/null" 60
	regexp {up ([0-9.]+) s} [cmd uptime] -> t1
	puts "DRAIN $bytes [expr {$t1 - $t0}]"
	poweroff
' > "$log" 2>&1 || { cat "$log" >&2; exit 1; }

tr -d '\r' < "$log" > "$log.c"; mv "$log.c" "$log"
echo "## Loss and drain rate (TCG, -smp 2, the default source)"
echo
echo "| measure | off | 1 kHz | 10 kHz | 20 kHz | target |"
echo "|---|---|---|---|---|---|"
lost_at() {
	awk -v hz=$1 '$1 == "LOSS" {f = ($2 == hz)} f && /^cpu[0-9]+\.taken / {t += $2}
		f && /^cpu[0-9]+\.lost_/ {l += $2} END {printf "%d lost of %d", l, t}' "$log"
}
echo "| samples lost, reader to /dev/null, run spin on every core 5 s | - | $(lost_at 1000) | $(lost_at 10000) | $(lost_at 20000) | 0 at 10 kHz |"
read -r _ bytes secs < <(grep '^DRAIN' "$log")
echo "| drain rate, worker + reader (backlog: fib at 10 kHz, depth 64, 10 s) | - | - | $(awk -v b=$bytes -v s=$secs 'BEGIN {printf "%.1f MB/s (%d bytes in %.3f s)", b / s / 1e6, b, s}') | - | - |"
cat <<'TXT'

The overhead (what profiling costs the profiled) has its own section, measured under
-icount: tests/bench/overhead.sh. The 20 kHz column shows the overhead budget at work: a
core whose sampling time stays over 25% halves its rate (see the loss table for 4 and 8
cores).
TXT
