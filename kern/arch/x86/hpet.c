/*
 * The HPET (IA-PC HPET specification 1.0a) as the NMI source for nmi.c, and nothing else:
 * no other code uses it, so this file owns it outright.
 *
 * Legacy replacement routing sends timer 0 to ISA IRQ 0 and timer 1 to ISA IRQ 8 (the
 * IOAPIC inputs the MADT gives for them: GSI 2 and 8 on a PC), and keeps the 8254 PIT and
 * the RTC off those inputs. Two ways to run them:
 *  - periods of a fixed length (hpet_start_periodic): timer 0 alone, periodic in hardware
 *    (the comparator adds the period to itself at every match), so nothing re-arms it;
 *  - jittered periods (hpet_start): timers 0 and 1 one-shot, taking turns. Period k's NMI
 *    comes from timer k % 2, and while it is handled the other timer already holds period
 *    k + 1, so period k + 2 is written to a comparator that is not the next to fire. Each
 *    target is the period's own moment on a grid counted from the start (jitter.h).
 * Either way the rate does not drift.
 * The interrupts are edge-triggered: the IOAPIC delivers them as NMIs, which have no EOI
 * and so could never end a level-triggered one.
 *
 * Registers are accessed 32 bits at a time (every HPET must accept that), and the
 * comparators run in 32-bit mode, so no 64-bit write can tear: a target is a counter value
 * modulo 2^32, which nmi.c compares with 32-bit wrapping arithmetic. hpet_init runs once at
 * boot and leaves the main counter running with every timer's interrupt off, so tsc.c can
 * calibrate the TSC against it; hpet_start and hpet_stop run in thread context under
 * nmi.c's start/stop exclusion; hpet_arm and the counter reads in NMI context (one
 * register each, no index register, nothing to put back).
 *
 * A one-shot comparator written with a target the counter has already passed fires only
 * when the counter comes round again (2^32 ticks later: 300 s at 14.318 MHz; QEMU fires
 * at once). nmi.c writes targets at least a period ahead, and re-arms both comparators
 * whenever it finds a period skipped. QEMU also pulses a 32-bit one-shot timer as the
 * counter wraps (every 43 s at its 100 MHz); such an NMI begins no period and is ignored.
 */
#include "x86.h"
#include "arch_x86.h"
#include "arch.h"

#define GCAP		0x000	/* capabilities (low), period in fs (high) */
#define GCAP_PERIOD	0x004
#define GCONF		0x010
#define MAIN_HI		0x0f4
#define TN_CONF(n)	(0x100 + 0x20 * (n))
#define TN_CMP(n)	HPET_TN_CMP(n)		/* arch_x86.h, for hpet_arm */

#define GCAP_LEG_RT	(1u << 15)	/* legacy replacement route capable */
#define GCONF_ENABLE	(1u << 0)	/* main counter runs, timers interrupt */
#define GCONF_LEG_RT	(1u << 1)	/* timer 0 -> IRQ 0 / GSI 2, timer 1 -> IRQ 8 */
#define GCAP_TIMERS(c)	((((c) >> 8) & 0x1f) + 1)	/* number of comparators */
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
 * Boot core, once, after acpi_init: usable only with a memory-mapped block of at least two
 * comparators that can route timers 0 and 1 the legacy way (the spec's clock period
 * limits: more than 0, at most 100 ns; it requires three comparators, so every HPET has
 * two).
 */
void hpet_init(void)
{
	uint32_t period;

	if (!acpi.hpet_addr || acpi.hpet_addr >= (1ull << 32))
		return;
	hpet = (volatile uint32_t *)(uintptr_t)acpi.hpet_addr;
	period = rd(GCAP_PERIOD);
	if (period == 0 || period > 100000000 || !(rd(GCAP) & GCAP_LEG_RT) ||
	    GCAP_TIMERS(rd(GCAP)) < 2) {
		printk("hpet: at %lx, not usable (period %u fs, capabilities %x)\n",
		       (unsigned long)acpi.hpet_addr, period, rd(GCAP));
		hpet = NULL;
		return;
	}
	hpet_fs = period;
	wr(GCONF, 0);
	for (uint32_t n = 0; n < GCAP_TIMERS(rd(GCAP)); n++)
		wr(TN_CONF(n), 0);	/* no timer interrupts, whatever the firmware left */
	wr(GCONF, GCONF_ENABLE);	/* the counter runs, for hpet_counter */
}

bool hpet_present(void) { return hpet != NULL; }

/* Main counter ticks per second (exact to 1 part in 10^7 for any legal period). */
uint64_t hpet_hz(void) { return (FS_PER_S + hpet_fs / 2) / hpet_fs; }

/* Counter ticks per period at hz (rounded to nearest); the rate actually run is the
 * counter frequency over this. */
uint32_t hpet_ticks_per_period(uint32_t hz)
{
	uint64_t t = (FS_PER_S / hz + hpet_fs / 2) / hpet_fs;

	return t < 1 ? 1 : t > 0x7fffffff ? 0x7fffffff : (uint32_t)t;
}

/*
 * Interrupt on ISA IRQ 0 whenever the counter (low 32 bits, hpet_counter, counting from 0:
 * it is halted and zeroed first) reaches a multiple of period, modulo 2^32 (the comparator
 * wraps with it). False, nothing started, when timer 0 cannot run periodically.
 */
bool hpet_start_periodic(uint32_t period)
{
	if (!(rd(TN_CONF(0)) & TN_PER_CAP))
		return false;
	wr(GCONF, 0);
	wr(HPET_MAIN_LO, 0);
	wr(MAIN_HI, 0);
	wr(TN_CONF(0), TN_INT_ENB | TN_PERIODIC | TN_VAL_SET | TN_32MODE);
	wr(TN_CMP(0), period);		/* first match: the accumulator */
	wr(TN_CMP(0), period);		/* the period added at every match */
	wr(GCONF, GCONF_ENABLE | GCONF_LEG_RT);
	return true;
}

/*
 * Interrupt once on ISA IRQ 8 when the counter (low 32 bits, hpet_counter) reaches at1,
 * and once on ISA IRQ 0 when it reaches at0, counting from 0: the counter is halted and
 * zeroed first. Then nothing more until hpet_arm.
 */
void hpet_start(uint32_t at0, uint32_t at1)
{
	wr(GCONF, 0);
	wr(HPET_MAIN_LO, 0);
	wr(MAIN_HI, 0);
	wr(TN_CONF(0), TN_INT_ENB | TN_32MODE);
	wr(TN_CMP(0), at0);
	wr(TN_CONF(1), TN_INT_ENB | TN_32MODE);
	wr(TN_CMP(1), at1);
	wr(GCONF, GCONF_ENABLE | GCONF_LEG_RT);
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

/* No more interrupts from timers 0 and 1 once this returns (the counter runs on, as at
 * boot). */
void hpet_stop(void)
{
	wr(GCONF, 0);
	wr(TN_CONF(0), 0);
	wr(TN_CONF(1), 0);
	wr(GCONF, GCONF_ENABLE);
	(void)rd(GCONF);		/* the writes have landed */
}
