/*
 * Sleeping locks (qlock.h). Waiters sleep on the lock's rendez until it is free and then
 * race for it; qunlock wakes them all. Simple, and the critical sections it guards are
 * few and long, so the thundering herd is small.
 */
#include "qlock.h"
#include "thread.h"

void qlock_init(struct qlock *q)
{
	spinlock_init(&q->lk, "qlock");
	q->owner = NULL;
	rendez_init(&q->r);
}

static bool qlock_free(void *arg)
{
	return READ_ONCE(((struct qlock *)arg)->owner) == NULL;
}

void qlock(struct qlock *q)
{
	struct thread *me = current();

	for (;;) {
		spin_lock(&q->lk);
		if (!q->owner) {
			q->owner = me;
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
	q->owner = NULL;
	spin_unlock(&q->lk);
	rendez_wakeup(&q->r);
}

bool qholding(struct qlock *q) { return READ_ONCE(q->owner) == current(); }
