/*
 * The kernel heap: size classes for small objects, whole pages for large ones.
 *
 * Every allocation is preceded by a 16-byte header (struct hdr) that says what it is, so
 * kfree needs no lookup and can refuse pointers it did not hand out:
 *
 *	small (<= 2048 bytes): the payload class is the smallest of 16, 32, ..., 2048 that
 *	    fits; a slot (header + payload) comes from a per-class free list, refilled by
 *	    carving a slab of 1 to 8 pages into slots. Slabs are never returned to the page
 *	    allocator (their pages are counted in kmalloc_stats).
 *	large (> 2048 bytes): pages_alloc(ceil((16 + n) / PGSIZE)); the header records the
 *	    page count, and kfree gives the pages back at once.
 *
 * The header magic changes from HDR_SMALL/HDR_LARGE to HDR_FREE on kfree; kfree of a
 * pointer whose header holds anything else panics naming the pointer (double free, or
 * not a heap pointer); the change is atomic, so two racing kfrees of one pointer are
 * caught too. Freed small payloads are poisoned with 0x6b to expose use after free. One
 * spinlock protects the free lists and the counters.
 */
#include "kernel.h"
#include "arch.h"
#include "lock.h"
#include "page.h"
#include "kmalloc.h"

#define HDR_SMALL	0x6b6d736dU	/* "msmk": live small object */
#define HDR_LARGE	0x6b6d6c67U	/* "glmk": live large object */
#define HDR_FREE	0x6b6d6666U	/* "ffmk": freed */
#define POISON		0x6b
#define NCLASS		8
#define SMALL_MAX	2048
#define LARGE_MAX	((size_t)1 << 40)	/* larger requests fail: no size overflow */

struct hdr {
	uint32_t magic;		/* HDR_SMALL, HDR_LARGE or HDR_FREE */
	uint32_t units;		/* small: class index; large: pages held */
	uint64_t size;		/* bytes the caller asked for */
};
_Static_assert(sizeof(struct hdr) == 16, "the header keeps payloads 16-byte aligned");

/* A free slot: the header (magic HDR_FREE) stays valid; the link sits in the payload. */
struct slot {
	struct hdr h;
	struct slot *next;
};

struct sizeclass {
	size_t payload;		/* largest request served */
	size_t slab_pages;	/* pages carved per refill */
	struct slot *free;	/* free slots of this class */
};

static struct sizeclass classes[NCLASS] = {
	{ 16, 1, NULL }, { 32, 1, NULL }, { 64, 1, NULL }, { 128, 1, NULL },
	{ 256, 1, NULL }, { 512, 2, NULL }, { 1024, 4, NULL }, { 2048, 8, NULL },
};
static struct heap_stats stats;
static struct spinlock heap_lock = SPINLOCK_INIT("heap");

static int class_of(size_t n)
{
	int c = 0;

	while (classes[c].payload < n)
		c++;
	return c;
}

/* Adds one slab of slots to class c. Called with heap_lock held. */
static bool class_refill(int c)
{
	struct sizeclass *sc = &classes[c];
	size_t slotsz = sizeof(struct hdr) + sc->payload;
	char *slab = pages_alloc(sc->slab_pages);

	if (!slab)
		return false;
	for (size_t off = 0; off + slotsz <= sc->slab_pages * PGSIZE; off += slotsz) {
		struct slot *s = (struct slot *)(slab + off);

		s->h = (struct hdr){ .magic = HDR_FREE, .units = (uint32_t)c };
		s->next = sc->free;
		sc->free = s;
	}
	stats.pages += sc->slab_pages;
	return true;
}

static void *small_alloc(size_t n)
{
	int c = class_of(n);
	struct slot *s;

	spin_lock(&heap_lock);
	if (!classes[c].free && !class_refill(c)) {
		spin_unlock(&heap_lock);
		return NULL;
	}
	s = classes[c].free;
	classes[c].free = s->next;
	s->h = (struct hdr){ .magic = HDR_SMALL, .units = (uint32_t)c, .size = n };
	stats.bytes_in_use += n;
	stats.allocs++;
	spin_unlock(&heap_lock);
	return &s->next;
}

/* The page allocator has its own lock: only the counters need heap_lock. */
static void *large_alloc(size_t n)
{
	size_t npages = (sizeof(struct hdr) + n + PGSIZE - 1) / PGSIZE;
	struct hdr *h = pages_alloc(npages);

	if (!h)
		return NULL;
	*h = (struct hdr){ .magic = HDR_LARGE, .units = (uint32_t)npages, .size = n };
	spin_lock(&heap_lock);
	stats.bytes_in_use += n;
	stats.allocs++;
	stats.pages += npages;
	spin_unlock(&heap_lock);
	return h + 1;
}

void *kmalloc(size_t n)
{
	if (n > LARGE_MAX)
		return NULL;
	if (n == 0)
		n = 1;		/* a distinct pointer, as C's malloc(0) may give */
	return n <= SMALL_MAX ? small_alloc(n) : large_alloc(n);
}

void *kzmalloc(size_t n)
{
	void *p = kmalloc(n);

	if (p)
		memset(p, 0, n);
	return p;
}

/* h is already marked HDR_FREE by kfree. */
static void small_free(struct hdr *h)
{
	struct slot *s = (struct slot *)h;
	struct sizeclass *sc = &classes[h->units];

	memset(&s->next, POISON, sc->payload);
	spin_lock(&heap_lock);
	stats.bytes_in_use -= h->size;
	stats.frees++;
	s->next = sc->free;
	sc->free = s;
	spin_unlock(&heap_lock);
}

static void large_free(struct hdr *h)
{
	size_t npages = h->units;

	spin_lock(&heap_lock);
	stats.bytes_in_use -= h->size;
	stats.frees++;
	stats.pages -= npages;
	spin_unlock(&heap_lock);
	pages_free(h, npages);
}

static bool small_ok(const struct hdr *h)
{
	return h->units < NCLASS && h->size <= classes[h->units].payload;
}

static bool large_ok(const struct hdr *h)
{
	return (uintptr_t)h % PGSIZE == 0 && h->size + sizeof(*h) <= (uint64_t)h->units * PGSIZE;
}

/* Atomically marks a live header freed, so two racing kfrees cannot both proceed. */
static bool hdr_claim(struct hdr *h, uint32_t live)
{
	return __atomic_compare_exchange_n(&h->magic, &live, HDR_FREE, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_RELAXED);
}

static __noreturn void kfree_double(void *p)
{
	panic("kfree: double free of %p", p);
}

/* Validates the header before trusting it; panics naming p rather than corrupt the heap. */
void kfree(void *p)
{
	struct hdr *h = (struct hdr *)p - 1;
	uint32_t magic;

	if (!p)
		return;
	if ((uintptr_t)p % 16 || (uintptr_t)p < PAGE_LOW_LIMIT)
		panic("kfree: %p is not a heap pointer (misaligned or low)", p);
	magic = __atomic_load_n(&h->magic, __ATOMIC_RELAXED);
	if (magic == HDR_SMALL && small_ok(h)) {
		if (!hdr_claim(h, HDR_SMALL))
			kfree_double(p);
		small_free(h);
	} else if (magic == HDR_LARGE && large_ok(h)) {
		if (!hdr_claim(h, HDR_LARGE))
			kfree_double(p);
		large_free(h);
	} else if (magic == HDR_FREE) {
		kfree_double(p);
	} else {
		panic("kfree: %p is not a heap pointer (header magic %#x size %llu)", p, magic,
		      (unsigned long long)h->size);
	}
}

void kmalloc_stats(struct heap_stats *s)
{
	spin_lock(&heap_lock);
	*s = stats;
	spin_unlock(&heap_lock);
}
