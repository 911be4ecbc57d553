/*
 * Benchmark-only entry points of the profiler (kern/bench, tests/host): nothing in the
 * kernel's normal operation calls these.
 */
#ifndef OPROFILE_BENCH_H
#define OPROFILE_BENCH_H

#include "kernel.h"
#include "oprofile.h"

/*
 * A tick as the glue fills one, for a benchmark to hand to oprof_tick_irq: the path
 * production's common tick takes, walk included. Its stack is stack[0 .. 2 * n): a frame
 * chain of n frames whose return addresses are frames[0 .. n), innermost first, ending
 * cleanly (a zero link). stack must stay put while t is used.
 */
static inline void oprof_bench_tick(struct oprof_tick *t, int core, uint32_t tid,
				    uint64_t pc, uint64_t *stack, const uint64_t *frames,
				    unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		stack[2 * i] = i + 1 < n ? (uintptr_t)&stack[2 * i + 2] : 0;
		stack[2 * i + 1] = frames[i];
	}
	*t = (struct oprof_tick){
		.pc = pc, .fp = n ? (uintptr_t)stack : 0, .stack_lo = (uintptr_t)stack,
		.stack_hi = (uintptr_t)(stack + 2 * n), .tid = tid, .core = (uint16_t)core,
	};
}

/*
 * The design the profiler replaced (a block per sample on one global locked list),
 * measured beside the real hot path (kern/bench/baseline.c). Thread context.
 */
void oprof_baseline_record(int core, uint64_t tsc, uint64_t pc, const uint64_t *frames,
			   unsigned nframes);
void oprof_baseline_drain(void);

#endif
