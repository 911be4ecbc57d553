/*
 * Workloads that time the scheduler's and the locks' own paths (tests/bench/schedcost.sh),
 * run by the shell's `run` command in thread context on the chosen cores.
 *
 * yield: gives the core up every step. Run two on one core (one in the background) and
 * every step is one context switch to the other; alone on a core it measures the call.
 * pingpong: the blocking counterpart. Two on one core hand a turn back and forth through
 * one rendez: every step wakes the other and sleeps on the rendez until the turn moves on
 * -- one wake-up and one blocking (rendez) switch a step. A thread left alone gives up each
 * wait after PINGPONG_ALONE_US, so the survivor of a pair still ends.
 * qlockfree, spinfree: LOCKCOST_PAIRS acquire/release pairs of a lock nobody else touches,
 * per step (each thread its own lock): the uncontended path, which the scheduler events
 * must leave as it was. This file builds unchanged into kernels from before those events
 * (the bench compares them), so it uses only qlock_init and spinlock_init.
 */
#include "kmalloc.h"
#include "lock.h"
#include "qlock.h"
#include "rendez.h"
#include "thread.h"
#include "workloads.h"

#define LOCKCOST_PAIRS	1000
#define PINGPONG_ALONE_US	10000

static struct rendez pingpong_r = { SPINLOCK_INIT("pingpong"), NULL };
static uint32_t pingpong_turn;	/* bumped by every step; a step waits until it moves on */

uint64_t yield_step(void *st)
{
	(void)st;
	yield();
	return 1;
}

static bool pingpong_moved(void *seen)
{
	return __atomic_load_n(&pingpong_turn, __ATOMIC_ACQUIRE) != (uint32_t)(uintptr_t)seen;
}

__attribute__((noinline)) uint64_t pingpong_step(void *st)
{
	uint32_t seen = __atomic_add_fetch(&pingpong_turn, 1, __ATOMIC_ACQ_REL);

	(void)st;
	rendez_wakeup(&pingpong_r);
	rendez_sleep_timeout(&pingpong_r, pingpong_moved, (void *)(uintptr_t)seen,
			     PINGPONG_ALONE_US);
	return 1;
}

void *qlockfree_setup(void)
{
	struct qlock *q = kmalloc(sizeof(*q));

	if (q)
		qlock_init(q);
	return q;
}

__attribute__((noinline)) uint64_t qlockfree_step(void *st)
{
	for (int i = 0; i < LOCKCOST_PAIRS; i++) {
		qlock(st);
		qunlock(st);
	}
	return LOCKCOST_PAIRS;
}

void *spinfree_setup(void)
{
	struct spinlock *l = kmalloc(sizeof(*l));

	if (l)
		spinlock_init(l, "spinfree");
	return l;
}

__attribute__((noinline)) uint64_t spinfree_step(void *st)
{
	for (int i = 0; i < LOCKCOST_PAIRS; i++) {
		spin_lock(st);
		spin_unlock(st);
	}
	return LOCKCOST_PAIRS;
}
