/*
 * Host test of kern/include/tsctime.h: tick and unit conversions are the exact floor of
 * the rational result (checked against 128-bit arithmetic), for the awkward rates a TSC
 * calibration produces (just under a round GHz, odd kHz), never overflow below 2^34 Hz,
 * and saturate instead of wrapping.
 */
#include <stdio.h>
#include <stdlib.h>

#include "harness.h"
#define TSCTIME_NO_ARCH
#include "tsctime.h"

static const uint64_t rates[] = {
	999999999, 1000000000, 1000000001, 2999999937, 3400000000, 1193182, 17179869183,
};

static uint64_t ref(uint64_t n, uint64_t mul, uint64_t div)
{
	unsigned __int128 v = (unsigned __int128)n * mul / div;

	return v > UINT64_MAX ? UINT64_MAX : (uint64_t)v;
}

static uint64_t rnd(void)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;

	x ^= x << 13, x ^= x >> 7, x ^= x << 17;
	return x;
}

/* every rate, small and huge inputs, both directions, both units */
static void test_exact(void)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		uint64_t hz = rates[i];

		for (int k = 0; k < 20000; k++) {
			uint64_t n = rnd() >> (rnd() % 64);

			CHECKF(ticks_of_units(n, 1000000, hz) == ref(n, hz, 1000000),
			       "ticks_of_units(%llu us, %llu Hz)", (unsigned long long)n,
			       (unsigned long long)hz);
			CHECKF(ticks_of_units(n, 1000, hz) == ref(n, hz, 1000),
			       "ticks_of_units(%llu ms, %llu Hz)", (unsigned long long)n,
			       (unsigned long long)hz);
			CHECKF(units_of_ticks(n, 1000000, hz) == ref(n, 1000000, hz),
			       "units_of_ticks(%llu, %llu Hz) us", (unsigned long long)n,
			       (unsigned long long)hz);
			CHECKF(units_of_ticks(n, 1000, hz) == ref(n, 1000, hz),
			       "units_of_ticks(%llu, %llu Hz) ms", (unsigned long long)n,
			       (unsigned long long)hz);
		}
	}
}

/*
 * The defect this header fixed: a rate a hair under 1 GHz truncated to whole ticks a
 * microsecond first gave 999 ticks a us, so a one-second wait was 999 ms.
 */
static void test_under_a_ghz(void)
{
	uint64_t hz = 999999999;

	CHECK(ticks_of_units(1000000, 1000000, hz) == hz);
	CHECK(ticks_of_units(1000, 1000, hz) == hz);
	CHECK(units_of_ticks(hz, 1000000, hz) == 1000000);
	CHECK(units_of_ticks(hz - 1, 1000, hz) == 999);	/* floor, not round */
	CHECK(units_of_ticks(999, 1000000, hz) == 0);
	CHECK(units_of_ticks(1000, 1000000, hz) == 1);
}

static void test_saturate(void)
{
	CHECK(ticks_of_units(UINT64_MAX, 1000000, 3000000000ull) == UINT64_MAX);
	CHECK(ticks_of_units(UINT64_MAX / 1000, 1000, 1000000000ull) == UINT64_MAX);
	CHECK(ticks_of_units(UINT64_MAX / 3000000000ull * 1000000, 1000000, 3000000000ull) <=
	      UINT64_MAX);
	CHECK(units_of_ticks(UINT64_MAX, 1000000, 1) == UINT64_MAX);
	CHECK(units_of_ticks(5, 1000, 0) == 0);	/* an uncalibrated rate is no time */
	CHECK(ticks_of_units(0, 1000000, 999999999) == 0);
}

int main(int argc, char **argv)
{
	static const struct harness_test tests[] = {
		{ "exact", test_exact },
		{ "under_a_ghz", test_under_a_ghz },
		{ "saturate", test_saturate },
	};
	struct harness h = { tests, sizeof(tests) / sizeof(tests[0]), 60, NULL };

	return harness_run(&h, argc, argv);
}
