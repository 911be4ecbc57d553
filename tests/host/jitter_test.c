/*
 * jitter_test.c: run by tests/t/host-jitter (build/host/jitter{,-tsan,-asan}), on the shared
 * harness. Host test of kern/include/jitter.h, the recipe both sampling sources place
 * their periods by:
 *  - slot k's draw is the same whether made by stepping (the hot paths' jitter_next), by
 *    a jump kept ready (jitter_jump, the NMI source's claim) or from the key (jitter_skip,
 *    for late ticks): the seed reproduces every period, whichever way a core came to it;
 *  - an offset is in [-width / 2, width - width / 2) and uniform over it (a chi-square
 *    over 64 bins of 2^20 draws), for slots in order, which is how a core takes them;
 *  - draws do not keep step with any small stride (no aliasing by the back door): over
 *    slots k, k + s, k + 2s, ... the offsets are uniform too, for every s up to 64;
 *  - different streams (cores) and seeds give different draws.
 */
#include <stdio.h>

#include "harness.h"
#include "jitter.h"

/* chi-square of the offsets of slots first, first + stride, ... (n of them) over 64 bins */
static double chi2(uint64_t key, uint64_t first, uint64_t stride, int n, uint64_t width)
{
	static unsigned bins[64];
	double e, c = 0;
	uint64_t x = jitter_skip(key, first);

	for (int b = 0; b < 64; b++)
		bins[b] = 0;
	for (int i = 0; i < n; i++) {
		int64_t off = jitter_place(x, width);
		uint64_t u = (uint64_t)(off + (int64_t)(width / 2));

		CHECKF(off >= -(int64_t)(width / 2) && off < (int64_t)(width - width / 2),
		       "offset %lld outside the window of %llu", (long long)off,
		       (unsigned long long)width);
		bins[(unsigned)((unsigned __int128)u * 64 / width)]++;
		for (uint64_t s = 0; s < stride; s++)
			x = jitter_next(x);
	}
	for (int b = 0; b < 64; b++) {
		/* the offsets bin b holds: u from ceil(b * width / 64) to before ceil((b+1) ...) */
		unsigned __int128 lo = ((unsigned __int128)b * width + 63) / 64;
		unsigned __int128 hi = ((unsigned __int128)(b + 1) * width + 63) / 64;

		e = (double)n * (double)(hi - lo) / (double)width;
		c += (bins[b] - e) * (bins[b] - e) / e;
	}
	return c;
}

static void test_steps_match_key(void)
{
	uint64_t key = jitter_key(0x1234, 7), x = key;

	CHECK(jitter_skip(key, 0) == key);
	for (uint64_t k = 1; k <= 100000; k++) {
		x = jitter_next(x);
		if (k % 997 == 0 || k < 70)
			CHECKF(jitter_skip(key, k) == x, "slot %llu: jitter_skip differs from stepping",
			       (unsigned long long)k);
		for (uint64_t d = 0; d <= 9 && d <= k; d++) {
			struct jitter_jump j = jitter_jump(d);

			CHECK(jitter_skip(key, k - d) * j.mul + j.add == x);
		}
	}
	/* far slots: a jump is two jumps */
	CHECK(jitter_skip(jitter_skip(key, 1ull << 40), 12345) == jitter_skip(key, (1ull << 40) + 12345));
}

static void test_uniform(void)
{
	/* 63 degrees of freedom: 110 is beyond its 99.99th percentile */
	static const uint64_t widths[] = { 64, 1000, 300000, 3000000000ull, 1ull << 40 };

	for (size_t i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
		double c = chi2(jitter_key(42, 0), 1, 1, 1 << 20, widths[i]);

		CHECKF(c < 110, "width %llu: chi-square %.1f over 64 bins",
		       (unsigned long long)widths[i], c);
	}
}

static void test_no_stride(void)
{
	for (uint64_t s = 2; s <= 64; s++) {
		double c = chi2(jitter_key(99, JITTER_STREAM_NMI), 3, s, 1 << 16, 1000003);

		CHECKF(c < 110, "every %llu-th slot: chi-square %.1f over 64 bins",
		       (unsigned long long)s, c);
	}
}

static void test_streams_differ(void)
{
	CHECK(jitter_key(1, 0) != jitter_key(1, 1));
	CHECK(jitter_key(1, 0) != jitter_key(2, 0));
	CHECK(jitter_skip(jitter_key(1, 0), 5) != jitter_skip(jitter_key(1, 1), 5));
	CHECK(jitter_width(100000, 100) == 100000 && jitter_width(100000, 0) == 0);
	CHECK(jitter_width(199, 50) == 99);
}

int main(int argc, char **argv)
{
	static const struct harness_test tests[] = {
		{ "steps_match_key", test_steps_match_key },
		{ "uniform", test_uniform },
		{ "no_stride", test_no_stride },
		{ "streams_differ", test_streams_differ },
	};
	struct harness h = { tests, sizeof(tests) / sizeof(tests[0]), 60, NULL };

	return harness_run(&h, argc, argv);
}
