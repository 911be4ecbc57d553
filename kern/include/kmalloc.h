/*
 * Kernel heap. kmalloc may be called from thread context only (it may take a lock that
 * interrupt handlers do not take, but never sleeps); it returns NULL when memory is out.
 * Memory is 16-byte aligned and not zeroed (kzmalloc zeroes). kfree(NULL) is a no-op.
 */
#ifndef KMALLOC_H
#define KMALLOC_H

#include "kernel.h"

void *kmalloc(size_t n);
void *kzmalloc(size_t n);
void kfree(void *p);

struct heap_stats {
	uint64_t bytes_in_use;	/* sum of live allocation sizes as requested */
	uint64_t allocs, frees;	/* calls that succeeded */
	uint64_t pages;		/* pages the heap holds from the page allocator */
};
void kmalloc_stats(struct heap_stats *s);

#endif
