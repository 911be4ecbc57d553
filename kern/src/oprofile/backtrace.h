/*
 * The profiler's unwinder, inline: a frame-pointer walk that never faults (backtrace.c
 * has the out-of-line oprof_backtrace over it, for callers off the hot path).
 *
 * Runs in the sampling interrupt on the sampled core, over the stack of the interrupted
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
#ifndef OPROF_BACKTRACE_H
#define OPROF_BACKTRACE_H

#include "kernel.h"
#include "abi/oprofile.h"

#define BT_FRAME_BYTES	(2 * sizeof(uintptr_t))

/*
 * Whether a frame at fp may be read: fp aligned and at most top8, the highest frame's
 * address over 8. One compare for both: fp rotated right by 3 is fp / 8 when fp is
 * aligned, and past any top8 when it is not (its low bits land in the top bits).
 */
static __force_inline bool bt_frame_ok(uintptr_t fp, uintptr_t top8)
{
	return (fp >> 3 | fp << (8 * sizeof(fp) - 3)) <= top8;
}

/*
 * Return addresses from the chain at fp into [out, end); returns where it stopped, and
 * adds OPF_F_TRUNCATED (the chain went bad before its clean end) or OPF_F_DEPTH (end
 * reached with a readable frame left) to *why.
 *
 * One bounds check a frame. The first frame is checked against both bounds; after that a
 * frame pointer only grows (next > fp, or the walk ends), so lo holds by induction and
 * each step checks alignment and the top alone, in one compare (bt_frame_ok): [fp, fp + 16)
 * inside [lo, hi) without overflow, as fp <= hi - 16. A frame costs two loads, one store
 * and four tests (return address 0, chain going down, depth, alignment and top), each a
 * branch not taken.
 */
static __force_inline uint64_t *bt_walk_to(uintptr_t fp, uintptr_t lo, uintptr_t hi,
					   uint64_t *out, uint64_t *end, unsigned *why)
{
	uintptr_t top8 = (hi - BT_FRAME_BYTES) >> 3;

	if (fp == 0)
		return out;
	if (unlikely(hi < lo || hi - lo < BT_FRAME_BYTES || fp < lo))
		top8 = 0;		/* no frame can be read: every check below fails (fp != 0) */
	if (unlikely(out == end))
		goto depth;
	if (unlikely(!bt_frame_ok(fp, top8)))
		goto bad;
	for (;;) {
		const uintptr_t *frame = (const uintptr_t *)fp;
		uintptr_t ret = frame[1], next;

		if (unlikely(ret == 0))
			return out;
		next = frame[0];
		*out++ = ret;
		if (unlikely(next <= fp)) {	/* 0: the clean end; else backwards, a cycle */
			if (next != 0 && out != end)
				goto bad;
			return out;
		}
		fp = next;
		if (unlikely(out == end))
			goto depth;
		if (unlikely(!bt_frame_ok(fp, top8)))
			goto bad;
	}
depth:
	/* is there a caller the depth left out? */
	if (bt_frame_ok(fp, top8) && ((const uintptr_t *)fp)[1] != 0)
		*why |= OPF_F_DEPTH;
	return out;
bad:
	*why |= OPF_F_TRUNCATED;
	return out;
}

/* The same into frames[0..max): how many it wrote. */
static __force_inline unsigned bt_walk(uintptr_t fp, uintptr_t lo, uintptr_t hi,
				       uint64_t *frames, unsigned max, unsigned *why)
{
	return (unsigned)(bt_walk_to(fp, lo, hi, frames, frames + max, why) - frames);
}

#endif
