/*
 * The kernel heap: slabs of size-classed slots for small objects, whole pages for large ones.
 *
 * Every allocation is preceded by a 16-byte header (struct hdr) that says what it is, so
 * kfree needs no lookup and can refuse pointers it did not hand out:
 *
 *	small (<= 2048 bytes): the payload class is the smallest of 16, 32, ..., 2048 that
 *	    fits; a slot is the header and the payload. Slots live in slabs of 1 to 8 pages
 *	    (a power of two), each aligned to its own size by pages_alloc_aligned, with a
 *	    struct slab at its base and the slots after it:
 *
 *		slab base (multiple of slab size)
 *		| struct slab | slot 0: hdr, payload | slot 1 | ... | slot nslots-1 | unused |
 *
 *	    so a slot finds its slab by rounding its address down to the slab size: no
 *	    search and no table. Each slab has its own free list and in-use count.
 *	large (> 2048 bytes): pages_alloc(ceil((16 + n) / PGSIZE)); the header records the
 *	    page count, and kfree gives the pages back at once.
 *
 * A class keeps the slabs with a free slot and a slot in use on its partial list; full
 * slabs are on no list (a free finds them by address). Allocation takes from the first
 * partial slab, so live objects pack into few slabs. When a slab's last slot is freed the
 * slab becomes the class's cached empty slab if the class has none, and otherwise its pages
 * go back to the page allocator at once: a class never holds more than one empty slab
 * (19 pages over all classes), and alloc/free churn across a slab boundary reuses the
 * cached slab instead of thrashing the page allocator. kmalloc_stats counts the pages
 * really held (slabs, the cached ones included, and large allocations).
 *
 * The header magic changes from HDR_SMALL/HDR_LARGE to HDR_FREE on kfree; kfree of a
 * pointer whose header holds anything else, or whose slab header does not claim the slot,
 * panics naming the pointer (double free, or not a heap pointer); the change is atomic,
 * so two racing kfrees of one pointer are caught too. A returned slab's magic becomes
 * SLAB_DEAD and its slots stay HDR_FREE, so a double free after the return is still caught
 * as long as the page allocator has not handed the pages out again. Freed small payloads
 * are poisoned with 0x6b to expose use after free.
 *
 * Locking: heap_lock protects the class lists, every live slab's free list and in-use
 * count, and the counters. Slab pages are taken and given back outside it (the page
 * allocator has its own lock), so heap_lock is never held across a bitmap scan.
 */
#include "kernel.h"
#include "arch.h"
#include "lock.h"
#include "page.h"
#include "kmalloc.h"

#define HDR_SMALL	0x6b6d736dU	/* "msmk": live small object */
#define HDR_LARGE	0x6b6d6c67U	/* "glmk": live large object */
#define HDR_FREE	0x6b6d6666U	/* "ffmk": freed */
#define SLAB_LIVE	0x626c7373U	/* "sslb": a slab the heap holds */
#define SLAB_DEAD	0x626c7364U	/* "dslb": a slab given back to the page allocator */
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

/* At the base of every slab. magic and cls are fixed while the slab is live. */
struct slab {
	uint32_t magic;		/* SLAB_LIVE, or SLAB_DEAD once the pages went back */
	uint16_t cls;		/* class index */
	uint16_t inuse;		/* slots handed out */
	struct slot *free;	/* free slots of this slab */
	struct slab *prev;	/* on the class's partial list; NULL at the head */
	struct slab *next;	/* on the class's partial list */
};
#define SLAB_HDR	ROUNDUP(sizeof(struct slab), 16)	/* slots start here: 16-aligned */

struct sizeclass {
	size_t payload;		/* largest request served */
	size_t slab_pages;	/* pages per slab: a power of two, the slab's alignment too */
	struct slab *partial;	/* slabs with a free slot and a slot in use */
	struct slab *empty;	/* the cached empty slab, or NULL */
};

static struct sizeclass classes[NCLASS] = {
	{ 16, 1, NULL, NULL }, { 32, 1, NULL, NULL }, { 64, 1, NULL, NULL },
	{ 128, 1, NULL, NULL }, { 256, 1, NULL, NULL }, { 512, 2, NULL, NULL },
	{ 1024, 4, NULL, NULL }, { 2048, 8, NULL, NULL },
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

static size_t slot_size(int c)
{
	return sizeof(struct hdr) + classes[c].payload;
}

static size_t slab_bytes(int c)
{
	return classes[c].slab_pages * PGSIZE;
}

static size_t slab_nslots(int c)
{
	return (slab_bytes(c) - SLAB_HDR) / slot_size(c);
}

static struct slot *slab_slot(struct slab *s, size_t i)
{
	return (struct slot *)((char *)s + SLAB_HDR + i * slot_size(s->cls));
}

/* The slab a small header claims to be in: its address rounded down to the slab size. */
static struct slab *slab_of(const struct hdr *h)
{
	return (struct slab *)ROUNDDOWN((uintptr_t)h, slab_bytes((int)h->units));
}

/* Fresh pages made into a slab of class c, every slot free; not on any list yet. */
static void slab_format(struct slab *s, int c)
{
	size_t n = slab_nslots(c);

	s->cls = (uint16_t)c;
	s->inuse = 0;
	s->free = NULL;
	s->prev = s->next = NULL;
	for (size_t i = n; i-- > 0;) {
		struct slot *sl = slab_slot(s, i);

		sl->h = (struct hdr){ .magic = HDR_FREE, .units = (uint32_t)c };
		sl->next = s->free;
		s->free = sl;
	}
	__atomic_store_n(&s->magic, SLAB_LIVE, __ATOMIC_RELAXED);
}

/* The next two: heap_lock held. */
static void partial_push(struct sizeclass *sc, struct slab *s)
{
	s->prev = NULL;
	s->next = sc->partial;
	if (sc->partial)
		sc->partial->prev = s;
	sc->partial = s;
}

static void partial_remove(struct sizeclass *sc, struct slab *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		sc->partial = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

/*
 * A free slot of class c from the partial list or the cached empty slab, or NULL when
 * the class has neither. heap_lock held.
 */
static struct slot *class_take(int c)
{
	struct sizeclass *sc = &classes[c];
	struct slab *s = sc->partial;
	struct slot *sl;

	if (!s && (s = sc->empty)) {
		sc->empty = NULL;
		stats.empty_slabs--;
		partial_push(sc, s);
	}
	if (!s)
		return NULL;
	sl = s->free;
	s->free = sl->next;
	if (++s->inuse == slab_nslots(c))
		partial_remove(sc, s);	/* full: a free finds it by address */
	return sl;
}

static void *small_alloc(size_t n)
{
	int c = class_of(n);
	struct slot *sl;

	spin_lock(&heap_lock);
	while (!(sl = class_take(c))) {
		struct slab *s;

		/* A new slab, made outside the lock; a racing refill just leaves a spare. */
		spin_unlock(&heap_lock);
		s = pages_alloc_aligned(classes[c].slab_pages, slab_bytes(c));
		if (!s)
			return NULL;
		slab_format(s, c);
		spin_lock(&heap_lock);
		partial_push(&classes[c], s);
		stats.slabs++;
		stats.pages += classes[c].slab_pages;
	}
	sl->h = (struct hdr){ .magic = HDR_SMALL, .units = (uint32_t)c, .size = n };
	stats.bytes_in_use += n;
	stats.allocs++;
	spin_unlock(&heap_lock);
	return &sl->next;
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

size_t kmalloc_footprint(size_t n)
{
	if (n > LARGE_MAX)
		return 0;
	if (n == 0)
		n = 1;
	if (n <= SMALL_MAX)
		return slot_size(class_of(n));
	return ROUNDUP(sizeof(struct hdr) + n, PGSIZE);
}

/*
 * Slot sl of slab s is free again (heap_lock held). Returns s when its pages must go back
 * to the page allocator (the caller frees them after dropping the lock), else NULL.
 */
static struct slab *slab_put(struct slab *s, struct slot *sl)
{
	struct sizeclass *sc = &classes[s->cls];

	if (s->inuse-- == slab_nslots(s->cls))
		partial_push(sc, s);	/* was full */
	sl->next = s->free;
	s->free = sl;
	if (s->inuse)
		return NULL;
	partial_remove(sc, s);
	if (!sc->empty) {
		sc->empty = s;
		stats.empty_slabs++;
		return NULL;
	}
	__atomic_store_n(&s->magic, SLAB_DEAD, __ATOMIC_RELAXED);
	stats.slabs--;
	stats.slabs_returned++;
	stats.pages -= sc->slab_pages;
	return s;
}

/* h is already marked HDR_FREE by kfree. */
static void small_free(struct hdr *h)
{
	struct slot *sl = (struct slot *)h;
	struct slab *s = slab_of(h), *dead;
	int c = (int)h->units;

	memset(&sl->next, POISON, classes[c].payload);
	spin_lock(&heap_lock);
	stats.bytes_in_use -= h->size;
	stats.frees++;
	dead = slab_put(s, sl);
	spin_unlock(&heap_lock);
	if (dead)
		pages_free(dead, classes[c].slab_pages);
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

/*
 * A small header is believable when its class is real, the size fits the class, and the
 * slab it rounds down to is live, of that class, and has a slot boundary exactly there.
 * The slab header is read without heap_lock: magic and cls do not change while any slot
 * of the slab is live, and a racing double free is caught by hdr_claim anyway.
 */
static bool small_ok(const struct hdr *h)
{
	const struct slab *s;
	size_t off;

	if (h->units >= NCLASS || h->size > classes[h->units].payload)
		return false;
	s = slab_of(h);
	off = (size_t)((uintptr_t)h - (uintptr_t)s);
	return __atomic_load_n(&s->magic, __ATOMIC_RELAXED) == SLAB_LIVE && s->cls == h->units &&
	       off >= SLAB_HDR && (off - SLAB_HDR) % slot_size((int)h->units) == 0 &&
	       (off - SLAB_HDR) / slot_size((int)h->units) < slab_nslots((int)h->units);
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
