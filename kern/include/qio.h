/*
 * Queues of blocks, Plan 9 style. struct queue is opaque: use these verbs only.
 *
 * A queue has a byte limit. Writers:
 *	qbwrite		blocking: sleeps while the queue holds limit bytes or more (thread only)
 *	qbwrite_drop	never sleeps: over the limit it fails with -ENOSPC and the caller still
 *			owns the block (and counts the drop)
 *	qiwrite_block	interrupt-safe: never sleeps, ignores the limit
 *	qwrite		blocking byte write (copies into blocks)
 * Readers:
 *	qread		blocking: sleeps until data or hang-up; copies up to len bytes; a
 *			partly read block stays at the head. Returns 0 at end of file (hung up
 *			and empty).
 *	qbread		blocking: returns the head block whole (or NULL at end of file, or
 *			with Q_NOBLOCK when the queue is empty)
 *	qget		non-blocking: head block or NULL
 * A writer wakes readers when the queue goes from empty to non-empty; a reader wakes
 * writers when the queue drops below the limit. qhangup makes writes fail with -EPIPE and,
 * once readers have drained what is queued, reads return end of file; qreopen undoes it.
 * The block writers return BLEN(b) on success (the queue then owns b); on any error
 * (-EPIPE, -ENOSPC) the caller still owns b.
 *
 * All verbs are safe to call concurrently from any number of threads and cores. Those
 * marked "never sleeps" may be called from interrupt context.
 */
#ifndef QIO_H
#define QIO_H

#include "block.h"

struct queue;

/* qopen flags */
#define Q_NOBLOCK	0x1	/* qbwrite acts like qbwrite_drop, reads return -EAGAIN when empty */

struct queue *qopen(size_t limit, int flags);
void qfree(struct queue *q);		/* frees queued blocks and the queue */
void qhangup(struct queue *q);		/* never sleeps */
void qreopen(struct queue *q);		/* clears hang-up; keeps queued data */
bool qhungup(struct queue *q);
/* Frees every queued block; never sleeps, but thread context only (block_free). */
void qflush(struct queue *q);

long qbwrite(struct queue *q, struct block *b);
long qbwrite_drop(struct queue *q, struct block *b);	/* never sleeps */
long qiwrite_block(struct queue *q, struct block *b);	/* never sleeps */
long qwrite(struct queue *q, const void *buf, size_t len);

long qread(struct queue *q, void *buf, size_t len);
/* As qread but returns -EINTR if the reading thread is interrupted. */
long qread_intr(struct queue *q, void *buf, size_t len);
struct block *qbread(struct queue *q);
struct block *qget(struct queue *q);	/* never sleeps */
/*
 * Remove and return the block at the tail (the newest), or NULL; never sleeps. Never
 * returns a block a reader has begun (partly read by qread): NULL then.
 */
struct block *qget_tail(struct queue *q);

size_t qlen(struct queue *q);		/* bytes queued */
size_t qblocks(struct queue *q);	/* blocks queued */
size_t qlimit(struct queue *q);
void qsetlimit(struct queue *q, size_t limit);
bool qfull(struct queue *q);		/* qlen >= limit */

#endif
