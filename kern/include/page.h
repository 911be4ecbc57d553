/*
 * Physical page allocator. All RAM below PAGE_MAPPED_LIMIT is identity-mapped (virtual ==
 * physical), so a page's address is both. Pages are PGSIZE (4 KiB) and not zeroed.
 * Every call is thread-safe, never sleeps and may be used in any context (the allocator
 * holds a spinlock, interrupts off, for the length of one bitmap scan).
 */
#ifndef PAGE_H
#define PAGE_H

#include "kernel.h"

#define PAGE_MAPPED_LIMIT	(4ull << 30)	/* RAM above this is not mapped: ignored */
#define PAGE_LOW_LIMIT		(1ull << 20)	/* RAM below this is left to firmware/boot */

/*
 * Boot, before other cores run: give the free physical range [start, end) to the
 * allocator. The range is page-aligned inward and clipped to [1 MiB, 4 GiB); it must not
 * contain the kernel image or anything else in use. The allocator's bitmap for the range
 * is taken from the range's own first pages.
 */
void page_add_region(uintptr_t start, uintptr_t end);
/* Boot, once: every free range the arch knows of (arch_mem_foreach) to page_add_region. */
void pages_init(void);

/* n contiguous pages, page-aligned; NULL when no run of n free pages exists (or n == 0). */
void *pages_alloc(size_t n);
/*
 * n contiguous pages whose address is a multiple of align (bytes: a power of two, at least
 * PGSIZE); NULL when no such run is free, or n == 0, or align is not such a power of two.
 * Free them with pages_free(p, n).
 */
void *pages_alloc_aligned(size_t n, size_t align);
/* Return n pages from one pages_alloc(n). Freeing pages not allocated panics. */
void pages_free(void *p, size_t n);
void *page_alloc(void);
void page_free(void *p);

size_t pages_total(void);	/* pages managed */
size_t pages_free_count(void);	/* pages free now */

#endif
