/*
 * Sampling by NMI (arch.h: arch_nmi_start, arch_nmi_stop, arch_nmi_count) and the NMI
 * handler itself: nmi_period, which the vector's entry (trapentry.S: nmi_entry) calls for a
 * new period on a core, and nmi_trap, which trap() hands every other vector-2 entry to
 * before it does anything else (the entry dismisses the NMIs that begin no period itself).
 *
 * The route. TCG has no PMU, so the NMIs come from a timer: HPET timers 0 and 1, taking
 * turns (hpet.c), on ISA IRQs 0 and 8, whose IOAPIC entries are programmed for NMI delivery
 * to every core at once: physical destination FFh, the xAPIC broadcast (SDM Vol. 3A,
 * 10.6.2.1), so every core takes each period's NMI itself, the moment the HPET fires,
 * whatever the others are doing. That is only safe when every LAPIC the MADT lists is a
 * core running this kernel: the broadcast also reaches a core stuck somewhere in its
 * start-up or never started (an NMI to a core in wait-for-SIPI state is not defined to be
 * harmless), and with an APIC ID of FFh or more a core could not be told from it. So if one
 * failed to start (or is beyond MAX_CPUS, or only online-capable, or so numbered), the
 * entry delivers to core 0 instead, which relays each period with an NMI IPI per online
 * core (a logical destination set would reach only 8 cores). KVM's in-kernel IOAPIC and
 * LAPIC deliver the broadcast the same way.
 *
 * The relay was the route for every machine once; under QEMU 7.2's -icount it cost the
 * other cores most of their periods (README, "Sampling source"), because of how TCG's
 * single-threaded round robin runs virtual CPUs (accel/tcg/tcg-accel-ops-rr.c): one host
 * thread runs them in turn, each until its instruction budget is spent (the budget ends
 * at the next virtual-timer deadline, icount_prepare_for_run), or it executes pause or hlt
 * (helper_pause and helper_hlt leave the loop), or it is kicked (cpu_exit on all of them,
 * rr_kick_vcpu_thread: by the I/O thread, or when a virtual timer set from a vCPU becomes
 * the earliest, qemu_timer_notify_cb). An interrupt one vCPU raises in another -- core 0's
 * NMI IPI, apic_deliver to cpu_interrupt -- only marks the target's interrupt_request:
 * tcg_handle_interrupt kicks the target only when it runs on another thread, and under the
 * round robin every vCPU is on this one (qemu_cpu_is_self). So the IPI waited until core 0's
 * turn ended, at the next kick (a busy core: up to a scheduler slice, 10 ms). Two things
 * route around that: the broadcast raises the NMI in every vCPU from the HPET's own timer
 * callback, with no vCPU in between; and every core ends its turn once its period's work
 * is done (end_turn: a pause, on QEMU's TCG only), so the round robin takes the next vCPU,
 * which takes its pending NMI then, and so on round every core within the period. What
 * each vCPU then runs until the next period turns.c shares out: a core standing still in
 * another's slice takes each period's NMI there, and is sampled where it stands
 * (call_fns: turns_frame), there for that time (its samples weigh it).
 *
 * Periods. Period k (from 1) begins when the counter reaches period_at(k): its grid point,
 * k periods from the start, moved by its jitter (jitter.h: an offset drawn from the
 * session's seed, uniform over its spread). With no jitter (`jitter 0`, and always for the
 * background and boot sources) timer 0 runs periodically in hardware and nothing is
 * armed. Jittered, the comparators are one-shot: period k's NMI comes from timer k % 2,
 * and the first core to take it writes period k + 2 to that timer (arm), the other holding
 * k + 1 already. An NMI does not say where it came from, so every core reads the HPET
 * counter (one MMIO read a period: a plain read, under a microsecond on hardware) and acts
 * on an NMI -- arming, core 0 relaying, fn called -- only when a period has begun since
 * the last one it acted on (next_period, its own); any other NMI is counted as extra: QEMU
 * 7.2's periodic HPET pulses twice for most periods under -icount (its callback runs
 * exactly at the comparator's value, does not count that as past it, re-arms one tick
 * later and pulses again), a one-shot comparator pulses again at the counter's wrap (every
 * 43 s there), and an NMI may be held pending across a restart. Why two comparators: a
 * comparator written from a vCPU re-arms a QEMU virtual timer, and when that becomes the
 * earliest deadline QEMU kicks the vCPU off its turn (qemu_timer_notify_cb): with one
 * comparator, written for the next period by core 0 at each NMI, core 0 lost its turn at
 * every period and starved (run spin on 4 cores got 0 iterations on core 0). Period k + 2
 * is not the earliest, so nothing kicks. Why any core arms: with core 0 alone arming, the
 * periods waited on core 0's turn, and at 50 kHz with jittered periods (some a few
 * microseconds apart) four cores took a fifth of theirs. Why periodic without jitter:
 * one-shot periods cost every core some 8 instructions a period (the armed moment read,
 * the claim tested) and the core that claims one some 35 more (the draw, the moment, the
 * comparator), the periodic timer nothing (its second pulse about 29 on each core,
 * dismissed at the entry).
 *
 * The entry (trapentry.S: nmi_entry, numbers shared through nmi_entry.h). Its first
 * instructions, two scratch registers saved, dismiss a duplicate -- counted as count,
 * irqoff and extra, as below -- when nothing else could need doing: the record is a
 * core's, no panic (nmi_quiet), not nested, not the idle loop's hlt, a source running and
 * the counter short of the core's next_period. A new period goes on to nmi_period with the
 * tests made (and a frame without rbx and r12-r15); every other NMI -- a panic's, a
 * stray, one at the hlt -- takes the full way, trap_common, trap, nmi_trap.
 *
 * The handler runs on its own stack, IST2 of the core's TSS (gdt.c), with further NMIs
 * held by the CPU until its iretq. It
 *  - finds its core in the record at the top of that stack (nmi_stack_top), never in GS,
 *    so it works before cpu_setup_this on an AP, whatever GS holds there;
 *  - counts the NMI, and whether it hit with IF clear, in its core's own counters;
 *  - while a source runs, checks that a new period began for its core, claims and arms
 *    the one after next if no core has, and on core 0 relays it where the route is the
 *    relay;
 *  - calls fn only when the core is online (its portable per-core state exists), no
 *    panic is under way, and fn is set; else it returns at once: ignored, and counted;
 *  - ends its turn (end_turn) under QEMU's TCG.
 *
 * Hazards, and why each is covered:
 *  - An NMI anywhere: mid stack switch in swtch, in the boot path, inside an interrupt
 *    handler or a spinlock section. The handler does not use the interrupted stack (IST)
 *    or GS, takes no lock, and touches only its own core's counters and frame, read-mostly
 *    globals, the local APIC's ICR, which lapic_send_nmi leaves as the interrupted code had
 *    it, the HPET counter, a plain read, and the HPET comparator of a period it claimed, a
 *    plain write that no thread-context code makes while a source runs. Nothing that is programmed through an
 *    index register (IOAPIC, fw_cfg, PIC) is touched. It sends no EOI (an NMI has none;
 *    an EOI would end some other interrupt in service).
 *  - Nested NMIs: the CPU holds a second NMI until the iretq that ends the first, and
 *    nothing before that iretq may execute another: the handler never enables interrupts,
 *    and every exception in this kernel is fatal (trap_fatal never returns). So IST2 is
 *    never re-entered while in use. Should that ever break (an exception that returns),
 *    the depth count panics rather than return through the overwritten frame.
 *  - The IST in use: IST2 is the NMI's alone (a double fault has IST1), so an NMI in the
 *    middle of a double-fault report, or a fault inside an NMI (which runs on IST2 below
 *    the NMI's frame), overwrites nothing.
 *  - Stack overflow: a canary at the bottom of every NMI stack, checked after fn.
 *  - The idle loop's sti; hlt: an NMI taken between them returns past the hlt (see
 *    cpu_halt), so that no wakeup taken after the NMI's iretq is slept through.
 *  - Stop against a core about to call fn: the handler sets in_fn, then reads fn; stop
 *    clears fn, then waits while any in_fn is set; each with a full fence, so either the
 *    handler sees NULL or stop sees it inside (Dekker). The same in_fn covers each core's
 *    period check against source_stop's clearing fanout, so no next_period update from
 *    an old source lands in a new one's.
 *  - A panic elsewhere: arch_stop_other_cores calls nmi_panic, after which handlers only
 *    count: no core arms a period, and core 0 stops relaying.
 *  - Each period is claimed by one core (arm), so no comparator is written for it twice; a
 *    period claimed too late is given up and its timer takes the next of its own, so as
 *    long as any core takes its NMIs the periods go on.
 *  - The pause that ends a turn (end_turn) runs in the handler, NMIs still held: it is one
 *    instruction that cannot fault or wait, and the vCPU takes up at the iretq when its turn
 *    comes again. A period's NMI that arrives meanwhile is held by the CPU and taken at
 *    that iretq, as on hardware; the period check then sees whether it is a new one.
 *
 * The background fn (arch_nmi_background: the crash recorder and the hard-lockup
 * watchdog, crash.h) runs before fn on an online core. With no arch_nmi_start source it
 * has a source of its own at its rate, and runs at every NMI; arch_nmi_start takes the
 * HPET over and arch_nmi_stop gives it back. Riding on a faster session it runs at every
 * bg_div-th NMI of the core (bg_skip counts them down), so at about its own rate, and the
 * session's NMIs in between pay one test for it, not a recorder's and a watchdog's visit.
 *
 * The panic stop (arch_stop_other_cores): the panicking core sets stop_by, then sends an
 * NMI to every other online core. Any NMI that finds stop_by set on another core parks it
 * for good (park): it reports its interrupted context (crash_core_stopped) and halts in
 * the handler, so NMIs stay blocked and nothing wakes it. An NMI reaches a core with
 * interrupts off -- a locked-up core included -- where the old stop IPI would wait forever.
 * A core inside the handler when its stop NMI comes takes it at that handler's iretq.
 *
 * The boot test (nmi_boot_test): when QEMU hands the kernel the fw_cfg file
 * opt/kern/nmi-boot (a rate in Hz), NMIs start on core 0 right after its IDT and LAPIC
 * are up, and reach each AP from the moment its IDT is loaded (nmi_cpu_armed), before its
 * GS, its LAPIC set-up and its first thread. They run, calling nothing, until the first
 * arch_nmi_start (which takes over) or arch_nmi_stop. So that every core is sure to have
 * taken some before it is online (the last AP is online moments after it starts), the
 * boot waits for that, for at most a second, once the APs are up (nmi_boot_test_hold).
 */
#include "x86.h"
#include "arch_x86.h"
#include "cpu.h"
#include "error.h"
#include "crash.h"
#include "nmi_entry.h"
#include "jitter.h"

#define NMI_STACK	8192
#define NMI_CANARY	0x6e6d692d63616e61ull
#define NMI_MAX_HZ	100000
#define NMI_JUMPS	8	/* draw_at's jump table: up to 7 periods on in one step */

/* The record at the top of a core's NMI stack; IST2 points just below it. 32 bytes, so
 * the IST pointer stays 16-byte aligned. */
struct nmi_top {
	uint32_t magic;
	int32_t core;
	struct nmi_cpu *cpu;	/* &nmi_cpus[core] */
	uint64_t save_rax;	/* nmi_entry's scratch registers */
	uint64_t save_rdx;
};

/* A core's counters: written only by that core's NMI handler, read by anyone. */
struct nmi_cpu {
	uint64_t count;		/* shared: NMIs taken since boot */
	uint64_t irqoff;	/* shared: of those, the ones that hit with IF clear */
	uint64_t early;		/* shared: of those, the ones before the core was online */
	uint64_t extra;		/* shared: core 0, the ones that began no timer period */
	int in_fn;		/* inside fn; stop waits for 0 */
	int depth;		/* inside nmi_trap: 0 or 1, never more */
	uint32_t next_period;	/* counter value (mod 2^32) that begins the core's next period */
	uint32_t apic_id;	/* for directed fan-out, known from nmi_cpu_armed on */
	bool armed;		/* IDT loaded: the boot test may send it NMIs */
	bool online;		/* the handler saw cpus[core].online (it never goes back) */
	bool relays;		/* core 0 where the route is not the broadcast (fan_out) */
	uint32_t bg_skip;	/* NMIs to let pass before the background fn runs again */
	bool stopped;		/* parked for good by a panic's stop NMI (release) */
	uint64_t period;	/* the period (numbered from 1) it last acted on */
	uint64_t draw;		/* the draw (jitter.h) of period drawn, the last it drew */
	uint64_t drawn;		/* 0 (the key) to period + 2 (draw_at) */
} __aligned(CACHELINE);

enum fanout {
	FAN_NONE,		/* no source running */
	FAN_BROADCAST,		/* the IOAPIC sends it to every core: every listed core is online */
	FAN_ONLINE,		/* to core 0, which relays it: an NMI to each other online core */
	FAN_ARMED,		/* boot test: core 0 relays it to each core whose IDT is loaded */
};

enum { NMI_IDLE, NMI_BUSY, NMI_RUNNING };	/* nmi_state: start and stop exclude each other */

static uint8_t nmi_stacks[MAX_CPUS][NMI_STACK] __aligned(16);
static struct nmi_cpu nmi_cpus[MAX_CPUS];
static arch_nmi_fn nmi_fn;		/* NULL: count only */
static arch_nmi_fn nmi_bg;		/* the background fn (arch_nmi_background), or NULL */
static uint32_t bg_hz;			/* its rate when no arch_nmi_start source runs */
static uint32_t bg_div;			/* it runs at every bg_div-th NMI of a core (>= 1) */
static uint32_t src_hz;			/* the running source's rate */
static bool bg_source;			/* the running source is the background fn's */
static int stop_by = -1;		/* a panicking core stopping the others, or -1 */
int nmi_fanout;				/* enum fanout, read by core 0's handler and nmi_entry */
static int nmi_state;
static bool nmi_boot_running;		/* the running source is the boot test's */
bool nmi_quiet;				/* a panic is under way (nmi_entry reads it too) */
static uint64_t nmi_strays;		/* NMIs that did not arrive on an NMI stack */
static uint32_t period_ticks;		/* HPET counter ticks per period: the grid */
static uint32_t arm_margin;		/* the least lead of a comparator written: P / 8 */
static uint64_t jit_width;		/* ticks a period's moment is spread over (jitter.h) */
static uint64_t jit_lead;		/* half of that: a window's start before its grid point */
static uint64_t jit_key;		/* their stream's key (jitter.h) */
static struct jitter_jump jit_jump[NMI_JUMPS];	/* [d]: the generator d steps on (draw_at) */
static bool nmi_oneshot;		/* jittered periods: the cores arm them (arm) */
static uint64_t nmi_to_arm;		/* the next period no comparator was claimed for */
static uint64_t nmi_armed[2];		/* timer t's period: its moment << 32 | its number */
static bool yield_vcpu;			/* QEMU TCG: end_turn hands its thread on */

/* nmi_entry (trapentry.S) knows these by number (nmi_entry.h). */
_Static_assert(sizeof(struct nmi_top) == NMI_TOP_SIZE, "nmi_top size");
_Static_assert(offsetof(struct nmi_top, core) == NMI_TOP_CORE, "nmi_top core");
_Static_assert(offsetof(struct nmi_top, cpu) == NMI_TOP_CPU, "nmi_top cpu");
_Static_assert(offsetof(struct nmi_top, save_rax) == NMI_TOP_SAVE_RAX, "nmi_top rax");
_Static_assert(offsetof(struct nmi_top, save_rdx) == NMI_TOP_SAVE_RDX, "nmi_top rdx");
_Static_assert(offsetof(struct nmi_cpu, count) == NMI_CPU_COUNT, "nmi_cpu count");
_Static_assert(offsetof(struct nmi_cpu, irqoff) == NMI_CPU_IRQOFF, "nmi_cpu irqoff");
_Static_assert(offsetof(struct nmi_cpu, extra) == NMI_CPU_EXTRA, "nmi_cpu extra");
_Static_assert(offsetof(struct nmi_cpu, in_fn) == NMI_CPU_IN_FN, "nmi_cpu in_fn");
_Static_assert(offsetof(struct nmi_cpu, depth) == NMI_CPU_DEPTH, "nmi_cpu depth");
_Static_assert(offsetof(struct nmi_cpu, next_period) == NMI_CPU_NEXT_PERIOD, "nmi_cpu next");
_Static_assert(sizeof(((struct nmi_cpu *)0)->in_fn) == 4 && sizeof(nmi_fanout) == 4 &&
	       sizeof(((struct nmi_cpu *)0)->next_period) == 4 &&
	       sizeof(((struct nmi_cpu *)0)->depth) == 4 && sizeof(nmi_quiet) == 1,
	       "nmi_entry's operand sizes");
_Static_assert(FAN_NONE == NMI_FAN_NONE && RFLAGS_IF == NMI_RFLAGS_IF &&
	       HPET_MAIN_LO == NMI_HPET_MAIN_LO && T_NMI == NMI_T_NMI, "nmi_entry's constants");

/*
 * gdt_init_cpu, on core before its IDT is loaded: the IST2 pointer of core, with the
 * record that names the core written above it and the canary below.
 */
uintptr_t nmi_stack_top(int core)
{
	struct nmi_top *top = (struct nmi_top *)&nmi_stacks[core][NMI_STACK] - 1;

	top->magic = NMI_TOP_MAGIC;
	top->core = core;
	top->cpu = &nmi_cpus[core];
	*(uint64_t *)nmi_stacks[core] = NMI_CANARY;
	return (uintptr_t)top;
}

/* If sp is on core's NMI stack, set [lo, hi) to that stack's bounds. */
void nmi_stack_bounds(int core, uintptr_t *lo, uintptr_t *hi, uintptr_t sp)
{
	uintptr_t b = (uintptr_t)nmi_stacks[core];

	if (sp >= b && sp < b + NMI_STACK) {
		*lo = b;
		*hi = b + NMI_STACK - sizeof(struct nmi_top);
	}
}

/* On core, right after its IDT is loaded (before anything else of its set-up). */
void nmi_cpu_armed(int core, uint32_t apic_id)
{
	nmi_cpus[core].apic_id = apic_id;
	__atomic_store_n(&nmi_cpus[core].armed, true, __ATOMIC_RELEASE);
}

/*
 * Any context, a source running: the counter value (mod 2^32, as the comparators and
 * hpet_now count) at which period k begins, whose draw is x: its grid point k *
 * period_ticks, moved by its jitter (jitter.h: the window's start, jit_lead before the grid
 * point, plus the draw's place in it; with a width of 0 that is the grid point, whatever
 * x). Within half a period of the grid point.
 */
static __force_inline uint32_t moment(uint64_t k, uint64_t x)
{
	return (uint32_t)(k * period_ticks - jit_lead + jitter_into(x, jit_width));
}

/* The same, the draw made from the seed (jitter_skip): source_start only. */
static uint32_t period_at(uint64_t k)
{
	return moment(k, jitter_skip(jit_key, k));
}

/* draw_at's far case, out of line: a jump from the core's last draw, or from the key. */
static __noinline uint64_t draw_far(const struct nmi_cpu *n, uint64_t j)
{
	return j > n->drawn ? jitter_skip(n->draw, j - n->drawn) : jitter_skip(jit_key, j);
}

/*
 * NMI context on n's core, a source running: period j's draw (jitter.h), which becomes
 * the core's last (draw, drawn). A core draws only what it needs -- a period it claims
 * (arm), or one whose moment it finds not armed (armed_at, advance late) -- so on time
 * the others draw nothing at all, and the claimer is a few periods on from its last draw:
 * one multiply-add by the jump table (jit_jump). Each path draws, in order, periods after
 * the one it leaves the core in, and drawn never passes period + 2 (arm claims no
 * further), so j >= drawn; the far case (draw_far) jumps from the key should that ever not
 * hold.
 */
static __force_inline uint64_t draw_at(struct nmi_cpu *n, uint64_t j)
{
	uint64_t d = j - n->drawn, x;

	if (likely(d < NMI_JUMPS))
		x = n->draw * jit_jump[d].mul + jit_jump[d].add;
	else
		x = draw_far(n, j);
	n->draw = x;
	n->drawn = j;
	return x;
}

/*
 * NMI context on n's core, a source running: period k's moment, as armed (nmi_armed: the
 * comparator that takes k holds it, written by the core that claimed it) or else drawn
 * (draw_at). The number is kept modulo 2^32, so a stale word can match only 2^32 periods
 * on.
 */
static __force_inline uint32_t armed_at(struct nmi_cpu *n, uint64_t k)
{
	uint64_t w = __atomic_load_n(&nmi_armed[k & 1], __ATOMIC_RELAXED);

	if (likely((uint32_t)w == (uint32_t)k))
		return (uint32_t)(w >> 32);
	return moment(k, draw_at(n, k));
}

/*
 * NMI context on n's core, inside in_fn, the counter at now, at or past the core's
 * next_period: the last period begun becomes the core's -- the next one, or later when
 * the core came late -- and next_period the one after (on time, the moment its comparator
 * already holds, or a period on from the last one: no draw). A core late by many jumps by
 * division: with every period within half of its grid point, k + behind / period_ticks
 * has begun (its moment is at most behind + P/2 past (k + 1)'s, less a whole P), so the
 * loop after it only moves forward, by a step or two, from the draw of the period after
 * that one (draw_at). oneshot: nmi_oneshot, which the caller tested once (each way is
 * inlined on its own).
 */
static __force_inline void advance(struct nmi_cpu *n, uint32_t now, bool oneshot)
{
	uint64_t k = n->period + 1;
	uint32_t next = oneshot ? armed_at(n, k + 1) : n->next_period + period_ticks;
	uint32_t behind = now - next;

	if ((int32_t)behind >= 0) {
		uint64_t j = k + 1 + behind / period_ticks;	/* the first perhaps not begun */
		uint64_t x = jit_width ? draw_at(n, j) : 0;

		while ((int32_t)(now - (next = moment(j, x))) >= 0) {
			j++;
			x = jitter_next(x);
		}
		if (jit_width) {	/* with a width of 0 no draw places anything: none kept */
			n->draw = x;
			n->drawn = j;
		}
		k = j - 1;
	}
	n->period = k;
	n->next_period = next;
}

/* arm's claim of period j, the counter at now: its comparator set for at, unless too late. */
static __force_inline void arm_one(uint64_t j, uint32_t at, uint32_t now)
{
	if ((int32_t)(at - now) >= (int32_t)arm_margin) {
		uint64_t w = (uint64_t)at << 32 | (uint32_t)j;

		__atomic_store_n(&nmi_armed[j & 1], w, __ATOMIC_RELAXED);
		hpet_arm((int)(j & 1), at);
	}
}

/*
 * arm, any case: every period up to k + 2 not yet claimed. A period up to k has begun
 * (moments only grow: each lies in its own window), so it is given up without a draw;
 * k + 1's and k + 2's are drawn in that order (draw_at).
 */
static __noinline void arm_all(struct nmi_cpu *n, uint64_t k, uint32_t now)
{
	uint64_t j;

	while ((j = __atomic_load_n(&nmi_to_arm, __ATOMIC_RELAXED)) <= k + 2)
		if (__atomic_compare_exchange_n(&nmi_to_arm, &j, j + 1, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED) && j > k)
			arm_one(j, moment(j, draw_at(n, j)), now);
}

/*
 * NMI context, inside in_fn, n's core in period k since the counter is at now: see that
 * periods k + 1 and k + 2 are on the comparators (period j on timer j % 2, hpet.c). Each
 * period is claimed once, by whichever core first finds it unclaimed (a compare-exchange
 * on nmi_to_arm), so the core that takes a period's NMI first arms the one after next --
 * under QEMU's round robin, no core waits for another's turn to come -- and on time that
 * write is not the next deadline (the other comparator holds k + 1), so it does not end
 * the vCPU's turn (see the top of the file). A period already passed, or closer than an
 * eighth of a period (arm_margin), when claimed is given up, not written: a comparator
 * written into the past fires only when the counter comes round (hpet.c); its timer gets
 * the period after next. Two cores claiming j and j + 2 at once may write timer j % 2 out
 * of order, the older target last; it then fires late or never, and the claim of j + 4
 * sets it right. On time one core claims k + 2 (the others find it claimed: one load) and
 * draws it (draw_at); anything else (a core that came late, a claim lost to another core)
 * takes arm_all.
 */
static __force_inline void arm(struct nmi_cpu *n, uint64_t k, uint32_t now)
{
	uint64_t j = __atomic_load_n(&nmi_to_arm, __ATOMIC_RELAXED);

	if (likely(j > k + 2))
		return;
	j = k + 2;	/* fails unless k + 2 is the next to claim */
	if (__atomic_compare_exchange_n(&nmi_to_arm, &j, j + 1, false, __ATOMIC_RELAXED,
					__ATOMIC_RELAXED))
		arm_one(j, moment(j, draw_at(n, j)), now);
	else
		arm_all(n, k, now);
}

/*
 * Core 0, NMI context, a new period, where the IOAPIC does not broadcast it (its relays,
 * source_start): pass its NMI on to the other cores. Out of line: the common route, the
 * broadcast, never comes here.
 */
static __noinline void fan_out(void)
{
	int how = READ_ONCE(nmi_fanout);

	if (how == FAN_ONLINE) {
		for (int c = 1; c < ncpus(); c++)
			if (READ_ONCE(cpus[c].online))
				lapic_send_nmi(nmi_cpus[c].apic_id);
	} else if (how == FAN_ARMED) {
		for (int c = 1; c < MAX_CPUS; c++)
			if (__atomic_load_n(&nmi_cpus[c].armed, __ATOMIC_ACQUIRE))
				lapic_send_nmi(nmi_cpus[c].apic_id);
	}
}

/*
 * A period's work past the period check and core 0's relay, inside in_fn, which it clears:
 * on an online core, the background fn first (the crash recorder, so a fault in fn finds
 * it up to date) and fn. Inlined, so that a fault report's backtrace names the handler.
 * Returns whether either did work (arch_nmi_fn), for end_turn.
 */
static __force_inline bool call_fns(struct nmi_cpu *n, const struct trapframe *tf)
{
	int core = ((const struct nmi_top *)(tf + 1))->core;	/* read here: not kept live */
	arch_nmi_fn fn, bg;
	bool did = false;

	if (unlikely(!n->online) && !(n->online = READ_ONCE(cpus[core].online))) {
		count_own(&n->early);
		goto out;
	}
	tf = turns_frame(core, tf);	/* a core standing in another's turn: where it stands */
	bg = __atomic_load_n(&nmi_bg, __ATOMIC_SEQ_CST);
	fn = __atomic_load_n(&nmi_fn, __ATOMIC_SEQ_CST);
	if (bg && !n->bg_skip) {
		n->bg_skip = READ_ONCE(bg_div) - 1;
		did = bg(tf);
	} else if (bg) {
		n->bg_skip--;
	}
	if (fn)
		did |= fn(tf);
	if (*(uint64_t *)nmi_stacks[core] != NMI_CANARY)
		panic("NMI stack overflow on cpu %d", core);
out:
	__atomic_store_n(&n->in_fn, 0, __ATOMIC_RELEASE);
	return did;
}

/*
 * NMI context, the last thing a period's work does on a core, on a virtual CPU of QEMU's
 * TCG, when a fn did work (did): hand the host thread to the next virtual CPU (see "The
 * route" at the top of the file). A pause ends the turn of a virtual CPU under TCG's
 * round robin (helper_pause: EXCP_INTERRUPT); under MTTCG it costs an exit to QEMU's loop
 * and back. A period no fn worked in (a throttled core's, sampling every div-th) hands
 * nothing over: each hand-over costs the host a vCPU switch, a lot at 100 kHz. Elsewhere
 * it is not executed (a spin-wait hint would only cost time).
 */
static __force_inline void end_turn(bool did)
{
	if (did && READ_ONCE(yield_vcpu))
		pause();
}

/*
 * NMI context on a core, inside in_fn, the counter at now, at or past its next_period: the
 * period is the core's, the periods after it go on the comparators, and core 0 relays it
 * where the route is the relay (relays).
 */
static __force_inline void period_begins(struct nmi_cpu *n, uint32_t now)
{
	if (nmi_oneshot) {
		advance(n, now, true);
		arm(n, n->period, now);
	} else {
		advance(n, now, false);
	}
	if (unlikely(n->relays))
		fan_out();
}

/*
 * NMI context on n's core, a source running: does this NMI begin a period this core has
 * not yet acted on? Only then does it act (period_begins). An NMI that does not is counted
 * as extra: one held pending across a restart, QEMU's pulse at the counter's wrap (hpet.c),
 * one from elsewhere. One counter read; the 32-bit arithmetic follows the counter's wrap.
 * nmi_entry (trapentry.S) makes the same test first, and dismisses what fails it.
 */
static bool new_period(struct nmi_cpu *n)
{
	uint32_t now = hpet_now();

	if ((int32_t)(now - n->next_period) < 0)
		return false;
	period_begins(n, now);
	return true;
}

/*
 * A period's work, inside in_fn: with a source running, the period check, the core's new
 * period (period_begins); then call_fns.
 */
static void act(struct nmi_cpu *n, const struct trapframe *tf)
{
	__atomic_store_n(&n->in_fn, 1, __ATOMIC_SEQ_CST);
	if (READ_ONCE(nmi_fanout) != FAN_NONE && !new_period(n)) {
		count_own(&n->extra);
		__atomic_store_n(&n->in_fn, 0, __ATOMIC_RELEASE);
		return;
	}
	end_turn(call_fns(n, tf));
}

/*
 * nmi_entry (trapentry.S), NMI context, on the core's NMI stack: a source running and a
 * period begun late counter ticks ago on this core. What nmi_trap and act do for such an
 * NMI, less the tests nmi_entry made on the way (the record, no panic, not nested, not
 * the idle loop's hlt, in_fn set and then the source seen running). tf's rbx and r12-r15
 * are not saved (nmi_entry): nothing here reads them.
 */
void nmi_period(struct trapframe *tf, uint32_t late)
{
	struct nmi_top *top = (struct nmi_top *)(tf + 1);
	struct nmi_cpu *n = top->cpu;
	bool did;

	n->depth = 1;
	count_own(&n->count);
	if (!(tf->rflags & RFLAGS_IF))
		count_own(&n->irqoff);
	period_begins(n, n->next_period + late);
	did = call_fns(n, tf);
	n->depth = 0;
	end_turn(did);
}

/*
 * A panic's stop: tell the crash dump what this core was doing, then halt for good. NMIs
 * stay blocked (no iretq ever ends this one), so nothing wakes the core again.
 */
static __noreturn void park(struct nmi_cpu *n, const struct trapframe *tf, int core)
{
	if (READ_ONCE(cpus[core].online))
		crash_core_stopped(tf);
	__atomic_store_n(&n->stopped, true, __ATOMIC_RELEASE);
	for (;;)
		__asm__ volatile("cli; hlt");
}

/*
 * trap(), NMI context, on the core's NMI stack, so tf is right below its record. A panic
 * sets nmi_quiet before stop_by (arch_stop_other_cores), so one test of nmi_quiet is the
 * whole common case; a stop NMI that comes after it was read is held until the iretq.
 */
void nmi_trap(struct trapframe *tf)
{
	struct nmi_top *top = (struct nmi_top *)(tf + 1);
	struct nmi_cpu *n = top->cpu;
	int core = top->core;

	if (unlikely(top->magic != NMI_TOP_MAGIC)) {
		__atomic_add_fetch(&nmi_strays, 1, __ATOMIC_RELAXED);
		return;
	}
	if (tf->rip == cpu_halt_hlt)
		tf->rip++;			/* hlt is one byte; see cpu_halt */
	if (unlikely(n->depth++))
		panic("NMI nested on cpu %d: an iret inside the NMI handler reused its stack", core);
	count_own(&n->count);
	if (!(tf->rflags & RFLAGS_IF))
		count_own(&n->irqoff);
	if (likely(!READ_ONCE(nmi_quiet)))
		act(n, tf);
	else if (__atomic_load_n(&stop_by, __ATOMIC_ACQUIRE) >= 0 && stop_by != core)
		park(n, tf, core);
	n->depth--;
}

/* trap_fatal: is this core inside its NMI handler? */
bool nmi_in_handler(int core)
{
	return nmi_cpus[core].depth > 0;
}

/* panic, via arch_stop_other_cores: from now on handlers only count. */
void nmi_panic(void)
{
	WRITE_ONCE(nmi_quiet, true);
}

/*
 * panic, interrupts off: every other online core takes an NMI -- interrupts off or not --
 * and parks (park); wait for them, at most half a second (a virtual CPU may be slow to
 * get a host thread). The NMI handlers stop calling their fns and core 0 stops fanning out.
 */
void arch_stop_other_cores(void)
{
	int me = core_id();
	uint64_t end;

	nmi_panic();
	__atomic_store_n(&stop_by, me, __ATOMIC_SEQ_CST);
	for (int c = 0; c < ncpus(); c++)
		if (c != me && READ_ONCE(cpus[c].online))
			lapic_send_nmi(nmi_cpus[c].apic_id);
	end = rdtsc() + tsc_hz() / 2;
	for (int c = 0; c < ncpus(); c++)
		while (c != me && READ_ONCE(cpus[c].online) && !arch_core_stopped(c) &&
		       rdtsc() < end)
			pause();
}

bool arch_core_stopped(int core)
{
	return __atomic_load_n(&nmi_cpus[core].stopped, __ATOMIC_ACQUIRE);
}

/* The ISA IRQs where the HPET's legacy route delivers timers 0 and 1 (hpet.c). */
static const int hpet_irqs[] = { 0, 8 };

/*
 * Their IOAPIC inputs: as an NMI to every core at once (how: FAN_BROADCAST), or to core 0,
 * which relays it.
 */
static void route_on(enum fanout how)
{
	uint32_t dest = how == FAN_BROADCAST ? IOAPIC_DEST_BROADCAST : cpus[0].apic_id;

	for (size_t i = 0; i < ARRAY_SIZE(hpet_irqs); i++) {
		uint16_t f = acpi.isa_flags[hpet_irqs[i]];

		ioapic_route_nmi(acpi.isa_gsi[hpet_irqs[i]], dest, (f & 3) == 3);
	}
}

static void route_off(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(hpet_irqs); i++)
		ioapic_mask(acpi.isa_gsi[hpet_irqs[i]]);
}

/*
 * The background fn's share of a source at src_hz: every NMI on its own source, every
 * (src_hz / bg_hz)-th on a faster session's, so that it runs at its own rate whatever
 * source it rides on (at least that rate, where every period arrives).
 */
static void set_bg_div(void)
{
	WRITE_ONCE(bg_div, bg_hz && src_hz > bg_hz ? src_hz / bg_hz : 1);
}

static void wait_out_fns(void)
{
	for (int c = 0; c < MAX_CPUS; c++)
		while (__atomic_load_n(&nmi_cpus[c].in_fn, __ATOMIC_SEQ_CST))
			cpu_relax();
}

/*
 * Periods of 1/hz s, each one's moment spread over spread percent of a period (jitter.h)
 * drawn from seed. Every core's period state is set before the route is on, so its first
 * NMI finds it; periods 1 and 2 are on the comparators (hpet.c) before the counter runs.
 */
static void source_start(uint32_t hz, uint32_t spread, uint64_t seed, enum fanout how)
{
	must(__atomic_load_n(&nmi_state, __ATOMIC_ACQUIRE) == NMI_BUSY,
	     "the source is started by whoever claimed it (state busy) only");
	src_hz = hz;
	set_bg_div();
	WRITE_ONCE(yield_vcpu, arch_machine()->kind == MACHINE_QEMU_TCG);
	period_ticks = hpet_ticks_per_period(hz);
	arm_margin = period_ticks / 8;
	jit_width = jitter_width(period_ticks, spread);
	jit_lead = jit_width / 2;
	jit_key = jitter_key(seed, JITTER_STREAM_NMI);
	for (uint64_t d = 0; d < NMI_JUMPS; d++)
		jit_jump[d] = jitter_jump(d);
	for (int c = 0; c < MAX_CPUS; c++) {
		nmi_cpus[c].period = 0;
		nmi_cpus[c].draw = jit_key;
		nmi_cpus[c].drawn = 0;
		nmi_cpus[c].relays = c == 0 && how != FAN_BROADCAST;
		nmi_cpus[c].next_period = period_at(1);
	}
	nmi_armed[0] = nmi_armed[1] = 0;	/* no period 0: armed_at draws */
	nmi_oneshot = jit_width || !hpet_start_periodic(period_ticks);
	if (nmi_oneshot) {
		nmi_to_arm = 3;
		nmi_armed[0] = (uint64_t)period_at(2) << 32 | 2;
		nmi_armed[1] = (uint64_t)period_at(1) << 32 | 1;
		hpet_start(period_at(2), period_at(1));
	}
	WRITE_ONCE(nmi_fanout, how);
	route_on(how);
}

/*
 * No NMI is sent by the timer or by core 0's relay once this returns, but one may be in
 * flight or held pending at any core; and every core's handler is out of its period work
 * (act, nmi_period), so a restart's next_period is not overwritten (Dekker with act:
 * fanout, in_fn).
 */
static void source_stop(void)
{
	route_off();
	hpet_stop();
	__atomic_store_n(&nmi_fanout, FAN_NONE, __ATOMIC_SEQ_CST);
	wait_out_fns();
}

/*
 * Broadcast where every LAPIC in the MADT is an online core (none failed to start, none
 * beyond MAX_CPUS) and every APIC ID is below the broadcast ID; else the relay (see the
 * top of the file).
 */
static enum fanout fanout_mode(void)
{
	if (ncpus() != acpi.lapics)
		return FAN_ONLINE;
	for (int c = 0; c < ncpus(); c++)
		if (cpus[c].apic_id >= IOAPIC_DEST_BROADCAST)
			return FAN_ONLINE;
	return FAN_BROADCAST;
}

static bool claim(int from, int to)
{
	return __atomic_compare_exchange_n(&nmi_state, &from, to, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

bool arch_nmi_available(void)
{
	return hpet_present();
}

int arch_nmi_start(uint32_t hz, uint32_t spread, uint64_t seed, arch_nmi_fn fn)
{
	if (!hpet_present())
		return -ENODEV;
	if (!fn || hz == 0 || hz > NMI_MAX_HZ || spread > 100)
		return -EINVAL;
	if (READ_ONCE(nmi_boot_running))
		arch_nmi_stop();		/* the boot test's source gives way */
	if (!claim(NMI_IDLE, NMI_BUSY))
		return -EBUSY;
	if (bg_source) {		/* the background fn's source gives way too */
		source_stop();
		bg_source = false;
	}
	__atomic_store_n(&nmi_fn, fn, __ATOMIC_SEQ_CST);
	source_start(hz, spread, seed, fanout_mode());
	__atomic_store_n(&nmi_state, NMI_RUNNING, __ATOMIC_RELEASE);
	return 0;
}

void arch_nmi_stop(void)
{
	if (!claim(NMI_RUNNING, NMI_BUSY))
		return;
	source_stop();
	__atomic_store_n(&nmi_fn, NULL, __ATOMIC_SEQ_CST);
	wait_out_fns();
	WRITE_ONCE(nmi_boot_running, false);
	if (nmi_bg) {			/* the background fn's source again */
		source_start(bg_hz, 0, 0, fanout_mode());
		bg_source = true;
	}
	__atomic_store_n(&nmi_state, NMI_IDLE, __ATOMIC_RELEASE);
}

/*
 * With no arch_nmi_start source, the source is the background fn's own; with one, the
 * background fn rides on it (at its rate) and gets its own back at arch_nmi_stop.
 */
int arch_nmi_background(uint32_t hz, arch_nmi_fn fn)
{
	bool idle;

	if (fn && !hpet_present())
		return -ENODEV;
	if (fn && (hz == 0 || hz > NMI_MAX_HZ))
		return -EINVAL;
	if (READ_ONCE(nmi_boot_running))
		arch_nmi_stop();
	idle = claim(NMI_IDLE, NMI_BUSY);
	if (!idle && __atomic_load_n(&nmi_state, __ATOMIC_ACQUIRE) != NMI_RUNNING)
		return -EBUSY;
	if (idle && bg_source) {
		source_stop();
		bg_source = false;
	}
	bg_hz = hz;
	set_bg_div();
	__atomic_store_n(&nmi_bg, fn, __ATOMIC_SEQ_CST);
	if (!fn)
		wait_out_fns();
	if (idle && fn) {
		source_start(hz, 0, 0, fanout_mode());
		bg_source = true;
	}
	if (idle)
		__atomic_store_n(&nmi_state, NMI_IDLE, __ATOMIC_RELEASE);
	return 0;
}

uint64_t arch_nmi_count(int core, uint64_t *irqoff)
{
	struct nmi_cpu *n = &nmi_cpus[core];

	if (irqoff)
		*irqoff = READ_ONCE(n->irqoff);
	return READ_ONCE(n->count);
}

uint64_t arch_nmi_early_count(int core)
{
	return READ_ONCE(nmi_cpus[core].early);
}

uint64_t arch_nmi_extra_count(int core)
{
	return READ_ONCE(nmi_cpus[core].extra);
}

/*
 * Boot core, boot time, once the HPET, IOAPIC and this core's LAPIC are set up and before
 * the APs start: the boot test, if QEMU asks for it (see the top of the file).
 */
void nmi_boot_test(void)
{
	char buf[16];
	uint64_t hz;

	if (fwcfg_read_file("opt/kern/nmi-boot", buf, sizeof(buf)) < 0)
		return;
	if (parse_u64(buf, &hz) < 0 || hz == 0 || hz > NMI_MAX_HZ || !hpet_present()) {
		printk("nmi: boot test: cannot run at \"%s\" Hz%s\n", buf,
		       hpet_present() ? "" : " (no usable HPET)");
		return;
	}
	printk("nmi: boot test: NMIs at %lu Hz from here on, to every core whose IDT is loaded\n",
	       (unsigned long)hz);
	nmi_boot_running = true;
	nmi_state = NMI_BUSY;		/* claimed: the boot core alone runs now */
	source_start((uint32_t)hz, 0, 0, FAN_ARMED);
	__atomic_store_n(&nmi_state, NMI_RUNNING, __ATOMIC_RELEASE);
}

/* Boot core, after smp_boot_aps, before any core is online. */
void nmi_boot_test_hold(void)
{
	uint64_t end = rdtsc() + tsc_hz();

	if (!nmi_boot_running)
		return;
	for (int c = 0; c < ncpus(); c++)
		while (!READ_ONCE(nmi_cpus[c].early) && rdtsc() < end)
			pause();
}
