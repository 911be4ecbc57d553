/*
 * Per-core alarms (alarm.h). Each core keeps its armed alarms in cpu->alarms, sorted by
 * deadline, and beside the list one fast alarm in cpu->fast (the sampler's, at thousands
 * of expiries a second: one compare per interrupt and no list walk to re-arm it). It
 * touches both only with interrupts off on that core, so no lock is needed.
 *
 * The invariant the rest leans on: whenever anything is armed, the LAPIC one-shot is
 * programmed for the earliest deadline of the two (reprogram, after every change and at
 * the end of every timer interrupt). A halted core whose one-shot is not armed never
 * wakes, and under -icount with sleep=off its clock does not even advance.
 */
#include "alarm.h"
#include "cpu.h"


void alarm_init(struct alarm *a, alarm_fn fn, void *arg)
{
	a->deadline = 0;
	a->period = 0;
	a->fn = fn;
	a->arg = arg;
	a->missed = 0;
	a->core = -1;
	a->spaced = false;
	a->fast = false;
	a->next = NULL;
}

static void insert(struct cpu *c, struct alarm *a)
{
	struct alarm **pp = &c->alarms;

	while (*pp && (*pp)->deadline <= a->deadline)
		pp = &(*pp)->next;
	a->next = *pp;
	*pp = a;
}

static void unlink(struct cpu *c, struct alarm *a)
{
	for (struct alarm **pp = &c->alarms; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	a->next = NULL;
}

/* Take a off whichever of the two places holds it (armed on c). */
static void take_off(struct cpu *c, struct alarm *a)
{
	if (c->fast == a)
		c->fast = NULL;
	else
		unlink(c, a);
}

/* Put a (deadline set, armed on c) in the fast slot if it asks and the slot is free. */
static void put_on(struct cpu *c, struct alarm *a)
{
	if (a->fast && a->period && !c->fast)
		c->fast = a;
	else
		insert(c, a);
}

/* The earliest deadline of the list head and the fast alarm, 0 if neither is armed. */
static __force_inline uint64_t next_deadline(const struct cpu *c)
{
	uint64_t d = c->alarms ? c->alarms->deadline : 0;
	const struct alarm *f = c->fast;

	if (f && (!d || f->deadline < d))
		d = f->deadline;
	return d;
}

/*
 * Program the timer for next_deadline (none: 0) unless it already is; interrupts off;
 * now: the TSC, just read.
 */
static void reprogram(struct cpu *c, uint64_t now)
{
	uint64_t d = next_deadline(c);

	if (d != c->timer_deadline) {
		c->timer_deadline = d;
		arch_timer_set(d, now);
	}
}

void alarm_set(struct alarm *a, uint64_t deadline, uint64_t period)
{
	unsigned long f = irq_save();
	struct cpu *c = this_cpu();

	if (a->core >= 0) {
		if (a->core != c->id)
			panic("alarm_set: alarm armed on cpu %d, set from cpu %d", a->core, c->id);
		take_off(c, a);
	}
	a->deadline = deadline;
	a->period = period;
	a->core = c->id;
	put_on(c, a);
	reprogram(c, tsc_read());
	irq_restore(f);
}

void alarm_cancel(struct alarm *a)
{
	unsigned long f = irq_save();
	struct cpu *c = this_cpu();

	if (a->core >= 0) {
		if (a->core != c->id)
			panic("alarm_cancel: alarm armed on cpu %d, cancelled from cpu %d",
			      a->core, c->id);
		take_off(c, a);
		a->core = -1;
		reprogram(c, tsc_read());
	}
	irq_restore(f);
}

bool alarm_armed(struct alarm *a) { return READ_ONCE(a->core) >= 0; }

/*
 * Interrupts off, in a's callback, a not in the fast slot (alarm_next): run_list re-armed
 * a before calling it, and alarm_interrupt programs the timer after it returns, so only
 * a's place in the sorted list needs keeping.
 */
void alarm_next_slow(struct alarm *a, uint64_t deadline)
{
	struct cpu *c = this_cpu();

	must(!irq_enabled(), "interrupts off: in the alarm's own callback");
	must(a->core == c->id, "the alarm's own core: moved from its callback only");
	unlink(c, a);
	a->deadline = deadline;
	insert(c, a);
}

/*
 * A periodic alarm due at now, re-armed a period on before its callback runs: if that is
 * due too (the core fell behind), the expiries skipped are counted in missed.
 */
static inline void advance(struct alarm *a, uint64_t now)
{
	a->deadline += a->period;
	if (unlikely(a->deadline <= now)) {
		uint64_t behind = (now - a->deadline) / a->period + 1;

		a->missed += behind;
		a->deadline += behind * a->period;
	}
}

/*
 * A spaced alarm still armed here whose next expiry came due while its callback ran: a
 * whole period past now instead, the expiries skipped counted in missed.
 */
static void respace(struct cpu *c, struct alarm *a, uint64_t now)
{
	a->missed += (now - a->deadline) / a->period + 1;
	unlink(c, a);
	a->deadline = now + a->period;
	insert(c, a);
}

/*
 * The fast alarm f, due at now: it stays in its slot, a period on, while its callback runs
 * (which may re-arm or cancel it), and is always spaced. Returns the TSC after the callback.
 */
static uint64_t run_fast(struct cpu *c, struct alarm *f, struct trapframe *tf, uint64_t now)
{
	f->fired = now;
	advance(f, now);
	f->fn(f, tf);
	now = tsc_read();
	if (unlikely(f->deadline <= now && c->fast == f)) {
		f->missed += (now - f->deadline) / f->period + 1;
		f->deadline = now + f->period;
	}
	return now;
}

/* Every due alarm of the sorted list, in deadline order. Returns the TSC after the last. */
static uint64_t run_list(struct cpu *c, struct trapframe *tf, uint64_t now)
{
	struct alarm *a;

	while ((a = c->alarms) && a->deadline <= now) {
		c->alarms = a->next;
		a->next = NULL;
		a->fired = now;
		if (a->period) {
			advance(a, now);
			insert(c, a);
		} else {
			a->core = -1;
		}
		a->fn(a, tf);
		now = tsc_read();
		/* still in the list here (its callback may have moved it to the fast slot) */
		if (unlikely(a->spaced && a->deadline <= now && a->core == c->id && c->fast != a))
			respace(c, a, now);
	}
	return now;
}

/*
 * Timer interrupt on core c, interrupts off, now: the TSC read on entry. The fast alarm
 * first if due (one compare), then every due alarm of the list; the TSC read after each
 * callback decides both whether more is due and the timer's count. Then the one-shot is
 * programmed again: the invariant at the top of this file holds on return.
 */
void alarm_interrupt(struct trapframe *tf, struct cpu *c, uint64_t now)
{
	struct alarm *f = c->fast;

	if (f && f->deadline <= now)
		now = run_fast(c, f, tf, now);
	if (c->alarms && c->alarms->deadline <= now)
		now = run_list(c, tf, now);
	/* the one-shot has fired: program it whatever timer_deadline says */
	c->timer_deadline = next_deadline(c);
	arch_timer_set(c->timer_deadline, now);
}

/*
 * Timer interrupt on core c, interrupts off, c standing still at tf in another core's slice
 * (turns.c), now at or past its deadline: when no alarm of the list is due -- only the fast
 * one, the sampler's, which records and schedules nothing -- what alarm_interrupt does, and
 * true. Else nothing, and false: the caller returns to take the timer interrupt, which
 * runs them (a wake-up, the scheduler tick), so that they act as on any other core.
 */
bool alarm_interrupt_fast_only(struct trapframe *tf, struct cpu *c, uint64_t now)
{
	if (c->alarms && c->alarms->deadline <= now)
		return false;
	alarm_interrupt(tf, c, now);
	return true;
}
