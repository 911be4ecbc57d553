/*
 * Turns: sharing QEMU's one emulation thread among the virtual cores under -icount, so that
 * every busy core runs its share of the instructions (arch_x86.h: turns_start_cpu,
 * turns_due, turns_hold, turns_deadline, turns_frame).
 *
 * Why the kernel must. Under -icount QEMU 7.2 runs every vCPU on one host thread
 * (accel/tcg/tcg-accel-ops-rr.c, rr_cpu_thread_fn) and guest time is the instructions run
 * by all of them together. Its loop: run the virtual timers that are due
 * (icount_handle_deadline), then take the vCPUs in index order starting from the first,
 * each with a budget of every instruction up to the next timer deadline
 * (icount_prepare_for_run: icount_get_limit), until it spends it, executes pause or hlt
 * (target/i386: helper_pause and helper_hlt end its cpu_exec) or is kicked; when the
 * budget is spent the vCPUs after it get a budget of 0, and the next stretch starts again
 * with the first. The kick timer (rr_kick_thread, every 100 ms) is a virtual timer too, so
 * under -icount it runs between stretches, when no vCPU is current, and kicks nobody. So
 * every stretch between two deadlines (any core's timer, the HPET, the kick) goes to the
 * lowest-numbered vCPU that does not yield in it: with every core busy one core ran 99.5%
 * of the instructions (`run matrix -c all` on 2 cores: 615 multiplies/s against 3), which
 * one depending on who happened to pause or halt (each NMI's turn hand-over, a spin-wait's
 * pause, the idle loop). No QEMU option changes that: MTTCG refuses -icount ("No MTTCG
 * when icount is enabled"), and align, sleep and shift do not touch the order. (Later
 * QEMU splits each stretch's budget between the vCPUs, icount_percpu_budget; 7.2 does
 * not.)
 *
 * What the kernel does. Time is cut into slices of TURN_HZ on a grid every core shares
 * (the TSC is guest time, the same on every core), and slice i belongs to core i mod
 * ncpus(). A busy core's timer interrupts it at every slice boundary at the latest (the
 * one-shot is never programmed past the next: turns_deadline, in arch_timer_set, below the
 * alarms, which take an early interrupt in their stride); in a slice that is not its own
 * (turns_due) a core holds: at the end of that timer interrupt (timer_trap) it waits in
 * turns_hold, a pause at a time -- each pause ends its turn, so the round robin
 * moves on, and a holding core costs a few instructions per stretch -- through the
 * others' slices, until
 *  - a slice is its own (or the owner is offline);
 *  - the owner does not want the time: it halts in its idle loop (idle), or the
 *    others ran under TURN_MIN_US each while this core paused, TURN_SHORT_RUNS times in a
 *    row (the owner halted, or spins on a pause, perhaps waiting for this core); the core
 *    runs then, for the rest of the slice: no holding against nobody, and not for long
 *    where the cores already take turns at their pauses (`run irqoff` on 16 cores: each
 *    hold then lasts some 40 us, and an NMI that finds a core holding finds it where it
 *    stands, interrupts on, not in its interrupts-off loop). Once is not enough: a
 *    vCPU that reprograms a timer so that it becomes the next deadline is kicked off its
 *    turn (qemu_timer_notify_cb), so the owner's turn ends early after each of its timer
 *    interrupts, and a holder that gave up then left core 0 nearly 2 : 1 ahead;
 *  - an alarm of its list is due (a wake-up, the scheduler tick), or it has held a
 *    slice's length (TURN_HZ) and its fast alarm is: it returns, takes that timer
 *    interrupt at once -- which runs the alarm, and switches threads if that is due, as on
 *    any core -- lets in whatever else is pending, and holds again there.
 * The fast alarm, the timer sampler's (thousands a second, and all it does is record a
 * sample and set its next moment), runs inside the hold on the frame the core stands at,
 * as the timer interrupt taken there would run it, less an iretq and an interrupt entry:
 * bouncing out for each of its periods cost a 10 kHz sample some 65 instructions more on
 * 2 cores (526 against 461 with fixed periods, run matrix). The list's alarms do bounce:
 * run in the hold, a wake-up waited for the hold's end, up to a slice, and the scheduler
 * views' truth checks (sched-truth) failed one run in four.
 * The round robin runs a core after the owner in index order (core 1 in core 0's slice)
 * only when the owner's turn ends early (it pauses, or its timer interrupt re-programs
 * the one-shot): so such a holder runs its alarms late, by up to the owner's next timer
 * interrupt, and the timer sampler counts the jittered moments passed meanwhile as missed
 * (some 7% of the periods at 10 kHz on 2 cores; the NMI source's periods are everyone's
 * at once and take none of this).
 * An idle core never holds (it halts anyway). With every core busy each runs its slices and
 * stands still in the others', as a vCPU a hypervisor deschedules would.
 *
 * What a profile sees. A holding core stands where its timer interrupt found it, with
 * interrupts on: that is where it is for that time. The timer sampler's alarm runs in
 * turns_hold with that frame. An NMI does reach the core inside turns_hold
 * (interrupts off there); nmi.c samples the frame turns_frame gives it, the standing one,
 * so no sample lands in this file and none is flagged interrupts-off because of it.
 *
 * Hazards:
 *  - Holding with interrupts off delays the core's other interrupts (a wake-up IPI, the
 *    console) until its slice, its next alarm of the list (the scheduler tick: 10 ms), or
 *    its first sample a slice into the hold; what they make runnable runs in the core's
 *    slice, at most (ncpus() - 1) slices on, as with any time-sharing of cores. Nothing
 *    that holds a spinlock holds: the interrupted code had interrupts on, and spinlocks
 *    keep them off (spinlock.c).
 *  - A core that waits for a holding core, spinning with cpu_relax (a pause), hands the
 *    turn straight back: the holder sees the others run under TURN_MIN_US, again and
 *    again, and stops holding. One that spins without a pause waits until the slice ends.
 *  - NMIs: the NMI handler's own pause (nmi.c, end_turn) returns into turns_hold, which
 *    goes on holding. turns_standing[core] is the core's own, written before the loop and
 *    cleared after it, so an NMI on the core reads it consistently (a compiler fence
 *    suffices).
 *  - Only under QEMU's -icount (arch_machine()->icount) with more than one core;
 *    elsewhere next_slice is beyond any TSC, and turns cost timer_trap and arch_timer_set
 *    a compare each. An idle core is not woken for the boundaries (turns_busy_deadline).
 */
#include "x86.h"
#include "arch_x86.h"
#include "cpu.h"
#include "alarm.h"

#define TURN_HZ		100	/* slices a second: each core's at least every ncpus() of them */
#define TURN_MIN_US	10	/* less than this run by each other core while paused ... */
#define TURN_SHORT_RUNS	4	/* ... so many times in a row: nobody wants the time */

struct turns_core turns_cores[MAX_CPUS];
/* inside turns_hold: where the core stands, else NULL (its own core writes it; turns_frame) */
const struct trapframe *turns_standing[MAX_CPUS];
static uint64_t slice_ticks;		/* TSC ticks a slice; 0: turns are off */
static uint64_t min_run_ticks;

/*
 * Any context: c halts in its idle loop. in_idle alone is not enough: it stays set while
 * an interrupt taken at the idle loop's hlt switches to a thread (as the sampler tests).
 */
static bool idle(const struct cpu *c)
{
	return READ_ONCE(c->cur) == c->idle && READ_ONCE(c->in_idle);
}

/* Any context, turns on: the core whose slice holds TSC time at (slice_ticks from 0). */
static int owner_at(uint64_t at)
{
	return (int)(at / slice_ticks % (uint64_t)ncpus());
}

/*
 * On each core, before anything programs its timer (arch_main, ap_main): under -icount on
 * a machine the MADT gives more than one core, the core takes turns from the next slice
 * boundary on; elsewhere never (next_slice stays beyond any TSC). Nothing sets a timer
 * while the cores start: a deadline then would end an AP's boot turn, and the boot core
 * spins for it without a pause (lapic.c), so the AP would get no other.
 */
void turns_start_cpu(int core)
{
	struct turns_core *t = &turns_cores[core];

	t->next_slice = UINT64_MAX;
	if (!arch_machine()->icount || acpi.ncpus < 2)
		return;
	if (!slice_ticks) {
		min_run_ticks = tsc_hz() / 1000000 * TURN_MIN_US;
		slice_ticks = tsc_hz() / TURN_HZ;
	}
	t->next_slice = (rdtsc() / slice_ticks + 1) * slice_ticks;	/* the first decided */
}

/*
 * Timer interrupt on core (turns_due), interrupts off, now at or past its next_slice: the
 * slice that holds now is decided -- hold in it unless it is the core's -- and the next
 * boundary is where the timer will interrupt next at the latest (turns_deadline).
 */
void turns_slice(struct turns_core *t, int core, uint64_t now)
{
	t->owner = owner_at(now);
	t->hold = t->owner != core;
	t->next_slice = (now / slice_ticks + 1) * slice_ticks;
}

/*
 * arch_timer_set on core, its next slice boundary before deadline: the boundary, unless the
 * core runs its idle thread. An idle core never holds, so it sleeps on to its own alarm
 * (the scheduler tick at the latest), waking no more often than without turns: under
 * -icount with sleep=on every wake of an idle guest is a wait in real time, which a loaded
 * host makes late, and a late wake is periods the NMI source misses. A core that leaves
 * its idle thread is cut short again from its next timer interrupt on.
 */
uint64_t turns_busy_deadline(int core, uint64_t deadline)
{
	return READ_ONCE(cpus[core].cur) == cpus[core].idle ? deadline :
								 turns_cores[core].next_slice;
}

/*
 * Timer interrupt on core c, interrupts off, its alarms run and its timer programmed:
 * the slice is another core's (turns_due). Hold as the top of the file says, across
 * slices while they are others'. The fast alarm (the sampler's) runs here when it falls
 * due (alarm_interrupt_fast_only, on the standing frame tf); its one-shot still fires,
 * into the LAPIC's IRR, and is taken after the hold (early: alarm.c re-arms). Returns
 * with t->hold clear when the hold is over; or set when an alarm of the list is due, or
 * the fast one a slice's length after the hold began: the timer interrupt taken at once
 * runs it, does what else an interrupt does (a switch, the pending interrupts), and
 * holds again.
 */
void turns_hold(struct trapframe *tf, struct cpu *c)
{
	struct turns_core *t = &turns_cores[c->id];
	const struct cpu *o = &cpus[t->owner];
	uint64_t now = rdtsc(), entered = now, before, short_ticks;
	int short_runs = 0;

	if (idle(c)) {
		t->hold = false;
		return;
	}
	short_ticks = min_run_ticks * (uint64_t)(ncpus() - 1);
	WRITE_ONCE(turns_standing[c->id], tf);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (;;) {
		if (now >= t->next_slice) {		/* a boundary: the next slice's owner */
			turns_slice(t, c->id, now);
			if (!t->hold)
				break;
			o = &cpus[t->owner];
		}
		if (!READ_ONCE(o->online) || idle(o))
			break;
		if (now >= c->timer_deadline && c->timer_deadline) {
			if (now - entered >= slice_ticks || !alarm_interrupt_fast_only(tf, c, now))
				goto leave;	/* t->hold set: that timer interrupt holds again */
			now = rdtsc();
			continue;
		}
		before = now;
		pause();
		now = rdtsc();
		if (now - before >= short_ticks)
			short_runs = 0;
		else if (++short_runs == TURN_SHORT_RUNS)
			break;
	}
	t->hold = false;
leave:
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	WRITE_ONCE(turns_standing[c->id], NULL);
}
