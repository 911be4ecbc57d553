/*
 * Known answers for wake-ups (issue 20: a wake-up is written by the switch that resumes its
 * thread, or by the session's stop; tests/t/sched-wakefold checks both). Run from `run`'s
 * thread on one core.
 *
 * wakewait: runnable time. Setup starts a partner thread on the same core. Each step wakes
 * the partner and then computes WAKEWAIT_US with interrupts off, so the partner cannot run
 * (no tick preempts us) until the step sleeps until the partner has answered: the partner
 * waits runnable for WAKEWAIT_US a step, and is otherwise blocked on its rendez.
 * wakehold: interrupts off until the session's scheduler events stop (its hooks go off at
 * the start of `oprofile stop`), WAKEHOLD_US at most: a thread woken on its core meanwhile
 * stays runnable, not switched in, until the session has stopped recording switches.
 * wakelate: a step that does nothing, to be started on a core wakehold holds.
 */
#include "arch.h"
#include "kmalloc.h"
#include "rendez.h"
#include "schedev.h"
#include "thread.h"
#include "workloads.h"
#include "tsctime.h"

#define WAKEWAIT_US	1000
#define WAKEHOLD_US	10000000

struct wakewait {
	struct rendez go, back;	/* partner waits on go; the step waits on back */
	uint32_t turn, ack;	/* the step's count; the last the partner answered */
	bool stop;
	struct thread *partner;
};

static bool ww_go(void *arg)
{
	struct wakewait *w = arg;

	return READ_ONCE(w->stop) || READ_ONCE(w->turn) != READ_ONCE(w->ack);
}

static bool ww_back(void *arg)
{
	struct wakewait *w = arg;

	return READ_ONCE(w->ack) == READ_ONCE(w->turn);
}

static void ww_partner(void *arg)
{
	struct wakewait *w = arg;

	for (;;) {
		rendez_sleep(&w->go, ww_go, w);
		if (READ_ONCE(w->stop))
			return;
		WRITE_ONCE(w->ack, READ_ONCE(w->turn));
		rendez_wakeup(&w->back);
	}
}

void *wakewait_setup(void)
{
	struct wakewait *w = kzmalloc(sizeof(*w));

	if (!w)
		return NULL;
	rendez_init(&w->go);
	rendez_init(&w->back);
	w->partner = kthread_create("wakewait-b", core_id(), ww_partner, w);
	if (!w->partner) {
		kfree(w);
		return NULL;
	}
	return w;
}

uint64_t wakewait_step(void *st)
{
	struct wakewait *w = st;
	unsigned long f;

	WRITE_ONCE(w->turn, w->turn + 1);
	rendez_wakeup(&w->go);
	f = irq_save();
	busy_us(WAKEWAIT_US);	/* the partner waits runnable meanwhile */
	irq_restore(f);
	rendez_sleep(&w->back, ww_back, w);
	return 1;
}

void wakewait_done(void *st, char *note, size_t n)
{
	struct wakewait *w = st;

	(void)note, (void)n;
	WRITE_ONCE(w->stop, true);
	rendez_wakeup(&w->go);
	kthread_join(w->partner);
}

uint64_t wakehold_step(void *st)
{
	uint64_t end = tsc_read() + tsc_of_us(WAKEHOLD_US);
	unsigned long f = irq_save();

	(void)st;
	while (schedev() && tsc_read() < end)
		cpu_relax();	/* the pause keeps TCG's round robin fair (see irqoff) */
	irq_restore(f);
	return 1;
}

uint64_t wakelate_step(void *st)
{
	(void)st;
	return 1;
}
