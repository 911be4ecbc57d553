/*
 * Queues of blocks, Plan 9 style. struct queue is opaque: use these verbs only.
 *
 * A queue holds whole blocks, oldest first, and has a limit on the memory they hold: the
 * sum of BMEM over its blocks, the real memory with headers and allocator rounding (a queue
 * of partly filled blocks still holds their whole buffers; a queue of 4096-byte blocks
 * holds 4176 bytes each, of 1024-byte blocks 2064). Writers:
 *	qbwrite_drop	never sleeps: when the block would take the queue past its limit it
 *			fails with -ENOSPC and the caller still owns the block (and counts
 *			the drop)
 *	qiwrite_block	never sleeps, ignores the limit (for what was reserved elsewhere)
 *	qputback	never sleeps: put a block the reader took back at the head, as the
 *			next one to read (the rest of a block a reader did not finish)
 * Readers:
 *	qget		never sleeps: the head block, or NULL
 *	qbread_intr	sleeps until there is a block or the queue is hung up; the reading
 *			thread's interrupt (Ctrl-C) ends the sleep
 * The block writers return BLEN(b) on success (the queue then owns b); on any error
 * (-EPIPE, -ENOSPC) the caller still owns b. qhangup makes writes fail with -EPIPE and,
 * once readers have taken what is queued, qbread_intr reports end of file; qreopen undoes
 * it. A writer wakes the readers when the queue goes from empty to non-empty, and qhangup
 * wakes them: that is the only wake mechanism, so a reader never needs another.
 *
 * All verbs are safe to call concurrently from any number of threads and cores. Those
 * marked "never sleeps" may be called from interrupt context (not from an NMI: they take
 * the queue's spinlock).
 */
#ifndef QIO_H
#define QIO_H

#include "block.h"

struct queue;

struct queue *qopen(size_t limit);	/* NULL when out of memory */
void qfree(struct queue *q);		/* frees queued blocks and the queue */
void qhangup(struct queue *q);		/* never sleeps */
void qreopen(struct queue *q);		/* clears hang-up; keeps queued data */
bool qhungup(struct queue *q);

long qbwrite_drop(struct queue *q, struct block *b);	/* never sleeps */
long qiwrite_block(struct queue *q, struct block *b);	/* never sleeps */
long qputback(struct queue *q, struct block *b);	/* never sleeps */

struct block *qget(struct queue *q);	/* never sleeps */
/*
 * Thread context: 1 with the head block in *bp; 0 at end of file (hung up and empty);
 * -EINTR when the thread was interrupted while the queue was empty.
 */
int qbread_intr(struct queue *q, struct block **bp);

size_t qlen(struct queue *q);		/* bytes of data queued (sum of BLEN) */
size_t qblocks(struct queue *q);	/* blocks queued */
size_t qmem(struct queue *q);		/* memory the queued blocks hold (sum of BMEM) */
size_t qlimit(struct queue *q);		/* the limit on qmem */
void qsetlimit(struct queue *q, size_t limit);	/* never sleeps */
/*
 * Memory a writer may still queue before qbwrite_drop refuses: limit - qmem, or 0. Compare
 * it with BMEM (or block_mem_of(size)) of what will be written, not with buffer sizes.
 */
size_t qroom(struct queue *q);

#endif
