/*
 * The writer guard: the one protocol by which anything writes into a core's buffers, and
 * by which an NMI that lands inside such a writer hands its sample over. Every writer
 * uses it, by these names: the sampling interrupt (hotpath.c), scheduler and lock events
 * (sched_events.c), thread names (hotpath.c) and a flight-recorder hand-over (flight.c).
 *
 * A writer runs on the core whose buffers it writes, with interrupts off (its sampling
 * interrupt or NMI, or a thread on that core), and writes only between hot_enter and
 * hot_leave, which set and clear nest:
 *
 *	if (!hot_on(c) || c->nest)	the gate is closed, or a writer is inside already:
 *		return;			the caller counts what it could not write
 *	hot_enter(c);
 *	... reserve, write, push ...
 *	hot_leave(c);
 *
 * Interrupts are off in every writer, so only an NMI can land inside one. An NMI that
 * finds nest set (hotpath.c, hot_defer) walks the stack with its own scratch and leaves
 * its sample in pend (or, pend taken, counts it in pend.overflow: pend.ovf_paused while
 * paused), touching nothing else, and sets pend.any last. The writer it interrupted
 * records that on its way out: hot_leave looks at pend.any, clears nest, and looks once
 * more -- an NMI deferred between the check and the clear found nest still set and left
 * its sample; then the writer takes nest back and records it (hot_leave_slow). nest and
 * pend belong to the core alone, so plain loads and stores ordered against the compiler
 * (signal_fence) are all it takes: no lock, no atomic read-modify-write, no CPU fence.
 *
 * The gate (on): the ctl thread sets it with release once the session's state is ready
 * (opcore_enable); a writer reads it with acquire (a plain load on x86). To stop a core
 * the ctl thread closes it and waits out every writer context (session.c,
 * session_stop_cores): afterwards no writer is inside, nor will one enter, and the ctl
 * thread may act for the core itself (hot_* called with nest clear and the gate closed).
 *
 * Inside the guard the worker is kicked by irq work only (worker_kick): a writer's caller
 * may hold the locks a wake-up takes (an event under the spinlock it reports) or be an NMI.
 */
#ifndef OPROF_GUARD_H
#define OPROF_GUARD_H

#include "internal.h"

/* Any context: whether the core records (acquire: its session state is ready if so). */
static __force_inline bool hot_on(const struct opcore *c)
{
	return __atomic_load_n(&c->on, __ATOMIC_ACQUIRE) != 0;
}

/*
 * Whose c's state is to write (the rule of hot_*): the core's own writer (nest set, on c's
 * core), or the ctl thread acting for the core once it is stopped (gate closed, session
 * lock held). For the writers' slow paths: the common ones cannot afford the look.
 */
#define must_own_core(c)							\
	must((c)->nest ? (c) == &opcores[core_id()] : !hot_on(c) && qholding(&oprof.lock), \
	     "this core's state only: its own writer, or the ctl thread once it is stopped")

/* Enter: on c's core, interrupts off, the gate seen open and nest clear. */
static __force_inline void hot_enter(struct opcore *c)
{
	c->nest = 1;
	signal_fence();
}

/* Whether an NMI left a sample (or an overflow) for this writer to record. */
static __force_inline bool hot_pending(const struct opcore *c)
{
	return __atomic_load_n(&c->pend.any, __ATOMIC_RELAXED) != 0;
}

/*
 * Clear nest unless an NMI left something: true when the writer is out. False when an NMI
 * deferred between the caller's check and the clear: nest is set again, and the caller
 * records what it left before trying again.
 */
static __force_inline bool hot_try_out(struct opcore *c)
{
	signal_fence();
	c->nest = 0;
	signal_fence();
	if (likely(!hot_pending(c)))
		return true;
	c->nest = 1;	/* an NMI deferred between the check and the clear */
	signal_fence();
	return false;
}

/* hotpath.c: record what NMIs left, then leave (the rare end of hot_leave). */
void hot_leave_slow(struct opcore *c);

/* Leave, recording what NMIs left meanwhile (one may land as we leave). */
static __force_inline void hot_leave(struct opcore *c)
{
	if (likely(!hot_pending(c)) && likely(hot_try_out(c)))
		return;
	hot_leave_slow(c);
}

#endif
