/*
 * The stream writer: the output queue (oprof.outq, read by /dev/oprofile) and the kernel's
 * own records on it. Every caller holds the session lock (ctl, a worker pass, a snapshot).
 *
 * Cores' blocks reach the queue whole (worker.c, flight.c). The kernel's own records --
 * the session header, thread names at start and in snapshot dumps, losses the worker
 * tells, snapshot marks, the closing statistics -- are packed by the record writer
 * (struct recw) into pool blocks framed like a core's, writer OPF_CORE_STREAM, one
 * sequence number after another; stream_put fills each header and queues the block when
 * it is full or finished. The session header alone is unframed: it opens the stream.
 *
 * The writer's modes say where a new block may come from: under the output cap (a record
 * that finds no room is lost, and counted by its caller), forced (the stream's header and
 * thread names at start: the session cannot begin otherwise), or from the blocks set aside
 * at start for the closing records (oprof.reserve), so that a session always ends
 * properly. The cap keeps room for every reserved block (oprof.rec_cap: the cap less the
 * reserve), so the closing records never take the queue past the cap; the queue's limit
 * is one block lower still (session.c), a block the kernel's capped records may still use
 * -- a capped writer checks against rec_cap -- so that a queue full of samples still has
 * room to say so.
 *
 * Its records are built by encode.c's builders; it reads the cores' totals with
 * opcore_account. Nothing it calls calls back into it.
 */
#include "internal.h"

/*
 * Queue one of the kernel's own blocks on the stream, as its writer's mode allowed it;
 * outq is never hung up, so qiwrite_block cannot fail. An empty framed block goes back to
 * the pool unless it ends the stream. The session header is unframed.
 */
void stream_put(struct block *b)
{
	size_t len = BLEN(b);

	must_hold_session();
	if (!(b->flags & BLK_SESSION) && blk_empty(b) && !(b->flags & BLK_EOS)) {
		pool_put(b);
		return;
	}
	if (!(b->flags & BLK_SESSION))
		rec_block((struct opf_block *)b->base, OPF_CORE_STREAM, 0, oprof.stream_seq++,
			  (uint32_t)len);
	if (qiwrite_block(oprof.outq, b) < 0) {
		pool_put(b);
		return;
	}
	oprof.stream_bytes += len;
}

/* A new block for w by its mode, framed (its header reserved), or NULL. */
static struct block *recw_block(struct recw *w, uint32_t len)
{
	struct block *b = NULL;

	switch (w->mode) {
	case RECW_CAPPED:
		/* this block and the writer's current one, both to be queued, and the blocks
		   the writer must leave for what follows (w->spare), under the cap less the
		   closing records' room -- not the queue's limit, a block lower for these */
		if (qmem(oprof.outq) + ((w->b ? 2u : 1u) + w->spare) * oprof.bmem <=
		    oprof.rec_cap)
			b = pool_get(false);
		break;
	case RECW_FORCED:
		b = pool_get(true);
		break;
	case RECW_RESERVED:
		if ((b = oprof.reserve))
			oprof.reserve = b->next;
		else
			b = pool_get(true);	/* more than was set aside: try anyway */
		break;
	}
	if (!b)
		return NULL;
	b->next = NULL;
	blk_frame(b);
	if (BFREE(b) < len) {	/* cannot happen: blocks hold at least OPROF_MIN_BLOCK */
		pool_put(b);
		return NULL;
	}
	return b;
}

void *recw_reserve(struct recw *w, uint32_t len)
{
	struct block *b;
	void *p;

	must_hold_session();
	if (!w->b || BFREE(w->b) < len) {
		if (!(b = recw_block(w, len)))
			return NULL;
		if (w->b)
			stream_put(w->b);
		w->b = b;
	}
	p = w->b->wp;
	w->b->wp += len;
	memset(p, 0, len);
	return p;
}

void *recw_reserve_for(void *w, uint32_t len)
{
	return recw_reserve(w, len);
}

void recw_finish(struct recw *w)
{
	if (w->b) {
		if (w->eos) {
			w->b->flags |= BLK_EOS;
			w->b->session = oprof.session_id;	/* whose stream it ends */
		}
		stream_put(w->b);
	}
	w->b = NULL;
}

/* The session's header: filled into oprof.header (for a resumed reader) and queued. */
bool stream_session(uint64_t tsc)
{
	struct rec_session_desc d = {
		.ncores = (uint32_t)oprof.ncores, .hz = oprof.cfg.hz, .depth = oprof.cfg.depth,
		.block_bytes = oprof.cfg.block_bytes, .period_ms = oprof.cfg.period_ms,
		.flags = (oprof.cfg.snapshot ? OPF_S_SNAPSHOT : 0) |
			 (oprof.cfg.events ? OPF_S_SCHED : 0),
		.source = oprof.cfg.source, .start_tsc = tsc, .start_ns = nsec(),
		.session_id = oprof.session_id, .cap = oprof.cap,
	};
	struct block *b = pool_get(true);

	if (!b)
		return false;
	rec_session(&oprof.header, &d);
	block_reset(b);
	memcpy(b->wp, &oprof.header, sizeof(oprof.header));
	b->wp += sizeof(oprof.header);
	b->flags = BLK_SESSION;
	b->session = oprof.session_id;
	stream_put(b);
	return true;
}

/* OPF_DROP for c's drops not told yet (the listed runs). */
static bool stream_drops(struct recw *w, int core)
{
	struct opcore *c = &opcores[core];
	void *p;

	while (c->w.nruns) {
		struct drop_run *r = &c->w.runs[0];

		if (!(p = recw_reserve(w, sizeof(struct opf_drop))))
			return false;
		rec_drop(p, 0, (uint16_t)core, r->seq, r->blocks, r->samples);
		memmove(&c->w.runs[0], &c->w.runs[1], --c->w.nruns * sizeof(*r));
	}
	return true;
}

/* OPF_DROP and OPF_LOST for what drops took from the stream, into w while they fit. */
void stream_report_drops_to(struct recw *w)
{
	for (int i = 0; i < oprof.ncores; i++) {
		struct opcore *c = &opcores[i];

		if (!stream_drops(w, i) ||
		    !rec_lost_all(c->w.unreported, (uint16_t)i, tsc_read(), recw_reserve_for, w))
			break;
	}
}

void stream_report_drops(void)
{
	struct recw w = { .mode = RECW_CAPPED };

	stream_report_drops_to(&w);
	recw_finish(&w);
}

/* The core's OPF_CORE_END, from its accounting view. */
static bool stream_core_totals(struct recw *w, int core)
{
	void *e = recw_reserve(w, sizeof(struct opf_core_end));
	struct opcore_acct a;

	if (!e)
		return false;
	opcore_account(&opcores[core], &a);
	rec_core_end(e, (uint32_t)core, &a);
	return true;
}

/* Everything core has not told yet, then its OPF_CORE_END. False: no room. */
static bool stream_core_end(struct recw *w, int core, uint64_t tsc)
{
	struct opcore *c = &opcores[core];
	void *p;

	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		c->lrep.unreported[r] += c->w.unreported[r];
		c->w.unreported[r] = 0;
	}
	if (!stream_drops(w, core) ||
	    !rec_lost_all(c->lrep.unreported, (uint16_t)core, tsc, recw_reserve_for, w))
		return false;
	if (c->w.unlisted) {
		if (!(p = recw_reserve(w, sizeof(struct opf_drop))))
			return false;
		rec_drop(p, OPF_D_UNLISTED, (uint16_t)core, 0, (uint32_t)c->w.unlisted,
			 c->w.unlisted_samples);
	}
	return stream_core_totals(w, core);
}

/* A session with events: core's OPF_SCHED_END (sched_events.c's counts). False: no room. */
static bool stream_sched_end(struct recw *w, int core)
{
	struct opcore *c = &opcores[core];
	void *e = recw_reserve(w, sizeof(struct opf_sched_end));
	uint64_t written[OPF_EV_N], lost[OPF_LOST_NREASONS] = { 0 }, overwritten = 0;

	if (!e)
		return false;
	for (unsigned k = 0; k < OPF_EV_N; k++) {
		written[k] = cnt_get(&c->ev.written[k]);
		lost[OPF_LOST_OUTPUT_FULL] += c->w.gone.ev[k];
		overwritten += cnt_get(&c->fr.gone.ev[k]);
	}
	lost[OPF_LOST_NO_BLOCK] = cnt_get(&c->ev.lost[OPF_LOST_NO_BLOCK]);
	lost[OPF_LOST_PAUSED] = cnt_get(&c->ev.lost[OPF_LOST_PAUSED]);
	lost[OPF_LOST_OTHER] = cnt_get(&c->ev.lost[OPF_LOST_OTHER]);
	rec_sched_end(e, (uint32_t)core, cnt_get(&c->ev.taken), written, lost, overwritten);
	return true;
}

/* OPF_SESSION_END, the last record: its bytes are every byte queued before it. */
bool stream_session_end(struct recw *w, uint64_t tsc, uint16_t flags)
{
	void *e = recw_reserve(w, sizeof(struct opf_session_end));
	uint64_t marks_lost = oprof.marks_lost;

	if (!e)
		return false;
	for (int i = 0; i < oprof.ncores; i++)
		marks_lost += cnt_get(&opcores[i].cnt.marks_lost);
	for (int i = 0; i < oprof.ncores; i++)	/* in blocks that left the stream unread */
		marks_lost += cnt_get(&opcores[i].fr.gone.marks) + opcores[i].w.gone.marks;
	rec_session_end(e, flags, tsc, nsec(), oprof.blocks_dropped,
			oprof.stream_bytes + BLEN(w->b) - sizeof(struct opf_session_end),
			marks_lost);
	return true;
}

/*
 * Stop, after every core is stopped and drained: the closing records, from the blocks
 * set aside at start, the last of them marked as the end of the stream.
 */
void stream_close(void)
{
	struct recw w = { .mode = RECW_RESERVED, .eos = true };
	uint64_t tsc = tsc_read();
	int i;

	must_be_stopped();
	for (i = 0; i < oprof.ncores; i++)
		if (!stream_core_end(&w, i, tsc) || (oprof.cfg.events && !stream_sched_end(&w, i)))
			break;
	if (i == oprof.ncores)
		stream_session_end(&w, tsc, 0);
	/* nothing written: the end still needs a block; no memory at all: end of file when the
	   queue empties */
	if (!w.b && (w.b = pool_get(true)))
		blk_frame(w.b);
	if (!w.b)
		qhangup(oprof.outq);
	recw_finish(&w);
}
