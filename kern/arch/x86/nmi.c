/*
 * Sampling by NMI (arch.h: arch_nmi_start, arch_nmi_stop, arch_nmi_count) and the NMI
 * handler itself: nmi_period, which the vector's entry (trapentry.S: nmi_entry) calls for a
 * new period on core 0, and nmi_trap, which trap() hands every other vector-2 entry to
 * before it does anything else (the entry finishes core 0's duplicates itself).
 *
 * The route. TCG has no PMU, so the NMIs come from a timer: HPET timer 0, periodic in
 * hardware (hpet.c), on ISA IRQ 0, whose IOAPIC entry is programmed for NMI delivery to
 * core 0. Core 0's handler first sends an NMI IPI to the other cores, then samples
 * itself. The fan-out is one ICR write with the all-excluding-self shorthand, whatever the
 * number of cores, when every LAPIC the MADT lists is a core running this kernel; if one
 * failed to start (or is beyond MAX_CPUS, or only online-capable) it is an NMI per online
 * core instead, because the shorthand would also reach a core stuck somewhere in its
 * start-up or never started (an NMI to a core in wait-for-SIPI state is not defined to be
 * harmless). A logical destination set would reach only 8 cores.
 *
 * Periods. An NMI does not say where it came from, and QEMU 7.2's HPET pulses twice for
 * most periods under -icount: its periodic callback runs exactly at the comparator's
 * value, does not count that as past the comparator, re-arms one tick later and pulses
 * again (seen here as a second NMI on core 0 within 2 us of the first, as core 0 happens
 * to run: 4304 for 5049 periods in the run matrix bench). So core 0 reads the HPET counter
 * (one MMIO read a period) and acts on an NMI -- fans out, calls fn -- only when a period
 * has begun since the last one it acted on; any other NMI there is counted as extra.
 * (One-shot mode, the comparator written by the handler each period, pulses once; but
 * each write from core 0 kicks core 0's vCPU off QEMU's -icount round robin, which then
 * starves it: run spin on 4 cores got 0 iterations on core 0.)
 *
 * The entry (trapentry.S: nmi_entry, numbers shared through nmi_entry.h). Its first
 * instructions, two scratch registers saved, dismiss core 0's duplicate -- counted as
 * count, irqoff and extra, as below -- when nothing else could need doing: the record
 * says core 0, no panic (nmi_quiet), not nested, not the idle loop's hlt, a source
 * running and the counter short of nmi_next_period. A new period on core 0 goes on to
 * nmi_period with the tests made (and a frame without rbx and r12-r15); every other NMI
 * -- another core, a panic's, a stray -- takes the full way, trap_common, trap, nmi_trap.
 *
 * The handler runs on its own stack, IST2 of the core's TSS (gdt.c), with further NMIs
 * held by the CPU until its iretq. It
 *  - finds its core in the record at the top of that stack (nmi_stack_top), never in GS,
 *    so it works before cpu_setup_this on an AP, whatever GS holds there;
 *  - counts the NMI, and whether it hit with IF clear, in its core's own counters;
 *  - on core 0, while a source runs, checks that a new period began, and fans out;
 *  - calls fn only when the core is online (its portable per-core state exists), no
 *    panic is under way, and fn is set; else it returns at once: ignored, and counted.
 *
 * Hazards, and why each is covered:
 *  - An NMI anywhere: mid stack switch in swtch, in the boot path, inside an interrupt
 *    handler or a spinlock section. The handler does not use the interrupted stack (IST)
 *    or GS, takes no lock, and touches only its own core's counters and frame, read-mostly
 *    globals, the local APIC's ICR, which lapic_send_nmi* leave as the interrupted code had
 *    it, and (core 0) the HPET counter, a plain read. Nothing that is programmed through an
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
 *    handler sees NULL or stop sees it inside (Dekker). The same in_fn covers core 0's
 *    period check against source_stop's clearing fanout, so no nmi_next_period update from
 *    an old source lands in a new one's.
 *  - A panic elsewhere: arch_stop_other_cores calls nmi_panic, after which handlers only
 *    count, and core 0 stops fanning out.
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

#define NMI_STACK	8192
#define NMI_CANARY	0x6e6d692d63616e61ull
#define NMI_MAX_HZ	100000

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
	uint32_t apic_id;	/* for directed fan-out, known from nmi_cpu_armed on */
	bool armed;		/* IDT loaded: the boot test may send it NMIs */
	bool online;		/* the handler saw cpus[core].online (it never goes back) */
	uint32_t bg_skip;	/* NMIs to let pass before the background fn runs again */
	bool stopped;		/* parked for good by a panic's stop NMI (release) */
} __aligned(CACHELINE);

enum fanout {
	FAN_NONE,		/* no source running */
	FAN_SHORTHAND,		/* all-excluding-self: every listed core is online */
	FAN_ONLINE,		/* an NMI to each online core */
	FAN_ARMED,		/* boot test: an NMI to each core whose IDT is loaded */
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
static uint32_t period_ticks;		/* HPET counter ticks per period */
uint32_t nmi_next_period;		/* core 0: counter value that begins the next period */

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
_Static_assert(sizeof(((struct nmi_cpu *)0)->in_fn) == 4 && sizeof(nmi_fanout) == 4 &&
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
 * Core 0, NMI context, inside in_fn: a period began late counter ticks ago (late < 2^31);
 * the next one begins at the first multiple of period_ticks past the counter.
 */
static __force_inline void advance(uint32_t late)
{
	nmi_next_period += (late / period_ticks + 1) * period_ticks;
}

/*
 * Core 0, NMI context, a source running: does this NMI begin a period the handler has not
 * yet acted on? Only then does core 0 fan out and call fn. An NMI that does not is
 * counted as extra: QEMU's HPET pulses twice for most periods (see the top of the file),
 * and an NMI from elsewhere (another route, one held pending across a restart) is not a
 * period either. One counter read; the 32-bit arithmetic follows the comparator's wrap.
 * nmi_entry (trapentry.S) makes the same test first, and dismisses what fails it.
 */
static bool new_period(void)
{
	uint32_t late = hpet_now() - nmi_next_period;

	if ((int32_t)late < 0)
		return false;
	advance(late);
	return true;
}

/* Core 0, NMI context: pass this period's NMI on to the other cores (shorthand first:
 * the common case, one test). */
static __force_inline void fan_out(void)
{
	int how = READ_ONCE(nmi_fanout);

	if (likely(how == FAN_SHORTHAND)) {
		lapic_send_nmi_others();
	} else if (how == FAN_ONLINE) {
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
 * A period's work past core 0's period check and fan-out, inside in_fn, which it clears:
 * on an online core, the background fn first (the crash recorder, so a fault in fn finds
 * it up to date) and fn. Inlined, so that a fault report's backtrace names the handler.
 */
static __force_inline void call_fns(struct nmi_cpu *n, const struct trapframe *tf, int core)
{
	arch_nmi_fn fn, bg;

	if (unlikely(!n->online) && !(n->online = READ_ONCE(cpus[core].online))) {
		WRITE_ONCE(n->early, n->early + 1);
		goto out;
	}
	bg = __atomic_load_n(&nmi_bg, __ATOMIC_SEQ_CST);
	fn = __atomic_load_n(&nmi_fn, __ATOMIC_SEQ_CST);
	if (bg && !n->bg_skip) {
		n->bg_skip = READ_ONCE(bg_div) - 1;
		bg(tf);
	} else if (bg) {
		n->bg_skip--;
	}
	if (fn)
		fn(tf);
	if (*(uint64_t *)nmi_stacks[core] != NMI_CANARY)
		panic("NMI stack overflow on cpu %d", core);
out:
	__atomic_store_n(&n->in_fn, 0, __ATOMIC_RELEASE);
}

/*
 * A period's work, inside in_fn: on core 0 (a source running) the period check and the
 * fan-out; then call_fns.
 */
static void act(struct nmi_cpu *n, const struct trapframe *tf, int core)
{
	__atomic_store_n(&n->in_fn, 1, __ATOMIC_SEQ_CST);
	if (core == 0 && READ_ONCE(nmi_fanout) != FAN_NONE) {
		if (!new_period()) {
			WRITE_ONCE(n->extra, n->extra + 1);
			__atomic_store_n(&n->in_fn, 0, __ATOMIC_RELEASE);
			return;
		}
		fan_out();
	}
	call_fns(n, tf, core);
}

/*
 * nmi_entry (trapentry.S), core 0, NMI context, on its NMI stack: a source running and a
 * period begun late counter ticks ago. What nmi_trap and act do for such an NMI, less the
 * tests nmi_entry made on the way (the record, no panic, not nested, not the idle loop's
 * hlt, in_fn set and then the source seen running). tf's rbx and r12-r15 are not saved
 * (nmi_entry): nothing here reads them.
 */
void nmi_period(struct trapframe *tf, uint32_t late)
{
	struct nmi_cpu *n = &nmi_cpus[0];

	n->depth = 1;
	WRITE_ONCE(n->count, n->count + 1);
	if (!(tf->rflags & RFLAGS_IF))
		WRITE_ONCE(n->irqoff, n->irqoff + 1);
	advance(late);
	fan_out();
	call_fns(n, tf, 0);
	n->depth = 0;
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
	WRITE_ONCE(n->count, n->count + 1);
	if (!(tf->rflags & RFLAGS_IF))
		WRITE_ONCE(n->irqoff, n->irqoff + 1);
	if (likely(!READ_ONCE(nmi_quiet)))
		act(n, tf, core);
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

/* The IOAPIC input of ISA IRQ 0, where the HPET's legacy route delivers timer 0. */
static void route_on(void)
{
	uint16_t f = acpi.isa_flags[0];

	ioapic_route_nmi(acpi.isa_gsi[0], cpus[0].apic_id, (f & 3) == 3);
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

/* Core 0's period state is set before the route is on, so its first NMI finds it. */
static void source_start(uint32_t hz, enum fanout how)
{
	src_hz = hz;
	set_bg_div();
	period_ticks = hpet_start(hz);
	nmi_next_period = period_ticks;
	WRITE_ONCE(nmi_fanout, how);
	route_on();
}

/*
 * No NMI is sent by the timer or by core 0's fan-out once this returns, but one may be
 * in flight or held pending at any core; and core 0's handler is out of its period work
 * (act), so a restart's nmi_next_period is not overwritten (Dekker with act: fanout, in_fn).
 */
static void source_stop(void)
{
	ioapic_mask(acpi.isa_gsi[0]);
	hpet_stop();
	__atomic_store_n(&nmi_fanout, FAN_NONE, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&nmi_cpus[0].in_fn, __ATOMIC_SEQ_CST))
		cpu_relax();
}

static enum fanout fanout_mode(void)
{
	/* every LAPIC in the MADT is an online core: none failed to start, none beyond 64 */
	return ncpus() == acpi.lapics ? FAN_SHORTHAND : FAN_ONLINE;
}

static void wait_out_fns(void)
{
	for (int c = 0; c < MAX_CPUS; c++)
		while (__atomic_load_n(&nmi_cpus[c].in_fn, __ATOMIC_SEQ_CST))
			cpu_relax();
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

int arch_nmi_start(uint32_t hz, arch_nmi_fn fn)
{
	if (!hpet_present())
		return -ENODEV;
	if (!fn || hz == 0 || hz > NMI_MAX_HZ)
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
	source_start(hz, fanout_mode());
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
		source_start(bg_hz, fanout_mode());
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
		source_start(hz, fanout_mode());
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
	nmi_state = NMI_RUNNING;
	source_start((uint32_t)hz, FAN_ARMED);
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
