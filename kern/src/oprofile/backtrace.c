/*
 * The profiler's unwinder for callers off the hot path (the crash recorder, scheduler
 * events): oprof_backtrace, the walk of backtrace.h with its outcome as two flags. The
 * hot path inlines bt_walk itself. Any context.
 */
#include "backtrace.h"
#include "oprofile.h"

unsigned oprof_backtrace(uintptr_t fp, uintptr_t lo, uintptr_t hi, uint64_t *frames,
			 unsigned max, bool *truncated, bool *more)
{
	unsigned why = 0, n = bt_walk(fp, lo, hi, frames, max, &why);

	*truncated = why & OPF_F_TRUNCATED;
	*more = why & OPF_F_DEPTH;
	return n;
}
