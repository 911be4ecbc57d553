/*
 * split: a workload with a known answer, for checking what a profile measures (README,
 * "Which clock am I reading?"). Called by `run split` through the table in workloads.c,
 * thread context, on any core.
 *
 * split_heavy and split_light are leaves with no branch at all: each call executes every
 * instruction of its disassembly exactly once, so the instructions per call are the
 * number of instructions between the symbol and its ret. split_step calls them in the
 * fixed ratio 1 : SPLIT_LIGHT_CALLS, the light one many times to make calls and returns a
 * large part of its cost. Under QEMU -icount a sample weighs instructions, so the two
 * leaves' shares of their joint samples must match
 *	n_heavy : SPLIT_LIGHT_CALLS * n_light
 * which tests/t/profile-split computes from the kernel ELF with objdump. Between rounds
 * split_step waits a pseudo-random 0..63 iterations of its own: a sampling period is a
 * fixed number of instructions under -icount, and without the pause the samples would step
 * through a round's instructions in a fixed stride and could favour some of them. Under plain TCG
 * the light leaf's calls and returns cost the emulator more than its instructions, and the
 * split drifts towards it.
 */
#include "workloads.h"

volatile uint64_t split_sink;

__attribute__((noinline)) uint64_t split_heavy(uint64_t x)
{
	MIX16(x);
	MIX16(x);
	MIX16(x);
	MIX16(x);
	return x;
}

__attribute__((noinline)) uint64_t split_light(uint64_t x)
{
	MIX4(x);
	return x;
}

uint64_t split_step(void *st)
{
	uint64_t x = (uintptr_t)&st;

	(void)st;
	for (int r = 0; r < SPLIT_ROUNDS; r++) {
		x = split_heavy(x);
		for (int k = 0; k < SPLIT_LIGHT_CALLS; k++)
			x = split_light(x);
		/* a pseudo-random pause, here and not in the leaves (above) */
		for (uint64_t j = x >> 58; j; j--)
			split_sink = j;
	}
	split_sink = x;		/* the result is used: nothing above is dead code */
	return SPLIT_ROUNDS;
}
