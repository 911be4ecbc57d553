/*
 * The profiler's unwinder: a frame-pointer walk that never faults.
 *
 * Runs in the timer interrupt on the sampled core, over the stack of the interrupted
 * thread, which may be in any state: in a prologue, in code built without frame pointers,
 * or with a corrupt stack. So no pointer is dereferenced before it is proven to lie inside
 * the stack's bounds [lo, hi) that the caller gives; a chain that leaves them, goes
 * backwards or repeats (a cycle) ends the walk, and the sample is marked truncated.
 *
 * With -fno-omit-frame-pointer every frame is
 *	[fp]		caller's fp
 *	[fp + 8]	return address into the caller
 * and callers' frames sit at higher addresses, so a sane chain strictly increases. The
 * outermost frame of a thread holds fp 0 (the arch sets rbp = 0 at thread entry): that is
 * the clean end. So is a zero return address.
 *
 * Pure function of its arguments and the memory in [lo, hi): callable from any context.
 */
#include "kernel.h"
#include "oprofile.h"

#define FRAME_BYTES	(2 * sizeof(uintptr_t))

/* fp can be read as a whole frame: aligned and [fp, fp + 16) inside [lo, hi). No overflow. */
static bool frame_ok(uintptr_t fp, uintptr_t lo, uintptr_t hi)
{
	if (fp & (sizeof(uintptr_t) - 1))
		return false;
	if (hi < lo || hi - lo < FRAME_BYTES)
		return false;
	return fp >= lo && fp - lo <= hi - lo - FRAME_BYTES;
}

unsigned oprof_backtrace(uintptr_t fp, uintptr_t lo, uintptr_t hi, uint64_t *frames,
			 unsigned max, bool *truncated, bool *more)
{
	unsigned n = 0;

	*truncated = false;
	*more = false;
	while (n < max && fp != 0) {
		const uintptr_t *frame = (const uintptr_t *)fp;
		uintptr_t next, ret;

		if (!frame_ok(fp, lo, hi)) {
			*truncated = true;
			return n;
		}
		next = frame[0];
		ret = frame[1];
		if (ret == 0)
			return n;
		frames[n++] = ret;
		/* Strictly increasing: rules out cycles and frames of another stack below. */
		if (next != 0 && next <= fp) {
			*truncated = n < max;
			return n;
		}
		fp = next;
	}
	/* stopped at max: is there a caller the depth left out? */
	if (n == max && fp != 0 && frame_ok(fp, lo, hi) && ((const uintptr_t *)fp)[1] != 0)
		*more = true;
	return n;
}
