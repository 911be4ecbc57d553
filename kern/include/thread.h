/*
 * Kernel threads. Every thread is pinned to the core it was created on and runs there
 * until it exits; each core has its own run queue and preempts on its timer tick. A core
 * with nothing to run halts in its idle thread (tid 0 in profiles).
 */
#ifndef THREAD_H
#define THREAD_H

#include "kernel.h"

#define THREAD_NAME_LEN	32	/* including NUL */

enum thread_state { T_RUNNABLE, T_RUNNING, T_SLEEPING, T_DEAD };

struct thread;
typedef void (*thread_fn)(void *arg);

/*
 * Create a thread on core (any online core) running fn(arg); returning from fn exits it.
 * Thread context only. Returns NULL when memory is out or core is not online.
 */
struct thread *kthread_create(const char *name, int core, thread_fn fn, void *arg);
__noreturn void kthread_exit(void);
/* Wait until t has exited and free it; returns 0. Each thread is joined at most once. */
int kthread_join(struct thread *t);
/* Mark t detached: it frees itself when it exits (no join). */
void kthread_detach(struct thread *t);

struct thread *current(void);	/* NULL before threads run on this core */

/*
 * The head of every struct thread, for the inline accessors below, which the profiler's
 * interrupt and NMI paths call at every sample: sched.c keeps these fields first, in this
 * order (it asserts so).
 */
struct thread_head {
	int tid;		/* 0 for idle threads */
	int core;		/* the core it is pinned to */
	uintptr_t stack_lo;	/* the stack it runs on now, [lo, hi): its own or an app's; */
	uintptr_t stack_hi;	/* 0 (no stack) while thread_set_stack changes the two */
};

static inline int thread_tid(struct thread *t)
{
	return t ? ((const struct thread_head *)t)->tid : 0;
}

/*
 * Stack bounds of t: [lo, hi), for the profiler's unwinder; any context. An NMI landing in
 * thread_set_stack sees the old bounds, the new ones, or hi 0 (an empty stack).
 */
static inline void thread_stack(struct thread *t, uintptr_t *lo, uintptr_t *hi)
{
	const struct thread_head *h = (const struct thread_head *)t;

	*lo = READ_ONCE(h->stack_lo);
	*hi = READ_ONCE(h->stack_hi);
}

const char *thread_name(struct thread *t);
/*
 * t (the current thread) runs on the stack [lo, hi) from now on, until called again with
 * 0, 0 (back on its own): app instances run main on a stack of their own.
 */
void thread_set_stack(struct thread *t, uintptr_t lo, uintptr_t hi);

void yield(void);
/* Sleep at least usec microseconds; returns -EINTR if interrupted first, else 0. */
int thread_sleep_us(uint64_t usec);

/* Ctrl-C: ask t to stop what it is waiting for (interruptible sleeps return -EINTR). */
void thread_interrupt(struct thread *t);
bool thread_interrupted(void);	/* current thread has a pending interrupt; clears it */
bool thread_interrupt_pending(void);	/* as above but does not clear */

/*
 * Hooks the profiler registers to hear of threads (so the stream can name them):
 * on_create runs in the creating thread's context after the thread is set up.
 */
void thread_set_create_hook(void (*hook)(struct thread *t));
/* Call fn for every live thread (thread context; fn must not sleep). */
void thread_foreach(void (*fn)(struct thread *t, void *arg), void *arg);
/*
 * The same for a panic (the crash dump), interrupts off and every other core stopped: no
 * lock is taken, and at most max threads are visited.
 */
void thread_foreach_stopped(void (*fn)(struct thread *t, void *arg), void *arg, unsigned max);

#endif
