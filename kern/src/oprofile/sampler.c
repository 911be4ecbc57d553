/*
 * The sampling source: per-core alarms (timer) or the arch's NMI source, and the clock
 * that counts missed periods. Kernel-only; glue.c hands these to the profiler as hooks.
 *
 * Sampling by timer: each core has its own periodic alarm (alarm.c), which runs
 * sample_alarm in that core's timer interrupt; it turns the trap frame and the current
 * thread into a struct oprof_tick and hands it to the portable hot path. Alarms can only
 * be armed and cancelled on their own core, so start and stop run a short thread on every
 * core (the "arm" and "disarm" threads) and join them all: once every disarm thread has
 * run, no core is inside sample_alarm or will enter it again.
 *
 * A core never takes two samples back to back: the sampler's alarm is spaced (alarm.h): if,
 * after a tick, its next expiry is already due (the tick, or the emulator running the
 * core, was slower than the period), alarm_interrupt moves it a whole period past now,
 * which changes alarm.missed, so the next tick recounts. Otherwise an overloaded core
 * would stay in its timer interrupt, starving its threads -- on core 0, the worker, which
 * then starves every core of empty blocks. The tick's time is the interrupt's own reading
 * (alarm.fired): the sample costs no TSC read of its own. The overhead
 * budget (budget.c) lowers such a core's rate through sampler_set_rate, which re-arms the
 * core's alarm with the longer period from inside the alarm's own callback.
 *
 * Missed ticks are counted by the clock, not by the alarm: a core armed for T at period p
 * owes T / p ticks (summed over its rates), and whatever it did not take it missed --
 * skipped by alarm_interrupt, moved out by the rule above, or lost to a core held off
 * (interrupts off; under emulation or a hypervisor, its virtual CPU not running, even in
 * the middle of a tick). So taken + missed is the periods the core was armed for, exactly,
 * however the delays fell. The count is recomputed (a division) only on a tick that was
 * late, and once more at disarm for OPF_CORE_END.missed.
 *
 * Jitter (jitter.h): the session's sample k on a core is taken at its grid point, k periods
 * after the core was armed at its rate, moved by an offset spread over the session's
 * jitter percent of a period, drawn from the session's seed: so no loop can alias with the
 * period, and the count of periods by the clock stays exact. By timer, the core's alarm is
 * periodic and each tick moves the next expiry to the next slot's moment (next_slot: the
 * core's id is its stream); by NMI, the arch places every period's NMI so (arch_nmi_start).
 *
 * Sampling by NMI (source OPF_SRC_NMI, "-m nmi"): the arch's NMI source (arch.h) delivers
 * every period of the session's rate to every core, interrupts on or off, and calls
 * nmi_sample there. A core whose budget lowered its rate samples every div-th period, div
 * the session's rate over its own, letting div - 1 pass between samples (sampler.pass;
 * sampler_set_rate, called from inside nmi_sample, only changes that: nothing to re-arm).
 * Missed periods are counted by the clock as above: a period a core was held off for
 * entirely (its virtual CPU not running; an NMI that found the last one still in
 * progress) is missed. Nothing in NMI context may take a lock: the worker's kick goes
 * through the arch's irq work (glue.c), and stop is arch_nmi_stop, which returns when no
 * core is in nmi_sample any more.
 *
 * Contexts: sampler_start and sampler_stop in the ctl thread (session lock held);
 * sampler_set_rate on the core, inside its tick; sampler_by_nmi anywhere.
 */
#include "alarm.h"
#include "cpu.h"
#include "error.h"
#include "jitter.h"
#include "abi/oprofile.h"
#include "oprofile.h"
#include "sampler.h"
#include "sched.h"
#include "thread.h"

/*
 * One per core; written only on that core (by its alarm, its arm and disarm threads, or its
 * NMI handler), or by start and stop while nothing samples.
 */
struct sampler {
	struct alarm alarm;
	uint64_t period;	/* TSC ticks between samples at the core's current rate */
	uint64_t seg_start;	/* TSC at which the alarm was armed with this period */
	uint64_t seg_periods;	/* periods owed at the core's earlier rates */
	uint64_t ticks;		/* samples taken since arming */
	uint64_t missed;	/* periods owed - ticks, as last computed */
	uint64_t alarm_missed;	/* timer: alarm.missed when missed was last computed */
	uint64_t last;		/* NMI: TSC of the last sample */
	uint64_t late;		/* NMI: a gap this long (or longer) missed a period */
	uint64_t win;		/* timer: where the window of the slot the alarm is set for starts:
				 * its grid point less half the jitter's width (jitter.h) */
	uint64_t draw;		/* timer: that slot's draw (jitter.h) */
	uint64_t width;		/* timer: ticks its samples' moments spread over (jitter.h) */
	uint64_t key;		/* timer: its jitter stream's key, the core's (jitter.h) */
	uint32_t pass;		/* NMI: periods to let pass between samples: div - 1 */
	uint32_t skip;		/* NMI: periods to let pass before the next sample */
	struct cpu *cpu;	/* timer: its core, set at arming */
} __aligned(CACHELINE);

static struct sampler samplers[MAX_CPUS];
static uint64_t sample_period;		/* TSC ticks between samples at the session's rate */
static uint32_t sample_hz;		/* the session's rate */
static uint32_t sample_spread;		/* the session's jitter, percent of a period */
static uint64_t sample_seed;		/* its seed */
static bool by_nmi;			/* this session samples by NMI (set while none runs) */

/* On s's core: periods owed up to now, less the ticks taken (0 if ahead by a partial one). */
static uint64_t sampler_missed(struct sampler *s, uint64_t now)
{
	uint64_t owed = s->seg_periods + (now - s->seg_start) / s->period;

	return owed > s->ticks ? owed - s->ticks : 0;
}

/*
 * The tick for the context tf interrupted on this core at tsc. Interrupt or NMI context:
 * cur may be NULL (a core just online) or already the next thread while fp is still in the
 * last one's stack (mid swtch); the walk is bounded by cur's stack, so it then stops at once.
 */
static __force_inline void tick_from(struct oprof_tick *tick, const struct trapframe *tf,
				     struct cpu *c, uint64_t tsc)
{
	struct thread *t = c->cur;
	uintptr_t lo = 0, hi = 0;

	/* every field stored once (a compound literal would clear the struct first) */
	if (t)
		thread_stack(t, &lo, &hi);
	tick->tsc = tsc;
	tick->tid = (uint32_t)thread_tid(t);
	tick->core = (uint16_t)c->id;
	tick->flags = t == c->idle && READ_ONCE(c->in_idle) ? OPF_F_IDLE : 0;
	tick->stack_lo = lo;
	tick->stack_hi = hi;
	tick->leaf_ret = arch_tf_where(tf, lo, hi, &tick->pc, &tick->fp);
}

/*
 * On s's core, interrupts off: slot slot of the rate from seg_start on is the next, its
 * draw x; the moment to take it at (its grid point, jittered). Off the hot path: a new
 * rate (slot 1), or a tick that came late (late_slot).
 */
static uint64_t set_slot(struct sampler *s, uint64_t slot, uint64_t x)
{
	must(s->cpu == this_cpu() && !irq_enabled(),
	     "on the sampler's own core, interrupts off: in its alarm or before it is set");
	s->win = s->seg_start + slot * s->period - s->width / 2;
	s->draw = x;
	return s->win + (s->width ? jitter_into(s->draw, s->width) : 0);
}

/* On s's core, before its alarm is set: the first slot of a rate, its moment. */
static uint64_t first_slot(struct sampler *s)
{
	s->width = jitter_width(s->period, sample_spread);
	return set_slot(s, 1, jitter_next(s->key));
}

/*
 * Timer interrupt, in the sampler's alarm callback on s's core, jitter on, the tick late
 * by a period or more (the alarm skipped or moved expiries, alarm.missed changed): the
 * next slot is the one after the slot whose window the tick fired in (slot k's is the
 * period centred on its grid point), its draw a jump from the slot's it was set for
 * (jitter_skip: as many steps as the bits of the slots skipped).
 */
static __noinline void late_slot(struct sampler *s, struct alarm *a)
{
	/* the slot it was set for */
	uint64_t set = (s->win + s->width / 2 - s->seg_start) / s->period;
	uint64_t slot = (a->fired - s->seg_start + s->period / 2) / s->period + 1;

	alarm_next(s->cpu, a, set_slot(s, slot, jitter_skip(s->draw, slot - set)));
}

/*
 * Timer interrupt, in the sampler's alarm callback on s's core, jitter on, the tick on
 * time (alarm.missed unchanged): set the alarm for the next slot's moment (run_fast
 * re-armed it a whole period on). Its window starts a period on, its draw one step from
 * this one's (jitter.h): an add, a multiply-add and a multiply (jitter_into: the window
 * kept, not the grid point, no half width to take off). A tick late by less than
 * a period still takes the next slot at its moment; a moment already past when the tick
 * returns is the alarm's spaced case (alarm.h): moved a period past now and counted in
 * alarm.missed, so the next tick takes late_slot and is back on the grid.
 */
static __force_inline void next_slot(struct sampler *s, struct alarm *a)
{
	s->win += s->period;
	s->draw = jitter_next(s->draw);
	alarm_next(s->cpu, a, s->win + jitter_into(s->draw, s->width));
}

/* Timer interrupt on the alarm's core (a->arg: its sampler), interrupts off. */
static void sample_alarm(struct alarm *a, struct trapframe *tf)
{
	struct sampler *s = a->arg;
	struct oprof_tick tick;

	tick_from(&tick, tf, s->cpu, a->fired);
	s->ticks++;
	/* before the tick, which may set a new rate: the next slot */
	if (unlikely(a->missed != s->alarm_missed)) {
		/* late by a period or more: alarm_interrupt skipped expiries, or the last moved */
		s->alarm_missed = a->missed;
		s->missed = sampler_missed(s, tick.tsc);
		if (s->width)
			late_slot(s, a);
	} else if (s->width) {
		next_slot(s, a);
	}
	tick.missed = s->missed;
	oprof_tick_irq(&tick);
}

/*
 * NMI context, on every core at every period of the session's rate (arch_nmi_start), any
 * interrupt state: a sample every div-th period (true then). A period late by half a
 * period or more (one or more missed) recounts the missed ones.
 */
static bool nmi_sample(const struct trapframe *tf)
{
	struct cpu *c = this_cpu();
	struct sampler *s = &samplers[c->id];
	struct oprof_tick tick;

	hide_value(s);	/* kept in a register, not its address computed again after each call */
	if (s->skip) {
		s->skip--;
		return false;
	}
	s->skip = s->pass;
	tick_from(&tick, tf, c, tsc_read());
	if (!tf_irq_enabled(tf))
		tick.flags |= OPF_F_IRQOFF;
	s->ticks++;
	if (tick.tsc - s->last >= s->late)
		s->missed = sampler_missed(s, tick.tsc);
	s->last = tick.tsc;
	tick.missed = s->missed;
	oprof_tick_irq(&tick);
	return true;
}

/*
 * NMI context on s's core or before its NMIs start: a gap between samples this long means
 * a period was missed (its div periods at most, each at most a jittered period long: a
 * period and the jitter's width, plus half a period of slack).
 */
static void set_late(struct sampler *s)
{
	s->late = s->period + s->period / 2 + jitter_width(s->period, sample_spread);
}

/*
 * The set_rate hook: on core, inside sample_alarm (so the alarm is armed here) or nmi_sample.
 * The periods owed so far are kept at the old rate; by timer a new grid of slots starts
 * now. By NMI the rate is the session's over a whole divisor (the budget halves and
 * doubles it).
 */
void sampler_set_rate(int core, uint32_t hz)
{
	struct sampler *s = &samplers[core];
	uint64_t now = tsc_read();

	must(core == core_id() && !irq_enabled(),
	     "on the sampler's own core, interrupts off: inside its alarm or its NMI");
	hz = hz ? hz : 1;
	s->seg_periods += (now - s->seg_start) / s->period;
	s->seg_start = now;
	s->period = tsc_hz() / hz;
	if (by_nmi) {
		s->pass = MAX(1u, (sample_hz + hz / 2) / hz) - 1;
		s->skip = s->pass;
		set_late(s);
		return;
	}
	alarm_set(&s->alarm, first_slot(s), s->period);
}

static void arm_thread(void *arg)
{
	struct sampler *s = &samplers[core_id()];
	unsigned long f = irq_save();

	(void)arg;
	if (s->alarm.fn && alarm_armed(&s->alarm))
		alarm_cancel(&s->alarm);	/* never re-initialize an alarm still linked */
	s->period = sample_period;
	s->seg_start = tsc_read();
	s->seg_periods = s->ticks = s->missed = s->alarm_missed = 0;
	s->cpu = this_cpu();
	s->key = jitter_key(sample_seed, (uint64_t)s->cpu->id);
	alarm_init(&s->alarm, sample_alarm, s);
	s->alarm.spaced = true;
	s->alarm.fast = true;		/* one compare per interrupt, no list walk to re-arm */
	alarm_set(&s->alarm, first_slot(s), s->period);
	irq_restore(f);
}

/* On its core: stop sampling, and tell the profiler every tick this core missed. */
static void disarm_thread(void *arg)
{
	struct sampler *s = &samplers[core_id()];
	unsigned long f = irq_save();

	(void)arg;
	/* once per arming: a second disarm (a retry) must not count time since as missed */
	if (s->alarm.fn && alarm_armed(&s->alarm)) {
		alarm_cancel(&s->alarm);
		oprof_missed(core_id(), sampler_missed(s, tsc_read()));
	}
	irq_restore(f);
}

/*
 * Run fn once on every online core, in a thread there, and wait for all of them. fail_core:
 * a core whose thread is not created, as if memory were out (OPROF_FAULT_ARM), or -1.
 */
static int on_every_core(const char *name, thread_fn fn, int fail_core)
{
	struct thread *ts[MAX_CPUS];
	int n = ncpus(), r = 0;

	for (int i = 0; i < n; i++) {
		ts[i] = i == fail_core ? NULL : kthread_create(name, i, fn, NULL);
		if (!ts[i])
			r = -ENOMEM;
	}
	for (int i = 0; i < n; i++)
		if (ts[i])
			kthread_join(ts[i]);
	return r;
}

/*
 * Disarm every core, and retry until each core's disarm thread ran: a core left armed
 * would tick into a stopped session, and its alarm could not be armed again.
 */
static void disarm_all(bool fault)
{
	int fail = fault ? 0 : -1;

	while (on_every_core("oprof-disarm", disarm_thread, fail) < 0) {
		fail = -1;
		thread_sleep_us(10000);
	}
}

/* NMI: every core's sampler fresh, then the NMIs (none runs before arch_nmi_start). */
static int nmi_start(uint32_t hz, bool fault)
{
	uint64_t now = tsc_read();
	int r;

	if (fault)
		return -ENOMEM;
	for (int i = 0; i < ncpus(); i++) {
		struct sampler *s = &samplers[i];

		s->period = sample_period;
		s->seg_start = s->last = now;
		s->seg_periods = s->ticks = s->missed = 0;
		s->pass = 0;
		s->skip = 0;
		set_late(s);
	}
	by_nmi = true;
	if ((r = arch_nmi_start(hz, sample_spread, sample_seed, nmi_sample)) < 0)
		by_nmi = false;
	return r;
}

/* NMI: once no core samples any more, tell the profiler what each missed. */
static void nmi_stop(void)
{
	uint64_t now;

	arch_nmi_stop();
	now = tsc_read();
	for (int i = 0; i < ncpus(); i++)
		oprof_missed(i, sampler_missed(&samplers[i], now));
	by_nmi = false;
}

/* The start_sampling hook: arm every core, or start the NMIs. */
int sampler_start(uint32_t hz, uint32_t source, uint32_t spread, uint64_t seed)
{
	bool fault = oprof_fault_take(OPROF_FAULT_ARM);
	int r;

	if (source != OPF_SRC_TIMER && source != OPF_SRC_NMI)
		return -ENODEV;
	sample_period = tsc_hz() / hz;
	sample_hz = hz;
	sample_spread = MIN(spread, 100u);
	sample_seed = seed;
	if (source == OPF_SRC_NMI)
		return nmi_start(hz, fault);
	r = on_every_core("oprof-arm", arm_thread, fault ? ncpus() - 1 : -1);
	if (r < 0)
		disarm_all(fault);
	return r;
}

/* The stop_sampling hook: afterwards no core samples, nor will it. */
void sampler_stop(void)
{
	if (by_nmi)
		nmi_stop();
	else
		disarm_all(false);
}

bool sampler_by_nmi(void)
{
	return by_nmi;
}

/*
 * The default_source hook. NMIs, where there is a route for them: they sample code that
 * runs with interrupts off (spinlock sections, interrupt handlers, the scheduler) where it
 * runs, which the timer cannot -- it only sees that time as missed, and the code that runs
 * next inherits none of it but looks no worse. The timer where there is none.
 */
uint32_t sampler_default_source(void)
{
	return arch_nmi_available() ? OPF_SRC_NMI : OPF_SRC_TIMER;
}
