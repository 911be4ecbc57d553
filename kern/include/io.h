/*
 * Device access the arch provides to portable drivers: port I/O (virtio's legacy register
 * block lives in an I/O BAR; kern/arch/x86/io.c), PCI configuration space and INTx
 * routing (kern/arch/x86/pci_x86.c).
 */
#ifndef IO_H
#define IO_H

#include "kernel.h"

uint8_t io_in8(uint16_t port);
uint16_t io_in16(uint16_t port);
uint32_t io_in32(uint16_t port);
void io_out8(uint16_t port, uint8_t v);
void io_out16(uint16_t port, uint16_t v);
void io_out32(uint16_t port, uint32_t v);
/* (Port I/O: any context, no locking: a driver serializes its own register accesses where
 * a sequence of them must not interleave.) */

/* PCI configuration mechanism #1 (ports 0xcf8/0xcfc): any context, serialized inside. */
uint32_t pci_cfg_read32(int bus, int dev, int fn, int off);
uint16_t pci_cfg_read16(int bus, int dev, int fn, int off);
uint8_t pci_cfg_read8(int bus, int dev, int fn, int off);
void pci_cfg_write32(int bus, int dev, int fn, int off, uint32_t v);
void pci_cfg_write16(int bus, int dev, int fn, int off, uint16_t v);

/*
 * Route the INTx interrupt a PCI function reports (config space: interrupt line and pin,
 * pin 1..4 = INTA..INTD) to a vector and call fn(arg) from then on, in interrupt context
 * on the boot core, each time the line is asserted. Lines may be shared, so fn must check
 * its device's own status and return quietly when it was not the source. Thread context.
 * Returns 0, -ENODEV (no INTx) or -EBUSY (no free vector).
 */
int arch_intx_attach(uint8_t line, uint8_t pin, void (*fn)(void *), void *arg);

#endif
