/*
 * The pool of recycled blocks, and the writers of the output queue.
 *
 * Every block the profiler owns was made by pool_get and is, at any time, in exactly one
 * place: the pool, a core (cur, fullq, emptyq), the output queue, the reader's hand, or a
 * record writer. The pool counts them (allocated) and allocates only while allocated is
 * below max, which ctl_start sets to what the output cap holds plus the per-core blocks;
 * so profiler memory never exceeds cap + per-core blocks (+ the few blocks the stream's
 * header and closing records force past max: pool_get(true)).
 *
 * Contexts: pool_get, pool_put and pool_trim are thread context (they may allocate or free);
 * the pool's spinlock is a leaf held only for list surgery. Blocks come back from the
 * reader (pool_put) while the worker takes them: that is the only sharing. pool_put of a
 * block of another size than the session's (a reader returning one late) frees it.
 *
 * The output queue (oprof.outq) is written only with the ctl mutex held, by outq_put (which
 * ignores the queue's limit: the worker applies the cap itself, dropping the newest block)
 * and by the record writer (struct recw), which packs whole-stream records -- the session
 * header, thread names at start, OPF_LOST for output-full drops, closing statistics -- into
 * pool blocks and queues each block when it is full or finished.
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

/* Ctl mutex held, no session: blocks of another size leave the pool. */
void pool_setup(size_t bsize, uint64_t max)
{
	bool resize;

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
		b->stamp = 0;
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

/*
 * Ctl mutex held: queue b on the stream (ignoring the queue's limit). The caller wakes the
 * reader once it has queued what it had (reader_wake takes a lock the reader shares: once
 * per pass, not once per block). outq is never hung up while a session writes it, so
 * qiwrite_block cannot fail.
 */
void outq_put(struct block *b)
{
	size_t len = BLEN(b);

	if (len == 0) {
		pool_put(b);
		return;
	}
	if (qiwrite_block(oprof.outq, b) < 0) {
		pool_put(b);
		return;
	}
	oprof.stream_bytes += len;
}

/* len bytes (zeroed) for one record, or NULL when no block is to be had (!w->force). */
void *recw_reserve(struct recw *w, uint32_t len)
{
	void *p;

	if (w->b && BFREE(w->b) < len) {
		outq_put(w->b);
		w->b = NULL;
	}
	if (!w->b && !(w->b = pool_get(w->force)))
		return NULL;
	if (BFREE(w->b) < len)
		return NULL;	/* cannot happen: blocks hold at least OPROF_MIN_BLOCK */
	p = w->b->wp;
	w->b->wp += len;
	memset(p, 0, len);
	return p;
}

/* Queue the last block and wake the reader (once, for everything this writer queued). */
void recw_finish(struct recw *w)
{
	if (w->b)
		outq_put(w->b);
	w->b = NULL;
	reader_wake();
}

void rec_lost(void *p, uint16_t core, uint16_t reason, uint64_t count, uint64_t tsc)
{
	struct opf_lost *l = p;

	l->h.type = OPF_LOST;
	l->h.flags = 0;
	l->h.len = sizeof(*l);
	l->core = core;
	l->reason = reason;
	l->pad = 0;
	l->count = count;
	l->tsc = tsc;
}

static uint16_t name_len(const char *name)
{
	return (uint16_t)strnlen(name ? name : "", OPF_MAX_NAME);
}

uint32_t rec_thread_len(const char *name)
{
	return opf_thread_len(name_len(name));
}

void rec_thread(void *p, uint32_t tid, int core, const char *name, uint64_t tsc)
{
	uint16_t namelen = name_len(name);
	struct opf_thread *t = p;

	memset(t, 0, opf_thread_len(namelen));
	t->h.type = OPF_THREAD;
	t->h.len = opf_thread_len(namelen);
	t->tid = tid;
	t->core = (uint16_t)core;
	t->namelen = namelen;
	t->tsc = tsc;
	memcpy(t->name, name, namelen);
}

/*
 * Any context: what a block about to leave the stream unread held that must not be
 * forgotten. Adds its OPF_LOST counts to lost[reason]; returns its OPF_THREAD records.
 * The block was written by our own hot path, so its records are well formed; the walk
 * stops at anything that is not.
 */
uint64_t rec_salvage(const struct block *b, uint64_t *lost)
{
	uint64_t threads = 0;

	for (const uint8_t *p = b->rp; p + sizeof(struct opf_rec) <= b->wp;) {
		const struct opf_rec *r = (const void *)p;

		if (r->len < sizeof(*r) || r->len > (size_t)(b->wp - p))
			break;
		if (r->type == OPF_LOST) {
			const struct opf_lost *l = (const void *)r;

			if (l->reason < OPF_LOST_NREASONS)
				lost[l->reason] += l->count;
		} else if (r->type == OPF_THREAD) {
			threads++;
		}
		p += r->len;
	}
	return threads;
}
