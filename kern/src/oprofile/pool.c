/*
 * The pool of recycled blocks.
 *
 * Every block the profiler owns was made by pool_get and is, at any time, in exactly one
 * place: the pool, a core (cur, fullq, emptyq), the output queue, the reader's hand, or a
 * record writer. The pool counts them (allocated) and allocates only while allocated is
 * below max, which session_start sets to what the output cap holds plus the per-core blocks;
 * so profiler memory never exceeds cap + per-core blocks (+ the few blocks the stream's
 * header and closing records force past max: pool_get(true)).
 *
 * Contexts: pool_get, pool_put and pool_trim are thread context (they may allocate or free);
 * the pool's spinlock is a leaf held only for list surgery. Blocks come back from the
 * reader (pool_put) while the worker takes them: that is the only sharing. pool_put of a
 * block of another size than the session's (a reader returning one late) frees it.
 */
#include "internal.h"
#include "kmalloc.h"

static struct {
	struct spinlock lk;
	struct block *free;	/* recycled blocks, linked by next */
	uint64_t nfree;		/* blocks on free */
	uint64_t allocated;	/* blocks the profiler holds, wherever they are */
	uint64_t max;		/* pool_get(false) allocates only below this */
	size_t bsize;		/* the session's block size */
} pool = { .lk = SPINLOCK_INIT("oprof pool") };

/* Session lock held, no session running: blocks of another size leave the pool. */
void pool_setup(size_t bsize, uint64_t max)
{
	bool resize;

	must_hold_session();
	spin_lock(&pool.lk);
	resize = pool.bsize != bsize;
	pool.bsize = bsize;
	pool.max = max;
	spin_unlock(&pool.lk);
	if (resize)
		pool_trim();
}

/* A reset block of the session's size, or NULL when the pool is empty and at max. */
struct block *pool_get(bool force)
{
	struct block *b;
	bool reserved = false;
	size_t bsize;

	if (!force && oprof_fault_take(OPROF_FAULT_NOMEM))
		return NULL;	/* "inject nomem" */
	spin_lock(&pool.lk);
	b = pool.free;
	if (b) {
		pool.free = b->next;
		pool.nfree--;
	} else if (force || pool.allocated < pool.max) {
		pool.allocated++;	/* reserve the slot before allocating outside the lock */
		reserved = true;
	}
	bsize = pool.bsize;
	spin_unlock(&pool.lk);
	if (reserved && !(b = block_alloc(bsize))) {
		spin_lock(&pool.lk);
		pool.allocated--;
		spin_unlock(&pool.lk);
	}
	if (b) {
		b->next = NULL;
		block_reset(b);
		b->aux = 0;
		b->flags = 0;
		b->session = 0;
	}
	return b;
}

void pool_put(struct block *b)
{
	if (!b)
		return;
	spin_lock(&pool.lk);
	if (BALLOC(b) == pool.bsize) {
		b->next = pool.free;
		pool.free = b;
		pool.nfree++;
		b = NULL;
	} else {
		pool.allocated--;
	}
	spin_unlock(&pool.lk);
	block_free(b);
}

/* Free every pooled block (after a session, so that idle costs no memory). */
void pool_trim(void)
{
	struct block *list;

	spin_lock(&pool.lk);
	list = pool.free;
	pool.allocated -= pool.nfree;
	pool.free = NULL;
	pool.nfree = 0;
	spin_unlock(&pool.lk);
	block_free_list(list);
}

void pool_stats(uint64_t *allocated, uint64_t *pooled, uint64_t *max)
{
	spin_lock(&pool.lk);
	*allocated = pool.allocated;
	*pooled = pool.nfree;
	*max = pool.max;
	spin_unlock(&pool.lk);
}
