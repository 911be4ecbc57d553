#!/usr/bin/env bash
# The profiler's hot path measured on the host CPU: the portable core (hotpath.c and what
# it calls) built natively at -O2, pthreads standing in for cores, rdtsc around batches of
# 200 ticks through oprof_tick_irq, each walking a stack of the row's depth (tests/host/
# oprof_bench.c): the path production's common tick takes. Real cycles for the code
# itself, which the TCG table cannot give; the kernel adds the timer interrupt around it.
# Prints only what it measured; notes on earlier runs are docs/RESULTS.md's (notes hotpath).
cd "$(dirname "$0")/../.."
make -s -C tests/host "$PWD/build/host/oprof-bench" >&2 || exit 1
b=build/host/oprof-bench
# median of 5 runs (each the mean over threads of the median batch)
cyc() {	# the median of 5 runs; a run that lost samples (exit 3) voids the row
	local v=() out i
	for i in 1 2 3 4 5; do
		out=$("$b" "$@") || { echo "void: ${out##*; }"; return; }
		v+=("$(echo "$out" | sed -n 's/.*: \([0-9]*\) cycles\/record.*/\1/p')")
	done
	printf '%s\n' "${v[@]}" | sort -n | sed -n 3p
}
echo "## Profiler hot path on the host CPU (native build of the portable core)"
echo
echo "| design | depth | threads recording | cycles/record (median of 5 runs) | target |"
echo "|---|---|---|---|---|"
echo "| per-core blocks | 0 | 1 | $(cyc -d 0) | <= 100 |"
echo "| per-core blocks | 16 | 1 | $(cyc -d 16) | <= 400 |"
echo "| per-core blocks | 16 | 2 | $(cyc -d 16 -c 2) | <= 1.2x 1 thread |"
echo "| block per sample (glibc malloc), global lock | 16 | 1 | $(cyc -o -d 16) | - |"
echo "| block per sample (glibc malloc), global lock | 16 | 2 | $(cyc -o -d 16 -c 2) | - |"
