/*
 * mem_test.c: run by tests/t/host-mem (build/host/mem{,-tsan,-asan}), on the shared harness.
 * Host tests of the kernel's allocators (kern/src/mem/page.c, kmalloc.c) and of what blocks
 * and queues really hold (kern/src/io/block.c, qio.c), on the real allocators: the shim's
 * arch_mem_foreach hands pages_init 16 MiB of host memory in two regions, and the shim's
 * weak malloc-backed heap is replaced by kmalloc.c. Plain, TSan and ASan builds.
 *
 *	aligned		pages_alloc_aligned: alignment, bad arguments, exhaustion, return
 *	slab_return	for each size class: objects for 10 slabs, all distinct and 16-aligned,
 *			freed in a scrambled order; afterwards the heap holds only the cached
 *			empty slabs (one per class at most) and the page allocator has the rest
 *	cache_bound	alloc/free churn across a slab boundary reuses the cached slab (no page
 *			allocator traffic); three emptied slabs leave one cached, two returned
 *	poison		a freed payload reads 0x6b
 *	panics		in forked children: double free (also after the slab went back),
 *			a forged header inside another class's slab, a misaligned pointer, a
 *			page double free: each panics naming the fault; a correct free does not
 *	concurrent	4 threads allocate, fill, check and free mixed sizes, half of them
 *			freed by another thread; then the heap is back to its cached slabs
 *	blocks		BMEM of blocks of 100 to 32768 bytes (7 sizes); 4096 and
 *			32 KiB blocks take whole pages (one page per 4096-byte block, not two)
 *			and the pages the page allocator lost match the BMEM sums
 *	qio_limit	a queue capped at 8 x 4096 bytes takes 7 blocks of 4096 (real memory),
 *			not 8 (buffer sizes)
 *
 * Every subtest ends with nothing live: the heap may hold only cached empty slabs. Prints
 * PASS/FAIL per subtest (harness.h); the exit status is non-zero when one failed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#define strerror libc_strerror	/* error.h declares the kernel's own */
#include <string.h>
#undef strerror
#include <sys/wait.h>
#include <unistd.h>

#include "kernel.h"
#include "arch.h"
#include "block.h"
#include "error.h"
#include "kmalloc.h"
#include "page.h"
#include "qio.h"
#include "shim.h"
#include "harness.h"

#define NCLASS		8
#define CACHE_PAGES	(1 + 1 + 1 + 1 + 1 + 2 + 4 + 8)	/* one empty slab of each class */

static size_t total_free;	/* pages_free_count() right after pages_init */

static struct heap_stats heap(void)
{
	struct heap_stats hs;

	kmalloc_stats(&hs);
	return hs;
}

/*
 * Nothing live: the heap holds only empty cached slabs, at most one per class, and every
 * other page is back with the page allocator.
 */
static void check_quiet(const char *when)
{
	struct heap_stats hs = heap();

	CHECK(hs.bytes_in_use == 0 && hs.allocs == hs.frees);
	CHECK(hs.slabs == hs.empty_slabs && hs.empty_slabs <= NCLASS);
	CHECK(hs.pages <= CACHE_PAGES);
	CHECK(pages_free_count() + hs.pages == total_free);
	CHECK(block_count() == 0 && block_mem() == 0);
	if (harness_failures())
		fprintf(stderr, "    %s: heap holds %llu pages in %llu slabs (%llu empty), "
			"%llu bytes in use; %zu of %zu pages free\n", when,
			(unsigned long long)hs.pages, (unsigned long long)hs.slabs,
			(unsigned long long)hs.empty_slabs, (unsigned long long)hs.bytes_in_use,
			pages_free_count(), total_free);
}

/* A cheap deterministic generator, one state per thread. */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void shuffle(void **v, size_t n, uint32_t seed)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rnd(&seed) % i;
		void *t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

/* Every byte of p[0, n) is the low byte of tag + offset: overlapping objects show. */
static void fill(void *p, size_t n, uint32_t tag)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = (uint8_t)(tag + i);
}

static bool filled(const void *p, size_t n, uint32_t tag)
{
	for (size_t i = 0; i < n; i++)
		if (((const uint8_t *)p)[i] != (uint8_t)(tag + i))
			return false;
	return true;
}

/* ---- the page allocator's aligned runs ---- */

static void test_aligned(void)
{
	size_t before = pages_free_count();
	void *p[64];
	int n = 0;

	CHECK(pages_alloc_aligned(1, 3 * PGSIZE) == NULL);	/* not a power of two */
	CHECK(pages_alloc_aligned(1, PGSIZE / 2) == NULL);
	CHECK(pages_alloc_aligned(0, PGSIZE) == NULL);
	for (size_t align = PGSIZE; align <= (256u << 10); align *= 2) {
		void *a = page_alloc();	/* knock the next fit off alignment */
		void *q = pages_alloc_aligned(3, align);

		CHECK(q && (uintptr_t)q % align == 0);
		pages_free(q, 3);
		page_free(a);
	}
	CHECK(pages_free_count() == before);
	/* exhaustion: 32 KiB aligned runs until none is left, then all of them back */
	while (n < 63 && (p[n] = pages_alloc_aligned(8, 32768))) {
		CHECK((uintptr_t)p[n] % 32768 == 0);
		n++;
	}
	CHECK(n == 63);	/* 16 MiB holds many more than 63 */
	while (n-- > 0)
		pages_free(p[n], 8);
	CHECK(pages_free_count() == before);
}

/* ---- slabs go back ---- */

/* Objects of one request size until 10 slabs more than at the start have been made. */
static size_t alloc_slabs(size_t size, void **v, size_t max)
{
	uint64_t slabs0 = heap().slabs;
	size_t n = 0;

	while (heap().slabs < slabs0 + 10 && n < max) {
		v[n] = kmalloc(size);
		CHECK(v[n] && (uintptr_t)v[n] % 16 == 0);
		if (!v[n])
			break;
		n++;
	}
	return n;
}

static void test_slab_return(void)
{
	static void *v[4096];
	const size_t sizes[] = { 1, 16, 17, 32, 64, 100, 128, 256, 300, 512, 1000, 1024, 2000,
				 2048 };

	check_quiet("start");
	for (size_t k = 0; k < ARRAY_SIZE(sizes); k++) {
		size_t sz = sizes[k], n = alloc_slabs(sz, v, ARRAY_SIZE(v));
		struct heap_stats full = heap();
		uint64_t returned0 = full.slabs_returned;

		CHECK(n > 0 && full.bytes_in_use == n * sz);
		CHECK(full.pages >= 10 && pages_free_count() + full.pages == total_free);
		for (size_t i = 0; i < n; i++)
			fill(v[i], sz, (uint32_t)i * 7);
		for (size_t i = 0; i < n; i++)
			CHECK(filled(v[i], sz, (uint32_t)i * 7));
		shuffle(v, n, 12345 + (uint32_t)k);
		for (size_t i = 0; i < n; i++)
			kfree(v[i]);
		/* of the 10+ slabs made, all but the one cached went back */
		CHECK(heap().slabs_returned >= returned0 + 9);
		check_quiet("after a class's round");
		if (harness_failures()) {
			fprintf(stderr, "    size %zu: %zu objects\n", sz, n);
			return;
		}
	}
	CHECK(heap().empty_slabs == NCLASS);	/* every class used, one cached each */
	CHECK(heap().pages == CACHE_PAGES);
}

/* ---- the cache bound ---- */

static void test_cache_bound(void)
{
	static void *v[512];
	const size_t sz = 200;	/* class 256 */
	struct heap_stats h0, h1;
	size_t n = 0;
	uint64_t slabs0;

	/* fill slabs exactly: the next allocation would need a new slab */
	slabs0 = heap().slabs;
	for (;;) {
		v[n] = kmalloc(sz);
		if (heap().slabs > slabs0 + 1 && n > 0)
			break;	/* v[n] opened a second fresh slab: the churn object */
		n++;
	}
	kfree(v[n]);	/* the second slab is empty now: cached, not returned */
	h0 = heap();
	for (int i = 0; i < 1000; i++) {
		void *p = kmalloc(sz);

		CHECK(p);
		kfree(p);
	}
	h1 = heap();
	CHECK(h1.slabs_returned == h0.slabs_returned && h1.slabs == h0.slabs);
	CHECK(h1.pages == h0.pages && h1.empty_slabs == h0.empty_slabs);
	for (size_t i = 0; i < n; i++)
		kfree(v[i]);
	check_quiet("after churn");

	/* three slabs emptied at once: one stays cached, two go back */
	n = alloc_slabs(sz, v, ARRAY_SIZE(v));
	h0 = heap();
	for (size_t i = 0; i < n; i++)
		kfree(v[i]);
	h1 = heap();
	CHECK(h1.slabs_returned - h0.slabs_returned == h0.slabs - h1.slabs);
	CHECK(h1.slabs == h1.empty_slabs && h1.empty_slabs <= NCLASS);
	check_quiet("after emptying many");
}

/* ---- poisoning ---- */

static void test_poison(void)
{
	uint8_t *p = kmalloc(64);
	bool poisoned = true;

	memset(p, 0, 64);
	kfree(p);
	/* the slab stays (cached or partial), so the slot can be read; its link is at 0 */
	CHECK(heap().slabs > 0);
	for (size_t i = sizeof(void *); i < 64; i++)
		poisoned &= p[i] == 0x6b;
	CHECK(poisoned);
	check_quiet("after poison");
}

/* ---- panics, each in a forked child ---- */

static void double_free(void)
{
	void *p = kmalloc(40);

	kfree(p);
	kfree(p);
}

/*
 * Slabs of class 2048 emptied in allocation order: the first to empty is cached, the last
 * (v[n - 1]'s) goes back to the page allocator; freeing into it again is still caught.
 */
static void double_free_returned(void)
{
	static void *v[256];
	size_t n = alloc_slabs(2000, v, ARRAY_SIZE(v));

	for (size_t i = 0; i < n; i++)
		kfree(v[i]);
	kfree(v[n - 1]);
}

/* A real class-16 header copied into a class-256 payload: the slab does not agree. */
static void forged_header(void)
{
	uint8_t *big = kmalloc(256), *small = kmalloc(16);

	memcpy(big + 64, small - 16, 16);
	kfree(big + 80);
}

static void misaligned(void)
{
	uint8_t *p = kmalloc(64);

	kfree(p + 8);
}

static void page_double_free(void)
{
	void *p = pages_alloc(2);

	pages_free(p, 2);
	pages_free(p, 2);
}

static void good_free(void)
{
	kfree(kmalloc(64));
}

/* Runs fn in a child; true when the child's outcome matches (panic text, or clean exit). */
static bool in_child(void (*fn)(void), const char *want)
{
	int fds[2], status;
	char buf[512] = "";
	ssize_t got = 0, r;
	pid_t pid;

	if (pipe(fds))
		abort();
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		dup2(fds[1], 2);
		fn();
		_exit(0);
	}
	close(fds[1]);
	while (got < (ssize_t)sizeof(buf) - 1 && (r = read(fds[0], buf + got,
							     sizeof(buf) - 1 - (size_t)got)) > 0)
		got += r;
	close(fds[0]);
	waitpid(pid, &status, 0);
	if (!want)
		return WIFEXITED(status) && WEXITSTATUS(status) == 0;
	if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(buf, want))) {
		fprintf(stderr, "    child: status %#x, stderr: %s\n", status, buf);
		return false;
	}
	return true;
}

static void test_panics(void)
{
	CHECK(in_child(good_free, NULL));
	CHECK(in_child(double_free, "kfree: double free"));
	CHECK(in_child(double_free_returned, "kfree: double free"));
	CHECK(in_child(forged_header, "not a heap pointer"));
	CHECK(in_child(misaligned, "not a heap pointer"));
	CHECK(in_child(page_double_free, "not allocated (double free?)"));
	check_quiet("after panics");	/* the children's heaps were their own */
}

/* ---- concurrency ---- */

#define NTHREAD		4
#define NOPS		20000
#define NSLOT		64

/* Objects handed to the next thread to free: one mailbox slot each, exchanged atomically. */
struct obj {
	size_t size;
	uint32_t tag;
};
static struct obj *mailbox[NTHREAD][NSLOT];

static struct obj *obj_new(uint32_t *seed)
{
	uint32_t r = rnd(seed);
	size_t size = r % 8 == 0 ? 2049 + r % 20000 : sizeof(struct obj) + r % 2048;
	struct obj *o = kmalloc(size);

	if (!o)
		return NULL;
	o->size = size;
	o->tag = r;
	fill(o + 1, MIN(size - sizeof(*o), (size_t)256), r);
	return o;
}

static void obj_free(struct obj *o)
{
	CHECK(filled(o + 1, MIN(o->size - sizeof(*o), (size_t)256), o->tag));
	kfree(o);
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	uint32_t seed = 0x9e3779b9u * (uint32_t)(id + 1);
	struct obj *mine[NSLOT] = { 0 };

	shim_set_core(id);
	for (int i = 0; i < NOPS; i++) {
		uint32_t r = rnd(&seed), k = r % NSLOT;

		if (mine[k]) {
			if (r & 0x100) {	/* give it to the next thread to free */
				struct obj *old = __atomic_exchange_n(
					&mailbox[(id + 1) % NTHREAD][k], mine[k], __ATOMIC_ACQ_REL);

				if (old)
					obj_free(old);
			} else {
				obj_free(mine[k]);
			}
			mine[k] = NULL;
		} else {
			struct obj *in = __atomic_exchange_n(&mailbox[id][k], NULL,
							     __ATOMIC_ACQ_REL);

			if (in)
				obj_free(in);
			CHECK((mine[k] = obj_new(&seed)) != NULL);
		}
	}
	for (int k = 0; k < NSLOT; k++)
		if (mine[k])
			obj_free(mine[k]);
	return NULL;
}

static void test_concurrent(void)
{
	pthread_t t[NTHREAD];

	for (int i = 0; i < NTHREAD; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i))
			abort();
	for (int i = 0; i < NTHREAD; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NTHREAD; i++)
		for (int k = 0; k < NSLOT; k++)
			if (mailbox[i][k])
				obj_free(mailbox[i][k]);
	check_quiet("after the threads");
}

/* ---- what blocks really hold ---- */

/* n blocks of size: BMEM as predicted, and the pages the page allocator lost cover them. */
static void blocks_of(size_t size, size_t n, size_t want_mem, size_t max_pages)
{
	static struct block *b[64];
	size_t free0 = pages_free_count(), lost, sum = 0;

	for (size_t i = 0; i < n; i++) {
		b[i] = block_alloc(size);
		CHECK(b[i] && BMEM(b[i]) == want_mem && BALLOC(b[i]) == size);
		CHECK((uintptr_t)b[i]->base % (size % PGSIZE ? 16 : PGSIZE) == 0);
		memset(b[i]->base, 0xa5, size);	/* all of the buffer is ours (ASan) */
		sum += BMEM(b[i]);
	}
	lost = free0 - pages_free_count();
	CHECK(block_mem() == sum && block_mem_of(size) == want_mem);
	CHECK(lost <= max_pages);
	/* BMEM is real: the pages taken hold the sum, give or take one partly used slab */
	CHECK(lost * PGSIZE + CACHE_PAGES * PGSIZE >= sum && lost * PGSIZE <= sum + 8 * PGSIZE);
	if (harness_failures())
		fprintf(stderr, "    %zu blocks of %zu: BMEM %zu, %zu pages taken\n", n, size,
			n ? BMEM(b[0]) : 0, lost);
	for (size_t i = 0; i < n; i++)
		block_free(b[i]);
}

static void test_blocks(void)
{
	size_t slot64 = 16 + 64;	/* a paged block's header: one 64-byte slot */

	CHECK(kmalloc_footprint(1) == 32 && kmalloc_footprint(2048) == 2064);
	CHECK(kmalloc_footprint(2049) == PGSIZE && kmalloc_footprint(4080) == PGSIZE);
	CHECK(kmalloc_footprint(4081) == 2 * PGSIZE);
	blocks_of(100, 40, 16 + 256, 3);		/* 64 + 100 bytes in a 256 slot */
	blocks_of(1024, 40, 16 + 2048, 24);		/* one 2 KiB slot: 15 a slab */
	blocks_of(3000, 20, PGSIZE, 20);		/* header and buffer in one page */
	blocks_of(4000, 20, PGSIZE, 20);		/* 64 + 4000 + 16 still fit a page */
	blocks_of(4050, 20, PGSIZE + slot64, 21);	/* they would not: paged */
	/* the report's cases: one page (not two) and 8 pages (not 9), plus the header */
	blocks_of(4096, 50, PGSIZE + slot64, 51);
	blocks_of(32768, 20, 32768 + slot64, 161);
	check_quiet("after blocks");
}

/* ---- qio counts real memory ---- */

static void test_qio_limit(void)
{
	struct queue *q = qopen(8 * PGSIZE);
	struct block *b;
	int taken = 0;

	for (int i = 0; i < 10; i++) {
		b = block_alloc(PGSIZE);
		if (qbwrite_drop(q, b) == -ENOSPC) {
			block_free(b);
			continue;
		}
		taken++;
	}
	CHECK(taken == 7);	/* 7 x 4176 <= 32768 < 8 x 4176 */
	CHECK(qmem(q) == 7 * (size_t)(PGSIZE + 80) && qroom(q) == 8 * PGSIZE - qmem(q));
	qfree(q);
	check_quiet("after qio");
}

static const struct harness_test tests[] = {
	{ "aligned", test_aligned },
	{ "slab_return", test_slab_return },
	{ "cache_bound", test_cache_bound },
	{ "poison", test_poison },
	{ "panics", test_panics },
	{ "concurrent", test_concurrent },
	{ "blocks", test_blocks },
	{ "qio_limit", test_qio_limit },
};

int main(int argc, char **argv)
{
	shim_set_mem(16 << 20, 2);
	pages_init();
	total_free = pages_free_count();
	printf("    %zu pages managed, %zu free\n", pages_total(), total_free);
	return harness_run(&(struct harness){ tests, ARRAY_SIZE(tests), 60, NULL }, argc, argv);
}
