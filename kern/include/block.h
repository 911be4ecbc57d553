/*
 * Blocks, Plan 9 style: a contiguous buffer with a read and a write pointer.
 *
 *	base <= rp <= wp <= lim
 *	[base, rp)	consumed
 *	[rp, wp)	data (BLEN)
 *	[wp, lim)	free space for writing
 *
 * A block belongs to one owner at a time (a queue, a core, a reader); next links it in a
 * queue or list. block_alloc/block_free may be called from thread context only.
 */
#ifndef BLOCK_H
#define BLOCK_H

#include "kernel.h"

struct block {
	struct block *next;	/* next block in a queue or list */
	uint8_t *base;		/* start of the buffer */
	uint8_t *rp;		/* first unconsumed byte */
	uint8_t *wp;		/* first free byte */
	uint8_t *lim;		/* one past the end of the buffer */
	uint32_t flags;		/* BLOCK_* and owner-defined bits above 16 */
	uint32_t aux;		/* owner-defined (the profiler keeps a sample count here) */
	uint64_t stamp;		/* owner-defined (the profiler keeps a TSC here) */
};

#define BLEN(b)		((size_t)((b)->wp - (b)->rp))
#define BALLOC(b)	((size_t)((b)->lim - (b)->base))
#define BFREE(b)	((size_t)((b)->lim - (b)->wp))

/* A block with size bytes of space, rp = wp = base. NULL when out of memory. */
struct block *block_alloc(size_t size);
void block_free(struct block *b);
/* Free a whole list linked by next. */
void block_free_list(struct block *b);
/* Make the block empty again: rp = wp = base. */
void block_reset(struct block *b);

/* Live blocks and their bytes, for leak checks. */
uint64_t block_count(void);
uint64_t block_bytes(void);

#endif
