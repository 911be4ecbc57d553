/*
 * Queues of blocks, Plan 9 style; qio.h states each verb's contract.
 *
 * A queue is a singly linked list of blocks (head = oldest, read first; tail = newest),
 * its byte, block and memory (BMEM) counts, a memory limit and a hang-up flag, all under one
 * spinlock, q->lk. Readers sleep on q->rr until there is a block or the queue is hung up.
 *
 * Who may call what:
 *	any context but NMI	qbwrite_drop, qiwrite_block, qputback, qget, qhangup,
 *				qreopen and the snapshots qlen, qblocks, qmem, qlimit, qroom,
 *				qhungup. They take only q->lk (interrupts off), never sleep,
 *				never allocate or free; rendez_wakeup is interrupt-safe.
 *	thread only		qbread_intr (it sleeps); qopen, qfree (they allocate or free).
 *
 * Lock order (deliberate, and short): q->lk is a leaf. Nothing is locked, allocated or
 * freed while it is held, and rendez_wakeup is only called after q->lk is released: a verb
 * notes under the lock whether to wake and wakes after spin_unlock. The rendez condition
 * (readable) runs under the rendez lock and never takes q->lk; it reads q->nblocks and
 * q->hungup with relaxed atomic loads, so those are written (under q->lk) with atomic
 * stores, as are len and mem, which the snapshot verbs read without the lock.
 *
 * No lost wakeup: a sleeper checks its condition under the rendez lock; a waker changes
 * the fields under q->lk, releases it, then takes the rendez lock in rendez_wakeup. So
 * either the check sees the change or the sleeper is already waiting when the wakeup comes.
 * Readers are woken when the queue goes from no block to one block, and on hang-up.
 *
 * Ownership: a block passed to a write verb belongs to the queue once the verb succeeds
 * (the caller must not touch it again: a reader may already have taken it); on any error
 * it stays with the caller. Blocks handed out by qget and qbread_intr belong to the caller.
 */
#include "kernel.h"
#include "block.h"
#include "error.h"
#include "kmalloc.h"
#include "lock.h"
#include "qio.h"
#include "rendez.h"

/* Fields that are read without q->lk. */
#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

struct queue {
	struct spinlock lk;	/* protects all fields below but rr */
	struct block *head;	/* oldest block, read first; NULL when empty */
	struct block *tail;	/* newest block; NULL when empty */
	/* the next five are written under lk with STORE and read anywhere with LOAD */
	size_t limit;		/* qbwrite_drop keeps mem at or below this */
	size_t len;		/* bytes of data queued: sum of BLEN */
	size_t mem;		/* memory queued: sum of BMEM (real memory, not buffer size) */
	size_t nblocks;		/* blocks queued */
	bool hungup;		/* writes fail; reads of an empty queue are end of file */
	struct rendez rr;	/* readers wait here for a block or hang-up */
};

/* The rendez condition: runs under the rendez lock, so it only LOADs (see the top). */
static bool readable(void *arg)
{
	struct queue *q = arg;

	return LOAD(q->nblocks) > 0 || LOAD(q->hungup);
}

/* Count b in or out (sign 1 or -1). Called with q->lk held. */
static void q_account(struct queue *q, struct block *b, int sign)
{
	STORE(q->len, q->len + (size_t)sign * BLEN(b));
	STORE(q->mem, q->mem + (size_t)sign * BMEM(b));
	STORE(q->nblocks, q->nblocks + (size_t)sign);
}

struct queue *qopen(size_t limit)
{
	struct queue *q = kzmalloc(sizeof(*q));

	if (!q)
		return NULL;
	spinlock_init(&q->lk, "queue");
	rendez_init(&q->rr);
	q->limit = limit;
	return q;
}

/* The caller guarantees nobody else uses q any more (no sleepers, no interrupt writers). */
void qfree(struct queue *q)
{
	if (!q)
		return;
	block_free_list(q->head);
	kfree(q);
}

void qhangup(struct queue *q)
{
	spin_lock(&q->lk);
	STORE(q->hungup, true);
	spin_unlock(&q->lk);
	rendez_wakeup(&q->rr);
}

void qreopen(struct queue *q)
{
	spin_lock(&q->lk);
	STORE(q->hungup, false);
	spin_unlock(&q->lk);
}

bool qhungup(struct queue *q)
{
	return LOAD(q->hungup);
}

/*
 * One attempt to queue b at the tail (or, at_head, the head): -EPIPE when hung up, -ENOSPC
 * when limited and b does not fit. BLEN is taken before the append, since a reader may
 * take b as soon as the lock is dropped.
 */
static long q_add(struct queue *q, struct block *b, bool limited, bool at_head)
{
	long n = (long)BLEN(b);
	bool wake = false;

	spin_lock(&q->lk);
	if (q->hungup && !at_head) {
		n = -EPIPE;
	} else if (limited && q->mem + BMEM(b) > q->limit) {	/* real memory: no overflow */
		n = -ENOSPC;
	} else {
		wake = !q->head;
		if (at_head) {
			b->next = q->head;
			q->head = b;
			if (!q->tail)
				q->tail = b;
		} else {
			b->next = NULL;
			if (q->tail)
				q->tail->next = b;
			else
				q->head = b;
			q->tail = b;
		}
		q_account(q, b, 1);
	}
	spin_unlock(&q->lk);
	if (wake)
		rendez_wakeup(&q->rr);
	return n;
}

long qbwrite_drop(struct queue *q, struct block *b)
{
	return q_add(q, b, true, false);
}

long qiwrite_block(struct queue *q, struct block *b)
{
	return q_add(q, b, false, false);
}

/* Also after a hang-up: what the reader took back was queued before it. */
long qputback(struct queue *q, struct block *b)
{
	return q_add(q, b, false, true);
}

struct block *qget(struct queue *q)
{
	struct block *b;

	spin_lock(&q->lk);
	b = q->head;
	if (b) {
		q->head = b->next;
		if (!q->head)
			q->tail = NULL;
		b->next = NULL;
		q_account(q, b, -1);
	}
	spin_unlock(&q->lk);
	return b;
}

int qbread_intr(struct queue *q, struct block **bp)
{
	for (;;) {
		if ((*bp = qget(q)))
			return 1;
		if (qhungup(q)) {
			/* a block may have been put back between the two loads: look again */
			if ((*bp = qget(q)))
				return 1;
			return 0;
		}
		if (rendez_sleep_intr(&q->rr, readable, q) == -EINTR)
			return -EINTR;
	}
}

size_t qlen(struct queue *q)
{
	return LOAD(q->len);
}

size_t qblocks(struct queue *q)
{
	return LOAD(q->nblocks);
}

size_t qmem(struct queue *q)
{
	return LOAD(q->mem);
}

size_t qlimit(struct queue *q)
{
	return LOAD(q->limit);
}

/* Writers never sleep, so a new limit wakes nobody: it holds from the next write on. */
void qsetlimit(struct queue *q, size_t limit)
{
	spin_lock(&q->lk);
	STORE(q->limit, limit);
	spin_unlock(&q->lk);
}

size_t qroom(struct queue *q)
{
	size_t mem = LOAD(q->mem), limit = LOAD(q->limit);

	return mem < limit ? limit - mem : 0;
}
