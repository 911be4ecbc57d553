/*
 * Host tests of kern/src/io/block.c and kern/src/io/qio.c under pthreads (plain, TSan, ASan).
 * Each subtest prints "PASS name" or "FAIL name"; the exit status is the number of failures
 * (capped). After every subtest the runner checks that no block and no kmalloc leaked.
 * An argument runs only the subtest of that name.
 *
 * <string.h> is not included: its strerror clashes with error.h's; kernel.h declares the
 * string functions used here.
 *
 * The stress subtests tag every record with its producer and sequence number, so the
 * readers can check that each record written (and not counted dropped) arrives exactly
 * once, and that each reader sees every producer's records in order.
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

static int check_fails;	/* failed CHECKs in the running subtest (any thread) */

#define CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "    check failed: %s (%s:%d)\n", #c, __FILE__, __LINE__); \
		__atomic_add_fetch(&check_fails, 1, __ATOMIC_RELAXED); \
	} \
} while (0)

static struct block *mkblock(const void *data, size_t n)
{
	struct block *b = block_alloc(n);

	if (!b)
		abort();
	memcpy(b->wp, data, n);
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

static void test_basic(void)
{
	struct queue *q = qopen(1024, 0);
	char buf[32];

	CHECK(qlen(q) == 0 && qblocks(q) == 0 && qlimit(q) == 1024 && !qfull(q));
	CHECK(qwrite(q, "hello, ", 7) == 7);
	CHECK(qbwrite(q, mkblock("world", 5)) == 5);
	CHECK(qlen(q) == 12 && qblocks(q) == 2);
	CHECK(qread(q, buf, 3) == 3 && memcmp(buf, "hel", 3) == 0);
	CHECK(qlen(q) == 9 && qblocks(q) == 2);
	CHECK(qread(q, buf, sizeof(buf)) == 9 && memcmp(buf, "lo, world", 9) == 0);
	CHECK(qlen(q) == 0 && qblocks(q) == 0);
	CHECK(qread(q, buf, 0) == 0);
	CHECK(qget(q) == NULL && qget_tail(q) == NULL);

	/* an empty block is delivered whole by qbread and skipped by qread */
	CHECK(qbwrite(q, block_alloc(8)) == 0);
	CHECK(qwrite(q, "xy", 2) == 2);
	CHECK(qread(q, buf, sizeof(buf)) == 2 && memcmp(buf, "xy", 2) == 0);
	CHECK(qblocks(q) == 0);
	CHECK(qbwrite(q, block_alloc(8)) == 0);
	struct block *b = qbread(q);
	CHECK(b && BLEN(b) == 0 && BALLOC(b) == 8);
	block_free(b);
	CHECK(qwrite(q, "abc", 3) == 3);
	qfree(q);			/* frees the queued block too */
}

static void test_block(void)
{
	uint64_t n0 = block_count(), b0 = block_bytes();
	struct block *a = block_alloc(100), *b = block_alloc(0), *c = block_alloc(7);

	CHECK(a && b && c);
	CHECK(block_count() == n0 + 3 && block_bytes() == b0 + 107);
	CHECK(((uintptr_t)a->base & 7) == 0 && ((uintptr_t)c->base & 7) == 0);
	CHECK(a->rp == a->base && a->wp == a->base && BALLOC(a) == 100 && BFREE(a) == 100);
	CHECK(BALLOC(b) == 0 && BLEN(b) == 0);
	memset(a->wp, 0x5a, 100);	/* the whole buffer is usable (ASan checks) */
	a->wp += 100;
	a->rp += 10;
	CHECK(BLEN(a) == 90 && BFREE(a) == 0);
	block_reset(a);
	CHECK(BLEN(a) == 0 && BFREE(a) == 100);
	a->next = b;
	b->next = c;
	block_free_list(a);
	block_free(NULL);
	CHECK(block_count() == n0 && block_bytes() == b0);
}

/* qbwrite_drop over the limit returns -ENOSPC and leaves the block with the caller. */
static void test_drop(void)
{
	struct queue *q = qopen(100, 0);
	uint8_t pat[64];
	struct block *b;

	memset(pat, 0xab, sizeof(pat));
	CHECK(qbwrite_drop(q, mkblock(pat, 64)) == 64);
	CHECK(!qfull(q));
	CHECK(qbwrite_drop(q, mkblock(pat, 64)) == 64);	/* 64 < 100: allowed, now over */
	CHECK(qfull(q) && qlen(q) == 128);
	b = mkblock(pat, 64);
	CHECK(qbwrite_drop(q, b) == -ENOSPC);
	CHECK(BLEN(b) == 64 && b->rp[0] == 0xab && b->rp[63] == 0xab);	/* still ours */
	b->wp[-1] = 1;		/* and writable */
	CHECK(qlen(q) == 128 && qblocks(q) == 2);
	CHECK(qiwrite_block(q, b) == 64);	/* the interrupt writer ignores the limit */
	CHECK(qlen(q) == 192 && qblocks(q) == 3);
	b = qget(q);
	CHECK(b && BLEN(b) == 64);
	block_free(b);
	b = mkblock(pat, 10);
	CHECK(qbwrite_drop(q, b) == -ENOSPC);	/* 128 >= 100 */
	block_free(b);
	CHECK(qlen(q) == 128);
	block_free(qget(q));
	CHECK(qlen(q) == 64 && !qfull(q));
	b = mkblock(pat, 10);
	CHECK(qbwrite_drop(q, b) == 10);
	qfree(q);
}

/* qget_tail takes the newest block but never one qread has begun. */
static void test_get_tail(void)
{
	struct queue *q = qopen(1 << 20, 0);
	struct block *b;
	char buf[8];

	qbwrite(q, mkblock("aaaa", 4));
	qbwrite(q, mkblock("bbbb", 4));
	qbwrite(q, mkblock("cccc", 4));
	b = qget_tail(q);
	CHECK(b && memcmp(b->rp, "cccc", 4) == 0);
	block_free(b);
	CHECK(qlen(q) == 8 && qblocks(q) == 2);
	CHECK(qread(q, buf, 2) == 2 && memcmp(buf, "aa", 2) == 0);	/* head begun */
	b = qget_tail(q);		/* the tail is not the begun head: fine */
	CHECK(b && memcmp(b->rp, "bbbb", 4) == 0);
	block_free(b);
	CHECK(qget_tail(q) == NULL);	/* only the begun head is left */
	CHECK(qlen(q) == 2 && qblocks(q) == 1);
	qbwrite(q, mkblock("dddd", 4));
	b = qget_tail(q);
	CHECK(b && memcmp(b->rp, "dddd", 4) == 0);
	block_free(b);
	CHECK(qget_tail(q) == NULL);
	CHECK(qread(q, buf, sizeof(buf)) == 2 && memcmp(buf, "aa", 2) == 0);
	qbwrite(q, mkblock("eeee", 4));	/* a fresh head is not begun */
	b = qget_tail(q);
	CHECK(b && memcmp(b->rp, "eeee", 4) == 0);
	block_free(b);
	CHECK(qblocks(q) == 0 && qlen(q) == 0);

	/* qbread hands out the rest of a begun block, and the next head is fresh */
	qbwrite(q, mkblock("ffff", 4));
	qbwrite(q, mkblock("gggg", 4));
	CHECK(qread(q, buf, 1) == 1);
	b = qbread(q);
	CHECK(b && BLEN(b) == 3 && memcmp(b->rp, "fff", 3) == 0);
	block_free(b);
	b = qget_tail(q);
	CHECK(b && memcmp(b->rp, "gggg", 4) == 0);
	block_free(b);
	qfree(q);
}

static void test_noblock(void)
{
	struct queue *q = qopen(8, Q_NOBLOCK);
	struct block *b;
	char buf[16];
	long r;

	CHECK(qread(q, buf, sizeof(buf)) == -EAGAIN);
	CHECK(qread_intr(q, buf, sizeof(buf)) == -EAGAIN);
	CHECK(qbread(q) == NULL);
	CHECK(qbwrite(q, mkblock("12345678", 8)) == 8);
	b = mkblock("x", 1);
	r = qbwrite(q, b);
	CHECK(r == -ENOSPC);		/* acts like qbwrite_drop */
	if (r >= 0)
		b = mkblock("x", 1);	/* the queue took it: keep the test going safely */
	CHECK(qwrite(q, "y", 1) == -ENOSPC);
	CHECK(qread(q, buf, sizeof(buf)) == 8);
	CHECK(qbwrite(q, b) == 1);
	qhangup(q);
	CHECK(qread(q, buf, sizeof(buf)) == 1);
	CHECK(qread(q, buf, sizeof(buf)) == 0);	/* end of file wins over -EAGAIN */
	qfree(q);
}

/* ---- hang-up ---- */

struct reader_arg {
	struct queue *q;
	long total;		/* bytes read before end of file */
	long last;		/* last qread result */
	int blocks;		/* qbread: blocks before NULL */
};

static void *read_to_eof(void *arg)
{
	struct reader_arg *a = arg;
	char buf[5];
	long n;

	while ((n = qread(a->q, buf, sizeof(buf))) > 0)
		a->total += n;
	a->last = n;
	return NULL;
}

static void *bread_to_eof(void *arg)
{
	struct reader_arg *a = arg;
	struct block *b;

	while ((b = qbread(a->q))) {
		a->total += (long)BLEN(b);
		a->blocks++;
		block_free(b);
	}
	return NULL;
}

struct writer_arg {
	struct queue *q;
	struct block *b;
	long ret;
};

static void *bwrite_one(void *arg)
{
	struct writer_arg *a = arg;

	a->ret = qbwrite(a->q, a->b);
	return NULL;
}

static void test_hangup(void)
{
	struct queue *q = qopen(16, 0);
	struct reader_arg ra = { .q = q }, rb = { .q = q };
	struct writer_arg wa;
	struct block *b;
	pthread_t t, u;

	/* readers asleep on an empty queue wake at hang-up and see end of file */
	t = spawn(read_to_eof, &ra);
	u = spawn(bread_to_eof, &rb);
	msleep(30);
	qhangup(q);
	pthread_join(t, NULL);
	pthread_join(u, NULL);
	CHECK(ra.total == 0 && ra.last == 0 && rb.blocks == 0);
	CHECK(qhungup(q));

	/* writes after hang-up fail with -EPIPE and the caller keeps the block */
	b = mkblock("late", 4);
	CHECK(qbwrite(q, b) == -EPIPE);
	CHECK(qbwrite_drop(q, b) == -EPIPE);
	CHECK(qiwrite_block(q, b) == -EPIPE);
	CHECK(qwrite(q, "late", 4) == -EPIPE);
	CHECK(memcmp(b->rp, "late", 4) == 0);
	block_free(b);
	CHECK(qlen(q) == 0);

	/* queued data is drained before end of file */
	qreopen(q);
	CHECK(!qhungup(q));
	CHECK(qwrite(q, "0123456789abcdef", 16) == 16);
	CHECK(qiwrite_block(q, mkblock("XYZ", 3)) == 3);
	qhangup(q);
	ra = (struct reader_arg){ .q = q };
	t = spawn(read_to_eof, &ra);
	pthread_join(t, NULL);
	CHECK(ra.total == 19 && ra.last == 0);

	/* a writer asleep on a full queue wakes at hang-up with -EPIPE */
	qreopen(q);
	CHECK(qwrite(q, "0123456789abcdef", 16) == 16 && qfull(q));
	wa = (struct writer_arg){ .q = q, .b = mkblock("w", 1) };
	t = spawn(bwrite_one, &wa);
	msleep(30);
	qhangup(q);
	pthread_join(t, NULL);
	CHECK(wa.ret == -EPIPE);
	block_free(wa.b);

	/* a reader asleep drains what a writer queues just before the hang-up */
	qflush(q);
	qreopen(q);
	ra = (struct reader_arg){ .q = q };
	t = spawn(read_to_eof, &ra);
	msleep(20);
	CHECK(qwrite(q, "abcdefgh", 8) == 8);
	qhangup(q);
	pthread_join(t, NULL);
	CHECK(ra.total == 8 && ra.last == 0);
	qfree(q);
}

/* ---- limits, flush, reopen ---- */

static void test_limit_flush(void)
{
	struct queue *q = qopen(8, 0);
	struct writer_arg wa;
	pthread_t t;
	char buf[32];

	CHECK(qwrite(q, "01234567", 8) == 8 && qfull(q));
	/* raising the limit lets a sleeping writer in */
	wa = (struct writer_arg){ .q = q, .b = mkblock("AB", 2) };
	t = spawn(bwrite_one, &wa);
	msleep(30);
	CHECK(qlen(q) == 8);		/* still asleep */
	qsetlimit(q, 64);
	pthread_join(t, NULL);
	CHECK(wa.ret == 2 && qlen(q) == 10 && qlimit(q) == 64 && !qfull(q));

	/* lowering it makes the queue full; qflush empties it and wakes the writer */
	qsetlimit(q, 4);
	CHECK(qfull(q));
	wa = (struct writer_arg){ .q = q, .b = mkblock("CD", 2) };
	t = spawn(bwrite_one, &wa);
	msleep(30);
	CHECK(qlen(q) == 10 && qblocks(q) == 2);
	qflush(q);
	pthread_join(t, NULL);
	CHECK(wa.ret == 2 && qlen(q) == 2 && qblocks(q) == 1);
	CHECK(qread(q, buf, sizeof(buf)) == 2 && memcmp(buf, "CD", 2) == 0);

	/* a reader draining below the limit wakes the writer */
	CHECK(qwrite(q, "wxyz", 4) == 4 && qfull(q));
	wa = (struct writer_arg){ .q = q, .b = mkblock("EF", 2) };
	t = spawn(bwrite_one, &wa);
	msleep(30);
	CHECK(qlen(q) == 4);
	CHECK(qread(q, buf, 1) == 1);
	pthread_join(t, NULL);
	CHECK(wa.ret == 2 && qlen(q) == 5);

	/* hang-up, reopen: data kept, writes work again */
	qhangup(q);
	CHECK(qwrite(q, "no", 2) == -EPIPE);
	qreopen(q);
	qsetlimit(q, 100);
	CHECK(qwrite(q, "yes", 3) == 3);
	CHECK(qread(q, buf, sizeof(buf)) == 8 && memcmp(buf, "xyzEFyes", 8) == 0);
	qflush(q);			/* flushing an empty queue is fine */
	CHECK(qwrite(q, "tail", 4) == 4);
	qflush(q);
	CHECK(qlen(q) == 0 && qblocks(q) == 0 && qget(q) == NULL);
	qfree(q);
}

/* ---- qwrite/qread of a long stream through a small queue ---- */

#define STREAM_BYTES	(300 * 1000)

static uint8_t stream_byte(size_t i)
{
	return (uint8_t)(i * 7 + (i >> 9));
}

static void *stream_writer(void *arg)
{
	struct queue *q = arg;
	uint8_t buf[5000];
	size_t off = 0;

	while (off < STREAM_BYTES) {
		size_t n = MIN(sizeof(buf) - off % 3, (size_t)STREAM_BYTES - off);

		if (off % 4 == 0)	/* some writes bigger than qwrite's chunk */
			n = MIN((size_t)40000, (size_t)STREAM_BYTES - off);
		uint8_t *p = n > sizeof(buf) ? malloc(n) : buf;
		for (size_t i = 0; i < n; i++)
			p[i] = stream_byte(off + i);
		CHECK(qwrite(q, p, n) == (long)n);
		if (p != buf)
			free(p);
		off += n;
	}
	qhangup(q);
	return NULL;
}

static void test_stream(void)
{
	struct queue *q = qopen(4096, 0);
	pthread_t t = spawn(stream_writer, q);
	uint8_t buf[999];
	size_t off = 0, bad = 0;
	long n;

	while ((n = qread_intr(q, buf, sizeof(buf))) > 0) {
		for (long i = 0; i < n; i++)
			bad += buf[i] != stream_byte(off + (size_t)i);
		off += (size_t)n;
	}
	pthread_join(t, NULL);
	CHECK(n == 0 && off == STREAM_BYTES && bad == 0);
	qfree(q);
}

/* ---- many producers, one or more readers ---- */

#define NPROD		8
#define REC_MAX		4	/* records per block: 1..REC_MAX */

enum pmode { P_BWRITE, P_DROP, P_IWRITE };

struct rec {
	uint32_t prod;
	uint32_t seq;
	uint64_t check;
};

static uint64_t rec_check(uint32_t prod, uint32_t seq)
{
	return ((uint64_t)prod << 40 ^ seq) * 0x9e3779b97f4a7c15ull;
}

struct stress {
	struct queue *q;
	uint32_t nrec;			/* records per producer */
	uint8_t *seen[NPROD];		/* [seq]: times delivered */
	uint32_t dropped[NPROD];	/* records in blocks qbwrite_drop refused */
	int bad;			/* corrupt, foreign or out-of-order records */
	int begun_stolen;		/* qget_tail returned a block a reader had begun */
	long stolen;			/* records taken by qget_tail */
	bool stop;			/* tells the stealer to finish */
};

struct prod_arg {
	struct stress *s;
	int id;
	enum pmode mode;
};

static struct block *rec_block(int id, uint32_t seq, uint32_t n)
{
	struct block *b = block_alloc(n * sizeof(struct rec));

	if (!b)
		abort();
	for (uint32_t i = 0; i < n; i++) {
		struct rec r = { (uint32_t)id, seq + i, rec_check((uint32_t)id, seq + i) };

		memcpy(b->wp, &r, sizeof(r));
		b->wp += sizeof(r);
	}
	b->stamp = (uintptr_t)b->rp;	/* where reading starts, for the stealer's check */
	return b;
}

static long prod_write(struct prod_arg *a, struct block *b, uint32_t n)
{
	long r;

	switch (a->mode) {
	case P_BWRITE:
		return qbwrite(a->s->q, b);
	case P_IWRITE:
		return qiwrite_block(a->s->q, b);
	case P_DROP:
		r = qbwrite_drop(a->s->q, b);
		if (r == -ENOSPC) {
			a->s->dropped[a->id] += n;
			block_free(b);
			sched_yield();
		}
		return r == -ENOSPC ? 0 : r;
	}
	return -EINVAL;
}

static void *producer(void *arg)
{
	struct prod_arg *a = arg;
	uint32_t seq = 0;

	shim_set_core(a->id);
	while (seq < a->s->nrec) {
		uint32_t n = MIN(1 + seq % REC_MAX, a->s->nrec - seq);
		long r = prod_write(a, rec_block(a->id, seq, n), n);

		CHECK(r >= 0);
		if (r < 0)
			break;
		seq += n;
		if (a->mode == P_IWRITE && seq % 64 == 0)
			sched_yield();	/* it ignores the limit: let the queue drain */
	}
	return NULL;
}

/*
 * Account one record; last[] is this reader's last seq per producer (order check), NULL
 * for the stealer (qget_tail takes the newest block, so it may go back in sequence).
 */
static void take_rec(struct stress *s, const uint8_t *p, int64_t *last)
{
	struct rec r;

	memcpy(&r, p, sizeof(r));
	if (r.prod >= NPROD || r.seq >= s->nrec || r.check != rec_check(r.prod, r.seq) ||
	    (last && (int64_t)r.seq <= last[r.prod])) {
		__atomic_add_fetch(&s->bad, 1, __ATOMIC_RELAXED);
		return;
	}
	if (last)
		last[r.prod] = r.seq;
	__atomic_add_fetch(&s->seen[r.prod][r.seq], 1, __ATOMIC_RELAXED);
}

enum rmode { R_READ, R_READ_INTR, R_BREAD };

struct cons_arg {
	struct stress *s;
	enum rmode mode;
	long recs;
};

static void *consumer(void *arg)
{
	struct cons_arg *c = arg;
	uint8_t buf[7 * sizeof(struct rec)];	/* record multiple, not a block multiple */
	int64_t last[NPROD];
	struct block *b;
	long n;

	for (int i = 0; i < NPROD; i++)
		last[i] = -1;
	for (;;) {
		if (c->mode == R_BREAD) {
			if (!(b = qbread(c->s->q)))
				break;
			CHECK(BLEN(b) % sizeof(struct rec) == 0);
			for (uint8_t *p = b->rp; p < b->wp; p += sizeof(struct rec)) {
				take_rec(c->s, p, last);
				c->recs++;
			}
			block_free(b);
			continue;
		}
		n = c->mode == R_READ ? qread(c->s->q, buf, sizeof(buf)) :
			qread_intr(c->s->q, buf, sizeof(buf));
		CHECK(n >= 0 && n % sizeof(struct rec) == 0);
		if (n <= 0)
			break;
		for (long i = 0; i < n; i += sizeof(struct rec)) {
			take_rec(c->s, buf + i, last);
			c->recs++;
		}
	}
	return NULL;
}

/* Like a profiler dropping the newest block: qget_tail now and then, while readers read. */
static void *stealer(void *arg)
{
	struct stress *s = arg;
	struct block *b;

	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		if ((b = qget_tail(s->q))) {
			if ((uintptr_t)b->rp != b->stamp)
				s->begun_stolen++;
			for (uint8_t *p = b->rp; p < b->wp; p += sizeof(struct rec)) {
				take_rec(s, p, NULL);
				s->stolen++;
			}
			block_free(b);
		}
		usleep(50);
	}
	return NULL;
}

static void stress_verify(struct stress *s, const struct prod_arg *pa)
{
	CHECK(s->bad == 0);
	for (int p = 0; p < NPROD; p++) {
		uint32_t once = 0, more = 0;

		for (uint32_t i = 0; i < s->nrec; i++) {
			once += s->seen[p][i] == 1;
			more += s->seen[p][i] > 1;
		}
		CHECK(more == 0);
		CHECK(once + s->dropped[p] == s->nrec);
		if (pa[p].mode != P_DROP)
			CHECK(s->dropped[p] == 0);
	}
}

static void stress_run(uint32_t nrec, size_t limit, const enum rmode *rmodes, int nread,
		       bool steal)
{
	struct stress s = { .q = qopen(limit, 0), .nrec = nrec };
	struct prod_arg pa[NPROD];
	struct cons_arg ca[4];
	pthread_t pt[NPROD], ct[4], st = 0;
	long total = 0, dropped = 0;

	for (int p = 0; p < NPROD; p++) {
		s.seen[p] = calloc(nrec, 1);
		pa[p] = (struct prod_arg){ &s, p, p < 4 ? P_BWRITE : p < 6 ? P_DROP : P_IWRITE };
	}
	for (int r = 0; r < nread; r++) {
		ca[r] = (struct cons_arg){ &s, rmodes[r], 0 };
		ct[r] = spawn(consumer, &ca[r]);
	}
	if (steal)
		st = spawn(stealer, &s);
	for (int p = 0; p < NPROD; p++)
		pt[p] = spawn(producer, &pa[p]);
	for (int p = 0; p < NPROD; p++)
		pthread_join(pt[p], NULL);
	qhangup(s.q);
	for (int r = 0; r < nread; r++) {
		pthread_join(ct[r], NULL);
		total += ca[r].recs;
	}
	if (steal) {
		__atomic_store_n(&s.stop, true, __ATOMIC_RELAXED);
		pthread_join(st, NULL);
	}
	CHECK(s.begun_stolen == 0);
	stress_verify(&s, pa);
	for (int p = 0; p < NPROD; p++) {
		dropped += s.dropped[p];
		free(s.seen[p]);
	}
	CHECK(total + s.stolen + dropped == (long)nrec * NPROD);
	CHECK(qlen(s.q) == 0 && qblocks(s.q) == 0);
	printf("    %d reader(s): %ld records read, %ld taken by qget_tail, %ld dropped\n",
	       nread, total, s.stolen, dropped);
	qfree(s.q);
}

static uint32_t stress_nrec(void)
{
	const char *e = getenv("QIO_STRESS_RECS");

	return e ? (uint32_t)atoi(e) : 30000;
}

static void test_stress_one_reader(void)
{
	static const enum rmode r[] = { R_READ };

	stress_run(stress_nrec(), 8 * sizeof(struct rec), r, 1, true);
}

static void test_stress_readers(void)
{
	static const enum rmode r[] = { R_READ, R_BREAD, R_READ_INTR };

	stress_run(stress_nrec(), 16 * sizeof(struct rec), r, 3, true);
}

static void test_stress_bread(void)
{
	static const enum rmode r[] = { R_BREAD };

	stress_run(stress_nrec() / 2, 4 * sizeof(struct rec), r, 1, false);
}

/* ---- runner ---- */

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
	{ "block", test_block },
	{ "basic", test_basic },
	{ "drop_over_limit", test_drop },
	{ "get_tail_not_begun", test_get_tail },
	{ "noblock", test_noblock },
	{ "hangup", test_hangup },
	{ "limit_flush_reopen", test_limit_flush },
	{ "stream", test_stream },
	{ "stress_one_reader", test_stress_one_reader },
	{ "stress_three_readers", test_stress_readers },
	{ "stress_bread", test_stress_bread },
};

static const char *volatile running;	/* name of the subtest, for the watchdog */

/* A lost wakeup shows as a hang: turn it into a verdict line. */
static void watchdog(int sig)
{
	static const char pre[] = "FAIL ", post[] = " (timed out: lost wakeup?)\n";
	const char *name = running;

	(void)sig;
	if (write(1, pre, sizeof(pre) - 1) < 0 || write(1, name, strlen(name)) < 0 ||
	    write(1, post, sizeof(post) - 1) < 0)
		_exit(3);
	_exit(2);
}

int main(int argc, char **argv)
{
	const char *e = getenv("QIO_TIMEOUT");
	int failed = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	signal(SIGALRM, watchdog);
	for (size_t i = 0; i < ARRAY_SIZE(tests); i++) {
		long allocs = shim_live_allocs();

		if (argc > 1 && strcmp(tests[i].name, argv[1]) != 0)
			continue;
		running = tests[i].name;
		alarm(e ? (unsigned)atoi(e) : 60);	/* per subtest */
		check_fails = 0;
		tests[i].fn();
		CHECK(block_count() == 0 && block_bytes() == 0);
		CHECK(shim_live_allocs() == allocs);
		printf("%s %s\n", check_fails ? "FAIL" : "PASS", tests[i].name);
		failed += check_fails != 0;
	}
	alarm(0);
	return MIN(failed, 100);
}
