/*
 * Set-up and tear-down of the single-producer single-consumer rings (ring.h has the
 * contract and the lock-free operations). Thread context: they allocate and free.
 */
#include "error.h"
#include "kmalloc.h"
#include "ring.h"

int ring_init(struct ring *r, uint32_t capacity)
{
	if (!capacity || (capacity & (capacity - 1)) || capacity > (1u << 30))
		return -EINVAL;
	r->slot = kzmalloc(capacity * sizeof(*r->slot));
	if (!r->slot)
		return -ENOMEM;
	r->mask = capacity - 1;
	__atomic_store_n(&r->head, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->tail, 0, __ATOMIC_RELAXED);
	return 0;
}

void ring_fini(struct ring *r)
{
	kfree(r->slot);
	r->slot = NULL;
	r->mask = 0;
}
