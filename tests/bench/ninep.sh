#!/usr/bin/env bash
# Guest -> host write throughput of the 9P share: boot with a fresh shared directory, dd
# 64 MiB from SRC (default /dev/zero) to it in 1 MiB blocks (each block goes out as two
# 512 KiB Twrites, straight from dd's buffer), check the host file's size and crc32 against
# dd's, and print
#
#	ninep: write 64 MiB: R MB/s
#
# R is dd's own figure (guest clock, first read to last write), so it includes making the
# data and dd's crc32 but not boot. Under TCG those dominate: the 9P writes themselves
# take a few tens of ms of the total.
# Env: NCPU (2), BS (1M; a power of two with k or M), SRC (/dev/zero, or /dev/random).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f build/kern.iso ] || make -s all
dir=$(mktemp -d /tmp/ninep-bench.XXXXXX)
trap 'rm -rf "$dir"' EXIT
bs=${BS:-1M}
case $bs in *M) count=$((64 / ${bs%M}));; *k) count=$((65536 / ${bs%k}));; *) exit 2;; esac
src=${SRC:-/dev/zero}
out=$(timeout -k 5 300 expect - "$dir" "$bs" "$count" "${NCPU:-2}" "$src" <<'TCL'
source tests/lib/kern.tcl
lassign $argv dir bs count ncpu src
log_user 0
boot -smp $ncpu -share $dir
set out [cmd "dd if=$src of=/host/bench.bin bs=$bs count=$count" 240]
poweroff
puts $out
TCL
) || { echo "ninep bench: QEMU run failed" >&2; echo "$out" >&2; exit 1; }
line=$(echo "$out" | grep -E 'bytes in .* MB/s, crc32' | head -1)
[ -n "$line" ] || { echo "ninep bench: dd printed no result:" >&2; echo "$out" >&2; exit 1; }
echo "bench: $line" >&2
bytes=$(echo "$line" | grep -oE '[0-9]+ bytes in' | grep -oE '^[0-9]+')
rate=$(echo "$line" | grep -oE '[0-9.]+ MB/s' | grep -oE '^[0-9.]+')
crc=$(echo "$line" | grep -oE 'crc32 0x[0-9a-f]+' | grep -oE '0x[0-9a-f]+')
host=$(python3 -c 'import sys, zlib; d = open(sys.argv[1], "rb").read(); print(len(d), "0x%08x" % zlib.crc32(d))' "$dir/bench.bin")
[ "$host" = "$bytes $crc" ] || { echo "ninep bench: host has '$host', dd wrote '$bytes $crc'" >&2; exit 1; }
[ "$bytes" = 67108864 ] || { echo "ninep bench: wrote $bytes bytes" >&2; exit 1; }
echo "ninep: write 64 MiB: $rate MB/s" >&2
echo "## Host share: guest-to-host write throughput (TCG, -smp ${NCPU:-2})"
echo
echo "| what | MB/s | check | target |"
echo "|---|---|---|---|"
echo "| dd if=$src of=/host/bench.bin bs=$bs count=$count (64 MiB) | $rate | host crc32 $crc = dd's | >= 25 |"
