/*
 * Blocks, in one of two layouts, whichever holds less memory for the size asked:
 *
 *	inline	one kmalloc holds the header and, BLOCK_HDR bytes in, the buffer: one
 *		allocation and one free. Small blocks (a 1024-byte block is one 2 KiB slot).
 *	paged	the buffer is ceil(size / PGSIZE) whole pages from the page allocator and the
 *		header a kmalloc of its own (an 80-byte slot). Page-multiple sizes: a 4096-byte
 *		block costs one page and a slot, not the two pages 16 + 64 + 4096 bytes of
 *		kmalloc would round up to.
 *
 * The choice is a pure function of the size (paged_wins), so block_free knows the layout
 * from BALLOC and checks that base agrees. Either way the buffer is 16-byte aligned, and
 * BMEM (b->mem, set once here) is what the block really holds: the allocators'
 * footprints, header and rounding included.
 *
 * Three global counters (live blocks, their buffer bytes, their memory) are kept with
 * atomics so leak checks can read them from anywhere; they are statistics and order nothing.
 *
 * block_alloc and block_free call kmalloc/kfree and the page allocator: thread context
 * only. block_reset touches only the block and may run anywhere its owner runs.
 */
#include "kernel.h"
#include "arch.h"
#include "block.h"
#include "kmalloc.h"
#include "page.h"

#define BLOCK_HDR	ROUNDUP(sizeof(struct block), 16)
#define BLOCK_MAX	((size_t)1 << 39)	/* larger sizes fail: no size overflow */

static uint64_t live_blocks;	/* blocks allocated and not yet freed */
static uint64_t live_bytes;	/* sum of their buffer sizes */
static uint64_t live_mem;	/* sum of their BMEM */

static uint8_t *block_data(struct block *b)
{
	return (uint8_t *)b + BLOCK_HDR;
}

static size_t inline_mem(size_t size)
{
	return kmalloc_footprint(BLOCK_HDR + size);
}

static size_t paged_mem(size_t size)
{
	return ROUNDUP(size, PGSIZE) + kmalloc_footprint(BLOCK_HDR);
}

/* Ties go inline: one allocation. Size 0 is always inline. */
static bool paged_wins(size_t size)
{
	return paged_mem(size) < inline_mem(size);
}

size_t block_mem_of(size_t size)
{
	if (size > BLOCK_MAX)
		return 0;
	return paged_wins(size) ? paged_mem(size) : inline_mem(size);
}

static struct block *block_alloc_paged(size_t size)
{
	struct block *b = kmalloc(BLOCK_HDR);
	uint8_t *buf;

	if (!b)
		return NULL;
	if (!(buf = pages_alloc(ROUNDUP(size, PGSIZE) / PGSIZE))) {
		kfree(b);
		return NULL;
	}
	b->base = buf;
	b->mem = paged_mem(size);
	return b;
}

static struct block *block_alloc_inline(size_t size)
{
	struct block *b = kmalloc(BLOCK_HDR + size);

	if (!b)
		return NULL;
	b->base = block_data(b);
	b->mem = inline_mem(size);
	return b;
}

struct block *block_alloc(size_t size)
{
	struct block *b;

	if (size > BLOCK_MAX)
		return NULL;
	b = paged_wins(size) ? block_alloc_paged(size) : block_alloc_inline(size);
	if (!b)
		return NULL;
	b->next = NULL;
	b->rp = b->base;
	b->wp = b->base;
	b->lim = b->base + size;
	b->flags = 0;
	b->aux = 0;
	b->session = 0;
	__atomic_add_fetch(&live_blocks, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&live_bytes, size, __ATOMIC_RELAXED);
	__atomic_add_fetch(&live_mem, b->mem, __ATOMIC_RELAXED);
	return b;
}

void block_free(struct block *b)
{
	size_t size;

	if (!b)
		return;
	size = BALLOC(b);
	/* A block whose base or mem moved was not made by block_alloc (or was trampled). */
	assert(b->base <= b->rp && b->rp <= b->wp && b->wp <= b->lim);
	assert(b->mem == block_mem_of(size));
	assert(paged_wins(size) ? (uintptr_t)b->base % PGSIZE == 0 : b->base == block_data(b));
	__atomic_sub_fetch(&live_blocks, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&live_bytes, size, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&live_mem, b->mem, __ATOMIC_RELAXED);
	if (paged_wins(size))
		pages_free(b->base, ROUNDUP(size, PGSIZE) / PGSIZE);
	kfree(b);
}

void block_free_list(struct block *b)
{
	struct block *next;

	for (; b; b = next) {
		next = b->next;
		block_free(b);
	}
}

void block_reset(struct block *b)
{
	b->rp = b->base;
	b->wp = b->base;
}

uint64_t block_count(void)
{
	return __atomic_load_n(&live_blocks, __ATOMIC_RELAXED);
}

uint64_t block_bytes(void)
{
	return __atomic_load_n(&live_bytes, __ATOMIC_RELAXED);
}

uint64_t block_mem(void)
{
	return __atomic_load_n(&live_mem, __ATOMIC_RELAXED);
}
