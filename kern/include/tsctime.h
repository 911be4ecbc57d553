/*
 * Converting between TSC ticks and wall units (us, ms), exactly. Any context.
 *
 * Why not tsc_hz() / 1000000 * us: that truncates the rate first, so a TSC calibrated at
 * 999,999,999 Hz turns into 999 ticks a microsecond, a 0.1% error that every later
 * multiplication carries (a 1 s wait ends 1 ms early, a 1 ms workload unit runs 999 us).
 * These split the multiplicand by the divisor first, so the product never overflows for
 * rates below 2^34 Hz and the result is the exact floor: n * hz / per, t * per / hz.
 * A result that would not fit in 64 bits saturates (UINT64_MAX: "never", as deadlines
 * take it).
 */
#ifndef TSCTIME_H
#define TSCTIME_H

#include "kernel.h"

/* floor(n * mul / div), saturating; div > 0, mul * div < 2^64. */
static inline uint64_t muldiv_floor(uint64_t n, uint64_t mul, uint64_t div)
{
	uint64_t q = n / div, r = n % div;

	if (mul && q > (UINT64_MAX - r * mul / div) / mul)
		return UINT64_MAX;
	return q * mul + r * mul / div;
}

/* Ticks in n units of 1/per second at hz ticks a second (host-testable: hz is passed). */
static inline uint64_t ticks_of_units(uint64_t n, uint64_t per, uint64_t hz)
{
	return muldiv_floor(n, hz, per);
}

/* Whole units of 1/per second in t ticks at hz ticks a second. */
static inline uint64_t units_of_ticks(uint64_t t, uint64_t per, uint64_t hz)
{
	return hz ? muldiv_floor(t, per, hz) : 0;
}

#ifndef TSCTIME_NO_ARCH
#include "arch.h"

static inline uint64_t tsc_of_us(uint64_t us) { return ticks_of_units(us, 1000000, tsc_hz()); }
static inline uint64_t tsc_of_ms(uint64_t ms) { return ticks_of_units(ms, 1000, tsc_hz()); }
static inline uint64_t us_of_tsc(uint64_t t) { return units_of_ticks(t, 1000000, tsc_hz()); }
static inline uint64_t ms_of_tsc(uint64_t t) { return units_of_ticks(t, 1000, tsc_hz()); }
#endif

#endif
