/*
 * appheap_test.c: run by tests/t/host-appheap (build/host/appheap{,-tsan,-asan}), on the
 * shared harness. Host test of kern/apps/appheap.c, an app run's heap: pthreads stand in
 * for a run's instances (app_current is each one's own), and app_abort, which ends an
 * instance in the kernel, jumps back to the subtest here with the reason. Checked: every
 * kind of heap bug is refused with its reason before the heap acts on it; blocks of every
 * size, allocated, grown and freed by four instances at once, never share a byte; what a
 * run leaves is counted (overruns too) and every page and record goes back at its end.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
/* No <string.h>: its strerror clashes with error.h's; kernel.h declares what we use. */

#include "kernel.h"
#include "app.h"
#include "harness.h"
#include "shim.h"

/* ---- the app side: an instance per pthread ---- */

struct app_inst {
	struct app_heap *heap;
	jmp_buf out;			/* where app_abort goes */
	char why[APP_WHY_MAX];		/* what it said */
};
static __thread struct app_inst *me;

struct app_inst *app_current(void) { return me; }
struct app_heap *app_inst_heap(struct app_inst *in) { return in->heap; }

void app_abort(const char *why)
{
	snprintf(me->why, sizeof(me->why), "%s", why);
	longjmp(me->out, 1);
}

static char *strstr_(const char *h, const char *n)
{
	size_t k = strlen(n);

	for (; *h; h++)
		if (!strncmp(h, n, k))
			return (char *)h;
	return NULL;
}

/* ---- heap bugs ---- */

static volatile int sink;
static char global_bytes[64];

static void dfree(void) { char *p = app_malloc(32); app_free(p); app_free(p); }
static void over24(void) { char *p = app_malloc(24); p[24] = 1; app_free(p); }
static void over_far(void) { char *p = app_malloc(100); p[110] = 1; app_free(p); }
static void over_large(void) { char *p = app_malloc(5000); p[5000] = 1; app_free(p); }
static void under(void) { char *p = app_malloc(40); p[-3] = 0; app_free(p); }
static void stack_ptr(void) { char b[64]; sink = b[0] = 1; app_free(b + 16); }
static void global_ptr(void) { app_free(global_bytes); }
static void wild_ptr(void) { app_free((void *)0x12345678); }
static void mid_ptr(void) { char *p = app_malloc(100); app_free(p + 8); }
static void large_dfree(void) { char *p = app_malloc(100000); app_free(p); app_free(p); }
static void realloc_stack(void) { char b[16]; sink = b[0] = 1; sink = (int)app_block_size(b); }
static void neighbour(void)	/* the audit's: a's overflow reaches b, freed first */
{
	char *a = app_malloc(24), *b = app_malloc(24);

	memset(a, 'A', 256);
	app_free(b);
}

static const struct {
	const char *name;
	void (*bug)(void);
	const char *why;	/* in the reason */
	size_t left;		/* blocks the run still held at its end */
} bugs[] = {
	{ "double free", dfree, "double free (a 32-byte block, freed already)", 0 },
	{ "one byte past", over24, "the 24-byte block was written past its end (at byte 24)", 1 },
	{ "past the class size", over_far, "100-byte block was written past its end (at byte 110)",
	  1 },
	{ "past a large block", over_large, "5000-byte block was written past its end (at byte "
	  "5000)", 1 },
	{ "before the start", under, "40-byte block was written before its start (at byte -3)", 1 },
	{ "a stack address", stack_ptr, "not a block malloc returned", 0 },
	{ "a global", global_ptr, "not a block malloc returned", 0 },
	{ "a wild pointer", wild_ptr, "free of 0x12345678: not a block malloc returned", 0 },
	{ "mid-block", mid_ptr, "not the start of a block (it is 8 bytes into the block at", 1 },
	{ "a large block twice", large_dfree, "not a block malloc returned", 0 },
	{ "realloc of the stack", realloc_stack, "realloc of", 0 },
	{ "into the next block", neighbour, "the 24-byte block was written before its start", 2 },
};

/* fn as this thread's instance in; true when it ended in app_abort (in->why says why) */
static bool ends(struct app_inst *in, void (*fn)(void))
{
	me = in;
	if (setjmp(in->out))
		return true;
	fn();
	return false;
}

static void test_bugs(void)
{
	long live0 = shim_live_allocs();

	for (size_t i = 0; i < ARRAY_SIZE(bugs); i++) {
		struct app_inst in = { .heap = app_heap_new() };
		struct app_heap_left left;

		if (!ends(&in, bugs[i].bug))
			FAIL("%s: the heap did not notice", bugs[i].name);
		else
			CHECKF(strstr_(in.why, bugs[i].why), "%s: said '%s', not '%s'", bugs[i].name,
			       in.why, bugs[i].why);
		app_heap_free(in.heap, &left);
		CHECKF(left.blocks == bugs[i].left, "%s: %zu blocks left, not %zu", bugs[i].name,
		       left.blocks, bugs[i].left);
		me = NULL;
	}
	CHECKF(shim_live_allocs() == live0, "%ld allocations left after the bugs' runs",
	       shim_live_allocs() - live0);
}

/* ---- what a run leaves ---- */

static void test_left(void)
{
	struct app_inst in = { .heap = app_heap_new() };
	struct app_heap_left left;
	long live0 = shim_live_allocs();
	char *p;

	me = &in;
	CHECK(!app_malloc((size_t)1 << 40));	/* too big: NULL, nothing taken */
	for (int i = 0; i < 300; i++)
		app_free(app_malloc((size_t)i * 37));
	app_free(NULL);
	CHECK(app_malloc(10) && app_malloc(3000) && app_malloc(0));
	p = app_malloc(7);
	p[7] = 'x';	/* never freed: found at the end */
	CHECK(app_block_size(p) == 7);
	me = NULL;
	app_heap_free(in.heap, &left);
	CHECKF(left.blocks == 4 && left.bytes == 3017 && left.overrun == 1,
	       "left %zu blocks, %zu bytes, %zu overrun; want 4, 3017, 1", left.blocks,
	       left.bytes, left.overrun);
	/* every chunk, record and the heap itself (allocated before live0) gone */
	CHECKF(shim_live_allocs() == live0 - 1, "%ld allocations left",
	       shim_live_allocs() - (live0 - 1));
}

/* ---- four instances of one run at once ---- */

#define CHURN_BLOCKS	48

static struct app_heap *shared;

static unsigned churn_next;	/* seeds: each instance its own sequence */

/* One instance's rounds: each block holds its own tag, checked before every change. */
static void churn_rounds(void)
{
	unsigned seed = __atomic_add_fetch(&churn_next, 7919u, __ATOMIC_RELAXED);
	unsigned rounds = harness_quick ? 3000 : 30000;
	unsigned char *b[CHURN_BLOCKS] = { 0 }, tag[CHURN_BLOCKS] = { 0 };
	size_t len[CHURN_BLOCKS] = { 0 };

	for (unsigned r = 0; r < rounds; r++) {
		int i = (int)((seed = seed * 1103515245u + 12345u) >> 8) % CHURN_BLOCKS;
		size_t n = (seed >> 4) % ((seed & 3) ? 2100 : 9000);

		for (size_t k = 0; k < len[i]; k++)
			if (b[i][k] != tag[i]) {
				FAIL("churn: block %d changed at byte %zu", i, k);
				return;
			}
		if (len[i] && app_block_size(b[i]) != len[i])
			FAIL("churn: the heap says %zu bytes, not %zu", app_block_size(b[i]), len[i]);
		app_free(b[i]);
		if (!(b[i] = app_malloc(n))) {
			FAIL("churn: malloc(%zu) failed", n);
			return;
		}
		tag[i] = (unsigned char)(seed >> 16);
		memset(b[i], tag[i], n);
		len[i] = n;
	}
	for (int i = 0; i < CHURN_BLOCKS / 2; i++)
		app_free(b[i]);		/* the other half is left for the run's end */
}

static void *churn(void *arg)
{
	struct app_inst in = { .heap = shared };

	(void)arg;
	if (ends(&in, churn_rounds))
		FAIL("churn: the heap refused a good pointer: %s", in.why);
	return NULL;
}

static void test_threads(void)
{
	pthread_t t[4];
	struct app_heap_left left;
	long live0 = shim_live_allocs();

	shared = app_heap_new();
	for (uintptr_t i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, churn, (void *)i);
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	app_heap_free(shared, &left);
	CHECKF(left.blocks == 4 * CHURN_BLOCKS / 2 && !left.overrun,
	       "left %zu blocks (%zu overrun), want %d", left.blocks, left.overrun,
	       4 * CHURN_BLOCKS / 2);
	CHECKF(shim_live_allocs() == live0, "%ld allocations left", shim_live_allocs() - live0);
}

static const struct harness_test tests[] = {
	{ "bugs", test_bugs },
	{ "left", test_left },
	{ "threads", test_threads },
};

int main(int argc, char **argv)
{
	return harness_run(&(struct harness){ tests, ARRAY_SIZE(tests), 120, NULL }, argc, argv);
}
