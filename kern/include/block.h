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
 *
 * BMEM(b) is the memory the block really holds: its header and its buffer with whatever
 * the allocators round them up to (a 4096-byte block holds one page and a 64-byte header's
 * slot: 4176 bytes; a 1024-byte block one 2 KiB heap slot: 2064). Anything that caps
 * memory (qio's limit, the profiler's output cap) counts BMEM, never BALLOC.
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
	uint64_t session;	/* owner-defined: the profiler's session whose stream the
				   block opens or ends (its header, its last block) */
	size_t mem;		/* memory held, header and rounding included: BMEM; fixed */
};

#define BLEN(b)		((size_t)((b)->wp - (b)->rp))
#define BALLOC(b)	((size_t)((b)->lim - (b)->base))
#define BFREE(b)	((size_t)((b)->lim - (b)->wp))
#define BMEM(b)		((b)->mem)

/*
 * A block with size bytes of space, rp = wp = base, in whichever layout holds less memory:
 * header and buffer in one kmalloc, or (page-multiple sizes and the like) the buffer in
 * whole pages straight from the page allocator and the header in a kmalloc of its own.
 * The buffer is 16-byte aligned (page-aligned in the second layout). NULL when out of
 * memory. BMEM of the result is block_mem_of(size).
 */
struct block *block_alloc(size_t size);
/* The memory block_alloc(size) would hold (BMEM of the block); 0 when it would fail. */
size_t block_mem_of(size_t size);
void block_free(struct block *b);
/* Free a whole list linked by next. */
void block_free_list(struct block *b);
/* Make the block empty again: rp = wp = base. */
void block_reset(struct block *b);

/* Live blocks, their buffer bytes (sum of BALLOC) and memory (sum of BMEM), for leak checks. */
uint64_t block_count(void);
uint64_t block_bytes(void);
uint64_t block_mem(void);

#endif
