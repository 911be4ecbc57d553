/*
 * reader.c: the reader of /dev/oprofile in the profiler host tests: a thread that
 * reads the stream in random-sized pieces into the checker, or a drain on the caller.
 * Called by the subtests.
 */
#include "oprof_host.h"

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	static __thread char buf[9000];
	unsigned seed = 12345;
	long n;

	if (!r->opened && oprof_open() < 0) {
		FAIL("reader: open failed");
		return NULL;
	}
	if (r->delay_us)
		sleep_us(r->delay_us);
	for (uint64_t t0 = now_ms(); r->wait_drop && now_ms() - t0 < 10000; sleep_us(1000)) {
		static __thread char st[1 << 16];
		char *p;

		oprof_stat_text(st, sizeof(st));
		if ((p = strstr(st, "\nblocks_dropped ")) && strtoull(p + 16, NULL, 10) > 0)
			break;
	}
	while ((n = oprof_read(buf, 1 + rand_r(&seed) % sizeof(buf))) > 0) {
		ps_feed(&r->ps, buf, (size_t)n);
		r->bytes += (uint64_t)n;
		if (r->pace_us)
			sleep_us(r->pace_us);
	}
	CHECKF(n == 0, "read returned %ld", n);
	CHECKF(oprof_read(buf, sizeof(buf)) == 0, "read after EOF is not EOF");
	oprof_close();
	return NULL;
}

void reader_start(struct reader *r)
{
	pthread_create(&r->th, NULL, reader_main, r);
}

void reader_join(struct reader *r, const uint64_t *ticks)
{
	pthread_join(r->th, NULL);
	ps_verify(&r->ps, ticks);
	ps_free(&r->ps);
}

/* Reads a whole stream on the calling thread (the device must be open). */
void drain_stream(struct pstate *ps)
{
	static char buf[4096];
	long n;

	while ((n = oprof_read(buf, sizeof(buf))) > 0)
		ps_feed(ps, buf, (size_t)n);
	CHECKF(n == 0, "read %ld", n);
}

