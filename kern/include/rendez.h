/*
 * Sleep and wakeup, Plan 9 style. A rendez is where threads wait for a condition that
 * another context (thread or interrupt handler) makes true:
 *
 *	waiter:	rendez_sleep(&r, cond, arg);	returns once cond(arg) is true
 *	waker:	make cond true; rendez_wakeup(&r);
 *
 * No lost wakeups: rendez_sleep checks cond under the rendez lock and the waker takes the
 * same lock, so a wakeup between the check and the sleep is seen. cond runs with the
 * rendez lock held and interrupts off: it must only read state, never sleep or lock a
 * lock that is held while calling rendez_wakeup. Any number of threads may sleep on one
 * rendez; rendez_wakeup wakes them all. rendez_wakeup may be called from interrupt
 * context; the sleeps only from a thread.
 */
#ifndef RENDEZ_H
#define RENDEZ_H

#include "lock.h"

#ifdef HOST_SHIM
#include <pthread.h>
struct rendez {
	pthread_mutex_t mu;
	pthread_cond_t cv;
};
#else
struct thread;
struct rendez {
	struct spinlock lock;
	struct thread *waiters;	/* sleeping threads, linked by thread.rnext */
};
#endif

void rendez_init(struct rendez *r);
void rendez_sleep(struct rendez *r, bool (*cond)(void *), void *arg);
/* As rendez_sleep but gives up after usec microseconds; returns cond's last value. */
bool rendez_sleep_timeout(struct rendez *r, bool (*cond)(void *), void *arg, uint64_t usec);
/*
 * As rendez_sleep but also returns early when the sleeping thread is interrupted
 * (Ctrl-C on the console); returns -EINTR then, 0 when cond became true.
 */
int rendez_sleep_intr(struct rendez *r, bool (*cond)(void *), void *arg);
void rendez_wakeup(struct rendez *r);
/*
 * Set *flag and wake all, atomically for sleepers whose cond reads *flag: safe when a woken
 * sleeper frees the memory holding r (nothing touches r after the lock is released).
 */
void rendez_wakeup_set(struct rendez *r, bool *flag);

#endif
