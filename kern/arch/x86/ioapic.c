/*
 * The IOAPIC: routes device interrupt lines (GSIs) to vectors on the boot core, and one
 * line (nmi.c's timer) as an NMI, to one core or to all. The legacy 8259 PICs are masked
 * off for good.
 *
 * A redirection entry is written through the IOREGSEL/IOWIN pair, so two writers must
 * not overlap: entries are written at boot, and afterwards only by ioapic_route_nmi and
 * ioapic_mask, whose callers (nmi.c's start and stop) exclude each other. No interrupt
 * or NMI handler touches the IOAPIC (EOIs go to the local APIC).
 */
#include "x86.h"
#include "arch_x86.h"

#define IOREGSEL 0x00
#define IOWIN	0x10
#define REG_VER	0x01
#define REG_RED	0x10

static volatile uint32_t *ioapic;

static uint32_t rd(uint32_t reg) { ioapic[IOREGSEL / 4] = reg; return ioapic[IOWIN / 4]; }
static void wr(uint32_t reg, uint32_t v) { ioapic[IOREGSEL / 4] = reg; ioapic[IOWIN / 4] = v; }

/*
 * The 8259s are initialized (vectors 0xe0..0xef, out of the way of exceptions, in case a
 * spurious IRQ 7 or 15 still arrives) and then masked for good.
 *
 * Hazard: this must happen before the LAPIC masks LINT0. The firmware leaves the PIT
 * ticking on IRQ 0; if the PIC's output is still raised when LINT0 stops accepting it,
 * QEMU never sees it drop and later delivers a "hardware interrupt" with no vector,
 * which arrives as a general protection fault at the first sti.
 */
void pic_disable(void)
{
	outb(0x20, 0x11);		/* ICW1: init, ICW4 follows */
	outb(0xa0, 0x11);
	outb(0x21, 0xe0);		/* ICW2: vector base */
	outb(0xa1, 0xe8);
	outb(0x21, 0x04);		/* ICW3: slave on IRQ 2 */
	outb(0xa1, 0x02);
	outb(0x21, 0x01);		/* ICW4: 8086 mode */
	outb(0xa1, 0x01);
	outb(0x21, 0xff);		/* mask everything */
	outb(0xa1, 0xff);
}

/* Boot core, once: mask every pin. */
void ioapic_init(void)
{
	int n;

	ioapic = (volatile uint32_t *)acpi.ioapic_addr;
	n = ((rd(REG_VER) >> 16) & 0xff) + 1;
	for (int i = 0; i < n; i++) {
		wr(REG_RED + 2 * i, 0x10000);	/* masked */
		wr(REG_RED + 2 * i + 1, 0);
	}
}

/* Boot time: deliver gsi as vector to the boot core (fixed delivery, physical dest). */
void ioapic_route(uint32_t gsi, int vector, bool level, bool active_low)
{
	uint32_t pin = gsi - acpi.ioapic_gsi_base;
	uint32_t lo = (uint32_t)vector | (level ? 1u << 15 : 0) | (active_low ? 1u << 13 : 0);

	wr(REG_RED + 2 * pin + 1, acpi.apic_ids[0] << 24);
	wr(REG_RED + 2 * pin, lo);
}

/*
 * Thread context: deliver gsi as an NMI to the core with APIC ID dest, or to every core at
 * once with IOAPIC_DEST_BROADCAST (physical destination mode both ways: FFh is the xAPIC
 * broadcast, which reaches every local APIC, started or not: see nmi.c for when that is
 * safe). NMI delivery is edge-triggered whatever the line's own trigger mode (82093AA
 * datasheet: NMI, SMI and INIT are edge), and it has no vector and no EOI. Edges that
 * arrived while the pin was masked are not replayed when it is unmasked (the datasheet
 * again), so unmasking cannot deliver a stale one.
 */
void ioapic_route_nmi(uint32_t gsi, uint32_t dest, bool active_low)
{
	uint32_t pin = gsi - acpi.ioapic_gsi_base;

	wr(REG_RED + 2 * pin, 0x10000);
	wr(REG_RED + 2 * pin + 1, dest << 24);
	wr(REG_RED + 2 * pin, (4u << 8) | (active_low ? 1u << 13 : 0));
}

/* Thread context: stop delivering gsi (the entry's other fields are kept). */
void ioapic_mask(uint32_t gsi)
{
	uint32_t pin = gsi - acpi.ioapic_gsi_base;

	wr(REG_RED + 2 * pin, rd(REG_RED + 2 * pin) | 0x10000);
	(void)rd(REG_RED + 2 * pin);
}

/* ISA IRQs are edge/active-high unless the MADT overrides them (MPS INTI flags). */
void ioapic_route_isa(int irq, int vector)
{
	uint16_t f = acpi.isa_flags[irq];
	bool active_low = (f & 3) == 3;
	bool level = ((f >> 2) & 3) == 3;

	ioapic_route(acpi.isa_gsi[irq], vector, level, active_low);
}
