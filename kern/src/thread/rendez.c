/*
 * Sleep and wakeup (see rendez.h for the contract).
 *
 * A sleeper takes the rendez lock, checks cond, and if false queues itself on r->waiters
 * and calls sched_sleep_release, which marks it sleeping under its core's run-queue lock
 * before dropping the rendez lock. A waker takes the rendez lock, so it either runs before
 * the sleeper's check (which then sees cond true) or after the sleeper is queued (and
 * wakes it). Timeouts use the thread's own alarm on its own core; an interrupt (Ctrl-C)
 * wakes the thread directly. Every wakeup is treated as a hint: the sleeper dequeues
 * itself and rechecks.
 */
#include "alarm.h"
#include "cpu.h"
#include "error.h"
#include "rendez.h"
#include "sched.h"
#include "tsctime.h"

void rendez_init(struct rendez *r)
{
	spinlock_init(&r->lock, "rendez");
	r->waiters = NULL;
}

static void dequeue(struct rendez *r, struct thread *t)
{
	for (struct thread **pp = &r->waiters; *pp; pp = thread_rnext(*pp))
		if (*pp == t) {
			*pp = *thread_rnext(t);
			return;
		}
}

int rendez_sleep_until(struct rendez *r, bool (*cond)(void *), void *arg, uint64_t usec,
		       bool intr)
{
	struct thread *t = current();
	struct alarm *a = thread_sleep_alarm(t);
	uint64_t deadline = usec ? tsc_read() + tsc_of_us(usec) : 0;
	unsigned long f = irq_save();
	int ret = 0;

	if (deadline)
		alarm_set(a, deadline, 0);
	spin_lock(&r->lock);
	while (!cond(arg)) {
		if (intr && thread_interrupt_pending()) {
			ret = -EINTR;
			break;
		}
		if (deadline && tsc_read() >= deadline) {
			ret = -ETIMEDOUT;
			break;
		}
		*thread_rnext(t) = r->waiters;
		r->waiters = t;
		*thread_sleeping_on(t) = intr ? r : NULL;
		/* the reason, unless one was said: a rendez wait on r for cond */
		sched_sleep_release(&r->lock, r, (const void *)cond);
		spin_lock(&r->lock);
		*thread_sleeping_on(t) = NULL;
		dequeue(r, t);
	}
	spin_unlock(&r->lock);
	if (deadline)
		alarm_cancel(a);
	irq_restore(f);
	return ret;
}

void rendez_sleep(struct rendez *r, bool (*cond)(void *), void *arg)
{
	rendez_sleep_until(r, cond, arg, 0, false);
}

bool rendez_sleep_timeout(struct rendez *r, bool (*cond)(void *), void *arg, uint64_t usec)
{
	return rendez_sleep_until(r, cond, arg, usec ? usec : 1, false) == 0;
}

int rendez_sleep_intr(struct rendez *r, bool (*cond)(void *), void *arg)
{
	return rendez_sleep_until(r, cond, arg, 0, true);
}

/*
 * Wake every sleeper, setting *flag first (if flag) as one step under the rendez lock. For
 * a rendez that lives in an object a woken sleeper may free (a thread's exit rendez): a
 * sleeper can only see *flag under the lock, and the release of the lock is the last
 * access to r.
 */
static void wake_all(struct rendez *r, bool *flag)
{
	unsigned long f = irq_save();
	struct thread *t;

	spin_lock(&r->lock);
	if (flag)
		WRITE_ONCE(*flag, true);
	while ((t = r->waiters)) {
		r->waiters = *thread_rnext(t);
		thread_wake(t);
	}
	spin_unlock(&r->lock);
	irq_restore(f);
}

void rendez_wakeup(struct rendez *r)
{
	wake_all(r, NULL);
}

void rendez_wakeup_set(struct rendez *r, bool *flag)
{
	wake_all(r, flag);
}
