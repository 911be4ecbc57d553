/*
 * PCI enumeration (portable; config access and interrupts come from pci.h's arch half).
 *
 * pci_scan walks bus 0 and, recursively, the secondary bus of every PCI-to-PCI bridge,
 * every device and (for multi-function devices) every function, and records each function
 * in a struct pci_dev with its BARs decoded and sized. It runs once, at boot, in thread
 * context, before drivers probe; the list is never changed afterwards, so readers take no
 * lock. BAR sizing writes all ones to the BAR with the function's decoding turned off, so
 * a half-written BAR is never decoded; no driver owns the device yet at that point.
 */
#include "error.h"
#include "kmalloc.h"
#include "pci.h"

#define CLASS_BRIDGE	0x06
#define SUB_PCI_BRIDGE	0x04

static struct pci_dev *devs;		/* scan order */
static struct pci_dev **devs_tail = &devs;

static uint32_t cfg32(struct pci_dev *d, int off)
{
	return pci_cfg_read32(d->bus, d->dev, d->fn, off);
}

static void cfgw32(struct pci_dev *d, int off, uint32_t v)
{
	pci_cfg_write32(d->bus, d->dev, d->fn, off, v);
}

/* Write all ones, read back the writable bits, restore. Decoding is off (caller). */
static uint32_t bar_probe(struct pci_dev *d, int off)
{
	uint32_t old = cfg32(d, off), mask;

	cfgw32(d, off, 0xffffffffu);
	mask = cfg32(d, off);
	cfgw32(d, off, old);
	return mask;
}

/* Decode BAR i; returns how many BAR slots it used (2 for a 64-bit memory BAR). */
static int bar_decode(struct pci_dev *d, int i)
{
	int off = PCI_BAR0 + 4 * i;
	uint32_t v = cfg32(d, off), m = bar_probe(d, off);
	struct pci_bar *b = &d->bar[i];

	if (m == 0)
		return 1;			/* unimplemented */
	if (v & 1) {
		b->kind = BAR_IO;
		b->base = v & ~3u;
		b->size = (uint16_t)(~(m & ~3u) + 1);
		return 1;
	}
	b->prefetch = v & 8;
	if (((v >> 1) & 3) == 2 && i + 1 < PCI_NBAR) {
		uint64_t hi = cfg32(d, off + 4), mhi = bar_probe(d, off + 4);
		uint64_t mask = mhi << 32 | (m & ~0xfu);

		b->kind = BAR_MEM64;
		b->base = hi << 32 | (v & ~0xfu);
		b->size = ~mask + 1;
		return 2;
	}
	b->kind = BAR_MEM32;
	b->base = v & ~0xfu;
	b->size = (uint32_t)(~(m & ~0xfu) + 1);
	return 1;
}

static void bars_decode(struct pci_dev *d)
{
	int nbar = d->header == 0 ? 6 : d->header == 1 ? 2 : 0;
	uint16_t cmd = pci_cfg_read16(d->bus, d->dev, d->fn, PCI_COMMAND);

	pci_cfg_write16(d->bus, d->dev, d->fn, PCI_COMMAND, cmd & ~(PCI_CMD_IO | PCI_CMD_MEM));
	for (int i = 0; i < nbar; i += bar_decode(d, i))
		;
	pci_cfg_write16(d->bus, d->dev, d->fn, PCI_COMMAND, cmd);
}

static struct pci_dev *fn_record(int bus, int dev, int fn)
{
	struct pci_dev *d = kzmalloc(sizeof(*d));
	uint32_t id = pci_cfg_read32(bus, dev, fn, PCI_VENDOR);
	uint32_t cls = pci_cfg_read32(bus, dev, fn, PCI_REVISION);

	if (!d)
		panic("pci: out of memory");
	*d = (struct pci_dev){
		.bus = (uint8_t)bus, .dev = (uint8_t)dev, .fn = (uint8_t)fn,
		.vendor = id & 0xffff, .device = id >> 16,
		.rev = cls & 0xff, .progif = (cls >> 8) & 0xff,
		.subclass = (cls >> 16) & 0xff, .class = cls >> 24,
		.header = pci_cfg_read8(bus, dev, fn, PCI_HEADER) & 0x7f,
		.irq_line = pci_cfg_read8(bus, dev, fn, PCI_INTLINE),
		.irq_pin = pci_cfg_read8(bus, dev, fn, PCI_INTPIN),
	};
	if (d->header == 0)
		d->subsys = pci_cfg_read16(bus, dev, fn, PCI_SUBSYS);
	bars_decode(d);
	*devs_tail = d;
	devs_tail = &d->next;
	return d;
}

static void bus_scan(int bus, int depth);

static void fn_scan(int bus, int dev, int fn, int depth)
{
	struct pci_dev *d = fn_record(bus, dev, fn);

	if (d->class == CLASS_BRIDGE && d->subclass == SUB_PCI_BRIDGE && d->header == 1) {
		int sec = pci_cfg_read8(bus, dev, fn, PCI_SECBUS);

		if (sec > bus && depth < 8)	/* an unconfigured bridge has 0 */
			bus_scan(sec, depth + 1);
	}
}

static void bus_scan(int bus, int depth)
{
	for (int dev = 0; dev < 32; dev++) {
		int nfn = 1;

		if (pci_cfg_read16(bus, dev, 0, PCI_VENDOR) == 0xffff)
			continue;
		if (pci_cfg_read8(bus, dev, 0, PCI_HEADER) & 0x80)
			nfn = 8;
		for (int fn = 0; fn < nfn; fn++)
			if (pci_cfg_read16(bus, dev, fn, PCI_VENDOR) != 0xffff)
				fn_scan(bus, dev, fn, depth);
	}
}

void pci_scan(void)
{
	if (!devs)
		bus_scan(0, 0);
}

struct pci_dev *pci_first(void)
{
	return devs;
}

struct pci_dev *pci_find(uint16_t vendor, uint16_t device, int index)
{
	for (struct pci_dev *d = devs; d; d = d->next)
		if (d->vendor == vendor && d->device == device && index-- == 0)
			return d;
	return NULL;
}

void pci_enable_busmaster(struct pci_dev *d)
{
	uint16_t cmd = pci_cfg_read16(d->bus, d->dev, d->fn, PCI_COMMAND);

	cmd |= PCI_CMD_IO | PCI_CMD_MEM | PCI_CMD_MASTER;
	cmd &= ~PCI_CMD_INTX_OFF;
	pci_cfg_write16(d->bus, d->dev, d->fn, PCI_COMMAND, cmd);
}

/* ---- names, for the pci command ---- */

static const char *virtio_name(uint16_t device)
{
	static const char *const names[] = {
		[1] = "virtio net", [2] = "virtio block", [3] = "virtio console",
		[4] = "virtio entropy", [5] = "virtio balloon", [8] = "virtio scsi",
		[9] = "virtio 9p", [16] = "virtio gpu", [18] = "virtio input",
	};
	/* transitional ids 0x1000.. are numbered differently from modern 0x1040 + type */
	static const uint8_t transitional[] = { 1, 2, 5, 3, 8, 4, 0, 0, 0, 9 };
	unsigned type = device >= 0x1040 ? device - 0x1040u
		      : device - 0x1000u < sizeof(transitional) ? transitional[device - 0x1000]
		      : 0;

	return type < ARRAY_SIZE(names) && names[type] ? names[type] : "virtio";
}

static const struct {
	uint8_t class, subclass;
	const char *name;
} class_names[] = {
	{ 0x01, 0x01, "ide controller" }, { 0x01, 0x06, "sata controller" },
	{ 0x01, 0x00, "scsi controller" }, { 0x01, 0x08, "nvme controller" },
	{ 0x02, 0x00, "ethernet" }, { 0x03, 0x00, "vga" }, { 0x03, 0x80, "display" },
	{ 0x06, 0x00, "host bridge" }, { 0x06, 0x01, "isa bridge" },
	{ 0x06, 0x04, "pci bridge" }, { 0x06, 0x80, "bridge" },
	{ 0x0c, 0x03, "usb controller" }, { 0x0c, 0x05, "smbus" },
};

const char *pci_name(struct pci_dev *d)
{
	if (d->vendor == 0x1af4 && d->device >= 0x1000 && d->device <= 0x107f)
		return virtio_name(d->device);
	for (size_t i = 0; i < ARRAY_SIZE(class_names); i++)
		if (class_names[i].class == d->class && class_names[i].subclass == d->subclass)
			return class_names[i].name;
	return "device";
}

int pci_irq_attach(struct pci_dev *d, void (*fn)(void *), void *arg)
{
	return arch_intx_attach(d->irq_line, d->irq_pin, fn, arg);
}
