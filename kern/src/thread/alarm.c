/*
 * Per-core alarms (alarm.h). Each core keeps its armed alarms in cpu->alarms, sorted by
 * deadline, and touches the list only with interrupts off on that core, so no lock is
 * needed. The LAPIC timer is programmed for the head's deadline whenever the head
 * changes; the timer interrupt runs every due alarm in deadline order.
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

/* Program the timer for the earliest alarm; interrupts off; now: the TSC, just read. */
static void reprogram(struct cpu *c, uint64_t now)
{
	uint64_t d = c->alarms ? c->alarms->deadline : 0;

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
		unlink(c, a);
	}
	a->deadline = deadline;
	a->period = period;
	a->core = c->id;
	insert(c, a);
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
		unlink(c, a);
		a->core = -1;
		reprogram(c, tsc_read());
	}
	irq_restore(f);
}

bool alarm_armed(struct alarm *a) { return READ_ONCE(a->core) >= 0; }

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
 * Timer interrupt, interrupts off: run every due alarm, then re-program. The TSC read
 * after each callback decides both whether another alarm (or a spaced one's next
 * expiry) is due and the timer's count: one read per alarm run.
 */
void alarm_interrupt(struct trapframe *tf)
{
	struct cpu *c = this_cpu();
	struct alarm *a;
	uint64_t now = tsc_read();

	c->timer_deadline = 0;		/* the one-shot has fired */
	while ((a = c->alarms) && a->deadline <= now) {
		c->alarms = a->next;
		a->next = NULL;
		a->fired = now;
		if (a->period) {
			a->deadline += a->period;
			if (a->deadline <= now) {
				uint64_t behind = (now - a->deadline) / a->period + 1;

				a->missed += behind;
				a->deadline += behind * a->period;
			}
			insert(c, a);
		} else {
			a->core = -1;
		}
		a->fn(a, tf);
		now = tsc_read();
		if (unlikely(a->spaced && a->deadline <= now && a->core == c->id))
			respace(c, a, now);
	}
	reprogram(c, now);
}
