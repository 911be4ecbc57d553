/*
 * ring_test.c: run by tests/t/host-ring (build/host/ring{,-tsan,-asan}), on the shared harness.
 * Host tests of the profiler's single-producer single-consumer ring
 * (kern/src/oprofile/ring.h) under pthreads: plain, TSan and ASan builds.
 *
 *	basic		order, full, empty, count across many wrap-arounds
 *	spsc		a producer and a consumer thread: every block arrives once, in order,
 *			with what the producer wrote into it before ring_put visible
 *	reentrant	the producer thread is interrupted by a signal whose handler produces
 *			too, as an NMI lands inside a core's timer path. The handler obeys the
 *			hot path's rule: it touches the ring only when the interrupted code is
 *			not inside a ring operation (a busy flag); otherwise it leaves its block
 *			in a one-slot hand-off that the interrupted code queues on its way out.
 *			Checks: no block lost or doubled, and the ring never corrupted.
 * Prints PASS/FAIL per subtest (harness.h); the exit status is the verdict.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include "kernel.h"
#include "block.h"
#include "../../kern/src/oprofile/ring.h"
#include "shim.h"
#include "harness.h"

/* Blocks are only carried here: a static array is enough, aux holds a sequence number. */
#define NBLK	(1 << 16)
static struct block blks[NBLK];

static void test_basic(void)
{
	struct ring r;

	CHECK(ring_init(&r, 3) < 0 && ring_init(&r, 0) < 0);
	CHECK(ring_init(&r, 8) == 0 && ring_capacity(&r) == 8 && ring_empty(&r));
	for (int round = 0; round < 1000; round++) {
		int n = 1 + round % 8;

		for (int i = 0; i < n; i++)
			CHECK(ring_put(&r, &blks[i]));
		CHECK(ring_count(&r) == (uint32_t)n);
		if (n == 8)
			CHECK(!ring_put(&r, &blks[9]));	/* full */
		for (int i = 0; i < n; i++)
			CHECK(ring_get(&r) == &blks[i]);
		CHECK(ring_get(&r) == NULL && ring_empty(&r));
	}
	ring_fini(&r);
}

/* ---- one producer, one consumer ---- */

#define SPSC_N	2000000

static struct ring spsc;

static void *spsc_producer(void *arg)
{
	(void)arg;
	for (uint64_t i = 0; i < SPSC_N; i++) {
		struct block *b = &blks[i % NBLK];

		/* the consumer takes a block before the producer can come round to it again */
		b->aux = (uint32_t)i;	/* plain write, published by ring_put */
		while (!ring_put(&spsc, b))
			sched_yield();
	}
	return NULL;
}

static void test_spsc(void)
{
	pthread_t p;
	uint64_t want = 0;

	CHECK(ring_init(&spsc, 256) == 0);	/* capacity < NBLK: slots are reused */
	pthread_create(&p, NULL, spsc_producer, NULL);
	while (want < SPSC_N) {
		struct block *b = ring_get(&spsc);

		if (!b) {
			sched_yield();
			continue;
		}
		CHECK(b == &blks[want % NBLK] && b->aux == want);
		want++;
	}
	pthread_join(p, NULL);
	CHECK(ring_empty(&spsc));
	ring_fini(&spsc);
}

/* ---- a producer interrupted by a producer on the same thread ---- */

static struct ring rr;
static volatile sig_atomic_t busy;	/* the main path is inside a ring operation */
static struct block *volatile handoff;	/* a block the handler could not queue itself */
static volatile sig_atomic_t handler_blocks, handler_full, handler_deferred, handler_direct;
static uint64_t next_handler = NBLK / 2;	/* handler's blocks: the upper half */

static void nmi_handler(int sig)
{
	struct block *b = &blks[next_handler];

	(void)sig;
	if (next_handler >= NBLK)
		return;
	if (busy) {
		if (handoff) {		/* a second "NMI" in the same operation: keep it for later */
			handler_full++;
			return;
		}
		handoff = b;
		handler_deferred++;
	} else if (ring_put(&rr, b)) {
		handler_direct++;
	} else {
		handler_full++;
		return;
	}
	next_handler++;
	handler_blocks++;
}

/*
 * The main path's put: busy around the ring operation, then the hand-off, if any. nmi_inside:
 * raise the "NMI" on this thread inside the operation (a thread-directed signal to oneself is
 * delivered before raise returns), so that the hand-off path runs however the other thread's
 * signals happen to land on a loaded host.
 */
static void main_put(struct block *b, bool nmi_inside)
{
	busy = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (nmi_inside)
		raise(SIGUSR1);
	while (!ring_put(&rr, b))
		sched_yield();
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	for (;;) {
		struct block *h = handoff;

		if (!h)
			break;
		while (!ring_put(&rr, h))
			sched_yield();
		handoff = NULL;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	busy = 0;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	/* an "NMI" between the last check and busy = 0 left a hand-off: queue it now */
	if (handoff) {
		busy = 1;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		while (!ring_put(&rr, handoff))
			sched_yield();
		handoff = NULL;
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		busy = 0;
	}
}

struct reent {
	pthread_t producer;
	volatile int done;
};

static void *reent_producer(void *arg)
{
	struct reent *re = arg;

	for (uint64_t i = 0; i < NBLK / 2; i++)
		main_put(&blks[i], i % 97 == 0);
	__atomic_store_n(&re->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void test_reentrant(void)
{
	struct reent re = { .done = 0 };
	static uint8_t seen[NBLK];
	uint64_t got = 0, last_main = 0;
	struct sigaction sa = { .sa_handler = nmi_handler };
	bool first = true;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	CHECK(ring_init(&rr, 64) == 0);
	pthread_create(&re.producer, NULL, reent_producer, &re);
	while (!__atomic_load_n(&re.done, __ATOMIC_ACQUIRE) || !ring_empty(&rr)) {
		struct block *b;

		if (!__atomic_load_n(&re.done, __ATOMIC_ACQUIRE))
			pthread_kill(re.producer, SIGUSR1);	/* an NMI on the producer's core */
		while ((b = ring_get(&rr))) {
			size_t i = (size_t)(b - blks);

			CHECK(i < NBLK && !seen[i]);
			seen[i] = 1;
			got++;
			if (i < NBLK / 2) {	/* the main path's own blocks stay in order */
				CHECK(first || i > last_main);
				last_main = i;
				first = false;
			}
		}
	}
	pthread_join(re.producer, NULL);
	/* a signal sent before the producer finished may have been handled after the last drain */
	for (struct block *b; (b = ring_get(&rr)); got++) {
		size_t i = (size_t)(b - blks);

		CHECK(i < NBLK && !seen[i]);
		seen[i] = 1;
	}
	CHECK(handoff == NULL);
	CHECK(got == NBLK / 2 + (uint64_t)handler_blocks);
	for (size_t i = 0; i < NBLK / 2; i++)
		CHECK(seen[i]);
	printf("    reentrant: %d blocks from the handler: %d queued by it, %d handed off; "
	       "%d refused\n", (int)handler_blocks, (int)handler_direct, (int)handler_deferred,
	       (int)handler_full);
	/* the handler landed inside a ring operation, and its hand-off was queued */
	CHECK(handler_deferred > 0);
	ring_fini(&rr);
}

static const struct harness_test tests[] = {
	{ "basic", test_basic },
	{ "spsc", test_spsc },
	{ "reentrant", test_reentrant },
};

int main(int argc, char **argv)
{
	return harness_run(&(struct harness){ tests, ARRAY_SIZE(tests), 60, NULL }, argc, argv);
}
