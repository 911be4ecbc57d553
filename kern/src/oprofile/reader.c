/*
 * The reader of /dev/oprofile: one open at a time, one thread reading.
 *
 * The reader takes whole blocks off the output queue (qbread_intr: it sleeps until the
 * worker queues a block, and Ctrl-C gets it out with -EINTR) and copies them out; a block
 * it has begun stays in its own hand (rd.blk). So the worker, which only ever drops a
 * block before queueing it, can never take data the reader is half way through.
 *
 * Nothing a reader leaves is lost. A read returns whole records (unless the caller's
 * buffer is smaller than the next record: then it gets the record in pieces), so a reader
 * that closes the file part-way through a block -- Ctrl-C on cat -- leaves the rest of the
 * block at a record boundary. It goes back to the head of the queue, behind a new
 * OPF_BLOCK header (flag OPF_B_PARTIAL) that counts what is left, and the next reader
 * continues there. A reader that opens in the middle of a session's stream first gets a
 * repeat of the session's header (flag OPF_S_RESUMED), so its file is a stream too.
 * (Closing in the middle of a record read in pieces loses the rest of that record.)
 *
 * End of stream: the block holding a session's closing records is marked BLK_EOS. Once
 * the reader has copied all of it, reads return 0, and (with the session lock) the
 * DRAINING state ends: the next "start" begins a new stream. A new open waits for the
 * next session. "discard" ends a reader's stream the same way (session.c).
 */
#include "internal.h"
#include "error.h"

static struct {
	uint32_t open;		/* a reader holds the device; CAS */
	bool eof;		/* this open has reached the end of a stream */
	struct block *blk;	/* block being read, owned by the reader */
	uint32_t frag;		/* bytes of blk's next record a short read left to copy */
	uint64_t in_session;	/* the session whose header a reader has taken (0: none) */
	uint8_t *taken_rp;	/* blk->rp when the reader took blk: nothing read before it */
	struct opf_session pre;	/* a resumed header still to be read */
	uint32_t pre_off;	/* bytes of pre already read; sizeof(pre): none left */
} rd = { .pre_off = sizeof(struct opf_session) };

bool reader_is_open(void)
{
	return __atomic_load_n(&rd.open, __ATOMIC_RELAXED) != 0;
}

int oprof_open(void)
{
	uint32_t closed = 0;
	uint32_t state;

	if (!__atomic_compare_exchange_n(&rd.open, &closed, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return -EBUSY;
	rd.eof = false;
	rd.frag = 0;
	rd.pre_off = sizeof(rd.pre);
	session_lock();
	state = flag_get(&oprof.state);
	if (state != OPROF_IDLE && rd.in_session == oprof.session_id) {
		/* an earlier reader took this session's header: repeat it for this one */
		rd.pre = oprof.header;
		rd.pre.flags |= OPF_S_RESUMED;
		rd.pre_off = 0;
	}
	session_unlock();
	return 0;
}

/* Session lock held: the stream this reader is in was thrown away by "discard". */
static bool reader_discarded(void)
{
	return rd.in_session &&
	       (rd.in_session != oprof.session_id || flag_get(&oprof.state) == OPROF_IDLE);
}

/*
 * Session lock held, closing in the middle of a discarded stream: the OPF_SESSION_END
 * that "discard" left at the head of the queue for this reader goes too, or the next
 * reader would get it before (or instead of) the next session's header.
 */
static void reader_drop_discard_end(void)
{
	struct block *b;

	must_hold_session();
	if (rd.eof || !reader_discarded() || !(b = qget(oprof.outq)))
		return;
	if ((b->flags & BLK_EOS) && b->session == rd.in_session)
		pool_put(b);
	else
		qputback(oprof.outq, b);
}

/*
 * Session lock held: the rest of a begun block, framed again, back at the head. Not a
 * block of a stream that "discard" ended (the queue holds the next session's now): that
 * is thrown away with the rest of its stream. A block taken but not read from (rp where
 * it was when taken, which for a block put back before is its OPF_B_PARTIAL header) goes
 * back as it was. So does a session header read in part, rewound: then no reader has
 * taken it, and the next gets it once, not a resumed copy as well.
 */
static void reader_put_back(struct block *b)
{
	struct opf_block *h;
	struct salvage sv;

	must_hold_session();
	if (reader_discarded()) {
		rd.frag = 0;
		pool_put(b);
		return;
	}
	if (b->rp == rd.taken_rp || (b->flags & BLK_SESSION)) {
		if (b->flags & BLK_SESSION)
			__atomic_store_n(&rd.in_session, 0, __ATOMIC_RELAXED);
		b->rp = b->flags & BLK_SESSION ? b->base : rd.taken_rp;
		rd.frag = 0;
		qputback(oprof.outq, b);
		return;
	}
	b->rp += rd.frag;	/* a record read in pieces: its rest is lost with this reader */
	rd.frag = 0;
	if (BLEN(b) == 0 && !(b->flags & BLK_EOS)) {
		pool_put(b);
		return;
	}
	rec_salvage(b, &sv);
	h = (struct opf_block *)(b->rp - BLK_HDR);	/* room: a block's header was read */
	rec_block(h, ((const struct opf_block *)b->base)->core, (uint32_t)sv.samples,
		  ((const struct opf_block *)b->base)->seq, (uint32_t)BLEN(b) + BLK_HDR);
	h->h.flags = OPF_B_PARTIAL;
	b->rp -= BLK_HDR;
	qputback(oprof.outq, b);
}

void oprof_close(void)
{
	session_lock();
	if (rd.blk)
		reader_put_back(rd.blk);
	rd.blk = NULL;
	reader_drop_discard_end();
	session_unlock();
	__atomic_store_n(&rd.open, 0, __ATOMIC_RELEASE);
}

/*
 * The reader has read a stream to its end: if that was the stopped session's (not one
 * that "discard" ended before the next began), the session is over.
 */
static void reader_end_stream(uint64_t session)
{
	rd.eof = true;
	session_lock();
	if (flag_get(&oprof.state) == OPROF_DRAINING && session == oprof.session_id) {
		pool_trim();
		flag_set(&oprof.state, OPROF_IDLE);
	}
	session_unlock();
}

/* The next block to read: NULL with *err 0 when there is none now (!wait), or -EINTR. */
static struct block *reader_next(bool wait, long *err)
{
	struct block *b = NULL;
	int r;

	*err = 0;
	if (!wait)
		b = qget(oprof.outq);
	else if ((r = qbread_intr(oprof.outq, &b)) <= 0)
		*err = r;	/* 0: hung up, which happens only when memory ran out at stop */
	HOST_POINT();	/* "discard" may run here: it must see this block as the reader's */
	if (b && (b->flags & BLK_SESSION))
		__atomic_store_n(&rd.in_session, b->session, __ATOMIC_RELAXED);
	if (b)
		rd.taken_rp = b->rp;
	return b;
}

/* The length of the record at p (which a short read may have left unaligned). */
static uint32_t rec_len(const uint8_t *p)
{
	struct opf_rec r;

	memcpy(&r, p, sizeof(r));
	return r.len;
}

/* Bytes of whole records at the head of b that fit in room (0: the first does not). */
static size_t reader_whole(const struct block *b, size_t room)
{
	const uint8_t *p = b->rp;
	size_t n = 0;

	while (p + sizeof(struct opf_rec) <= b->wp) {
		uint32_t len = rec_len(p);

		if (len < sizeof(struct opf_rec) || len > (size_t)(b->wp - p) || n + len > room)
			break;
		n += len;
		p += len;
	}
	return n;
}

long oprof_read(void *buf, size_t n)
{
	uint8_t *p = buf;
	size_t got = 0;
	long err = 0;

	if (rd.pre_off < sizeof(rd.pre)) {
		got = MIN(n, sizeof(rd.pre) - rd.pre_off);
		memcpy(p, (uint8_t *)&rd.pre + rd.pre_off, got);
		rd.pre_off += (uint32_t)got;
	}
	while (got < n && !rd.eof) {
		size_t k;

		if (!rd.blk && !(rd.blk = reader_next(got == 0, &err))) {
			if (err == 0 && got == 0 && qhungup(oprof.outq))
				reader_end_stream(oprof.session_id);
			break;
		}
		if (rd.frag) {		/* the rest of a record the last read began */
			k = MIN(rd.frag, n - got);
			rd.frag -= (uint32_t)k;
		} else if (BLEN(rd.blk) <= n - got) {
			k = BLEN(rd.blk);	/* records never straddle blocks: all of it is whole */
		} else if (!(k = reader_whole(rd.blk, n - got))) {
			if (got > 0 && BLEN(rd.blk) > 0)
				break;		/* the next record does not fit: the next read */
			/* a buffer smaller than a record: it goes out in pieces */
			k = MIN(n - got, BLEN(rd.blk));
			rd.frag = (uint32_t)(MIN(rec_len(rd.blk->rp), BLEN(rd.blk)) - k);
		}
		memcpy(p + got, rd.blk->rp, k);
		rd.blk->rp += k;
		got += k;
		if (BLEN(rd.blk) == 0) {
			bool eos = rd.blk->flags & BLK_EOS;
			uint64_t session = rd.blk->session;

			pool_put(rd.blk);
			rd.blk = NULL;
			if (eos)
				reader_end_stream(session);
		}
	}
	return got ? (long)got : err;
}
