/*
 * Benchmark-only entry points of the profiler (kern/bench, tests/host): nothing in the
 * kernel's normal operation calls these.
 */
#ifndef OPROFILE_BENCH_H
#define OPROFILE_BENCH_H

#include "kernel.h"

/*
 * As oprof_tick_irq with the frames already walked, so a benchmark times the recording
 * alone (hotpath.c). Interrupt context or interrupts off, on core.
 */
void oprof_sample_irq(int core, uint32_t tid, uint64_t tsc, uint64_t pc,
		      const uint64_t *frames, unsigned nframes, unsigned flags);

/*
 * The design the profiler replaced (a block per sample on one global locked list),
 * measured beside the real hot path (kern/bench/baseline.c). Thread context.
 */
void oprof_baseline_record(int core, uint64_t tsc, uint64_t pc, const uint64_t *frames,
			   unsigned nframes);
void oprof_baseline_drain(void);

#endif
