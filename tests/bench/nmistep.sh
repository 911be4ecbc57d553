#!/usr/bin/env bash
# Where an NMI sample's instructions go: one core, -icount shift=0, the profiler sampling
# by NMI at 10 kHz, depth 16 (reader to /dev/null) over run spin; gdb single-steps ISTEP_N
# (24) whole NMIs, from the vector-2 stub to the iretq (tests/bench/istep.py), and prints one
# line per NMI: instructions, then per function. The companion of overhead.sh's timer steps.
#
# usage: tests/bench/nmistep.sh [TREE] (default: this tree; TREE must be built). env:
# OPTS (extra `oprofile start` flags), PCS=FILE (the fewest-instruction NMI's addresses and
# disassembly, istep.py's ISTEP_PCS), CRASH=1 (boot with the crash recorder and watchdog on,
# as scripts/RUN does, so their NMI hook runs too). Boots QEMU: run under /tmp/qemu.lock.
set -eu
cd "$(dirname "$0")/../.."
top=$PWD
tree=$(cd "${1:-$top}" && pwd)
elf=$tree/build/kernel.elf
vec=$(nm "$elf" | awk '$3 == "trap_vectors" {print $1}')
[ -n "$vec" ] || { echo "nmistep: no trap_vectors in $elf" >&2; exit 1; }
out=$(mktemp)
crashf=$(mktemp)
trap 'rm -f "$out" "$crashf"' EXIT
[ "${CRASH:-0}" = 1 ] && export CRASH_FILE=$crashf
port=$((20000 + RANDOM % 20000))
NCPU=1 MEM=512M ACCEL=tcg QEMU=$tree/scripts/qemu PORT=$port ELF=$elf OUT=$out \
OPTS="${OPTS:-}" PY=$top/tests/bench/istep.py BRK="*0x$(printf %x $((0x$vec + 2 * 16)))" \
ISTEP_PCS="${PCS:-}" expect -c '
	source tests/lib/kern.tcl
	log_user 0
	set timeout 300
	spawn -noecho $env(QEMU) -icount shift=0,align=off,sleep=off -gdb tcp::$env(PORT)
	expect -ex $prompt
	cmd "cat /dev/oprofile > /dev/null &"
	cmd "oprofile start -m nmi -f 10000 -d 16 $env(OPTS)"
	send "run spin -t 20\r"
	after 2000
	set env(ISTEP_N) [expr {[info exists env(ISTEP_N)] ? $env(ISTEP_N) : 24}]
	set env(ISTEP_PORT) $env(PORT); set env(ISTEP_ELF) $env(ELF); set env(ISTEP_OUT) $env(OUT)
	set env(ISTEP_BREAK) $env(BRK)
	exec gdb -batch -nx -x $env(PY) 2>@1
	expect -timeout 120 -ex $prompt
	poweroff
' >/dev/null || { echo "nmistep: the boot or gdb failed" >&2; exit 1; }
cat "$out"
