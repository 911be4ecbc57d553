/*
 * spinapp: the kernel's `run spin` workload as an app (tests/bench/appcost.sh): the same
 * loop, called the same way, at the same stack depth, so that what a sample costs in app
 * code compares with what it costs in kernel code.
 *	spinapp UNITS	UNITS calls of a 10000-iteration loop
 */
#include <stdint.h>
#include <stdlib.h>

__attribute__((noinline)) uint64_t spinapp_loop(uint64_t n)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < n; i++)
		x += i;
	return x;
}

__attribute__((noinline)) static uint64_t spinapp_step(void)
{
	spinapp_loop(10000);
	return 10000;
}

int main(int argc, char **argv)
{
	long units = argc > 1 ? atol(argv[1]) : 1000;
	uint64_t done = 0;

	for (long u = 0; u < units; u++)
		done += spinapp_step();
	return done == (uint64_t)units * 10000 ? 0 : 1;
}
