/*
 * virtio legacy PCI transport and split virtqueues (virtio.h has the driver's view).
 *
 * Registers (I/O BAR0, little endian): 0x00 device features (32), 0x04 driver features
 * (32), 0x08 queue PFN (32), 0x0c queue size (16, read-only), 0x0e queue select (16),
 * 0x10 queue notify (16), 0x12 device status (8), 0x13 ISR status (8, reading clears it
 * and lowers the INTx line), 0x14 device-specific config (MSI-X is never enabled, so the
 * config does not move to 0x18).
 *
 * A queue of size N is one physically contiguous, zeroed area at a page boundary:
 * descriptors (16 N bytes), then the avail ring (flags, idx, ring[N], used_event), then,
 * at the next page boundary, the used ring (flags, idx, ring[N] of {id, len}, avail_event).
 * Its address >> 12 goes to the PFN register.
 *
 * Who touches what: q->lock (a spinlock, so interrupts are off while it is held) guards
 * the descriptor free list, the avail ring, last_used and the waiting-request table.
 * Submitters (threads, any core) take it to build and publish a chain. The interrupt
 * handler (boot core) takes it to reap the used ring: it records each used chain's length
 * in the submitter's struct vreq, marks it done and frees the chain's descriptors, then
 * wakes q->r. Every waiter (completion or free descriptors) sleeps on q->r, which lives as
 * long as the queue: a struct vreq is on its submitter's stack and may vanish as soon as
 * done is set, so the handler never touches a vreq after setting done. A missed interrupt
 * only costs time: a waiter that sleeps a second without completion reaps the ring itself.
 */
#include "arch.h"
#include "error.h"
#include "io.h"
#include "kmalloc.h"
#include "lock.h"
#include "page.h"
#include "pci.h"
#include "rendez.h"
#include "virtio.h"

/* legacy register offsets */
#define REG_DEVFEAT	0x00
#define REG_DRVFEAT	0x04
#define REG_QPFN	0x08
#define REG_QSIZE	0x0c
#define REG_QSEL	0x0e
#define REG_QNOTIFY	0x10
#define REG_STATUS	0x12
#define REG_ISR		0x13
#define REG_CONFIG	0x14

#define ISR_QUEUE	1
#define ISR_CONFIG	2

#define DESC_NEXT	1
#define DESC_WRITE	2

#define POLL_US		1000000	/* a waiter reaps the ring itself after this long */

struct vring_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct vring_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];	/* then used_event */
};

struct vring_used_elem {
	uint32_t id;		/* head descriptor of the used chain */
	uint32_t len;		/* bytes written into its device-writable buffers */
};

struct vring_used {
	uint16_t flags;
	uint16_t idx;
	struct vring_used_elem ring[];	/* then avail_event */
};

/* One chain in flight; on the submitter's stack. */
struct vreq {
	uint32_t len;		/* set by the reaper before done */
	bool done;		/* set (release) by the reaper; then the reaper lets go */
};

struct virtq {
	struct virtio_dev *vd;
	uint16_t index, size;
	volatile struct vring_desc *desc;
	volatile struct vring_avail *avail;
	volatile struct vring_used *used;
	struct spinlock lock;	/* see the top of the file */
	uint16_t free_head;	/* first free descriptor, chained by .next */
	uint16_t nfree;
	uint16_t last_used;	/* next used-ring entry to reap */
	uint16_t avail_idx;	/* our copy of avail->idx */
	struct vreq **waiting;	/* by head descriptor */
	struct rendez r;	/* completions and freed descriptors */
	uint64_t ndone, npolled;
};

/* ---- device setup ---- */

static void status_set(struct virtio_dev *vd, uint8_t bits)
{
	io_out8(vd->io + REG_STATUS, io_in8(vd->io + REG_STATUS) | bits);
}

int virtio_pci_init(struct virtio_dev *vd, struct pci_dev *d, uint32_t wanted)
{
	if (d->bar[0].kind != BAR_IO)
		return -ENODEV;
	*vd = (struct virtio_dev){ .pci = d, .io = (uint16_t)d->bar[0].base };
	pci_enable_busmaster(d);
	io_out8(vd->io + REG_STATUS, 0);		/* reset */
	status_set(vd, VIRTIO_ACKNOWLEDGE);
	status_set(vd, VIRTIO_DRIVER);
	vd->features = io_in32(vd->io + REG_DEVFEAT) & wanted;
	io_out32(vd->io + REG_DRVFEAT, vd->features);
	return 0;
}

static uint16_t cfg_port(struct virtio_dev *vd, int off)
{
	return (uint16_t)(vd->io + REG_CONFIG + off);
}

uint8_t virtio_cfg_read8(struct virtio_dev *vd, int off) { return io_in8(cfg_port(vd, off)); }
uint16_t virtio_cfg_read16(struct virtio_dev *vd, int off) { return io_in16(cfg_port(vd, off)); }

void virtio_fail(struct virtio_dev *vd)
{
	status_set(vd, VIRTIO_FAILED);
}

static size_t vring_bytes(uint16_t n, size_t *used_off)
{
	*used_off = ROUNDUP(16u * n + 6u + 2u * n, PGSIZE);
	return *used_off + ROUNDUP(6u + 8u * n, PGSIZE);
}

struct virtq *virtq_setup(struct virtio_dev *vd, int index)
{
	struct virtq *q;
	size_t used_off, bytes;
	uint8_t *mem;
	uint16_t n;

	io_out16(vd->io + REG_QSEL, (uint16_t)index);
	n = io_in16(vd->io + REG_QSIZE);
	if (n == 0 || index >= VIRTIO_MAXQ || io_in32(vd->io + REG_QPFN) != 0)
		return NULL;
	bytes = vring_bytes(n, &used_off);
	q = kzmalloc(sizeof(*q));
	mem = pages_alloc(bytes / PGSIZE);
	if (q)
		q->waiting = kzmalloc(n * sizeof(*q->waiting));
	if (!q || !mem || !q->waiting || (uintptr_t)mem >= PAGE_MAPPED_LIMIT) {
		if (mem)
			pages_free(mem, bytes / PGSIZE);
		if (q)
			kfree(q->waiting);
		kfree(q);
		return NULL;
	}
	memset(mem, 0, bytes);
	q->vd = vd;
	q->index = (uint16_t)index;
	q->size = n;
	q->desc = (struct vring_desc *)mem;
	q->avail = (struct vring_avail *)(mem + 16u * n);
	q->used = (struct vring_used *)(mem + used_off);
	spinlock_init(&q->lock, "virtq");
	rendez_init(&q->r);
	for (uint16_t i = 0; i < n; i++)
		q->desc[i].next = (uint16_t)(i + 1);
	q->nfree = n;
	io_out32(vd->io + REG_QPFN, (uint32_t)((uintptr_t)mem >> 12));
	vd->vq[index] = q;
	return q;
}

uint16_t virtq_size(struct virtq *q)
{
	return q->size;
}

void virtq_stats(struct virtq *q, uint64_t *done, uint64_t *polled)
{
	*done = READ_ONCE(q->ndone);
	*polled = READ_ONCE(q->npolled);
}

/* ---- completion ---- */

/* Free the chain starting at head. Holds q->lock. */
static void chain_free(struct virtq *q, uint16_t head)
{
	uint16_t i = head, n = 1;

	while (q->desc[i].flags & DESC_NEXT) {
		i = q->desc[i].next;
		n++;
	}
	q->desc[i].next = q->free_head;
	q->free_head = head;
	q->nfree = (uint16_t)(q->nfree + n);
}

/* Reap every used chain; any context. Returns how many. */
static int virtq_reap(struct virtq *q)
{
	int n = 0;

	spin_lock(&q->lock);
	while (q->last_used != READ_ONCE(q->used->idx)) {
		__atomic_thread_fence(__ATOMIC_ACQUIRE);	/* entry after idx */
		volatile struct vring_used_elem *e = &q->used->ring[q->last_used % q->size];
		uint16_t head = (uint16_t)e->id;
		struct vreq *req = q->waiting[head];

		q->waiting[head] = NULL;
		chain_free(q, head);
		q->last_used++;
		n++;
		if (req) {
			req->len = e->len;
			/* the last touch: the submitter may return at once */
			__atomic_store_n(&req->done, true, __ATOMIC_RELEASE);
		}
	}
	q->ndone += (uint64_t)n;
	spin_unlock(&q->lock);
	if (n)
		rendez_wakeup(&q->r);
	return n;
}

/* Interrupt context, boot core; the line may be shared. */
static void virtio_intr(void *arg)
{
	struct virtio_dev *vd = arg;
	uint8_t isr = io_in8(vd->io + REG_ISR);		/* read clears, lowers the line */

	if (!(isr & (ISR_QUEUE | ISR_CONFIG)))
		return;
	vd->irqs++;
	for (int i = 0; i < VIRTIO_MAXQ; i++)
		if (vd->vq[i])
			virtq_reap(vd->vq[i]);
}

int virtio_start(struct virtio_dev *vd)
{
	int r = pci_irq_attach(vd->pci, virtio_intr, vd);

	if (r < 0)
		return r;
	status_set(vd, VIRTIO_DRIVER_OK);
	return 0;
}

/* ---- submission ---- */

struct room {
	struct virtq *q;
	int n;
};

static bool room_cond(void *arg)
{
	struct room *w = arg;

	return READ_ONCE(w->q->nfree) >= w->n;
}

static bool req_cond(void *arg)
{
	return __atomic_load_n(&((struct vreq *)arg)->done, __ATOMIC_ACQUIRE);
}

static void desc_fill(struct virtq *q, uint16_t i, const struct vbuf *b, uint16_t flags)
{
	q->desc[i].addr = (uint64_t)(uintptr_t)b->p;
	q->desc[i].len = b->len;
	q->desc[i].flags = flags;
}

/* Build the chain and publish it in the avail ring. Holds q->lock, nfree >= nout + nin. */
static void chain_publish(struct virtq *q, const struct vbuf *out, int nout,
			  const struct vbuf *in, int nin, struct vreq *req)
{
	uint16_t head = q->free_head, i = head, last = head;
	int n = nout + nin;

	for (int k = 0; k < n; k++) {
		bool wr = k >= nout;

		desc_fill(q, i, wr ? &in[k - nout] : &out[k],
			  (uint16_t)((wr ? DESC_WRITE : 0) | (k + 1 < n ? DESC_NEXT : 0)));
		last = i;
		i = q->desc[i].next;
	}
	q->free_head = q->desc[last].next;
	q->nfree = (uint16_t)(q->nfree - n);
	q->waiting[head] = req;
	q->avail->ring[q->avail_idx % q->size] = head;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* descriptors and entry before idx */
	q->avail_idx++;
	q->avail->idx = q->avail_idx;
}

long virtq_transfer(struct virtq *q, const struct vbuf *out, int nout, const struct vbuf *in,
		    int nin)
{
	struct vreq req = { 0, false };
	struct room room = { q, nout + nin };

	if (room.n == 0 || room.n > q->size)
		return -EINVAL;
	for (;;) {
		spin_lock(&q->lock);
		if (q->nfree >= room.n)
			break;
		spin_unlock(&q->lock);
		if (!rendez_sleep_timeout(&q->r, room_cond, &room, POLL_US))
			virtq_reap(q);
	}
	chain_publish(q, out, nout, in, nin, &req);
	spin_unlock(&q->lock);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);	/* idx before the notify */
	io_out16(q->vd->io + REG_QNOTIFY, q->index);
	while (!rendez_sleep_timeout(&q->r, req_cond, &req, POLL_US)) {
		if (virtq_reap(q))
			__atomic_add_fetch(&q->npolled, 1, __ATOMIC_RELAXED);
	}
	return (long)req.len;
}
