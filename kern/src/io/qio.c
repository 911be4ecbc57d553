/*
 * Queues of blocks, Plan 9 style; qio.h states each verb's contract.
 *
 * A queue is a singly linked list of blocks (head = oldest, read first; tail = newest),
 * byte and block counts, a byte limit and a hang-up flag, all under one spinlock, q->lk.
 * Readers sleep on q->rr until there is a block or the queue is hung up; writers sleep on
 * q->wr until the queue is below its limit or hung up.
 *
 * Who may call what:
 *	any context	qiwrite_block, qbwrite_drop, qget, qget_tail, qhangup, qreopen,
 *			qsetlimit and the snapshots qlen, qblocks, qlimit, qfull, qhungup.
 *			They take only q->lk (interrupts off), never sleep, never allocate or
 *			free; rendez_wakeup is interrupt-safe.
 *	thread only	qbwrite, qwrite, qread, qread_intr, qbread (they sleep); qopen, qfree,
 *			qflush (they allocate or free memory).
 *
 * Lock order (deliberate, and short):
 *	q->lk is a leaf. Nothing is locked, allocated or freed while it is held, and in
 *	particular rendez_wakeup is only called after q->lk is released: a verb notes under
 *	the lock whom to wake (q_wake bits) and wakes them after spin_unlock.
 *	The rendez conditions (readable, writable) run under the rendez lock and never take
 *	q->lk; they read q->len, q->nblocks, q->limit and q->hungup with relaxed atomic
 *	loads. Those four fields are therefore written (under q->lk) with atomic stores; all
 *	other fields are touched only under q->lk.
 *
 * No lost wakeup: a sleeper checks its condition under the rendez lock; a waker changes
 * the fields under q->lk, releases it, then takes the rendez lock in rendez_wakeup. So
 * either the check sees the change or the sleeper is already waiting when the wakeup comes.
 * Wakeups are sent on the transitions the conditions care about: readers when the queue
 * goes from no block to one block, writers when len drops from >= limit to < limit, when
 * the limit changes, and everybody on hang-up.
 *
 * Ownership: a block passed to a write verb belongs to the queue once the verb succeeds
 * (the caller must not touch it again: a reader may already have freed it); on any error
 * it stays with the caller. Blocks handed out by qbread, qget and qget_tail belong to the
 * caller. qread frees the blocks it empties (after dropping q->lk).
 *
 * A block qread has begun (partly copied) stays at the head with q->begun set; qget_tail
 * will not take it, so a reader never loses the rest of a block it is half way through.
 */
#include "kernel.h"
#include "block.h"
#include "error.h"
#include "kmalloc.h"
#include "lock.h"
#include "qio.h"
#include "rendez.h"

#define QWRITE_CHUNK	(16 * 1024)	/* qwrite copies into blocks of at most this size */

/* Fields that the rendez conditions read without q->lk. */
#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

enum { WAKE_READERS = 1, WAKE_WRITERS = 2 };

struct queue {
	struct spinlock lk;	/* protects all fields below but the two rendez */
	struct block *head;	/* oldest block, read first; NULL when empty */
	struct block *tail;	/* newest block; NULL when empty */
	bool begun;		/* qread has partly consumed head: qget_tail leaves it */
	int flags;		/* Q_* from qopen; constant */
	/* the next four are written under lk with STORE and read anywhere with LOAD */
	size_t len;		/* bytes queued: sum of BLEN */
	size_t nblocks;		/* blocks queued */
	size_t limit;		/* writers wait while len >= limit */
	bool hungup;		/* writes fail; reads of an empty queue are end of file */
	struct rendez rr;	/* readers wait here for a block or hang-up */
	struct rendez wr;	/* writers wait here for room or hang-up */
};

/* Rendez conditions: run under the rendez lock, so they only LOAD (see the top). */
static bool readable(void *arg)
{
	struct queue *q = arg;

	return LOAD(q->nblocks) > 0 || LOAD(q->hungup);
}

static bool writable(void *arg)
{
	struct queue *q = arg;

	return LOAD(q->len) < LOAD(q->limit) || LOAD(q->hungup);
}

/* Call without q->lk: who is a mask of WAKE_* bits noted while holding it. */
static void q_wake(struct queue *q, int who)
{
	if (who & WAKE_READERS)
		rendez_wakeup(&q->rr);
	if (who & WAKE_WRITERS)
		rendez_wakeup(&q->wr);
}

/* n bytes left the queue. Called with q->lk held; returns whom to wake. */
static int q_sub(struct queue *q, size_t n)
{
	size_t old = q->len;

	STORE(q->len, old - n);
	return old >= q->limit && old - n < q->limit ? WAKE_WRITERS : 0;
}

/* Append b. Called with q->lk held; returns whom to wake. */
static int q_append(struct queue *q, struct block *b)
{
	bool was_empty = !q->head;

	b->next = NULL;
	if (q->tail)
		q->tail->next = b;
	else
		q->head = b;
	q->tail = b;
	STORE(q->len, q->len + BLEN(b));
	STORE(q->nblocks, q->nblocks + 1);
	return was_empty ? WAKE_READERS : 0;
}

/* Unlink and return the head block, or NULL. Called with q->lk held; ors into *wake. */
static struct block *q_take_head(struct queue *q, int *wake)
{
	struct block *b = q->head;

	if (!b)
		return NULL;
	q->head = b->next;
	if (!q->head)
		q->tail = NULL;
	b->next = NULL;
	q->begun = false;
	STORE(q->nblocks, q->nblocks - 1);
	*wake |= q_sub(q, BLEN(b));
	return b;
}

struct queue *qopen(size_t limit, int flags)
{
	struct queue *q = kzmalloc(sizeof(*q));

	if (!q)
		return NULL;
	spinlock_init(&q->lk, "queue");
	rendez_init(&q->rr);
	rendez_init(&q->wr);
	q->limit = limit;
	q->flags = flags;
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
	q_wake(q, WAKE_READERS | WAKE_WRITERS);
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

/* Unlinks everything under the lock, frees it after: block_free is thread context only. */
void qflush(struct queue *q)
{
	struct block *list;
	int wake;

	spin_lock(&q->lk);
	list = q->head;
	q->head = NULL;
	q->tail = NULL;
	q->begun = false;
	STORE(q->nblocks, 0);
	wake = q_sub(q, q->len);
	spin_unlock(&q->lk);
	q_wake(q, wake);
	block_free_list(list);
}

/*
 * One attempt to queue b: -EPIPE when hung up, -ENOSPC when limited and full. BLEN is
 * taken before the append, since a reader may free b as soon as the lock is dropped.
 */
static long q_try_append(struct queue *q, struct block *b, bool limited)
{
	long n = (long)BLEN(b);
	int wake = 0;

	spin_lock(&q->lk);
	if (q->hungup)
		n = -EPIPE;
	else if (limited && q->len >= q->limit)
		n = -ENOSPC;
	else
		wake = q_append(q, b);
	spin_unlock(&q->lk);
	q_wake(q, wake);
	return n;
}

long qbwrite(struct queue *q, struct block *b)
{
	long n;

	if (q->flags & Q_NOBLOCK)
		return qbwrite_drop(q, b);
	while ((n = q_try_append(q, b, true)) == -ENOSPC)
		rendez_sleep(&q->wr, writable, q);
	return n;
}

long qbwrite_drop(struct queue *q, struct block *b)
{
	return q_try_append(q, b, true);
}

long qiwrite_block(struct queue *q, struct block *b)
{
	return q_try_append(q, b, false);
}

/* Returns bytes written; a short count if an error came after some bytes were queued. */
long qwrite(struct queue *q, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t done = 0;

	while (done < len) {
		size_t n = MIN(len - done, (size_t)QWRITE_CHUNK);
		struct block *b = block_alloc(n);
		long r;

		if (!b)
			return done ? (long)done : -ENOMEM;
		memcpy(b->wp, p + done, n);
		b->wp += n;
		r = qbwrite(q, b);
		if (r < 0) {
			block_free(b);
			return done ? (long)done : r;
		}
		done += n;
	}
	return (long)done;
}

/*
 * Copy up to len bytes from the head blocks into p. Emptied blocks (including empty ones
 * a writer queued) are unlinked onto *dead for the caller to free after dropping the lock;
 * a partly copied block stays at the head, marked begun. Called with q->lk held; the copy
 * runs with interrupts off, so its cost is bounded by the caller's len.
 */
static size_t q_copy_out(struct queue *q, uint8_t *p, size_t len, struct block **dead,
			 int *wake)
{
	size_t got = 0;
	struct block *b;

	while ((b = q->head) && (got < len || BLEN(b) == 0)) {
		size_t n = MIN(BLEN(b), len - got);

		memcpy(p + got, b->rp, n);
		b->rp += n;
		got += n;
		*wake |= q_sub(q, n);
		if (BLEN(b) > 0) {
			q->begun = true;
			break;
		}
		q_take_head(q, wake);
		b->next = *dead;
		*dead = b;
	}
	return got;
}

/* qread and qread_intr. Never sleeps once it has copied something. */
static long q_read(struct queue *q, void *buf, size_t len, bool intr)
{
	for (;;) {
		struct block *dead = NULL;
		int wake = 0;
		size_t got;
		bool hungup;

		if (len == 0)
			return 0;
		spin_lock(&q->lk);
		got = q_copy_out(q, buf, len, &dead, &wake);
		hungup = q->hungup;
		spin_unlock(&q->lk);
		q_wake(q, wake);
		block_free_list(dead);
		if (got > 0)
			return (long)got;
		/* got == 0 means the queue is empty now */
		if (hungup)
			return 0;
		if (q->flags & Q_NOBLOCK)
			return -EAGAIN;
		if (!intr)
			rendez_sleep(&q->rr, readable, q);
		else if (rendez_sleep_intr(&q->rr, readable, q) == -EINTR)
			return -EINTR;
	}
}

long qread(struct queue *q, void *buf, size_t len)
{
	return q_read(q, buf, len, false);
}

long qread_intr(struct queue *q, void *buf, size_t len)
{
	return q_read(q, buf, len, true);
}

/* NULL at end of file, or (Q_NOBLOCK) when the queue is empty. */
struct block *qbread(struct queue *q)
{
	for (;;) {
		struct block *b;
		bool hungup;
		int wake = 0;

		spin_lock(&q->lk);
		b = q_take_head(q, &wake);
		hungup = q->hungup;
		spin_unlock(&q->lk);
		q_wake(q, wake);
		if (b || hungup || (q->flags & Q_NOBLOCK))
			return b;
		rendez_sleep(&q->rr, readable, q);
	}
}

struct block *qget(struct queue *q)
{
	struct block *b;
	int wake = 0;

	spin_lock(&q->lk);
	b = q_take_head(q, &wake);
	spin_unlock(&q->lk);
	q_wake(q, wake);
	return b;
}

/* Unlink the tail. Called with q->lk held and at least two blocks queued. */
static void q_unlink_tail(struct queue *q)
{
	struct block *prev = q->head;

	/* O(blocks) walk: the list is singly linked, and qget_tail is the rare verb */
	while (prev->next != q->tail)
		prev = prev->next;
	prev->next = NULL;
	q->tail = prev;
}

struct block *qget_tail(struct queue *q)
{
	struct block *b;
	int wake = 0;

	spin_lock(&q->lk);
	b = q->tail;
	if (b && b == q->head) {
		if (q->begun)
			b = NULL;
		else
			q_take_head(q, &wake);
	} else if (b) {
		q_unlink_tail(q);
		STORE(q->nblocks, q->nblocks - 1);
		wake = q_sub(q, BLEN(b));
	}
	spin_unlock(&q->lk);
	q_wake(q, wake);
	return b;
}

size_t qlen(struct queue *q)
{
	return LOAD(q->len);
}

size_t qblocks(struct queue *q)
{
	return LOAD(q->nblocks);
}

size_t qlimit(struct queue *q)
{
	return LOAD(q->limit);
}

/* Any change may let a sleeping writer re-check, so writers are always woken. */
void qsetlimit(struct queue *q, size_t limit)
{
	spin_lock(&q->lk);
	STORE(q->limit, limit);
	spin_unlock(&q->lk);
	q_wake(q, WAKE_WRITERS);
}

bool qfull(struct queue *q)
{
	return LOAD(q->len) >= LOAD(q->limit);
}
