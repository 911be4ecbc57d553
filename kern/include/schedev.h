/*
 * Scheduler and lock events: the hooks the thread layer calls so a profiler session can
 * record where every thread's time goes (kern/src/oprofile/sched_events.c implements them).
 *
 * Off (schedev_ops NULL) every hook is one load and a branch; the uncontended lock paths
 * have none at all. On, the hooks run in the context of the event, interrupts off:
 *	on_switch	on the core that switched, in the thread it switched to, after the
 *	on_block	run-queue lock is released and before the previous thread is freed
 *			(on_block when the previous thread waits, on_switch otherwise).
 *	(wake-ups)	no hook: the waker (thread or interrupt, any core) leaves who, where
 *			and when in the woken thread (struct schedev_wake, under the woken
 *			thread's run-queue lock, before it is queued), and the switch that
 *			resumes it hands that to on_switch / on_block (sw->wk), which write
 *			the wake-up with the switch. What no switch wrote by the session's
 *			stop the profiler takes with schedev_drain.
 *	on_lock		in the thread (qlock) or core (spinlock) that finally took a
 *			contended lock, with the lock held.
 * A hook never sleeps, never takes a lock of the thread layer and may be re-entered only by
 * an NMI: the thread layer never calls one while holding a run-queue lock.
 *
 * The thread layer's side of this boundary -- registration, the reasons said, the wake-ups
 * kept for the stop -- is kern/src/thread/schedev.c; sched.c calls the hooks.
 *
 * Why a thread blocks: whoever is about to make the current thread wait says why with
 * schedev_wait (the first one to say it wins: a qlock's reason stands over the rendez it
 * sleeps on) and withdraws it with schedev_unwait when the wait is over. A wait nobody
 * said anything about is a rendez wait, on the rendez and condition the sleep passed to
 * sched_sleep_release (no call: two stores into the thread).
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
 * A wake-up not yet written, in the woken thread: pending for the session whose gen it
 * holds (schedev_ops.gen), until the switch that resumes the thread or the session's stop
 * takes it. A thread is woken only while it sleeps, so one slot is enough: it is written
 * before the thread runs, and read only after (the run-queue lock orders them).
 */
struct schedev_wake {
	uint64_t tsc;		/* when it was made runnable */
	uint32_t waker;		/* the waker's tid (0: idle; an interrupt: the thread it hit) */
	uint16_t core;		/* the waker's core */
	uint16_t pad;
	uint32_t gen;		/* the session it belongs to; 0 or another's: none pending */
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
	struct schedev_wake *wk;	/* next's wake-up (on_switch[1], on_block[1] write it) */
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
	/*
	 * prev stays runnable (PREEMPT, YIELD) or is gone (EXIT): no stack wanted. Index:
	 * 1 when next has a wake-up of this session pending (sw->wk->gen == gen), which the
	 * hook writes (and takes: no longer pending); 0 when not, sw->wk not to be touched.
	 */
	void (*on_switch[2])(const struct schedev_switch *sw);
	/* prev waits (SLEEP, RENDEZ, QLOCK, IO): sw has its stack, frozen while it is off */
	void (*on_block[2])(const struct schedev_switch *sw);
	void (*on_lock)(const struct schedev_lock *lk);
	uint64_t spin_min;	/* report a spinlock only after this many TSC ticks of spinning */
	uint32_t gen;		/* this session's, never 0: wake-ups are stamped with it */
};

extern const struct schedev_ops *schedev_ops;	/* NULL: no session records events */

static inline const struct schedev_ops *schedev(void)
{
	return __atomic_load_n(&schedev_ops, __ATOMIC_ACQUIRE);
}

/* The profiler, session lock held: start (ops) or stop (NULL) the hooks. */
void schedev_register(const struct schedev_ops *ops);

/*
 * The session's stop, hooks unregistered and every core quiet (no waker or switch is inside):
 * fn for every wake-up of session gen that no switch wrote -- each thread's (w, its tid and
 * core; then no longer pending), also of threads that exited since (resumed while the
 * session stopped), and as (NULL, 0, core, n) the n of those the thread layer could not
 * keep. Takes the thread list's lock, then the orphans' (schedev.c).
 */
typedef void (*schedev_drain_fn)(const struct schedev_wake *w, uint32_t tid, unsigned core,
				 uint32_t n, void *arg);
void schedev_drain(uint32_t gen, schedev_drain_fn fn, void *arg);

/* The thread list's lock held: t exits; a wake-up still pending in it is kept for the drain. */
void schedev_thread_gone(struct thread *t);

/*
 * Thread context: the current thread is about to wait for why (obj, site, name, holder as
 * opf_switch tells them). True if this call set the reason: the caller then calls
 * schedev_unwait once the wait is over. Does nothing (false) while no session listens.
 */
bool schedev_wait(unsigned why, const void *obj, const void *site, const char *name,
		  uint32_t holder);
void schedev_unwait(void);
/*
 * Thread context, interrupts off or not: if the current thread's reason is a qlock wait on
 * obj, its holder is now holder. A qlock waiter sleeps again each time the lock changes
 * hands; each of its switch-outs names the holder then, not the one it first found.
 */
void schedev_holder(const void *obj, uint32_t holder);

#endif
