/*
 * Scheduler internals shared with the arch code and the rendez/lock code. Portable code
 * uses thread.h; only trap handling, rendez.c and qlock need these.
 */
#ifndef SCHED_H
#define SCHED_H

#include "lock.h"
#include "thread.h"

#define SCHED_HZ	100	/* preemption ticks per second per core */

/* Boot core: make the boot flow a thread. Each core: start its idle thread and tick. */
void sched_init(void);
__noreturn void sched_start_ap(void);

/*
 * End of a timer interrupt on c (this core, which the interrupt already holds: no lookup):
 * switch to another runnable thread if this one's slice is up. irq_was_on says whether the
 * interrupted context had interrupts enabled (and so held no spinlock); without it nothing
 * is done.
 */
struct cpu;
void sched_preempt_irq(struct cpu *c, bool irq_was_on);

/*
 * Sleep protocol for rendez.c. Caller has interrupts off and holds lk (the rendez lock),
 * and has queued itself where a waker will find it. Marks current sleeping, releases lk
 * and switches away; returns (interrupts still off, lk not held) once thread_wake made
 * it runnable again. obj and site: what it waits for when nobody said otherwise
 * (schedev_wait): a rendez wait, on rendez obj for condition site (scheduler events).
 */
void sched_sleep_release(struct spinlock *lk, const void *obj, const void *site);
/* Make t runnable if it is sleeping; any context. Wakes t's core from halt if needed. */
void thread_wake(struct thread *t);

/* Per-thread link fields for rendez.c and qlock */
struct thread **thread_rnext(struct thread *t);
struct rendez **thread_sleeping_on(struct thread *t);
/* What t keeps for the scheduler events (schedev.c): what it said it waits for, its wake-up */
struct schedev_why;
struct schedev_wake;
struct schedev_why *thread_why(struct thread *t);
struct schedev_wake *thread_wake_slot(struct thread *t);
uint64_t thread_cpu_tsc(struct thread *t);
int thread_core(struct thread *t);
enum thread_state thread_state(struct thread *t);


/*
 * The one sleep behind every rendez_sleep*: until cond(arg), or usec microseconds pass
 * (0: no timeout), or (if intr) the thread is interrupted. Returns 0 when cond held,
 * -ETIMEDOUT, or -EINTR (the interrupt stays pending for the caller to clear).
 */
struct rendez;
int rendez_sleep_until(struct rendez *r, bool (*cond)(void *), void *arg, uint64_t usec,
		       bool intr);
struct alarm *thread_sleep_alarm(struct thread *t);
/* Where t's file state lives (ns.c keeps descriptors and cwd there). */
struct fstate;
struct fstate **thread_fstate(struct thread *t);
/* Boot core: after kernel_main has started its threads, become this core's idle loop. */
__noreturn void sched_idle_boot(void);
#endif
