/*
 * The local APIC of each core: interrupt acknowledge, inter-processor interrupts and the
 * timer. The timer runs one-shot, counting down at a rate measured once against the TSC;
 * alarm.c asks for "interrupt me at TSC t" and arch_timer_set converts (under -icount,
 * interrupting at the next slice boundary instead when that comes first: turns.c).
 */
#include "x86.h"
#include "arch_x86.h"
#include "arch.h"
#include "cpu.h"

#define ID	0x020
#define EOI	0x0b0
#define SVR	0x0f0
#define ICRLO	0x300
#define ICRHI	0x310
#define LVT_TIMER 0x320
#define LVT_LINT0 0x350
#define LVT_LINT1 0x360
#define LVT_ERROR 0x370
#define TICR	0x380	/* initial count */
#define TCCR	0x390	/* current count */
#define TDCR	0x3e0	/* divide configuration */
#define MASKED	0x10000
#define ICR_PENDING 0x1000
#define ICR_NMI	0x400		/* delivery mode NMI (the vector is ignored) */
#define ICR_ASSERT 0x4000
#define ICR_SELF	(1u << 18)

volatile uint32_t *lapic_mmio;	/* the same address on every core; lapic_eoi is inline */
static uint64_t lapic_hz;	/* timer counts per second at divide 1 */
/* for the timer path, set once at calibration: counts per TSC tick in 32.32 fixed point,
 * and the farthest a deadline may be (a second of TSC) so that count stays in range */
static uint64_t counts_per_tsc, max_ahead;

/*
 * Register access. The timer path (EOI and TICR, twice per tick) writes without reading
 * anything back: every LAPIC access is a trip to the device model under emulation and an
 * uncached access on hardware, and nothing there needs the write to have landed first.
 * Set-up writes (wr_sync) read the ID register back to make sure they took effect.
 */
static inline uint32_t rd(uint32_t reg) { return lapic_mmio[reg / 4]; }
static inline void wr(uint32_t reg, uint32_t v) { lapic_mmio[reg / 4] = v; }
static inline void wr_sync(uint32_t reg, uint32_t v) { wr(reg, v); (void)rd(ID); }

void lapic_init_cpu(void)
{
	lapic_mmio = (volatile uint32_t *)acpi.lapic_addr;
	wrmsr(MSR_APIC_BASE, rdmsr(MSR_APIC_BASE) | 0x800);	/* global enable */
	wr_sync(SVR, 0x100 | T_SPURIOUS);
	wr_sync(LVT_LINT0, MASKED);
	wr_sync(LVT_LINT1, MASKED);
	wr_sync(LVT_ERROR, MASKED);
	wr_sync(TDCR, 0xb);		/* divide by 1 */
	wr_sync(TICR, 0);
	wr_sync(LVT_TIMER, T_TIMER);	/* one-shot, unmasked: TICR = 0 keeps it quiet */
	wr_sync(EOI, 0);
}

uint32_t lapic_id(void) { return rd(ID) >> 24; }
_Static_assert(EOI == 0x0b0, "lapic_eoi (arch_x86.h) writes this register");

void lapic_send_ipi(uint32_t apic_id, uint32_t icr_low)
{
	unsigned long f = irq_save();

	wr_sync(ICRHI, apic_id << 24);
	wr_sync(ICRLO, icr_low);
	while (rd(ICRLO) & ICR_PENDING)
		pause();
	irq_restore(f);
}

static void icr_wait_idle(void)
{
	while (rd(ICRLO) & ICR_PENDING)
		pause();
}

/*
 * NMI context (or any other): an NMI to the core with apic_id. The interrupted code may
 * be inside lapic_send_ipi, between writing the destination (ICRHI) and the command
 * (ICRLO), or waiting for its own send to leave. So wait until no send is pending before
 * writing, and put ICRHI back afterwards: the interrupted send then goes where it meant.
 */
void lapic_send_nmi(uint32_t apic_id)
{
	uint32_t hi = rd(ICRHI);

	icr_wait_idle();
	wr(ICRHI, apic_id << 24);
	wr(ICRLO, ICR_NMI | ICR_ASSERT);
	icr_wait_idle();
	wr(ICRHI, hi);
}

/*
 * NMI context (or any other): a fixed interrupt with vector on this core, taken once its
 * interrupts are on. The self shorthand ignores ICRHI; waiting for an idle ICR first and
 * after keeps an interrupted send intact (see lapic_send_nmi).
 */
void lapic_send_self(uint32_t vector)
{
	icr_wait_idle();
	wr(ICRLO, ICR_SELF | vector);
	icr_wait_idle();
}

/*
 * Boot core, at boot: spin until the TSC reaches end. No pause in the loop, on purpose:
 * under TCG every pause ends the virtual CPU's turn (QEMU leaves its execution loop), so
 * under the exact clock (-icount), where guest time is the instructions run, a 10 ms wait
 * was a million trips through QEMU's loop, some 0.55 s of host time a started core (a
 * 4-core boot took 2.7 s to its banner, now 1.1 s); the timer's calibration waits as
 * long, once. Nothing here has a sibling to yield to: the cores being started wait for
 * their SIPI, the started ones halt in idle.
 */
static void spin_until_tsc(uint64_t end)
{
	while (rdtsc() < end)
		;
}

static void delay_us(uint64_t us)
{
	spin_until_tsc(rdtsc() + us * tsc_hz() / 1000000);
}

/* Start an AP at vector_page * 4 KiB in real mode (Intel's INIT-SIPI-SIPI sequence). */
void lapic_send_init_sipi(uint32_t apic_id, uint8_t vector_page)
{
	lapic_send_ipi(apic_id, 0x4500);		/* INIT, assert */
	delay_us(10000);
	for (int i = 0; i < 2; i++) {
		lapic_send_ipi(apic_id, 0x4600 | vector_page);	/* STARTUP */
		delay_us(200);
	}
}

/* Boot core, once, after the TSC is calibrated: count timer ticks over 10 ms of TSC. */
void lapic_timer_calibrate(void)
{
	uint64_t t0, t1;
	uint32_t c1;

	wr_sync(TDCR, 0xb);
	wr_sync(LVT_TIMER, MASKED | T_TIMER);
	wr_sync(TICR, 0xffffffff);
	t0 = rdtsc();
	spin_until_tsc(t0 + tsc_hz() / 100);
	t1 = rdtsc();
	c1 = rd(TCCR);
	wr_sync(TICR, 0);
	wr_sync(LVT_TIMER, T_TIMER);
	lapic_hz = (uint64_t)(0xffffffffu - c1) * tsc_hz() / (t1 - t0);
	if (lapic_hz == 0)
		lapic_hz = 1000000000;
	/* lapic_hz * 2^32 / tsc_hz, 16 bits at a time (no 128-bit division here) */
	max_ahead = tsc_hz();
	counts_per_tsc = lapic_hz / max_ahead << 32;
	uint64_t r = lapic_hz % max_ahead << 16;
	counts_per_tsc |= r / max_ahead << 16;
	counts_per_tsc |= (r % max_ahead << 16) / max_ahead;
	/* a count for max_ahead must fit TICR's 32 bits (arch_timer_set does not clamp) */
	max_ahead /= lapic_hz / 0x100000000ull + 1;	/* lapic_hz over that is below 2^32 */
}

/*
 * Interrupt at TSC deadline (one vector T_TIMER), or never if deadline is 0. Interrupts
 * off, own core; now is the caller's fresh TSC reading (arch.h), which saves reading it
 * again here, once per tick. A deadline already past fires as soon as possible. (QEMU's
 * TCG has no TSC-deadline mode, which would make this one MSR write.)
 */
void arch_timer_set(uint64_t deadline, uint64_t now)
{
	uint64_t count;

	deadline = turns_deadline(cpu_here()->id, deadline);	/* at a slice's end at the latest */
	if (!deadline) {
		wr(TICR, 0);
		return;
	}
	/* at most max_ahead (a second, or less if the count would pass 32 bits: calibration);
	 * alarm.c re-arms when woken early */
	count = deadline > now ?
		(uint64_t)((unsigned __int128)MIN(deadline - now, max_ahead) * counts_per_tsc >> 32) : 1;
	if (count == 0)
		count = 1;
	wr(TICR, (uint32_t)count);	/* LVT_TIMER stays one-shot and unmasked */
}
