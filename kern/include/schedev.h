/*
 * Scheduler and lock events: the hooks the thread layer calls so a profiler session can
 * record where every thread's time goes (kern/src/oprofile/sched_events.c implements them).
 *
 * Off (schedev_ops NULL) every hook is one load and a branch; the uncontended lock paths
 * have none at all. On, the hooks run in the context of the event, interrupts off:
 *	on_switch	on the core that switched, in the thread it switched to, after the
 *	on_block	run-queue lock is released and before the previous thread is freed
 *			(on_block when the previous thread waits, on_switch otherwise).
 *	on_wake		on the waker's core (thread or interrupt), after the wake.
 *	on_lock		in the thread (qlock) or core (spinlock) that finally took a
 *			contended lock, with the lock held.
 * A hook never sleeps, never takes a lock of the thread layer and may be re-entered only by
 * an NMI: the thread layer never calls one while holding a run-queue lock.
 *
 * Why a thread blocks: whoever is about to make the current thread wait says why with
 * schedev_wait (the first one to say it wins: a qlock's reason stands over the rendez it
 * sleeps on) and withdraws it with schedev_unwait when the wait is over.
 */
#ifndef SCHEDEV_H
#define SCHEDEV_H

#include "kernel.h"
#include "abi/oprofile.h"

struct thread;

/* What the current thread is about to wait for: struct thread's, set by schedev_wait. */
struct schedev_why {
	uint16_t set;		/* a reason is recorded */
	uint16_t why;		/* enum opf_why */
	uint32_t holder;	/* QLOCK: holder's tid */
	const void *obj;	/* the object waited on */
	const void *site;	/* RENDEZ: its condition function */
	const char *name;	/* QLOCK, IO: the object's name */
};

/*
 * One context switch, as on_switch / on_block see it. What only some switches need is not
 * built for all: prev's reason is a pointer, and its stack (fp, lo, hi) is filled only for
 * on_block.
 */
struct schedev_switch {
	uint32_t prev_tid, next_tid;
	uint16_t core;
	uint16_t why;		/* enum opf_why, resolved from prev's state and its schedev_why */
	uint64_t tsc;		/* when the switch happened (the scheduler's own time stamp) */
	uint64_t prev_cpu;	/* prev's running time so far, TSC ticks */
	const struct schedev_why *w;	/* prev's reason (obj, site, name, holder) */
	uintptr_t fp, lo, hi;	/* on_block: prev's saved frame pointer, its stack's bounds */
};

/* One contended lock acquisition, as on_lock sees it. */
struct schedev_lock {
	uint16_t kind;		/* enum opf_lock_kind */
	uint32_t tid, holder;	/* the waiter; the holder it found (or core | OPF_HOLDER_CORE) */
	const void *lock;
	const char *name;
	uint64_t start, tsc;	/* first found taken; taken at last */
	uintptr_t fp, lo, hi;	/* the waiter's frame, for its stack, and the stack's bounds */
};

struct schedev_ops {
	/* prev stays runnable (PREEMPT, YIELD) or is gone (EXIT): no stack wanted */
	void (*on_switch)(const struct schedev_switch *sw);
	/* prev waits (SLEEP, RENDEZ, QLOCK, IO): sw has its stack, frozen while it is off */
	void (*on_block)(const struct schedev_switch *sw);
	/* waker (a tid, 0 idle) on core -- this core -- made tid of target_core runnable */
	void (*on_wake)(uint32_t tid, int target_core, uint32_t waker, unsigned core);
	void (*on_lock)(const struct schedev_lock *lk);
	uint64_t spin_min;	/* report a spinlock only after this many TSC ticks of spinning */
};

extern const struct schedev_ops *schedev_ops;	/* NULL: no session records events */

static inline const struct schedev_ops *schedev(void)
{
	return __atomic_load_n(&schedev_ops, __ATOMIC_ACQUIRE);
}

/* The profiler, session lock held: start (ops) or stop (NULL) the hooks. */
void schedev_register(const struct schedev_ops *ops);

/*
 * Thread context: the current thread is about to wait for why (obj, site, name, holder as
 * opf_switch tells them). True if this call set the reason: the caller then calls
 * schedev_unwait once the wait is over. Does nothing (false) while no session listens.
 */
bool schedev_wait(unsigned why, const void *obj, const void *site, const char *name,
		  uint32_t holder);
void schedev_unwait(void);

#endif
