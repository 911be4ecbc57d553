/*
 * A single-producer single-consumer ring of block pointers: each core's full queue and
 * empty queue (hotpath.c, worker.c) and its flight-recorder hand-over queue (flight.c).
 *
 * Contract:
 *	one producer	only ever one context calls ring_put on a ring at a time;
 *	one consumer	only ever one context calls ring_get on a ring at a time.
 * Who those are is fixed per ring and said where each ring is declared (struct opcore):
 * a core's full ring is produced by that core and consumed by the worker; its empty ring
 * the other way round. "One context" means one at a time: a core's hot path and an NMI
 * that lands inside it are two contexts, so the hot path makes sure (its re-entry guard,
 * hotpath.c) that an NMI never runs ring code on a ring whose same side it interrupted.
 * Producer and consumer may run at the same time on different cores.
 *
 * Ordering: the producer fills slot[tail] and then publishes it with a release store of
 * tail; the consumer reads tail with acquire, so the slot (and the block it points to,
 * written before ring_put) is visible, takes slot[head], and returns it with a release
 * store of head, which the producer reads with acquire before reusing that slot. No lock,
 * no read-modify-write instruction, no fence beyond those (free on x86: plain moves), and
 * nothing here ever waits. head and tail only grow (mod 2^32); capacity is a power of two
 * below 2^31, so tail - head is the count however they wrap.
 *
 * ring_count and ring_empty may be called from anywhere: they are a snapshot.
 */
#ifndef OPROF_RING_H
#define OPROF_RING_H

#include "kernel.h"
#include "block.h"

struct ring {
	uint32_t tail __aligned(CACHELINE);	/* producer: next slot to fill */
	uint32_t head __aligned(CACHELINE);	/* consumer: next slot to take */
	uint32_t mask;				/* capacity - 1; constant */
	struct block **slot;			/* capacity entries */
};

/* Thread context: a ring of capacity slots (a power of two); 0 or -ENOMEM. */
int ring_init(struct ring *r, uint32_t capacity);
/* Thread context, nobody using the ring any more: free the slots (not the blocks). */
void ring_fini(struct ring *r);

/* Producer: queue b; false when the ring is full (the caller still owns b). */
static inline bool ring_put(struct ring *r, struct block *b)
{
	uint32_t t = r->tail;	/* only the producer writes tail */

	if (t - __atomic_load_n(&r->head, __ATOMIC_ACQUIRE) > r->mask)
		return false;
	r->slot[t & r->mask] = b;
	__atomic_store_n(&r->tail, t + 1, __ATOMIC_RELEASE);
	return true;
}

/* Consumer: the oldest block, or NULL when the ring is empty. */
static inline struct block *ring_get(struct ring *r)
{
	uint32_t h = r->head;	/* only the consumer writes head */
	struct block *b;

	if (h == __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE))
		return NULL;
	b = r->slot[h & r->mask];
	__atomic_store_n(&r->head, h + 1, __ATOMIC_RELEASE);
	return b;
}

/* Anyone: blocks queued, as of some moment during the call. */
static inline uint32_t ring_count(const struct ring *r)
{
	uint32_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);

	return __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) - h;
}

static inline bool ring_empty(const struct ring *r)
{
	return ring_count(r) == 0;
}

static inline uint32_t ring_capacity(const struct ring *r)
{
	return r->mask + 1;
}

#endif
