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
/*
 * Bytes kmalloc(n) really takes from memory: its slot, header included (small), or its
 * whole pages (large); 0 when kmalloc(n) always fails. Any context; a pure function of n.
 */
size_t kmalloc_footprint(size_t n);

/*
 * Small objects live in slabs of their size class; a slab whose last object is freed goes
 * back to the page allocator, except at most one empty slab per class kept as a cache.
 */
struct heap_stats {
	uint64_t bytes_in_use;	/* sum of live allocation sizes as requested */
	uint64_t allocs, frees;	/* calls that succeeded */
	uint64_t pages;		/* pages the heap holds from the page allocator now */
	uint64_t slabs;		/* slabs held, the cached empty ones included */
	uint64_t empty_slabs;	/* of which empty: a class's cache, at most one a class */
	uint64_t slabs_returned;	/* slabs given back to the page allocator since boot */
};
void kmalloc_stats(struct heap_stats *s);

#endif
