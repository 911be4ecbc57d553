/*
 * Sleeping locks (qlock.h). Waiters sleep on the lock's rendez until it is free and then
 * race for it; qunlock wakes them all. Simple, and the critical sections it guards are
 * few and long, so the thundering herd is small.
 *
 * owner is written under q->lk but read without it (the rendez condition, qholding), so
 * it is accessed with relaxed atomics. Portable: the host tests build this file against
 * tests/host/shim, whose current() is the calling pthread.
 *
 * Contention (schedev.h): the free lock is taken on a path with nothing added; a thread
 * that finds it held goes to qlock_wait, which says what it waits for (the lock, its name,
 * the holder) for the switch events, and once it holds the lock tells the session how long
 * it waited, for whom (the holder it first found), from where. While it waits the lock may
 * pass through several hands: rendez_sleep checks its condition (qlock_free_noting) before
 * every sleep, and that names the holder then (schedev_holder), so each switch-out of the
 * waiter names the thread holding the lock as it sleeps.
 */
#include "arch.h"
#include "qlock.h"
#include "schedev.h"
#include "thread.h"

void qlock_init_named(struct qlock *q, const char *name)
{
	spinlock_init(&q->lk, "qlock");
	q->owner = NULL;
	q->owner_tid = 0;
	q->name = name;
	rendez_init(&q->r);
}

void qlock_init(struct qlock *q)
{
	qlock_init_named(q, "qlock");
}

static struct thread *owner(struct qlock *q)
{
	return __atomic_load_n(&q->owner, __ATOMIC_RELAXED);
}

/* With q->lk held. owner_tid, then owner with release: a waiter that reads owner with
 * acquire (qlock_free_noting) reads that owner's tid, never the one before. */
static void set_owner(struct qlock *q, struct thread *t)
{
	__atomic_store_n(&q->owner_tid, t ? (uint32_t)thread_tid(t) : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&q->owner, t, __ATOMIC_RELEASE);
}

/*
 * qlock_wait's rendez condition, run by the waiter itself (under the rendez lock) before each
 * sleep: the lock is free; if not, the switch-out that follows names its holder now.
 */
static bool qlock_free_noting(void *arg)
{
	struct qlock *q = arg;

	uint32_t tid;

	if (!__atomic_load_n(&q->owner, __ATOMIC_ACQUIRE))	/* pairs with set_owner's */
		return true;
	tid = __atomic_load_n(&q->owner_tid, __ATOMIC_RELAXED);
	if (!tid)	/* freed since: qlock_wait's loop looks again under q->lk */
		return true;
	schedev_holder(q, tid);
	return false;
}

/* The session's hook, with q held: me waited from start for holder. */
static void qlock_event(const struct schedev_ops *ops, struct qlock *q, struct thread *me,
			uint32_t holder, uint64_t start)
{
	struct schedev_lock lk = {
		.kind = OPF_LK_QLOCK, .tid = (uint32_t)thread_tid(me), .holder = holder,
		.lock = q, .name = q->name, .start = start, .tsc = tsc_read(),
		.fp = (uintptr_t)__builtin_frame_address(0),
	};
	unsigned long f = irq_save();

	thread_stack(me, &lk.lo, &lk.hi);
	ops->on_lock(&lk);
	irq_restore(f);
}

/* q->lk held, q held by another: sleep until it is ours. Returns with q->lk released. */
static __attribute__((noinline)) void qlock_wait(struct qlock *q, struct thread *me)
{
	uint32_t holder = (uint32_t)thread_tid(q->owner);
	uint64_t start = tsc_read();
	const struct schedev_ops *ops;
	bool said;

	must(spin_holding(&q->lk), "q->lk held");
	if (q->owner == me)
		panic("qlock: thread %d takes a qlock it holds", thread_tid(me));
	said = schedev_wait(OPF_WHY_QLOCK, q, NULL, q->name, holder);
	do {
		spin_unlock(&q->lk);
		rendez_sleep(&q->r, qlock_free_noting, q);
		spin_lock(&q->lk);
	} while (q->owner);
	set_owner(q, me);
	spin_unlock(&q->lk);
	if (said)
		schedev_unwait();
	if ((ops = schedev()))
		qlock_event(ops, q, me, holder, start);
}

void qlock(struct qlock *q)
{
	struct thread *me = current();

	spin_lock(&q->lk);
	if (likely(!q->owner)) {
		set_owner(q, me);
		spin_unlock(&q->lk);
		return;
	}
	qlock_wait(q, me);
}

void qunlock(struct qlock *q)
{
	spin_lock(&q->lk);
	if (q->owner != current())
		panic("qunlock: thread %d does not hold it", thread_tid(current()));
	set_owner(q, NULL);
	spin_unlock(&q->lk);
	rendez_wakeup(&q->r);
}

bool qholding(struct qlock *q) { return owner(q) == current(); }
