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

/*
 * The walk checks the first frame against both bounds; after that a frame pointer only
 * grows (next > fp, or the walk ends), so lo holds by induction and each step checks
 * alignment and the top alone: [fp, fp + 16) inside [lo, hi) without overflow, as
 * fp <= top = hi - 16. The loop is the hot path's, a dozen instructions a frame.
 */
unsigned oprof_backtrace(uintptr_t fp, uintptr_t lo, uintptr_t hi, uint64_t *frames,
			 unsigned max, bool *truncated, bool *more)
{
	uintptr_t top = hi - FRAME_BYTES;
	unsigned n = 0;

	*truncated = false;
	*more = false;
	if (fp == 0)
		return 0;
	if (hi < lo || hi - lo < FRAME_BYTES || fp < lo)
		top = 0;		/* no frame can be read: the first check below fails */
	for (;;) {
		const uintptr_t *frame = (const uintptr_t *)fp;
		bool ok = !(fp & (sizeof(uintptr_t) - 1)) && fp <= top;
		uintptr_t next, ret;

		if (n == max) {		/* is there a caller the depth left out? */
			*more = ok && frame[1] != 0;
			return n;
		}
		if (!ok) {
			*truncated = true;
			return n;
		}
		next = frame[0];
		ret = frame[1];
		if (ret == 0)
			return n;
		frames[n++] = ret;
		if (next == 0)
			return n;
		/* Strictly increasing: rules out cycles and frames of another stack below. */
		if (next <= fp) {
			*truncated = n < max;
			return n;
		}
		fp = next;
	}
}
