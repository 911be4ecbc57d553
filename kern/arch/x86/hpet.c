/*
 * The HPET (IA-PC HPET specification 1.0a) as a periodic source for nmi.c, and nothing
 * else: no other code uses it, so this file owns it outright.
 *
 * Timer 0 runs in periodic mode with legacy replacement routing, which sends it to ISA
 * IRQ 0, that is to the IOAPIC input the MADT gives for IRQ 0 (GSI 2 on a PC), and keeps
 * the 8254 PIT off that input. The period is counted in hardware (the comparator adds the
 * period to itself at every match), so the rate does not drift and nothing re-arms it.
 * The interrupt is edge-triggered: the IOAPIC delivers it as an NMI, which has no EOI and
 * so could never end a level-triggered one.
 *
 * Registers are accessed 32 bits at a time (every HPET must accept that), and the
 * comparator runs in 32-bit mode, so no 64-bit write can tear. hpet_init runs once at
 * boot and leaves the main counter running with every timer's interrupt off, so tsc.c can
 * calibrate the TSC against it; hpet_start and hpet_stop run in thread context under
 * nmi.c's start/stop exclusion, never in NMI context.
 */
#include "x86.h"
#include "arch_x86.h"
#include "arch.h"

#define GCAP		0x000	/* capabilities (low), period in fs (high) */
#define GCAP_PERIOD	0x004
#define GCONF		0x010
#define MAIN_HI		0x0f4
#define T0_CONF		0x100
#define T0_CMP		0x108
#define TN_CONF(n)	(0x100 + 0x20 * (n))

#define GCAP_LEG_RT	(1u << 15)	/* legacy replacement route capable */
#define GCONF_ENABLE	(1u << 0)	/* main counter runs, timers interrupt */
#define GCONF_LEG_RT	(1u << 1)	/* timer 0 -> IRQ 0 / GSI 2, timer 1 -> IRQ 8 */
#define TN_INT_ENB	(1u << 2)
#define TN_PERIODIC	(1u << 3)
#define TN_PER_CAP	(1u << 4)	/* timer can run periodically */
#define TN_VAL_SET	(1u << 6)	/* next comparator write sets the accumulator */
#define TN_32MODE	(1u << 8)

#define FS_PER_S	1000000000000000ull

volatile uint32_t *hpet;		/* the registers, or NULL: no usable HPET */
static uint64_t hpet_fs;		/* main counter period, femtoseconds */

static uint32_t rd(uint32_t reg) { return hpet[reg / 4]; }
static void wr(uint32_t reg, uint32_t v) { hpet[reg / 4] = v; }

/*
 * Boot core, once, after acpi_init: usable only with a memory-mapped block whose timer 0
 * is periodic-capable and which can route it the legacy way (the spec's clock period
 * limits: more than 0, at most 100 ns).
 */
void hpet_init(void)
{
	uint32_t period;

	if (!acpi.hpet_addr || acpi.hpet_addr >= (1ull << 32))
		return;
	hpet = (volatile uint32_t *)(uintptr_t)acpi.hpet_addr;
	period = rd(GCAP_PERIOD);
	if (period == 0 || period > 100000000 || !(rd(GCAP) & GCAP_LEG_RT) ||
	    !(rd(T0_CONF) & TN_PER_CAP)) {
		printk("hpet: at %lx, not usable (period %u fs, capabilities %x, timer 0 %x)\n",
		       (unsigned long)acpi.hpet_addr, period, rd(GCAP), rd(T0_CONF));
		hpet = NULL;
		return;
	}
	hpet_fs = period;
	wr(GCONF, 0);
	for (uint32_t n = 0; n <= ((rd(GCAP) >> 8) & 0x1f); n++)
		wr(TN_CONF(n), 0);	/* no timer interrupts, whatever the firmware left */
	wr(GCONF, GCONF_ENABLE);	/* the counter runs, for hpet_counter */
}

bool hpet_present(void) { return hpet != NULL; }

/* Main counter ticks per second (exact to 1 part in 10^7 for any legal period). */
uint64_t hpet_hz(void) { return (FS_PER_S + hpet_fs / 2) / hpet_fs; }

/* Counter ticks per period at hz (rounded to nearest); the rate actually run is the
 * counter frequency over this. */
static uint32_t ticks_per_period(uint32_t hz)
{
	uint64_t t = (FS_PER_S / hz + hpet_fs / 2) / hpet_fs;

	return t < 1 ? 1 : t > 0x7fffffff ? 0x7fffffff : (uint32_t)t;
}

/*
 * Interrupt on ISA IRQ 0 every 1/hz s, the first one a period from now. The counter is
 * halted and zeroed first so the comparator's first match is exactly one period away:
 * periods begin when the counter (low 32 bits, hpet_counter) reaches k * the returned
 * number of ticks, modulo 2^32 (the comparator wraps with it).
 */
uint32_t hpet_start(uint32_t hz)
{
	uint32_t p = ticks_per_period(hz);

	wr(GCONF, 0);
	wr(HPET_MAIN_LO, 0);
	wr(MAIN_HI, 0);
	wr(T0_CONF, TN_INT_ENB | TN_PERIODIC | TN_VAL_SET | TN_32MODE);
	wr(T0_CMP, p);			/* first match: the accumulator */
	wr(T0_CMP, p);			/* the period added at every match */
	wr(GCONF, GCONF_ENABLE | GCONF_LEG_RT);
	return p;
}

/*
 * Any context, NMI included (one read, no state): the main counter's low 32 bits. Out of
 * line on purpose: tsc.c times this call between two TSC reads to calibrate the TSC (an
 * inlined read calibrated 0.2 ppm low, which tickload's tsc_hz / 10^6 truncates by 0.1%);
 * core 0's NMI handler reads it inlined (hpet_now, arch_x86.h).
 */
uint32_t hpet_counter(void)
{
	return rd(HPET_MAIN_LO);
}

/* No more interrupts from timer 0 once this returns (the counter runs on, as at boot). */
void hpet_stop(void)
{
	wr(GCONF, 0);
	wr(T0_CONF, 0);
	wr(GCONF, GCONF_ENABLE);
	(void)rd(GCONF);		/* the writes have landed */
}

