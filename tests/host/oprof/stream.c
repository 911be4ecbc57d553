/*
 * stream.c: the stream checker of the profiler host tests: parses a stream
 * incrementally (ps_feed) and checks every record as it comes and the whole at its end
 * (ps_verify), from the stream alone.
 * Called by the reader thread (reader.c) and by subtests that read the device themselves.
 */
#include "oprof_host.h"

/* A sample an injected NMI took (tick pattern NPC/NRET): its own order, tid and frames. */
static void sample_nmi(struct pstate *ps, const struct opf_sample *s, unsigned c, uint64_t seq)
{
	unsigned want = MIN(nmi_depth_of(seq), ps->sess.depth);

	CHECKF(seq > ps->last_nseq[c], "core %u: NMI sample %lu after %lu", c,
	       (unsigned long)seq, (unsigned long)ps->last_nseq[c]);
	ps->last_nseq[c] = seq;
	ps->nmi_samples[c]++;
	CHECKF(s->tid == 2000 + c && s->nframes == want, "core %u NMI sample %lu: tid %u, "
	       "%u frames", c, (unsigned long)seq, s->tid, s->nframes);
	for (unsigned i = 0; i < s->nframes && i < want; i++)
		CHECKF(s->frames[i] == NRET(c, seq, i), "core %u NMI sample %lu frame %u",
		       c, (unsigned long)seq, i);
}

/* Inside a flight-recorder dump: a core's samples are contiguous; count the gap before. */
static void sample_in_dump(struct pstate *ps, unsigned c, uint64_t seq)
{
	if (!ps->snap_samples[c]) {
		ps->gap[c] += seq - ps->last_seq[c] - 1;
		ps->snap_first[c] = seq;
	} else {
		CHECKF(seq == ps->last_seq[c] + 1, "core %u: dump %lu has a hole at %lu", c,
		       (unsigned long)ps->snap_seq, (unsigned long)seq);
	}
	ps->snap_samples[c]++;
	ps->snap_last[c] = seq;
}

/* A sample tick() made: in order, not while paused, and exactly the frames it built. */
static void sample_tick(struct pstate *ps, const struct opf_sample *s, unsigned c, uint64_t seq)
{
	unsigned want = MIN(depth_of(seq), ps->sess.depth);
	bool wtrunc = corrupt_of(seq) && depth_of(seq) < ps->sess.depth;

	CHECKF(seq > ps->last_seq[c], "core %u: seq %lu after %lu", c, (unsigned long)seq,
	       (unsigned long)ps->last_seq[c]);
	CHECKF(seq < ps->seq_lo[c] || seq >= ps->seq_hi[c], "core %u: sample %lu while paused", c,
	       (unsigned long)seq);
	if (ps->snapcheck && ps->in_snap)
		sample_in_dump(ps, c, seq);
	ps->last_seq[c] = seq;
	CHECKF(s->tid == 1000 + c, "tid %u on core %u", s->tid, c);
	CHECKF(!!(s->h.flags & OPF_F_IDLE) == idle_of(seq), "idle flag of %lu", (unsigned long)seq);
	CHECKF(s->nframes == want, "core %u seq %lu: %u frames, want %u", c, (unsigned long)seq,
	       s->nframes, want);
	CHECKF(!!(s->h.flags & OPF_F_TRUNCATED) == wtrunc, "core %u seq %lu: truncated flag %d",
	       c, (unsigned long)seq, !!(s->h.flags & OPF_F_TRUNCATED));
	for (unsigned i = 0; i < s->nframes && i < want; i++)
		if (s->frames[i] != RET(c, seq, i)) {
			FAIL("core %u seq %lu frame %u wrong", c, (unsigned long)seq, i);
			break;
		}
}

static void ps_sample(struct pstate *ps, const struct opf_sample *s)
{
	unsigned c = s->core;

	if (c >= ps->sess.ncores || c >= MAXC) {
		FAIL("sample of core %u", c);
		return;
	}
	CHECKF(s->h.len == opf_sample_len(s->nframes), "sample len %u for %u frames", s->h.len,
	       s->nframes);
	CHECKF(s->nframes <= ps->sess.depth, "sample has %u frames, depth %u", s->nframes,
	       ps->sess.depth);
	ps->samples[c]++;
	ps->trunc[c] += (s->h.flags & OPF_F_TRUNCATED) != 0;
	ps->depth[c] += (s->h.flags & OPF_F_DEPTH) != 0;
	CHECKF(ps->in_block && ps->blk_core == c, "core %u sample outside its own block", c);
	ps->blk_samples++;
	CHECKF(s->tsc >= ps->last_tsc[c], "core %u tsc went back", c);
	ps->last_tsc[c] = s->tsc;
	if (!ps->checkframes)
		return;
	CHECKF(CORE_OF(s->pc) == c, "core %u sample has pc of core %lu", c,
	       (unsigned long)CORE_OF(s->pc));
	if (s->pc & NMI_TAG)
		sample_nmi(ps, s, c, SEQ_OF(s->pc));
	else
		sample_tick(ps, s, c, SEQ_OF(s->pc));
}

/* Mark seq seen in v (n entries, grown as needed); false if it was already. */
static bool seq_mark(uint8_t **v, uint64_t *n, uint64_t seq)
{
	if (seq >= *n) {
		uint64_t m = MAX(seq + 1, *n * 2);

		*v = realloc(*v, m);
		memset(*v + *n, 0, m - *n);
		*n = m;
	}
	if ((*v)[seq])
		return false;
	(*v)[seq] = 1;
	return true;
}

/* The block that ends here (at stream offset ps->off): its header told the truth. */
static void ps_block_end(struct pstate *ps)
{
	if (!ps->in_block)
		return;
	CHECKF(ps->off - ps->blk_start == ps->blk_bytes, "block of writer %u at %lu: %lu bytes, "
	       "header says %lu", ps->blk_core, (unsigned long)ps->blk_start,
	       (unsigned long)(ps->off - ps->blk_start), (unsigned long)ps->blk_bytes);
	CHECKF(ps->blk_samples == ps->blk_want_samples, "block of writer %u: %lu samples, header "
	       "says %lu", ps->blk_core, (unsigned long)ps->blk_samples,
	       (unsigned long)ps->blk_want_samples);
	ps->in_block = false;
}

static void ps_block(struct pstate *ps, const struct opf_block *b)
{
	unsigned w = b->core == OPF_CORE_STREAM ? MAXC : b->core;

	if ((b->h.flags & OPF_B_PARTIAL) && ps->in_block && ps->blk_core == b->core &&
	    ps->resumed) {
		/* the rest of the block the last reader began: one block with what came before */
		CHECKF(b->samples == ps->blk_want_samples - ps->blk_samples &&
		       b->bytes - BLK_HDR_HOST == ps->blk_bytes - (ps->off - ps->blk_start),
		       "the rest of block %lu says %u samples and %u bytes", (unsigned long)b->seq,
		       b->samples, b->bytes);
		ps->blk_start += BLK_HDR_HOST;	/* this header is not part of the original */
		ps->extra += BLK_HDR_HOST;
		return;
	}
	ps_block_end(ps);
	CHECKF(b->h.len == sizeof(*b), "block header of %u bytes", b->h.len);
	if (w > MAXC || (w < MAXC && w >= ps->sess.ncores)) {
		FAIL("block of core %u", b->core);
		return;
	}
	ps->in_block = true;
	ps->blk_core = b->core;
	ps->blk_start = ps->off;
	ps->blk_bytes = b->bytes;
	ps->blk_samples = 0;
	ps->blk_want_samples = b->samples;
	CHECKF(w < MAXC || b->samples == 0, "the kernel's own block says %u samples", b->samples);
	CHECKF(!(b->h.flags & OPF_B_PARTIAL) || ps->resumed,
	       "a partial block in a stream that did not resume");
	if (!seq_mark(&ps->seqs[w], &ps->nseqs[w], b->seq))
		FAIL("writer %u: block %lu twice", w, (unsigned long)b->seq);
	ps->max_seq[w] = MAX(ps->max_seq[w], b->seq + 1);
}

static void rec_snapshot(struct pstate *ps, const struct opf_rec *r)
{
	const struct opf_snapshot *sn = (const void *)r;

	if (sn->h.flags & OPF_SNAP_BEGIN) {
		CHECKF(!ps->in_snap && sn->seq == ps->snap_seq + 1, "snapshot begin %lu after %lu",
		       (unsigned long)sn->seq, (unsigned long)ps->snap_seq);
		ps->in_snap = true;
		ps->snap_seq = sn->seq;
		ps->snap_begins++;
		memset(ps->snap_samples, 0, sizeof(ps->snap_samples));
		return;
	}
	CHECKF(ps->in_snap && sn->seq == ps->snap_seq && (sn->h.flags & OPF_SNAP_END),
	       "snapshot end %lu", (unsigned long)sn->seq);
	ps->in_snap = false;
	ps->snap_ends++;
	for (int c = 0; c < MAXC && ps->snap_seq < 64; c++)
		ps->dump_last[ps->snap_seq][c] = ps->snap_samples[c] ? ps->snap_last[c] : 0;
}

static void rec_throttle(struct pstate *ps, const struct opf_rec *r)
{
	const struct opf_throttle *t = (const void *)r;

	if (t->core >= MAXC) {
		FAIL("throttle of core %u", t->core);
		return;
	}
	/* halved, or doubled back up to the session's rate */
	CHECKF((t->new_hz == t->old_hz / 2 ||
		t->new_hz == MIN(t->old_hz * 2, ps->sess.hz)) && t->new_hz != t->old_hz &&
	       t->budget_pct > 0 && t->budget_pct < 100,
	       "throttle %u -> %u Hz, budget %u", t->old_hz, t->new_hz, t->budget_pct);
	CHECKF(t->old_hz == (ps->rate_changes[t->core] ? ps->thr_hz[t->core] : ps->sess.hz),
	       "core %u throttled from %u Hz", t->core, t->old_hz);
	if (t->new_hz < t->old_hz)
		ps->throttles[t->core]++;
	ps->rate_changes[t->core]++;
	ps->thr_hz[t->core] = t->new_hz;
}

static void rec_thread(struct pstate *ps, const struct opf_rec *r)
{
	const struct opf_thread *t = (const void *)r;

	CHECKF(r->len == opf_thread_len(t->namelen) && t->namelen <= OPF_MAX_NAME,
	       "thread record len %u namelen %u", r->len, t->namelen);
	if (t->tid >= TID_NEW && t->core < MAXC)
		ps->threads_new[t->core]++;
	else if (ps->in_snap)
		ps->threads_snap++;
	else
		ps->threads_start++;
}

static void rec_lost(struct pstate *ps, const struct opf_rec *r)
{
	const struct opf_lost *l = (const void *)r;

	CHECKF(l->core < ps->sess.ncores && l->reason < OPF_LOST_NREASONS && l->count &&
	       l->reason != OPF_LOST_OUTPUT_FULL,
	       "bad lost record core %u reason %u", l->core, l->reason);
	if (l->core < MAXC && l->reason < OPF_LOST_NREASONS)
		ps->lostrec[l->core][l->reason] += l->count;
}

static void rec_core_end(struct pstate *ps, const struct opf_rec *r)
{
	const struct opf_core_end *e = (const void *)r;

	CHECKF(e->core < ps->sess.ncores && !ps->core_end_seen[e->core], "core end %u", e->core);
	if (e->core < MAXC) {
		ps->core_end_seen[e->core] = true;
		memset(&ps->ce[e->core], 0, sizeof(*e));
		memcpy(&ps->ce[e->core], e, MIN((size_t)r->len, sizeof(*e)));
	}
}

static void rec_drop(struct pstate *ps, const struct opf_rec *r)
{
	const struct opf_drop *d = (const void *)r;

	CHECKF(d->core < ps->sess.ncores && d->core < MAXC && d->blocks, "bad drop record");
	if (d->core >= MAXC)
		return;
	ps->drop_samples[d->core] += d->samples;
	if (d->h.flags & OPF_D_UNLISTED) {
		ps->unlisted[d->core] += d->blocks;
		return;
	}
	ps->dropped[d->core] += d->blocks;
	for (uint64_t i = 0; i < d->blocks; i++)
		if (!seq_mark(&ps->drop_seqs[d->core], &ps->ndrop_seqs[d->core], d->seq + i))
			FAIL("core %u: block %lu dropped twice", d->core,
			     (unsigned long)(d->seq + i));
}

static void rec_session_end(struct pstate *ps, const struct opf_rec *r)
{
	memset(&ps->send, 0, sizeof(ps->send));
	memcpy(&ps->send, r, MIN((size_t)r->len, sizeof(ps->send)));
	ps->have_end = true;
	ps->discarded = ps->send.h.flags & OPF_SE_DISCARDED;
	ps->end_off = ps->off;
}

/* OPF_PAUSE and OPF_RESUME */
static void rec_mark(struct pstate *ps, const struct opf_rec *r)
{
	const struct opf_mark *m = (const void *)r;

	CHECKF(r->len == sizeof(*m) && m->core < ps->sess.ncores && m->core < MAXC &&
	       ps->blk_core == m->core, "mark of core %u in a block of %u", m->core,
	       ps->blk_core);
	if (m->core >= MAXC)
		return;
	/* marks alternate, and sit in time order with the core's samples */
	CHECKF(r->type == OPF_PAUSE ? ps->pauses[m->core] == ps->resumes[m->core] :
	       ps->pauses[m->core] == ps->resumes[m->core] + 1, "core %u: marks out "
	       "of turn", m->core);
	CHECKF(m->tsc >= ps->last_tsc[m->core], "core %u: mark before its sample",
	       m->core);
	ps->last_tsc[m->core] = m->tsc;
	(r->type == OPF_PAUSE ? ps->pauses : ps->resumes)[m->core]++;
}

static void rec_sample(struct pstate *ps, const struct opf_rec *r)
{
	ps->samples_outside += !ps->in_snap;
	ps_sample(ps, (const void *)r);
}

/*
 * The checker of each record type a block may hold (the session header and the block
 * headers frame the stream: ps_record). A new record type adds one line here; a type
 * without one fails the stream.
 */
static void (*const rec_check[])(struct pstate *ps, const struct opf_rec *r) = {
	[OPF_SAMPLE] = rec_sample,
	[OPF_SNAPSHOT] = rec_snapshot,
	[OPF_THROTTLE] = rec_throttle,
	[OPF_THREAD] = rec_thread,
	[OPF_LOST] = rec_lost,
	[OPF_CORE_END] = rec_core_end,
	[OPF_DROP] = rec_drop,
	[OPF_SESSION_END] = rec_session_end,
	[OPF_PAUSE] = rec_mark,
	[OPF_RESUME] = rec_mark,
};

/* A resumed reader's repeat of the session header: part of no block. */
static void ps_continue(struct pstate *ps, const struct opf_rec *r)
{
	const struct opf_session *s = (const void *)r;

	CHECKF(r->type == OPF_SESSION && (s->flags & OPF_S_RESUMED) &&
	       s->session_id == ps->sess.session_id, "resumed reader: no repeated header");
	ps->continuing = false;
	ps->resumed = true;
	ps->blk_start += r->len;
	ps->extra += r->len;
}

/* The first record: the session header. */
static void ps_session(struct pstate *ps, const struct opf_rec *r)
{
	const struct opf_session *s = (const void *)r;

	if (r->type != OPF_SESSION || r->len < OPF_SESSION_V1_LEN || s->magic != OPF_MAGIC ||
	    s->version < OPF_VERSION_MIN || s->version > OPF_VERSION) {
		FAIL("stream does not start with a session header (type %u)", r->type);
		return;
	}
	memset(&ps->sess, 0, sizeof(ps->sess));
	memcpy(&ps->sess, s, MIN((size_t)r->len, sizeof(ps->sess)));
	CHECKF(s->version == OPF_VERSION && r->len == sizeof(*s), "session v%u of %u bytes",
	       s->version, r->len);
	ps->have_session = true;
	ps->resumed = s->flags & OPF_S_RESUMED;
}

static void ps_record(struct pstate *ps, const struct opf_rec *r)
{
	if (ps->continuing) {
		ps_continue(ps, r);
		return;
	}
	if (!ps->have_session) {
		ps_session(ps, r);
		return;
	}
	if (r->type == OPF_BLOCK) {
		ps_block(ps, (const void *)r);
		return;
	}
	CHECKF(ps->in_block, "record type %u outside any block", r->type);
	CHECKF(!ps->have_end, "record type %u after the session end", r->type);
	if (r->type < ARRAY_SIZE(rec_check) && rec_check[r->type])
		rec_check[r->type](ps, r);
	else
		FAIL("unexpected record type %u", r->type);
}

void ps_feed(struct pstate *ps, const void *data, size_t n)
{
	size_t pos = 0;

	if (ps->len + n > ps->cap) {
		ps->cap = (ps->len + n) * 2;
		ps->buf = realloc(ps->buf, ps->cap);
	}
	memcpy(ps->buf + ps->len, data, n);
	ps->len += n;
	while (ps->len - pos >= sizeof(struct opf_rec)) {
		struct opf_rec r;

		memcpy(&r, ps->buf + pos, sizeof(r));
		if (r.len < sizeof(r) || r.len % 8 || r.len > OPF_MAX_REC) {
			FAIL("bad record length %u at offset %lu", r.len, (unsigned long)ps->off);
			ps->len = 0;
			return;
		}
		if (ps->len - pos < r.len)
			break;
		/* copy out so the record is aligned for the casts in ps_record */
		uint64_t rec[OPF_MAX_REC / 8 / 64];
		if (r.len > sizeof(rec)) {
			FAIL("record of %u bytes", r.len);
			ps->len = 0;
			return;
		}
		memcpy(rec, ps->buf + pos, r.len);
		ps_record(ps, (const struct opf_rec *)rec);
		pos += r.len;
		ps->off += r.len;
	}
	memmove(ps->buf, ps->buf + pos, ps->len - pos);
	ps->len -= pos;
}

/*
 * Core c's blocks, from the stream alone against its closing record: every seq below
 * e->blocks is in the stream once, or named by an OPF_DROP, or one of the blocks the core
 * says it could not name (unlisted drops, flight-recorder reuse).
 */
static void ps_blocks_check(struct pstate *ps, unsigned c, const struct opf_core_end *e)
{
	uint64_t seen = 0, named = 0, gaps = 0;

	for (uint64_t s = 0; s < e->blocks; s++) {
		bool in = s < ps->nseqs[c] && ps->seqs[c][s];
		bool dropped = s < ps->ndrop_seqs[c] && ps->drop_seqs[c][s];

		CHECKF(!(in && dropped), "core %u: block %lu both in the stream and dropped", c,
		       (unsigned long)s);
		seen += in;
		named += dropped && !in;
		gaps += !in && !dropped;
	}
	CHECKF(ps->max_seq[c] <= e->blocks, "core %u: block %lu past the %lu it pushed", c,
	       (unsigned long)ps->max_seq[c], (unsigned long)e->blocks);
	CHECKF(named == ps->dropped[c] && named + ps->unlisted[c] == e->blocks_dropped &&
	       ps->unlisted[c] == e->blocks_unlisted, "core %u: %lu + %lu unlisted drops named, "
	       "core end says %lu (%lu unlisted)", c, (unsigned long)named,
	       (unsigned long)ps->unlisted[c], (unsigned long)e->blocks_dropped,
	       (unsigned long)e->blocks_unlisted);
	ps->unexplained += gaps - MIN(gaps, e->blocks_unlisted + e->blocks_overwritten);
	CHECKF(ps->expect_gap || gaps == e->blocks_unlisted + e->blocks_overwritten,
	       "core %u: %lu blocks missing with no reason (unlisted %lu, overwritten %lu)", c,
	       (unsigned long)(gaps - MIN(gaps, e->blocks_unlisted + e->blocks_overwritten)),
	       (unsigned long)e->blocks_unlisted, (unsigned long)e->blocks_overwritten);
}

/* Core c's closing record against what the stream held of it. */
static void ps_core_verify(struct pstate *ps, unsigned c, const uint64_t *ticks)
{
	const struct opf_core_end *e = &ps->ce[c];
	uint64_t lost = 0;

	CHECKF(ps->core_end_seen[c], "no core end for core %u", c);
	for (int r = 0; r < OPF_LOST_NREASONS; r++) {
		uint64_t told = r == OPF_LOST_OUTPUT_FULL ? ps->drop_samples[c] :
			ps->lostrec[c][r];

		lost += e->lost[r];
		CHECKF(told == e->lost[r], "core %u reason %d: records %lu, end %lu",
		       c, r, (unsigned long)told, (unsigned long)e->lost[r]);
	}
	ps_blocks_check(ps, c, e);
	CHECKF(ps->expect_gap || e->depth_cut == ps->depth[c], "core %u: depth cut %lu, "
	       "stream has %lu", c, (unsigned long)e->depth_cut, (unsigned long)ps->depth[c]);
	CHECKF(e->taken == e->delivered + lost + e->overwritten,
	       "core %u: taken %lu != delivered %lu + lost %lu + overwritten %lu", c,
	       (unsigned long)e->taken, (unsigned long)e->delivered, (unsigned long)lost,
	       (unsigned long)e->overwritten);
	CHECKF(e->throttles == ps->throttles[c], "core %u: %lu throttles, stream has %lu", c,
	       (unsigned long)e->throttles, (unsigned long)ps->throttles[c]);
	CHECKF(e->final_hz == (ps->rate_changes[c] ? ps->thr_hz[c] : ps->sess.hz),
	       "core %u: final_hz %u", c, e->final_hz);
	if (ps->snapcheck)
		CHECKF(ps->gap[c] == e->overwritten + lost,
		       "core %u: %lu samples between dumps, overwritten %lu + lost %lu", c,
		       (unsigned long)ps->gap[c], (unsigned long)e->overwritten,
		       (unsigned long)lost);
	CHECKF(ps->expect_gap || e->delivered == ps->samples[c], "core %u: delivered %lu, "
	       "stream has %lu", c, (unsigned long)e->delivered,
	       (unsigned long)ps->samples[c]);
	CHECKF(ps->expect_gap || e->truncated == ps->trunc[c], "core %u: truncated %lu, "
	       "stream has %lu", c, (unsigned long)e->truncated, (unsigned long)ps->trunc[c]);
	if (ticks)
		CHECKF(e->taken == ticks[c], "core %u: taken %lu, ticked %lu", c,
		       (unsigned long)e->taken, (unsigned long)ticks[c]);
}

/* The whole stream is in: conservation, totals and the end records. */
void ps_verify(struct pstate *ps, const uint64_t *ticks)
{
	ps_block_end(ps);
	CHECKF(ps->have_session, "no session header");
	CHECKF(ps->have_end, "no session end");
	CHECKF(ps->len == 0, "%zu trailing bytes", ps->len);
	if (!ps->have_session || !ps->have_end)
		return;
	CHECKF(ps->send.bytes == ps->end_off - ps->extra, "session end says %lu bytes, saw %lu",
	       (unsigned long)ps->send.bytes, (unsigned long)(ps->end_off - ps->extra));
	for (uint64_t s = 0; s < ps->max_seq[MAXC]; s++)
		CHECKF(ps->seqs[MAXC][s], "the kernel's own block %lu is missing", (unsigned long)s);
	CHECKF(ps->threads_start == NSTART, "%lu start threads", (unsigned long)ps->threads_start);
	CHECKF(!ps->in_snap && ps->snap_begins == ps->snap_ends, "unfinished snapshot dump");
	CHECKF(ps->threads_snap == ps->snap_begins * NSTART, "%lu thread names in %lu dumps",
	       (unsigned long)ps->threads_snap, (unsigned long)ps->snap_begins);
	CHECKF(!(ps->sess.flags & OPF_S_SNAPSHOT) || ps->samples_outside == 0,
	       "flight recorder: %lu samples outside dumps", (unsigned long)ps->samples_outside);
	for (unsigned c = 0; c < ps->sess.ncores && c < MAXC; c++)
		ps_core_verify(ps, c, ticks);
}

void ps_free(struct pstate *ps)
{
	free(ps->buf);
	for (int w = 0; w <= MAXC; w++)
		free(ps->seqs[w]);
	for (int c = 0; c < MAXC; c++)
		free(ps->drop_seqs[c]);
}

