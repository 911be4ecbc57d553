/*
 * Physical pages: one bitmap per free RAM region, bit set = page allocated.
 *
 * At boot the allocator takes each free range the arch reports (pages_init). A region keeps its
 * bitmap in its own first pages, so nothing is allocated before the allocator exists and
 * each region's overhead is 1 bit per page (16 KiB for 512 MiB). A run of n pages is
 * always found inside one region, first fit from the lowest page that may be free
 * (hint), so small allocations pack low and large runs stay available higher up. An
 * aligned run (pages_alloc_aligned: kmalloc's slabs, aligned to their size so a slot finds
 * its slab by masking its address) is the first fit whose address is a multiple of align.
 *
 * One spinlock covers everything; a search is at most a linear scan of a few thousand
 * words, skipping full words 64 pages at a time. Freeing checks that every page was
 * allocated, so a double free panics instead of handing a page out twice.
 */
#include "kernel.h"
#include "arch.h"
#include "lock.h"
#include "page.h"

#define MAX_REGIONS	32

struct region {
	uintptr_t base;		/* address of page 0 (first page after the bitmap) */
	size_t npages;		/* pages managed */
	size_t nfree;		/* of which free */
	size_t hint;		/* every page below this index is allocated */
	uint64_t *bitmap;	/* npages bits, 1 = allocated; lives before base */
};

static struct region regions[MAX_REGIONS];
static int nregions;
static struct spinlock page_lock = SPINLOCK_INIT("page");

static bool bit_test(const struct region *r, size_t i)
{
	return r->bitmap[i / 64] >> (i % 64) & 1;
}

static void bits_set(struct region *r, size_t i, size_t n, bool v)
{
	for (; n; n--, i++) {
		if (v)
			r->bitmap[i / 64] |= 1ull << (i % 64);
		else
			r->bitmap[i / 64] &= ~(1ull << (i % 64));
	}
}

static bool region_overlaps(uintptr_t start, uintptr_t end)
{
	for (int i = 0; i < nregions; i++) {
		uintptr_t lo = (uintptr_t)regions[i].bitmap;
		uintptr_t hi = regions[i].base + regions[i].npages * PGSIZE;

		if (start < hi && lo < end)
			return true;
	}
	return false;
}

/* Sets up a region over [start, end), both page-aligned: bitmap first, then the pages. */
static void region_init(struct region *r, uintptr_t start, uintptr_t end)
{
	size_t total = (end - start) / PGSIZE;
	size_t words = (total + 63) / 64;
	size_t bmpages = (words * sizeof(uint64_t) + PGSIZE - 1) / PGSIZE;

	r->bitmap = (uint64_t *)start;
	r->base = start + bmpages * PGSIZE;
	r->npages = total - bmpages;
	r->nfree = r->npages;
	r->hint = 0;
	memset(r->bitmap, 0, words * sizeof(uint64_t));
	/* Bits past npages in the last word stay clear: searches stop at npages. */
}

void page_add_region(uintptr_t start, uintptr_t end)
{
	if (start < PAGE_LOW_LIMIT)
		start = PAGE_LOW_LIMIT;
	if (end > PAGE_MAPPED_LIMIT)
		end = PAGE_MAPPED_LIMIT;
	start = ROUNDUP(start, PGSIZE);
	end = ROUNDDOWN(end, PGSIZE);
	if (start >= end || end - start < 2 * PGSIZE)
		return;		/* nothing left once the bitmap takes its page */
	spin_lock(&page_lock);
	if (nregions == MAX_REGIONS) {
		spin_unlock(&page_lock);
		printk("page: more than %d regions, ignoring [%p, %p)\n", MAX_REGIONS,
		       (void *)start, (void *)end);
		return;
	}
	if (region_overlaps(start, end)) {
		spin_unlock(&page_lock);
		panic("page_add_region: [%p, %p) overlaps a region already added",
		      (void *)start, (void *)end);
	}
	region_init(&regions[nregions++], start, end);
	spin_unlock(&page_lock);
}

/* Lowest free page index at or after i, skipping full words 64 pages at a time; npages if none. */
static size_t region_next_free(const struct region *r, size_t i)
{
	while (i < r->npages) {
		if (i % 64 == 0 && r->bitmap[i / 64] == ~0ull)
			i += 64;
		else if (bit_test(r, i))
			i++;
		else
			return i;
	}
	return r->npages;
}

/* Lowest index at or after i whose page address is a multiple of align (a power of two). */
static size_t region_align_up(const struct region *r, size_t i, size_t align)
{
	uintptr_t a = r->base + i * PGSIZE;

	return i + (ROUNDUP(a, align) - a) / PGSIZE;
}

/*
 * Lowest index of n free pages at or after r->hint whose address is a multiple of align,
 * or -1. A candidate that fails at page j moves the search past j: a run containing an
 * allocated page can never fit, so the scan stays linear. Called with page_lock held.
 */
static long region_find(const struct region *r, size_t n, size_t align)
{
	size_t i = r->hint, j;

	for (;;) {
		i = region_align_up(r, region_next_free(r, i), align);
		if (i >= r->npages || r->npages - i < n)
			return -1;
		for (j = i; j < i + n && !bit_test(r, j); j++)
			;
		if (j == i + n)
			return (long)i;
		i = j + 1;
	}
}

/* Moves r->hint to the next possibly free page after an allocation at idx. */
static void region_advance_hint(struct region *r, size_t idx, size_t n)
{
	if (idx != r->hint)
		return;
	r->hint = idx + n;
	while (r->hint < r->npages && bit_test(r, r->hint))
		r->hint++;
}

void *pages_alloc_aligned(size_t n, size_t align)
{
	void *p = NULL;

	if (n == 0 || align < PGSIZE || (align & (align - 1)))
		return NULL;
	spin_lock(&page_lock);
	for (int i = 0; i < nregions && !p; i++) {
		struct region *r = &regions[i];
		long idx;

		if (r->nfree < n || (idx = region_find(r, n, align)) < 0)
			continue;
		bits_set(r, (size_t)idx, n, true);
		r->nfree -= n;
		region_advance_hint(r, (size_t)idx, n);
		p = (void *)(r->base + (size_t)idx * PGSIZE);
	}
	spin_unlock(&page_lock);
	return p;
}

void *pages_alloc(size_t n)
{
	return pages_alloc_aligned(n, PGSIZE);
}

static struct region *region_of(uintptr_t a)
{
	for (int i = 0; i < nregions; i++)
		if (a >= regions[i].base && a < regions[i].base + regions[i].npages * PGSIZE)
			return &regions[i];
	return NULL;
}

/* Panics (after dropping the lock) on a pointer or range that pages_alloc never gave out. */
void pages_free(void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p;
	struct region *r;
	size_t idx;

	if (!p || n == 0)
		return;
	if (a % PGSIZE)
		panic("pages_free: %p is not page-aligned", p);
	spin_lock(&page_lock);
	r = region_of(a);
	idx = r ? (a - r->base) / PGSIZE : 0;
	if (!r || idx + n > r->npages) {
		spin_unlock(&page_lock);
		panic("pages_free: [%p, +%zu pages) is not managed memory", p, n);
	}
	for (size_t i = idx; i < idx + n; i++) {
		if (!bit_test(r, i)) {
			spin_unlock(&page_lock);
			panic("pages_free: page %p of [%p, +%zu pages) is not allocated "
			      "(double free?)", (void *)(r->base + i * PGSIZE), p, n);
		}
	}
	bits_set(r, idx, n, false);
	r->nfree += n;
	r->hint = MIN(r->hint, idx);
	spin_unlock(&page_lock);
}

void *page_alloc(void)
{
	return pages_alloc(1);
}

void page_free(void *p)
{
	pages_free(p, 1);
}

static size_t sum_regions(bool free_only)
{
	size_t n = 0;

	spin_lock(&page_lock);
	for (int i = 0; i < nregions; i++)
		n += free_only ? regions[i].nfree : regions[i].npages;
	spin_unlock(&page_lock);
	return n;
}

size_t pages_total(void)
{
	return sum_regions(false);
}

size_t pages_free_count(void)
{
	return sum_regions(true);
}

void pages_init(void)
{
	arch_mem_foreach(page_add_region);
}
