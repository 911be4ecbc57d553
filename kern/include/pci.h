/*
 * PCI: the bus scan with its device list (kern/drivers/pci.c), over the arch's
 * configuration space access and INTx routing (io.h).
 *
 * pci_scan runs once at boot in thread context, before any driver looks for its device;
 * afterwards the device list is read-only, so pci_find and pci_foreach need no lock.
 * Config space accesses are serialized inside the arch code and may come from any context.
 */
#ifndef PCI_H
#define PCI_H

#include "io.h"

#define PCI_NBAR	6

/* config space offsets */
#define PCI_VENDOR	0x00
#define PCI_DEVICE	0x02
#define PCI_COMMAND	0x04
#define PCI_STATUS	0x06
#define PCI_REVISION	0x08
#define PCI_PROGIF	0x09
#define PCI_SUBCLASS	0x0a
#define PCI_CLASS	0x0b
#define PCI_HEADER	0x0e
#define PCI_BAR0	0x10
#define PCI_SECBUS	0x19	/* header type 1: secondary bus number */
#define PCI_SUBSYS	0x2e	/* header type 0: subsystem id */
#define PCI_INTLINE	0x3c
#define PCI_INTPIN	0x3d

#define PCI_CMD_IO	0x0001
#define PCI_CMD_MEM	0x0002
#define PCI_CMD_MASTER	0x0004
#define PCI_CMD_INTX_OFF 0x0400

enum pci_bar_kind { BAR_NONE, BAR_IO, BAR_MEM32, BAR_MEM64 };

struct pci_bar {
	enum pci_bar_kind kind;
	uint64_t base;		/* port number or physical address */
	uint64_t size;		/* bytes, from the all-ones probe */
	bool prefetch;		/* memory BARs only */
};

struct pci_dev {
	uint8_t bus, dev, fn;
	uint16_t vendor, device;
	uint16_t subsys;	/* subsystem id (virtio legacy: the device type) */
	uint8_t class, subclass, progif, rev;
	uint8_t header;		/* header type, multi-function bit masked off */
	struct pci_bar bar[PCI_NBAR];	/* a 64-bit BAR fills bar[i]; bar[i + 1] is BAR_NONE */
	uint8_t irq_line;	/* as the firmware left it; 0xff: none */
	uint8_t irq_pin;	/* 1..4 = INTA..INTD; 0: no INTx */
	struct pci_dev *next;
};

/*
 * Route d's INTx line to an interrupt vector and call fn(arg) from then on, in interrupt
 * context on the boot core, each time the line is asserted (arch_intx_attach, io.h).
 * Thread context, after pci_scan. Returns 0, -ENODEV (no INTx) or -EBUSY (no free vector).
 */
int pci_irq_attach(struct pci_dev *d, void (*fn)(void *), void *arg);

/* The scan and the device list */
void pci_scan(void);			/* once, boot, thread context */
/* The index'th (0, 1, ...) function with this vendor and device id, or NULL. */
struct pci_dev *pci_find(uint16_t vendor, uint16_t device, int index);
struct pci_dev *pci_first(void);	/* the list, in scan order; ->next for the rest */
void pci_enable_busmaster(struct pci_dev *d);	/* also enables I/O and memory decoding */
/* A short human name for the device ("virtio 9p", "host bridge", ...), never NULL. */
const char *pci_name(struct pci_dev *d);

#endif
