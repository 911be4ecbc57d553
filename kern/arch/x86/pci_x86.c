/*
 * PCI on x86: configuration mechanism #1 and INTx routing through the IOAPIC.
 *
 * Config access writes an address to 0xcf8 and moves data through 0xcfc; the pair must not
 * interleave with another core's, so every access holds cfg_lock (a spinlock, interrupts
 * off: any context may call).
 *
 * Interrupts: the firmware (SeaBIOS in QEMU) has written each device's legacy IRQ number
 * into config register 0x3c. That number is an ISA IRQ, which the MADT's interrupt source
 * overrides map to a GSI with a polarity and trigger mode (QEMU's pc machine declares PCI
 * lines 5, 9, 10 and 11 level-triggered, active high). Each distinct GSI gets one vector
 * from T_PCI_BASE..T_PCI_BASE+7; devices sharing a GSI share its vector, and the vector's
 * dispatcher calls every handler chained on it. Handlers run on the boot core (where
 * ioapic_route delivers) with interrupts off.
 */
#include "x86.h"
#include "arch_x86.h"
#include "error.h"
#include "lock.h"
#include "io.h"

#define CFG_ADDR	0xcf8
#define CFG_DATA	0xcfc
#define NVEC		8	/* T_PCI_BASE .. T_PCI_BASE + 7 */
#define NCHAIN		4	/* handlers per shared line */

static struct spinlock cfg_lock = SPINLOCK_INIT("pcicfg");

static void cfg_select(int bus, int dev, int fn, int off)
{
	outl(CFG_ADDR, 0x80000000u | (uint32_t)bus << 16 | (uint32_t)dev << 11 |
		       (uint32_t)fn << 8 | ((uint32_t)off & 0xfc));
}

uint32_t pci_cfg_read32(int bus, int dev, int fn, int off)
{
	uint32_t v;

	spin_lock(&cfg_lock);
	cfg_select(bus, dev, fn, off);
	v = inl(CFG_DATA);
	spin_unlock(&cfg_lock);
	return v;
}

uint16_t pci_cfg_read16(int bus, int dev, int fn, int off)
{
	uint16_t v;

	spin_lock(&cfg_lock);
	cfg_select(bus, dev, fn, off);
	v = inw(CFG_DATA + (off & 2));
	spin_unlock(&cfg_lock);
	return v;
}

uint8_t pci_cfg_read8(int bus, int dev, int fn, int off)
{
	uint8_t v;

	spin_lock(&cfg_lock);
	cfg_select(bus, dev, fn, off);
	v = inb(CFG_DATA + (off & 3));
	spin_unlock(&cfg_lock);
	return v;
}

void pci_cfg_write32(int bus, int dev, int fn, int off, uint32_t v)
{
	spin_lock(&cfg_lock);
	cfg_select(bus, dev, fn, off);
	outl(CFG_DATA, v);
	spin_unlock(&cfg_lock);
}

void pci_cfg_write16(int bus, int dev, int fn, int off, uint16_t v)
{
	spin_lock(&cfg_lock);
	cfg_select(bus, dev, fn, off);
	outw(CFG_DATA + (off & 2), v);
	spin_unlock(&cfg_lock);
}

/* ---- INTx ---- */

struct irq_chain {
	int gsi;		/* -1: vector unused */
	int n;			/* handlers in h[]; published with a release store */
	struct {
		void (*fn)(void *);
		void *arg;
	} h[NCHAIN];
};

static struct irq_chain chains[NVEC] = {
	[0 ... NVEC - 1] = { .gsi = -1 },
};
static struct spinlock attach_lock = SPINLOCK_INIT("pciirq");	/* attach only */

/* Interrupt context, boot core: a level-triggered line stays asserted until its device is
 * serviced, so every handler on the line runs. */
static void chain_dispatch(struct trapframe *tf, void *arg)
{
	struct irq_chain *c = arg;
	int n = __atomic_load_n(&c->n, __ATOMIC_ACQUIRE);

	(void)tf;
	for (int i = 0; i < n; i++)
		c->h[i].fn(c->h[i].arg);
}

/* MPS INTI flags: polarity bits 0-1 and trigger bits 2-3; 0 means "bus default", which for
 * PCI is level-triggered, active low. */
static void line_mode(int line, uint32_t *gsi, bool *level, bool *active_low)
{
	uint16_t f = line < 16 ? acpi.isa_flags[line] : 0;
	int pol = f & 3, trig = (f >> 2) & 3;

	*gsi = line < 16 ? acpi.isa_gsi[line] : (uint32_t)line;
	*active_low = pol == 0 || pol == 3;
	*level = trig == 0 || trig == 3;
}

/* The chain for gsi, or a free one claimed for it (*fresh set), or NULL. Holds attach_lock. */
static struct irq_chain *chain_for(uint32_t gsi, bool *fresh)
{
	int free = -1;

	*fresh = false;
	for (int i = 0; i < NVEC; i++) {
		if (chains[i].gsi == (int)gsi)
			return &chains[i];
		if (chains[i].gsi < 0 && free < 0)
			free = i;
	}
	if (free < 0)
		return NULL;
	chains[free].gsi = (int)gsi;
	*fresh = true;
	return &chains[free];
}

int arch_intx_attach(uint8_t line, uint8_t pin, void (*fn)(void *), void *arg)
{
	struct irq_chain *c;
	uint32_t gsi;
	bool level, low, fresh;
	int r = 0, vec;

	if (pin == 0 || line == 0xff || line == 0)
		return -ENODEV;
	line_mode(line, &gsi, &level, &low);
	spin_lock(&attach_lock);
	c = chain_for(gsi, &fresh);
	if (!c || c->n == NCHAIN) {
		r = -EBUSY;
	} else {
		c->h[c->n].fn = fn;
		c->h[c->n].arg = arg;
		__atomic_store_n(&c->n, c->n + 1, __ATOMIC_RELEASE);
	}
	if (r == 0 && fresh) {
		/* the handler is in place before the line can fire */
		vec = T_PCI_BASE + (int)(c - chains);
		irq_register(vec, chain_dispatch, c);
		ioapic_route(gsi, vec, level, low);
	}
	spin_unlock(&attach_lock);
	return r;
}
