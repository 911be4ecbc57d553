/*
 * The thread layer's side of the scheduler events (schedev.h): the hooks' registration,
 * what a thread says it waits for, and the wake-ups no switch wrote, kept for the
 * profiler's stop -- also past their thread's exit.
 *
 * sched.c calls the hooks at a switch and leaves each wake-up in the woken thread
 * (wake_note); what it keeps per thread for the events (why, rwhy, wk) it lends through
 * thread_why and thread_wake_slot (sched.h). The profiler (kern/src/oprofile/
 * sched_events.c) registers the hooks at a session's start, picks the session's
 * generation (schedev_ops.gen) and drains what is left at its stop: nothing of its
 * bookkeeping lives in the scheduler, and nothing here runs while no session records
 * events but the thread layer's exit path's one test (schedev_thread_gone).
 *
 * Contexts: schedev_register and schedev_drain in the profiler's ctl thread (session lock
 * held); schedev_wait, schedev_holder and schedev_unwait in the waiting thread;
 * schedev_thread_gone in the exiting thread, under the thread list's lock.
 */
#include "arch.h"
#include "lock.h"
#include "sched.h"
#include "schedev.h"
#include "thread.h"

const struct schedev_ops *schedev_ops;

void schedev_register(const struct schedev_ops *ops)
{
	__atomic_store_n(&schedev_ops, ops, __ATOMIC_RELEASE);
}

bool schedev_wait(unsigned why, const void *obj, const void *site, const char *name,
		  uint32_t holder)
{
	struct thread *t = current();
	struct schedev_why *w;

	if (likely(!schedev()) || !t || (w = thread_why(t))->set)
		return false;
	*w = (struct schedev_why){ .set = 1, .why = (uint16_t)why, .holder = holder,
				   .obj = obj, .site = site, .name = name };
	return true;
}

void schedev_unwait(void)
{
	thread_why(current())->set = 0;
}

void schedev_holder(const void *obj, uint32_t holder)
{
	struct thread *t = current();
	struct schedev_why *w;

	if (t && (w = thread_why(t))->set && w->why == OPF_WHY_QLOCK && w->obj == obj)
		w->holder = holder;
}

/*
 * Wake-ups that no switch wrote, of threads that exited since (resumed once a session's
 * hooks were off, before its stop drained them): kept for schedev_drain under
 * orphan_lock. Only a stopping session has any, and few (the threads that ran to their
 * end in the moment between the hooks going off and the drain); more than fit are
 * counted per core, for the session of orphan_gen.
 */
#define ORPHAN_SLOTS	16

static struct spinlock orphan_lock = SPINLOCK_INIT("schedev orphans");
static struct orphan {
	struct schedev_wake wk;		/* wk.gen 0: a free slot */
	uint32_t tid;
	uint32_t core;
} orphan[ORPHAN_SLOTS];
static uint32_t orphan_gen;		/* the session of orphan_more's counts */
static uint32_t orphan_more[MAX_CPUS];

/* orphan_lock held: keep wk, tid's on core, for the drain. */
static void orphan_keep(const struct schedev_wake *wk, uint32_t tid, uint32_t core)
{
	unsigned i;

	for (i = 0; i < ORPHAN_SLOTS && orphan[i].wk.gen; i++)
		;
	if (i < ORPHAN_SLOTS) {
		orphan[i] = (struct orphan){ *wk, tid, core };
		return;
	}
	if (orphan_gen != wk->gen)
		memset(orphan_more, 0, sizeof(orphan_more));
	orphan_gen = wk->gen;
	orphan_more[core]++;
}

void schedev_thread_gone(struct thread *t)
{
	struct schedev_wake *wk = thread_wake_slot(t);

	if (likely(!wk->gen))
		return;
	spin_lock(&orphan_lock);
	orphan_keep(wk, (uint32_t)thread_tid(t), (uint32_t)thread_core(t));
	spin_unlock(&orphan_lock);
	wk->gen = 0;
}

struct drain {
	uint32_t gen;
	schedev_drain_fn fn;
	void *arg;
};

/* thread_foreach: t's wake-up, if one of the session's is pending. */
static void drain_thread(struct thread *t, void *arg)
{
	struct drain *d = arg;
	struct schedev_wake *wk = thread_wake_slot(t);

	if (wk->gen == d->gen) {
		d->fn(wk, (uint32_t)thread_tid(t), (unsigned)thread_core(t), 1, d->arg);
		wk->gen = 0;
	}
}

/* orphan_lock held: the kept wake-ups of session gen to fn; the others' slots freed. */
static void drain_orphans(const struct drain *d)
{
	for (unsigned i = 0; i < ORPHAN_SLOTS; i++) {
		if (orphan[i].wk.gen == d->gen)
			d->fn(&orphan[i].wk, orphan[i].tid, orphan[i].core, 1, d->arg);
		orphan[i].wk.gen = 0;
	}
	for (unsigned k = 0; orphan_gen == d->gen && k < MAX_CPUS; k++)
		if (orphan_more[k]) {
			d->fn(NULL, 0, k, orphan_more[k], d->arg);
			orphan_more[k] = 0;
		}
}

/*
 * Live threads first (under the thread list's lock), then the orphans: a thread that exits
 * in between has had its wake-up taken already, so none is told twice or missed.
 */
void schedev_drain(uint32_t gen, schedev_drain_fn fn, void *arg)
{
	struct drain d = { gen, fn, arg };

	must(!schedev(), "the hooks unregistered: no switch or waker writes meanwhile");
	thread_foreach(drain_thread, &d);
	spin_lock(&orphan_lock);
	drain_orphans(&d);
	spin_unlock(&orphan_lock);
}
