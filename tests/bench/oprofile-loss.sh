#!/usr/bin/env bash
# Samples lost while streaming under all-core load: for every (cores, rate) pair, boot with
# -smp CORES, start a reader (`cat /dev/oprofile > TARGET &`), sample every core at RATE with
# depth 16 while `run spin -c all` keeps every core busy for SECS seconds, stop, and read the
# totals from /dev/oprofilestat. Prints a markdown table, one row per pair:
#
#	| smp | rate | reader target | taken | delivered | no-block | out-full | paused | other |
#	  worst core | throttled |
#
# ("worst core" is the most samples one core lost; the target is 0 lost at 10 kHz.)
# TARGET is /host/oprof-loss.out on the virtio-9p host share when the kernel mounts one
# (the file is then checked with `user/opreport --stats`), else /dev/null.
# Virtual time is deterministic (-icount shift=4,align=off,sleep=off): with more vCPUs than
# host cores, TCG would otherwise deschedule busy vCPUs and they would take fewer ticks.
# Env: SMPS ("4 8"), RATES ("10000 20000"), SECS (30; QUICK=1 makes it 5), DEPTH (16),
#      ICOUNT (1; 0 runs in real time), EXTRA (more words for `oprofile start`).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f build/kern.iso ] || make -s all
smps=${SMPS:-4 8}
rates=${RATES:-10000 20000}
secs=${SECS:-30}
[ "${QUICK:-0}" = 1 ] && secs=${SECS:-5}
depth=${DEPTH:-16}
icount=()
[ "${ICOUNT:-1}" = 1 ] && icount=(-icount shift=4,align=off,sleep=off)
dir=$(mktemp -d /tmp/oprof-loss.XXXXXX)
trap 'rm -rf "$dir"' EXIT

echo "## Loss-free streaming under all-core load (TCG with -icount, depth $depth, ${secs} s)"
echo
echo "| smp | rate | reader target | taken | delivered | lost no-block | lost out-full |" \
     "lost paused | lost other | worst core | throttles |"
echo "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for smp in $smps; do
	for rate in $rates; do
		rm -f "$dir/oprof-loss.out"
		out=$(timeout -k 5 $((secs * 40 + 300)) expect - "$dir" "$smp" "$rate" "$secs" \
			"$depth" "${EXTRA:-}" "${icount[@]}" <<'TCL'
source tests/lib/kern.tcl
set argv [lassign $argv dir smp rate secs depth extra]
log_user 0
boot -smp $smp -share $dir {*}$argv
set target /dev/null
cmd "echo probe-ok > /host/oprof-probe"
if {[string first "probe-ok" [cmd "cat /host/oprof-probe"]] >= 0} {
	set target /host/oprof-loss.out
}
cmd "cat /dev/oprofile > $target &"
set r [cmd "oprofile start -f $rate -d $depth $extra"]
if {[string first "oprofile:" $r] >= 0} { puts "ERROR start: $r"; exit 1 }
cmd "run spin -c all -t $secs" [expr {$secs * 40 + 60}]
cmd "oprofile stop" 120
# the reader has the rest of the stream to write out: wait until it is gone
for {set i 0} {[string first " cat" [cmd "ps"]] >= 0 && $i < 600} {incr i} { cmd "sleep 1" }
set stat [cmd "cat /dev/oprofilestat"]
puts "TARGET $target"
puts "STAT-BEGIN\n$stat\nSTAT-END"
poweroff
TCL
		) || { echo "oprofile-loss: QEMU run smp $smp rate $rate failed:" >&2; echo "$out" >&2; exit 1; }
		target=$(echo "$out" | sed -n 's/^TARGET //p')
		stat=$(echo "$out" | sed -n '/^STAT-BEGIN/,/^STAT-END/p')
		row=$(echo "$stat" | awk -v smp="$smp" '
			/^cpu[0-9]+\./ {
				split($1, a, "."); c = substr(a[1], 4); k = a[2]; v[c, k] = $2
			}
			END {
				for (c = 0; c < smp; c++) {
					t += v[c, "taken"]; d += v[c, "delivered"]
					nb += v[c, "lost_noblock"]; of += v[c, "lost_outfull"]
					pa += v[c, "lost_paused"]; ot += v[c, "lost_other"]
					th += v[c, "throttles"]
					l = v[c, "lost_noblock"] + v[c, "lost_outfull"] + v[c, "lost_paused"] \
						+ v[c, "lost_other"]
					if (l > w) w = l
				}
				printf "%d | %d | %d | %d | %d | %d | %d | %d", t, d, nb, of, pa, ot, w, th
			}')
		check=""
		if [ "$target" != /dev/null ] && [ -f "$dir/oprof-loss.out" ]; then
			if user/opreport --stats "$dir/oprof-loss.out" >"$dir/stats.txt" 2>&1; then
				check=" (opreport --stats: ok)"
			else
				check=" (opreport --stats: FAILED)"
				cat "$dir/stats.txt" >&2
			fi
		fi
		echo "| $smp | $rate | $target$check, ${secs} s | $row |"
	done
done
