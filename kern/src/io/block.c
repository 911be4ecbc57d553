/*
 * Blocks: one kmalloc holds the header and, right after it, the buffer, so a block is one
 * allocation and one free. The buffer starts BLOCK_HDR bytes in, which keeps it 16-byte
 * aligned (kmalloc returns 16-byte aligned memory).
 *
 * Two global counters (live blocks, their buffer bytes) are kept with atomics so leak checks
 * can read them from anywhere; they are statistics and order nothing.
 *
 * block_alloc and block_free call kmalloc/kfree: thread context only. block_reset touches
 * only the block and may run anywhere its owner runs.
 */
#include "kernel.h"
#include "block.h"
#include "kmalloc.h"

#define BLOCK_HDR	ROUNDUP(sizeof(struct block), 16)

static uint64_t live_blocks;	/* blocks allocated and not yet freed */
static uint64_t live_bytes;	/* sum of their buffer sizes */

static uint8_t *block_data(struct block *b)
{
	return (uint8_t *)b + BLOCK_HDR;
}

struct block *block_alloc(size_t size)
{
	struct block *b;

	if (size > SIZE_MAX - BLOCK_HDR)
		return NULL;
	b = kmalloc(BLOCK_HDR + size);
	if (!b)
		return NULL;
	b->next = NULL;
	b->base = block_data(b);
	b->rp = b->base;
	b->wp = b->base;
	b->lim = b->base + size;
	b->flags = 0;
	b->aux = 0;
	b->stamp = 0;
	__atomic_add_fetch(&live_blocks, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&live_bytes, size, __ATOMIC_RELAXED);
	return b;
}

void block_free(struct block *b)
{
	if (!b)
		return;
	/* A block whose base moved was not made by block_alloc (or its header was trampled). */
	assert(b->base == block_data(b));
	assert(b->base <= b->rp && b->rp <= b->wp && b->wp <= b->lim);
	__atomic_sub_fetch(&live_blocks, 1, __ATOMIC_RELAXED);
	__atomic_sub_fetch(&live_bytes, BALLOC(b), __ATOMIC_RELAXED);
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
