/*
 * virtio over PCI, legacy (0.9.5) interface: the register block in I/O BAR0, split
 * virtqueues in the legacy layout, INTx interrupts. kern/drivers/virtio_pci.c.
 *
 * A driver brings its device up in this order, in thread context:
 *
 *	virtio_pci_init(vd, pci, wanted_features)	reset, ACKNOWLEDGE, DRIVER, features
 *	virtio_cfg_read8(vd, off) ...			read the device-specific config
 *	virtq_setup(vd, 0) ...				each queue it uses
 *	virtio_start(vd)				interrupt attached, DRIVER_OK
 *
 * and on any error calls virtio_fail (status FAILED; the device is left alone).
 *
 * Then any number of threads may call virtq_transfer on a queue at once: each puts one
 * descriptor chain on the queue and sleeps until the device has used it. Buffers must be
 * kernel memory below 4 GiB (identity-mapped, so the address is the physical address) and
 * must stay valid until virtq_transfer returns; a buffer may span pages (RAM is mapped
 * contiguously), so each buffer is one descriptor.
 */
#ifndef VIRTIO_H
#define VIRTIO_H

#include "kernel.h"

struct pci_dev;
struct virtq;

#define VIRTIO_VENDOR		0x1af4
#define VIRTIO_MAXQ		4

/* device status bits */
#define VIRTIO_ACKNOWLEDGE	1
#define VIRTIO_DRIVER		2
#define VIRTIO_DRIVER_OK	4
#define VIRTIO_FAILED		128

struct virtio_dev {
	struct pci_dev *pci;
	uint16_t io;			/* base port of the legacy register block (BAR0) */
	uint32_t features;		/* negotiated: offered by the device and wanted */
	struct virtq *vq[VIRTIO_MAXQ];
	uint64_t irqs;			/* interrupts that were ours */
};

/* A buffer of a chain: device-readable ("out") or device-writable ("in"). */
struct vbuf {
	const void *p;
	uint32_t len;
};

/* Reset and identify the device; negotiate wanted & offered features. 0 or -ENODEV. */
int virtio_pci_init(struct virtio_dev *vd, struct pci_dev *d, uint32_t wanted);
/* Device-specific configuration (after the legacy header), byte offset off. */
uint8_t virtio_cfg_read8(struct virtio_dev *vd, int off);
uint16_t virtio_cfg_read16(struct virtio_dev *vd, int off);
/* Allocate and register queue index; NULL (-ENOMEM / no such queue). Before virtio_start. */
struct virtq *virtq_setup(struct virtio_dev *vd, int index);
/* Attach the interrupt, set DRIVER_OK. 0 or -err (then call virtio_fail). */
int virtio_start(struct virtio_dev *vd);
void virtio_fail(struct virtio_dev *vd);

/*
 * Put a chain of nout device-readable then nin device-writable buffers on q, notify the
 * device and sleep (thread context, not interruptible: the device owns the buffers until
 * it is done) until the device has used the chain. Waits for free descriptors if the ring
 * is full. Returns the bytes the device wrote into the in buffers, or -EINVAL when the
 * chain can never fit.
 */
long virtq_transfer(struct virtq *q, const struct vbuf *out, int nout, const struct vbuf *in,
		    int nin);
uint16_t virtq_size(struct virtq *q);

/* Counters for the shell (virtio command in the 9p code): chains completed, slow reaps. */
void virtq_stats(struct virtq *q, uint64_t *done, uint64_t *polled);

#endif
