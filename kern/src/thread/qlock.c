/*
 * Sleeping locks (qlock.h). Waiters sleep on the lock's rendez until it is free and then
 * race for it; qunlock wakes them all. Simple, and the critical sections it guards are
 * few and long, so the thundering herd is small.
 *
 * owner is written under q->lk but read without it (the rendez condition, qholding), so
 * it is accessed with relaxed atomics. Portable: the host tests build this file against
 * tests/host/shim, whose current() is the calling pthread.
 */
#include "qlock.h"
#include "thread.h"

void qlock_init(struct qlock *q)
{
	spinlock_init(&q->lk, "qlock");
	q->owner = NULL;
	rendez_init(&q->r);
}

static struct thread *owner(struct qlock *q)
{
	return __atomic_load_n(&q->owner, __ATOMIC_RELAXED);
}

static void set_owner(struct qlock *q, struct thread *t)
{
	__atomic_store_n(&q->owner, t, __ATOMIC_RELAXED);
}

static bool qlock_free(void *arg)
{
	return owner(arg) == NULL;
}

void qlock(struct qlock *q)
{
	struct thread *me = current();

	for (;;) {
		spin_lock(&q->lk);
		if (!q->owner) {
			set_owner(q, me);
			spin_unlock(&q->lk);
			return;
		}
		if (q->owner == me)
			panic("qlock: thread %d takes a qlock it holds", thread_tid(me));
		spin_unlock(&q->lk);
		rendez_sleep(&q->r, qlock_free, q);
	}
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
