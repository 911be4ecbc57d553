/* time.h for apps: the kernel's TSC clock. App code, thread context. */
#include <time.h>
#include "sys.h"

static unsigned long long ns_of(unsigned long long ticks)
{
	unsigned long long hz = tsc_hz();

	return ticks / hz * 1000000000ull + ticks % hz * 1000000000ull / hz;
}

/* CLOCKS_PER_SEC is 10^6: microseconds since boot (instances run alone on their cores). */
clock_t clock(void) { return (clock_t)(ns_of(tsc_read()) / 1000); }

int clock_gettime(clockid_t id, struct timespec *ts)
{
	unsigned long long ns = ns_of(tsc_read());

	if (id != CLOCK_REALTIME && id != CLOCK_MONOTONIC)
		return -1;
	ts->tv_sec = (time_t)(ns / 1000000000ull);
	ts->tv_nsec = (long)(ns % 1000000000ull);
	return 0;
}

time_t time(time_t *t)
{
	time_t now = (time_t)(ns_of(tsc_read()) / 1000000000ull);

	if (t)
		*t = now;
	return now;
}

double difftime(time_t a, time_t b) { return (double)(a - b); }
