/*
 * alias: a workload built to alias with a fixed sampling period, with a known answer, for
 * checking that the periods' jitter removes it (README, "Which clock am I reading?").
 * Called by `run alias` through the table in workloads.c, thread context, on any core.
 *
 * A round is ALIAS_ROUND_US of the TSC, which divides the default sampling period (1 ms):
 * alias_a is called ALIAS_CALLS times, then alias_b as often, then alias_wait spins on the
 * TSC until the round's end, so the rounds keep step with the clock the periods are
 * counted in, from one step of `run` to the next (each core keeps its grid). alias_a and
 * alias_b are leaves with no branch (as split's), so their instructions per call are the
 * instructions of their disassembly, and their joint samples must split as
 *	n_a : n_b
 * which tests/t/profile-alias counts from the kernel ELF with objdump (194 : 98). Under the
 * default clock (-icount shift=1: 500,000 instructions a millisecond) the two take some 90%
 * of a round. With a fixed period every sample falls at the same moment of a round, so in one
 * of the three functions only: whichever it is, the leaves' split is lost. Jittered, the
 * samples fall anywhere in the round, and the split is the instructions'.
 *
 * alias_wait spins without a spin-wait hint: under QEMU's round robin a pause would hand
 * the host thread to another virtual CPU at every turn of the loop.
 */
#include "workloads.h"
#include "cpu.h"
#include "tsctime.h"

#define ALIAS_ROUND_US	1000
#define ALIAS_CALLS	1500	/* calls of each leaf a round */
#define ALIAS_ROUNDS	100	/* rounds a step */

static volatile uint64_t alias_sink;
static uint64_t round_end[MAX_CPUS];	/* per core: TSC at which its current round ends */

/* 48 and 24 mixing rounds: the leaves' instructions, 2 : 1 */
#define MIX48(x)	do { MIX16(x); MIX16(x); MIX16(x); } while (0)
#define MIX24(x)	do { MIX16(x); MIX4(x); MIX4(x); } while (0)

__attribute__((noinline)) uint64_t alias_a(uint64_t x)
{
	MIX48(x);
	return x;
}

__attribute__((noinline)) uint64_t alias_b(uint64_t x)
{
	MIX24(x);
	return x;
}

__attribute__((noinline)) void alias_wait(uint64_t until)
{
	while (tsc_read() < until)
		;
}

uint64_t alias_step(void *st)
{
	uint64_t round = tsc_of_us(ALIAS_ROUND_US), *end = &round_end[core_id()];
	uint64_t x = (uintptr_t)&st;

	(void)st;
	/* a grid of its own on a core's first step, or after a pause of more than a round */
	if (*end + round < tsc_read())
		*end = tsc_read();
	for (int r = 0; r < ALIAS_ROUNDS; r++) {
		for (int k = 0; k < ALIAS_CALLS; k++)
			x = alias_a(x);
		for (int k = 0; k < ALIAS_CALLS; k++)
			x = alias_b(x);
		*end += round;
		alias_wait(*end);
	}
	alias_sink = x;		/* the result is used: nothing above is dead code */
	return ALIAS_ROUNDS;
}
