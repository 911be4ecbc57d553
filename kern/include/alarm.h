/*
 * Per-core alarms: run a callback in interrupt context on the core that set the alarm,
 * at a TSC deadline, once or periodically. All of a core's alarms share its LAPIC timer,
 * which is programmed for the earliest deadline (TSC-deadline mode when the CPU has it,
 * one-shot mode otherwise).
 *
 * The callback runs with interrupts off, must not sleep, and gets the interrupted context
 * (for the profiler). A periodic alarm is re-armed at deadline + period before its
 * callback runs, so periods do not drift; if the core fell behind by more than a period,
 * missed expiries are skipped (the callback learns how many from alarm.missed). The
 * callback finds the TSC at which the interrupt found it due in alarm.fired.
 *
 * A spaced periodic alarm (spaced set after alarm_init) never runs twice back to back: if
 * its next expiry is already due when its callback returns (the callback, or the emulator
 * running the core, was slower than the period), it moves a whole period past now, and
 * the expiries skipped count in missed. Otherwise a core overloaded by it would stay in its
 * timer interrupt (alarm_interrupt runs every due expiry before returning).
 *
 * A fast periodic alarm (fast set after alarm_init, beside spaced: the profiler's sampling
 * alarm, thousands of expiries a second) is kept in its core's one fast slot instead of the
 * sorted list when the slot is free, which makes its expiry one compare and its re-arm no
 * list walk; otherwise it is an ordinary alarm. Behaviour is the same either way, except
 * that in the slot it is always spaced and, due together with list alarms, runs first.
 */
#ifndef ALARM_H
#define ALARM_H

#include "kernel.h"
#include "cpu.h"

struct trapframe;	/* opaque; see arch accessors below */
struct alarm;
typedef void (*alarm_fn)(struct alarm *a, struct trapframe *tf);

struct alarm {
	uint64_t deadline;	/* TSC */
	uint64_t period;	/* TSC ticks; 0 for one-shot */
	alarm_fn fn;
	void *arg;		/* for fn */
	uint64_t missed;	/* periodic expiries skipped because the core was late */
	uint64_t fired;		/* TSC of the interrupt that last ran fn */
	int core;		/* core it is armed on, -1 when not armed */
	bool spaced;		/* never due again as fn returns (above); alarm_init clears */
	bool fast;		/* keep in the core's fast slot if free (above); init clears */
	struct alarm *next;	/* per-core list, sorted by deadline */
};

void alarm_init(struct alarm *a, alarm_fn fn, void *arg);
/*
 * Arm a on the calling core (interrupts may be on or off): first expiry at deadline (TSC),
 * then every period ticks if period != 0. Re-arming an armed alarm moves it.
 */
void alarm_set(struct alarm *a, uint64_t deadline, uint64_t period);
/*
 * In a's own callback on c (its core, interrupts off), a periodic alarm: its next expiry at
 * deadline instead of a period after this one's (those after it a period apart from there,
 * unless moved again): a jittered period, the sampler's. In the fast slot (c's own, so a
 * is armed on c) that is one store; anywhere else alarm_next_slow keeps the list sorted.
 */
void alarm_next_slow(struct alarm *a, uint64_t deadline);
static inline void alarm_next(struct cpu *c, struct alarm *a, uint64_t deadline)
{
	if (likely(c->fast == a))
		a->deadline = deadline;
	else
		alarm_next_slow(a, deadline);
}
/* Disarm; a must be armed on the calling core or not at all. Callable from its callback. */
void alarm_cancel(struct alarm *a);
bool alarm_armed(struct alarm *a);

struct cpu;
/*
 * Called by the arch timer interrupt on core c (this core) with now, the TSC read on
 * entry: run the due alarms of this core, reprogram the timer.
 */
void alarm_interrupt(struct trapframe *tf, struct cpu *c, uint64_t now);
/* The same for a core standing still (turns.c) if only the fast alarm is due, else false. */
bool alarm_interrupt_fast_only(struct trapframe *tf, struct cpu *c, uint64_t now);

#endif
