/*
 * The reader of /dev/oprofile: one open at a time, one thread reading.
 *
 * The reader takes whole blocks off the output queue (qbread_intr: it sleeps until the
 * worker queues a block or stop hangs the queue up, and Ctrl-C gets it out with -EINTR)
 * and copies them out; a block it has begun stays in its own hand (rd.blk) until fully
 * read, then goes back to the pool. So the worker, which only ever drops a block before
 * queueing it, can never take data the reader is half way through, and the queue's byte
 * count is exactly what waits.
 *
 * End of stream: stop queues the closing records and hangs the queue up; the reader that
 * finds it hung up and empty gets 0, and (with the session lock) ends the DRAINING state:
 * the queue is reopened and the pool trimmed, so the next "start" begins a new stream.
 * It then keeps returning 0 until closed; a new open waits for the next session.
 */
#include "internal.h"
#include "error.h"

static struct {
	uint32_t open;		/* a reader holds the device; CAS */
	bool eof;		/* this open has seen the end of a stream */
	struct block *blk;	/* block being read, owned by the reader */
} rd;

bool reader_is_open(void)
{
	return __atomic_load_n(&rd.open, __ATOMIC_RELAXED) != 0;
}

int oprof_open(void)
{
	uint32_t closed = 0;

	if (!__atomic_compare_exchange_n(&rd.open, &closed, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return -EBUSY;
	rd.eof = false;
	rd.blk = NULL;
	return 0;
}

void oprof_close(void)
{
	pool_put(rd.blk);
	rd.blk = NULL;
	__atomic_store_n(&rd.open, 0, __ATOMIC_RELEASE);
}

/* The stream of a stopped session has been read to its end: back to IDLE. */
static void reader_end_stream(void)
{
	session_lock();
	if (flag_get(&oprof.state) == OPROF_DRAINING && qhungup(oprof.outq) &&
	    qblocks(oprof.outq) == 0) {
		qreopen(oprof.outq);
		pool_trim();
		flag_set(&oprof.state, OPROF_IDLE);
	}
	session_unlock();
}

/* The next block to read: NULL with *err 0 at the end of the stream, or -EINTR. */
static struct block *reader_next(bool wait, long *err)
{
	struct block *b = NULL;
	int r;

	*err = 0;
	if (!wait)
		return qget(oprof.outq);
	r = qbread_intr(oprof.outq, &b);
	if (r == 0) {
		rd.eof = true;
		reader_end_stream();
	} else if (r < 0) {
		*err = r;
	}
	return b;
}

long oprof_read(void *buf, size_t n)
{
	uint8_t *p = buf;
	size_t got = 0;
	long err = 0;

	while (got < n && !rd.eof) {
		size_t k;

		if (!rd.blk && !(rd.blk = reader_next(got == 0, &err)))
			break;
		k = MIN(n - got, BLEN(rd.blk));
		memcpy(p + got, rd.blk->rp, k);
		rd.blk->rp += k;
		got += k;
		if (BLEN(rd.blk) == 0) {
			pool_put(rd.blk);
			rd.blk = NULL;
		}
	}
	return got ? (long)got : err;
}
