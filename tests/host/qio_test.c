/*
 * qio_test.c: run by tests/t/host-qio (build/host/qio{,-tsan,-asan}), on the shared harness.
 * Host tests of kern/src/io/block.c and kern/src/io/qio.c under pthreads (plain, TSan, ASan).
 * The shared harness (harness.h) prints "PASS name" or "FAIL name" per subtest; the exit
 * status is non-zero when one failed. After every subtest no block and no kmalloc may be
 * left. An argument runs only the subtest of that name.
 *
 * <string.h> is not included: its strerror clashes with error.h's; kernel.h declares the
 * string functions used here.
 *
 * The stress subtest tags every record with its producer and sequence number, so the
 * reader can check that each record written (and not refused) arrives exactly once and
 * in each producer's order, as the profiler's reader needs of its output queue.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kernel.h"
#include "block.h"
#include "error.h"
#include "qio.h"
#include "shim.h"
#include "harness.h"
#include "thread.h"


/* A block of size bytes holding n bytes of data (n <= size). */
static struct block *mkblock(size_t size, size_t n, uint8_t fill)
{
	struct block *b = block_alloc(size);

	if (!b)
		abort();
	memset(b->wp, fill, n);
	b->wp += n;
	return b;
}

static void msleep(int ms)
{
	usleep((useconds_t)ms * 1000);
}

static pthread_t spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	if (pthread_create(&t, NULL, fn, arg))
		abort();
	return t;
}

/* ---- single-threaded behaviour ---- */

static void test_block(void)
{
	struct block *b = block_alloc(100);

	CHECK(b && BLEN(b) == 0 && BALLOC(b) == 100 && BFREE(b) == 100);
	CHECK(BMEM(b) == block_mem_of(100) && BMEM(b) > 100);
	b->wp += 40;
	b->rp += 10;
	CHECK(BLEN(b) == 30 && BFREE(b) == 60);
	block_reset(b);
	CHECK(BLEN(b) == 0 && BFREE(b) == 100);
	CHECK(block_count() == 1 && block_bytes() == 100 && block_mem() == BMEM(b));
	block_free(b);
	block_free(NULL);
}

/* Blocks come out whole and in order; the counts follow every verb. */
static void test_basic(void)
{
	struct queue *q = qopen(1 << 20);
	struct block *b;

	CHECK(q && qget(q) == NULL && qlen(q) == 0 && qblocks(q) == 0 && qmem(q) == 0);
	for (int i = 0; i < 5; i++)
		CHECK(qbwrite_drop(q, mkblock(64, (size_t)i + 1, (uint8_t)i)) == i + 1);
	CHECK(qblocks(q) == 5 && qlen(q) == 15 && qmem(q) == 5 * block_mem_of(64));
	for (int i = 0; i < 5; i++) {
		b = qget(q);
		CHECK(b && BLEN(b) == (size_t)i + 1 && b->rp[0] == i);
		block_free(b);
	}
	CHECK(qget(q) == NULL && qlen(q) == 0 && qblocks(q) == 0 && qmem(q) == 0);
	qfree(q);
}

/*
 * The limit is on memory (BMEM: header and rounding included), not data and not buffer
 * size: partly filled blocks count whole, and a block whose buffer fits the room but whose
 * memory does not is refused. A refused block stays with the caller; qiwrite_block ignores
 * the limit; qsetlimit moves it.
 */
static void test_limit(void)
{
	size_t m = block_mem_of(100), m200 = block_mem_of(200);
	struct queue *q = qopen(3 * m);
	struct block *b = mkblock(100, 1, 0);

	CHECK(qlimit(q) == 3 * m && qroom(q) == 3 * m);
	for (int i = 0; i < 3; i++)
		CHECK(qbwrite_drop(q, mkblock(100, 1, 0)) == 1);
	CHECK(qmem(q) == 3 * m && qlen(q) == 3 && qroom(q) == 0);
	CHECK(qbwrite_drop(q, b) == -ENOSPC);
	CHECK(BLEN(b) == 1 && qblocks(q) == 3);	/* still ours, untouched */
	CHECK(qiwrite_block(q, b) == 1 && qmem(q) == 4 * m && qroom(q) == 0);
	qsetlimit(q, 4 * m + m200);
	CHECK(qroom(q) == m200);
	CHECK(qbwrite_drop(q, mkblock(200, 10, 0)) == 10 && qroom(q) == 0);
	b = mkblock(8, 1, 0);
	CHECK(qbwrite_drop(q, b) == -ENOSPC);
	block_free(b);
	qfree(q);

	/* room for the buffer but not for the block's real memory: refused */
	q = qopen(m - 1);
	b = mkblock(100, 1, 0);
	CHECK(qroom(q) >= BALLOC(b) && qbwrite_drop(q, b) == -ENOSPC && qmem(q) == 0);
	block_free(b);
	qfree(q);
}

/* A block put back is the next one read, also after a hang-up (it was queued before). */
static void test_putback(void)
{
	struct queue *q = qopen(1 << 20);
	struct block *a = mkblock(16, 4, 'a'), *b = mkblock(16, 4, 'b'), *c;

	qbwrite_drop(q, a);
	qbwrite_drop(q, b);
	c = qget(q);
	CHECK(c == a);
	c->rp += 2;		/* half read */
	CHECK(qputback(q, c) == 2 && qblocks(q) == 2 && qlen(q) == 6);
	CHECK(qget(q) == a && a->rp[0] == 'a');
	qhangup(q);
	CHECK(qputback(q, a) == 2 && qget(q) == a && qget(q) == b && qget(q) == NULL);
	CHECK(qputback(q, a) == 2);	/* into an empty queue: head and tail */
	CHECK(qbwrite_drop(q, b) == -EPIPE);
	qreopen(q);
	CHECK(qbwrite_drop(q, b) == 4 && qget(q) == a && qget(q) == b && qget(q) == NULL);
	block_free(a);
	block_free(b);
	qfree(q);
}

/* ---- blocking reads: hang-up, interrupts ---- */

struct reader {
	struct queue *q;
	struct thread *self;	/* for thread_interrupt */
	int ready;		/* set before the first read */
	int rc;			/* qbread_intr's last result */
	size_t got;		/* bytes received before it */
};

static void *read_to_end(void *arg)
{
	struct reader *r = arg;
	struct block *b;

	r->self = current();
	__atomic_store_n(&r->ready, 1, __ATOMIC_RELEASE);
	while ((r->rc = qbread_intr(r->q, &b)) > 0) {
		r->got += BLEN(b);
		block_free(b);
	}
	return NULL;
}

static void wait_ready(struct reader *r)
{
	while (!__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE))
		sched_yield();
}

/* A sleeping reader gets what was queued, then end of file at hang-up, not before. */
static void test_hangup(void)
{
	struct reader r = { .q = qopen(1 << 20) };
	pthread_t t = spawn(read_to_end, &r);

	wait_ready(&r);
	msleep(20);		/* asleep on an empty queue */
	qbwrite_drop(r.q, mkblock(32, 10, 0));
	msleep(20);
	qbwrite_drop(r.q, mkblock(32, 20, 0));
	qhangup(r.q);
	pthread_join(t, NULL);
	CHECK(r.rc == 0 && r.got == 30);
	{	/* a write after hang-up fails */
		struct block *b = mkblock(8, 1, 0);

		CHECK(qbwrite_drop(r.q, b) == -EPIPE && qiwrite_block(r.q, b) == -EPIPE);
		block_free(b);
	}
	qfree(r.q);
}

/* Ctrl-C gets a reader out of an empty queue with -EINTR; data wins over the interrupt. */
static void test_interrupt(void)
{
	struct reader r = { .q = qopen(1 << 20) };
	pthread_t t = spawn(read_to_end, &r);

	wait_ready(&r);
	qbwrite_drop(r.q, mkblock(32, 7, 0));
	msleep(20);
	thread_interrupt(r.self);
	pthread_join(t, NULL);
	CHECK(r.rc == -EINTR && r.got == 7);
	qfree(r.q);
}

/* ---- many producers, one reader ---- */

#define NPROD	4

struct stress {
	struct queue *q;
	uint32_t nrec;			/* records per producer */
	uint64_t sent[NPROD];		/* records queued (not refused) */
	uint64_t recv[NPROD];		/* records the reader took */
	uint32_t last[NPROD];		/* reader: last sequence number per producer */
	int reader_done;
};

struct prod_arg {
	struct stress *s;
	int id;
};

/* One record per block: producer id and sequence number; half the writers ignore the limit. */
static void *producer(void *arg)
{
	struct prod_arg *a = arg;
	struct stress *s = a->s;

	for (uint32_t seq = 1; seq <= s->nrec; seq++) {
		struct block *b = block_alloc(64);
		uint32_t rec[2] = { (uint32_t)a->id, seq };
		long r;

		if (!b)
			abort();
		memcpy(b->wp, rec, sizeof(rec));
		b->wp += sizeof(rec);
		r = (seq & 1) ? qbwrite_drop(s->q, b) : qiwrite_block(s->q, b);
		if (r < 0) {
			CHECK(r == -ENOSPC && (seq & 1));
			block_free(b);
		} else {
			s->sent[a->id]++;
		}
		if ((seq & 255) == 0)
			sched_yield();
	}
	return NULL;
}

static void *stress_reader(void *arg)
{
	struct stress *s = arg;
	struct block *b;
	int rc;

	while ((rc = qbread_intr(s->q, &b)) > 0) {
		uint32_t rec[2];

		CHECK(BLEN(b) == sizeof(rec));
		memcpy(rec, b->rp, sizeof(rec));
		if (rec[0] < NPROD) {
			CHECK(rec[1] > s->last[rec[0]]);	/* each producer's order */
			s->last[rec[0]] = rec[1];
			s->recv[rec[0]]++;
		}
		block_free(b);
	}
	CHECK(rc == 0);
	__atomic_store_n(&s->reader_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_stress(void)
{
	struct stress s = { .q = qopen(16 * 64), .nrec = 20000 };
	struct prod_arg pa[NPROD];
	pthread_t prod[NPROD], rt = spawn(stress_reader, &s);

	for (int i = 0; i < NPROD; i++) {
		pa[i] = (struct prod_arg){ &s, i };
		prod[i] = spawn(producer, &pa[i]);
	}
	for (int i = 0; i < NPROD; i++)
		pthread_join(prod[i], NULL);
	qhangup(s.q);
	pthread_join(rt, NULL);
	for (int i = 0; i < NPROD; i++) {
		CHECK(s.recv[i] == s.sent[i]);
		CHECK(s.sent[i] >= s.nrec / 2);	/* qiwrite_block never refuses */
	}
	CHECK(qblocks(s.q) == 0 && qmem(s.q) == 0);
	qfree(s.q);
}

/* ---- runner ---- */

static const struct harness_test tests[] = {
	{ "block", test_block },
	{ "basic", test_basic },
	{ "limit_is_memory", test_limit },
	{ "putback", test_putback },
	{ "hangup", test_hangup },
	{ "interrupt", test_interrupt },
	{ "stress", test_stress },
};

static long allocs_before;	/* shim_live_allocs() before the subtest */

/* After every subtest: no block and no allocation left behind. */
static void no_leaks(void)
{
	CHECK(block_count() == 0 && block_bytes() == 0 && block_mem() == 0);
	CHECK(shim_live_allocs() == allocs_before);
	allocs_before = shim_live_allocs();
}

int main(int argc, char **argv)
{
	allocs_before = shim_live_allocs();
	return harness_run(&(struct harness){ tests, ARRAY_SIZE(tests), 60, no_leaks }, argc, argv);
}
