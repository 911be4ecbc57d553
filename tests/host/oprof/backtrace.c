/*
 * backtrace.c: host tests of the frame-pointer walker (oprof_backtrace).
 * Run by main.c's table.
 */
#include "oprof_host.h"

/*
 * The walker on chains built in exactly sized heap buffers (ASan sees any stray read):
 * st holds W words, lo and hi are its bounds.
 */
enum { W = 32 };

/* A clean chain of 10 frames ending in fp 0, walked to several depths. */
static void bt_clean(uintptr_t *st, uintptr_t lo, uintptr_t hi)
{
	uint64_t fr[OPF_MAX_DEPTH];
	bool tr, more;
	unsigned n;

	for (int i = 0; i < 10; i++) {
		st[2 * i] = i < 9 ? (uintptr_t)&st[2 * i + 2] : 0;
		st[2 * i + 1] = 0x1000 + (uintptr_t)i;
	}
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECKF(n == 10 && !tr && !more, "clean chain: n %u tr %d more %d", n, tr, more);
	for (unsigned i = 0; i < n; i++)
		CHECKF(fr[i] == 0x1000 + i, "frame %u", i);
	n = oprof_backtrace(lo, lo, hi, fr, 4, &tr, &more);
	CHECKF(n == 4 && !tr && more, "depth limit: n %u tr %d more %d (cut by the depth, not "
	       "truncated)", n, tr, more);
	n = oprof_backtrace(lo, lo, hi, fr, 10, &tr, &more);
	CHECKF(n == 10 && !tr && !more, "depth = chain length: n %u more %d", n, more);
	n = oprof_backtrace(lo, lo, hi, fr, 0, &tr, &more);
	CHECKF(n == 0 && !tr && more, "depth 0: the whole chain was left out");
	n = oprof_backtrace(0, lo, hi, fr, 64, &tr, &more);
	CHECKF(n == 0 && !tr, "fp 0 is a clean end");
}

/* Bad starting points and bounds: nothing may be read. */
static void bt_bad_start(uintptr_t lo, uintptr_t hi)
{
	uint64_t fr[OPF_MAX_DEPTH];
	bool tr, more;
	unsigned n;

	const uintptr_t bad[] = { lo + 4, lo - 8, lo - 16, hi - 8, hi, hi + 8, 8, UINTPTR_MAX - 7,
				  UINTPTR_MAX & ~(uintptr_t)7 };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		n = oprof_backtrace(bad[i], lo, hi, fr, 64, &tr, &more);
		CHECKF(n == 0 && tr, "bad fp #%zu: n %u tr %d", i, n, tr);
	}
	n = oprof_backtrace(UINTPTR_MAX - 15, UINTPTR_MAX - 15, UINTPTR_MAX, fr, 64, &tr, &more);
	CHECKF(n == 0 && tr, "stack at the top of the address space");
	n = oprof_backtrace(lo, hi, lo, fr, 64, &tr, &more);
	CHECKF(n == 0 && tr, "inverted bounds");
	n = oprof_backtrace(lo, lo, lo + 8, fr, 64, &tr, &more);
	CHECKF(n == 0 && tr, "stack smaller than a frame");
}

/* The last frame ends at hi; cycles, escapes, misaligned links and a zero return. */
static void bt_corrupt(uintptr_t *st, uintptr_t lo, uintptr_t hi)
{
	uint64_t fr[OPF_MAX_DEPTH];
	bool tr, more;
	unsigned n;

	/* the last frame that fits exactly ends at hi */
	st[W - 2] = 0;
	st[W - 1] = 0x77;
	n = oprof_backtrace(hi - 16, lo, hi, fr, 64, &tr, &more);
	CHECKF(n == 1 && !tr && fr[0] == 0x77, "frame ending at hi");

	/* cycle: frame 3 points back to frame 0 */
	st[6] = (uintptr_t)&st[0];
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECKF(n == 4 && tr, "cycle: n %u tr %d", n, tr);
	/* self loop */
	st[0] = (uintptr_t)&st[0];
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECKF(n == 1 && tr, "self loop: n %u tr %d", n, tr);
	/* next out of the stack, above it */
	st[0] = hi + 64;
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECKF(n == 1 && tr, "escape above: n %u tr %d", n, tr);
	/* next straddling hi */
	st[0] = hi - 8;
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECKF(n == 1 && tr, "straddle hi: n %u tr %d", n, tr);
	/* misaligned next */
	st[0] = (uintptr_t)&st[2] + 3;
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECKF(n == 1 && tr, "misaligned: n %u tr %d", n, tr);
	/* zero return address ends the chain cleanly */
	st[0] = (uintptr_t)&st[2];
	st[3] = 0;
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECKF(n == 1 && !tr, "zero return: n %u tr %d", n, tr);
}

/* Random garbage, random starts, random bounds inside the buffer. */
static void bt_fuzz(uintptr_t *st)
{
	uint64_t fr[OPF_MAX_DEPTH];
	bool tr, more;
	unsigned n, seed = 99;

	for (int it = 0; it < 200000; it++) {
		int a = rand_r(&seed) % W, b = rand_r(&seed) % (W + 1);
		uintptr_t l = (uintptr_t)(st + MIN(a, b)), h = (uintptr_t)(st + MAX(a, b));

		for (int k = 0; k < 4; k++) {
			int w = rand_r(&seed) % W;
			int kind = rand_r(&seed) % 4;

			st[w] = kind == 0 ? (uintptr_t)(st + rand_r(&seed) % (W + 4)) - 16 :
				kind == 1 ? (uintptr_t)st + (uintptr_t)(rand_r(&seed) % (W * 8 + 64)) :
				kind == 2 ? 0 : (uintptr_t)rand_r(&seed) * 0x10001u;
		}
		n = oprof_backtrace((uintptr_t)st + (uintptr_t)(rand_r(&seed) % (W * 8 + 32)) - 16,
				    l, h, fr, 1 + rand_r(&seed) % 64, &tr, &more);
		CHECKF(n <= (unsigned)W / 2, "garbage walk returned %u frames", n);
	}
}

void test_backtrace(void)
{
	uintptr_t *st = malloc(W * sizeof(uintptr_t));
	uintptr_t lo = (uintptr_t)st, hi = (uintptr_t)(st + W);

	bt_clean(st, lo, hi);
	bt_bad_start(lo, hi);
	bt_corrupt(st, lo, hi);
	bt_fuzz(st);
	free(st);
}
