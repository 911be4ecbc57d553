/*
 * An app run's heap: libc's malloc, free and realloc (app code, the instance's thread) come
 * here. What a run's instances allocate belongs to the run; when its last instance has
 * ended (returned, exited, faulted, was stopped), the shell's `run` calls app_heap_free,
 * which returns every page the run's heap holds, as a process's exit returns its memory.
 *
 * Nothing the app can write is trusted. An app runs in ring 0, so it can write anywhere;
 * what this file guarantees is that a heap bug of the ordinary kinds -- a double free, a
 * write off either end of a block, free of a pointer malloc did not return -- is found
 * before the kernel acts on it, and ends the instance (app_abort: a report naming the
 * app's frames, status 134, as glibc's abort on "double free or corruption" gives):
 *
 *  - The records (which blocks exist, where, how big, of which run, freed or not) live in
 *    kernel memory the app is never handed a pointer to: struct chunk and its slot array.
 *    No header sits in front of a block, so no app write can corrupt one.
 *  - Blocks live in pages that hold app blocks only: a run's chunks (CHUNK_BYTES, aligned
 *    to their size, one size class each) and, for blocks over the largest class, pages of
 *    their own. A write off the end of a block runs into its redzone and other app blocks,
 *    not into a kernel object beside it (as it would in kmalloc's shared slabs).
 *  - free(p) and realloc(p) find p's chunk by its address alone (masked to CHUNK_BYTES, or
 *    to a page for a large block) in a table of every live chunk, then its slot by
 *    arithmetic: a stack or global address, a kernel pointer or a pointer into the middle
 *    of a block is refused without reading a byte at p. The slot's state is the
 *    double-free mark.
 *  - Every block has redzones: RZ bytes before it and the rest of its slot (at least RZ
 *    bytes) after it, filled with RZ_BYTE when it is handed out and checked when it is
 *    freed, and for the blocks still live when the run ends.
 *
 *	chunk:	| slot 0 | slot 1 | ... | slot n-1 | unused |	(base: a multiple of CHUNK_BYTES)
 *	slot:	| redzone (RZ) | block (bytes asked for) | redzone (to the slot's end) |
 *	large:	| redzone (RZ) | block | redzone (to the last page's end) |	(its own pages)
 *
 * What this cannot catch: a write that jumps past the redzones into another block (found
 * only if it lands in a redzone), a use after free (the block may be handed out again),
 * and any write into kernel memory (README, "Bring your own program").
 *
 * Portable: tests/host/appheap_test.c runs it under pthreads, TSan and ASan.
 *
 * Locking: heap_lock guards every record (the table, each heap's lists, each chunk's slot
 * states and free stack); it is held only while records are read or changed, never while
 * app memory is read or written (redzones are filled before a block is handed out and
 * checked while its slot is FREEING, on no list), and never around kmalloc or pages_alloc.
 */
#include "app.h"
#include "arch.h"
#include "kmalloc.h"
#include "lock.h"
#include "page.h"

#define CHUNK_BYTES	(16 * 1024)		/* a chunk of small slots; aligned to it */
#define NCLASS		8			/* block sizes 16, 32, ..., 2048 */
#define CLASS_MAX	(16u << (NCLASS - 1))
#define LARGE		NCLASS			/* cls of a chunk holding one large block */
#define RZ		16			/* redzone bytes before a block (and at least after) */
#define RZ_BYTE		0xfb			/* what a redzone holds */
#define APP_BLOCK_MAX	((size_t)1 << 31)	/* larger requests fail (uint32_t sizes) */
#define TABLE_SIZE	1024			/* buckets of the chunk table; a power of two */

enum slot_state {
	SLOT_NEW,		/* never handed out */
	SLOT_LIVE,		/* handed out; bytes is its size */
	SLOT_FREEING,		/* free is checking its redzones: on no list, not reusable */
	SLOT_FREED,		/* freed, on the free stack: a second free is a double free */
	SLOT_BAD,		/* free found its redzones written: kept out of use until the end */
};

struct slot {
	uint32_t bytes;			/* asked for (LIVE, FREEING, FREED, BAD) */
	uint32_t state;			/* enum slot_state */
};

struct chunk {
	struct chunk *hnext;		/* the table's bucket chain */
	struct chunk *next, *prev;	/* every chunk of its heap */
	struct chunk *pnext;		/* its heap's chunks of its class with a free slot */
	struct app_heap *heap;		/* the run it belongs to */
	uintptr_t base;			/* CHUNK_BYTES-aligned, or a large block's first page */
	size_t slot_bytes;		/* RZ + class size + RZ, or a large block's pages' bytes */
	uint32_t cls;			/* class index, or LARGE */
	uint32_t nslots;		/* slots in the chunk (1 for LARGE) */
	uint32_t fresh;			/* slots [fresh, nslots) were never handed out */
	uint32_t nfree;			/* freed slots on stack[] */
	bool listed;			/* on its heap's partial list */
	uint32_t *stack;		/* indices of FREED slots, nfree of them (not LARGE) */
	struct slot slot[];		/* nslots */
};

struct app_heap {
	struct chunk *chunks;		/* every chunk, large ones included */
	struct chunk *partial[NCLASS];	/* chunks of each class with a free slot */
};

static struct spinlock heap_lock = SPINLOCK_INIT("app heap");
static struct chunk *table[TABLE_SIZE];	/* every live chunk, by base */

static size_t bucket_of(uintptr_t base)
{
	return (base / PGSIZE) & (TABLE_SIZE - 1);
}

/* heap_lock held. The chunk whose base is exactly base, or NULL. */
static struct chunk *table_find(uintptr_t base)
{
	for (struct chunk *c = table[bucket_of(base)]; c; c = c->hnext)
		if (c->base == base)
			return c;
	return NULL;
}

static void table_add(struct chunk *c)
{
	c->hnext = table[bucket_of(c->base)];
	table[bucket_of(c->base)] = c;
}

static void table_del(struct chunk *c)
{
	struct chunk **pp = &table[bucket_of(c->base)];

	while (*pp != c)
		pp = &(*pp)->hnext;
	*pp = c->hnext;
}

/* Where slot i's block starts, and where its slot ends. */
static uint8_t *block_at(const struct chunk *c, uint32_t i)
{
	return (uint8_t *)(c->base + i * c->slot_bytes + RZ);
}

static uint8_t *slot_end(const struct chunk *c, uint32_t i)
{
	return (uint8_t *)(c->base + (i + 1) * c->slot_bytes);
}

/* heap_lock held. The chunk whose slots (or large block) p points into, or NULL. */
static struct chunk *chunk_at(uintptr_t p)
{
	struct chunk *c = table_find(p & ~(uintptr_t)(CHUNK_BYTES - 1));

	if (c && c->cls != LARGE && p - c->base < c->nslots * c->slot_bytes)
		return c;
	c = table_find((p - RZ) & ~(uintptr_t)(PGSIZE - 1));	/* a large block's first page */
	if (c && c->cls == LARGE && p - c->base < c->slot_bytes)
		return c;
	return NULL;
}

/*
 * heap_lock held. The chunk and slot (*idx) whose block starts at p, or NULL, with *inside
 * set to the start of the live block p points into when it points into one (else 0).
 * Reads only the records: p itself is never dereferenced.
 */
static struct chunk *slot_of(uintptr_t p, uint32_t *idx, uintptr_t *inside)
{
	struct chunk *c = chunk_at(p);
	uintptr_t off = c ? p - c->base : 0;

	*inside = 0;
	if (!c)
		return NULL;
	*idx = (uint32_t)(off / c->slot_bytes);
	if (off % c->slot_bytes == RZ)
		return c;
	if (c->slot[*idx].state == SLOT_LIVE)
		*inside = (uintptr_t)block_at(c, *idx);
	return NULL;
}

static uint32_t class_of(size_t n)
{
	uint32_t k = 0;

	while ((16u << k) < n)
		k++;
	return k;
}

/* Records for a chunk of class k (or LARGE, with its block size); not in the table yet. */
static struct chunk *chunk_new(struct app_heap *h, uint32_t k, size_t large_bytes)
{
	size_t slot_bytes = k == LARGE ? ROUNDUP(large_bytes + 2 * RZ, PGSIZE)
				       : (16u << k) + 2 * RZ;
	uint32_t n = k == LARGE ? 1 : (uint32_t)(CHUNK_BYTES / slot_bytes);
	struct chunk *c = kzmalloc(sizeof(*c) + n * sizeof(struct slot));
	void *mem;

	if (!c)
		return NULL;
	c->stack = kmalloc(n * sizeof(uint32_t));
	mem = k == LARGE ? pages_alloc(slot_bytes / PGSIZE)
			 : pages_alloc_aligned(CHUNK_BYTES / PGSIZE, CHUNK_BYTES);
	if (!c->stack || !mem) {
		if (mem)
			pages_free(mem, k == LARGE ? slot_bytes / PGSIZE : CHUNK_BYTES / PGSIZE);
		kfree(c->stack);
		kfree(c);
		return NULL;
	}
	c->heap = h;
	c->base = (uintptr_t)mem;
	c->slot_bytes = slot_bytes;
	c->cls = k;
	c->nslots = n;
	return c;
}

static void chunk_release(struct chunk *c)
{
	pages_free((void *)c->base, c->cls == LARGE ? c->slot_bytes / PGSIZE
						   : CHUNK_BYTES / PGSIZE);
	kfree(c->stack);
	kfree(c);
}

/* heap_lock held. A slot of c handed out: fresh ones first, so freed ones rest a while. */
static uint32_t chunk_take(struct chunk *c)
{
	if (c->fresh < c->nslots)
		return c->fresh++;
	return c->stack[--c->nfree];
}

static bool chunk_full(const struct chunk *c)
{
	return c->fresh == c->nslots && !c->nfree;
}

struct app_heap *app_heap_new(void)
{
	return kzmalloc(sizeof(struct app_heap));
}

/* The first byte of [p, p + n) that is not RZ_BYTE, or NULL. */
static const uint8_t *redzone_written(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != RZ_BYTE)
			return p + i;
	return NULL;
}

/* heap_lock held: c, a chunk of slots with a free one, heads its class's partial list. */
static void partial_push(struct app_heap *h, struct chunk *c)
{
	c->pnext = h->partial[c->cls];
	h->partial[c->cls] = c;
	c->listed = true;
}

/* heap_lock held: c is h's, in the table, and (a new chunk of slots) on its partial list. */
static void chunk_link(struct app_heap *h, struct chunk *c)
{
	c->next = h->chunks;
	c->prev = NULL;
	if (h->chunks)
		h->chunks->prev = c;
	h->chunks = c;
	table_add(c);
	if (c->cls != LARGE)
		partial_push(h, c);
}

/* heap_lock held: the reverse, for a large block (never on a partial list). */
static void chunk_unlink(struct app_heap *h, struct chunk *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		h->chunks = c->next;
	if (c->next)
		c->next->prev = c->prev;
	table_del(c);
}

void *app_malloc(size_t n)
{
	struct app_inst *in = app_current();
	struct app_heap *h = in ? app_inst_heap(in) : NULL;
	uint32_t k = n <= CLASS_MAX ? class_of(n) : LARGE, i;
	struct chunk *c = NULL;
	uint8_t *p;

	if (!h || n > APP_BLOCK_MAX || (k == LARGE && !(c = chunk_new(h, LARGE, n))))
		return NULL;
	spin_lock(&heap_lock);
	if (c)
		chunk_link(h, c);
	while (!c && !(c = h->partial[k])) {
		/* a new chunk, made outside the lock (a racing instance may add one too) */
		spin_unlock(&heap_lock);
		if (!(c = chunk_new(h, k, 0)))
			return NULL;
		spin_lock(&heap_lock);
		chunk_link(h, c);
		c = NULL;	/* take from the list's head, which the full check below pops */
	}
	i = chunk_take(c);
	c->slot[i] = (struct slot){ .bytes = (uint32_t)n, .state = SLOT_LIVE };
	if (c->listed && chunk_full(c)) {
		h->partial[k] = c->pnext;	/* c is the head: it was taken from there */
		c->listed = false;
	}
	spin_unlock(&heap_lock);
	/* the slot is this caller's alone now: its redzones are filled outside the lock */
	p = block_at(c, i);
	memset(p - RZ, RZ_BYTE, RZ);
	memset(p + n, RZ_BYTE, (size_t)(slot_end(c, i) - (p + n)));
	return p;
}

/*
 * Ends the instance that handed the heap a bad pointer or a block it corrupted, fmt saying
 * what was wrong (app_abort prints it with the backtrace). heap_lock is not held.
 */
static __noreturn void heap_abort(const char *fmt, ...)
{
	char why[APP_WHY_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	app_abort(why);
}

/*
 * heap_lock held: the live block at p, or an abort (the lock dropped first) saying what p
 * is instead. what names the caller (free, realloc).
 */
static struct chunk *live_block(void *p, const char *what, uint32_t *idx)
{
	uintptr_t inside;
	struct chunk *c = slot_of((uintptr_t)p, idx, &inside);
	uint32_t st = c ? c->slot[*idx].state : SLOT_NEW, bytes = c ? c->slot[*idx].bytes : 0;

	if (c && st == SLOT_LIVE)
		return c;
	spin_unlock(&heap_lock);
	if (inside)
		heap_abort("%s of %p: not the start of a block (it is %lu bytes into the block "
			   "at %p)", what, p, (unsigned long)((uintptr_t)p - inside), (void *)inside);
	if (c && (st == SLOT_FREED || st == SLOT_FREEING || st == SLOT_BAD))
		heap_abort("%s of %p: double free (a %u-byte block, freed already)", what, p,
			   bytes);
	heap_abort("%s of %p: not a block malloc returned (a stack, global or foreign "
		   "pointer, or a large block freed already)", what, p);
}

/*
 * The block's redzones: an abort when either was written, naming where. The slot is
 * FREEING (no other caller may use it), and heap_lock is not held.
 */
static void redzones_check(struct chunk *c, uint32_t i)
{
	uint8_t *p = block_at(c, i);
	uint32_t n = c->slot[i].bytes;
	const uint8_t *bad;

	if ((bad = redzone_written(p - RZ, RZ))) {
		spin_lock(&heap_lock);
		c->slot[i].state = SLOT_BAD;
		spin_unlock(&heap_lock);
		heap_abort("free of %p: heap corruption: the %u-byte block was written before "
			   "its start (at byte -%lu)", p, n, (unsigned long)(p - bad));
	}
	if ((bad = redzone_written(p + n, (size_t)(slot_end(c, i) - (p + n))))) {
		spin_lock(&heap_lock);
		c->slot[i].state = SLOT_BAD;
		spin_unlock(&heap_lock);
		heap_abort("free of %p: heap corruption: the %u-byte block was written past "
			   "its end (at byte %lu)", p, n, (unsigned long)(bad - p));
	}
}

void app_free(void *p)
{
	struct chunk *c;
	uint32_t i;

	if (!p)
		return;
	spin_lock(&heap_lock);
	c = live_block(p, "free", &i);
	c->slot[i].state = SLOT_FREEING;
	spin_unlock(&heap_lock);
	redzones_check(c, i);
	spin_lock(&heap_lock);
	if (c->cls == LARGE) {
		/* its pages go back now; a second free finds no block there */
		chunk_unlink(c->heap, c);
		spin_unlock(&heap_lock);
		chunk_release(c);
		return;
	}
	c->slot[i].state = SLOT_FREED;
	c->stack[c->nfree++] = i;
	if (!c->listed)
		partial_push(c->heap, c);
	spin_unlock(&heap_lock);
}

size_t app_block_size(void *p)
{
	struct chunk *c;
	uint32_t i;
	size_t n;

	spin_lock(&heap_lock);
	c = live_block(p, "realloc", &i);
	n = c->slot[i].bytes;
	spin_unlock(&heap_lock);
	return n;
}

/*
 * Shell (thread context), after every instance of the run has ended: nothing else uses
 * h's chunks any more, so their slots are read without heap_lock (it guards the table).
 */
void app_heap_free(struct app_heap *h, struct app_heap_left *left)
{
	struct chunk *c;

	*left = (struct app_heap_left){ 0 };
	if (!h)
		return;
	while ((c = h->chunks)) {
		h->chunks = c->next;
		for (uint32_t i = 0; i < c->fresh; i++) {
			struct slot *s = &c->slot[i];
			uint8_t *p = block_at(c, i);

			if (s->state != SLOT_LIVE && s->state != SLOT_BAD)
				continue;
			left->blocks++;
			left->bytes += s->bytes;
			if (s->state == SLOT_LIVE && (redzone_written(p - RZ, RZ) ||
			    redzone_written(p + s->bytes, (size_t)(slot_end(c, i) - (p + s->bytes)))))
				left->overrun++;
		}
		spin_lock(&heap_lock);
		table_del(c);
		spin_unlock(&heap_lock);
		chunk_release(c);
	}
	kfree(h);
}
