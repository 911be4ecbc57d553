/*
 * The stream encoder: every record the profiler writes is built here (encode.h has the
 * contract and the hot path's inline records). docs/FORMAT.md and
 * kern/include/abi/oprofile.h say what each record means; user/stream.c decodes them.
 *
 * Two kinds of writer use these builders. A core writes its own records into its own
 * blocks (hotpath.c, budget.c); the record writer (struct recw) below writes the kernel's
 * own records -- thread names at start and in snapshot dumps, losses the worker tells,
 * snapshot marks, the closing statistics -- into pool blocks framed like a core's (writer
 * OPF_CORE_STREAM), and queues each block on the stream (outq_put) when it is full or
 * finished. The session header alone is unframed: it opens the stream (rec_session).
 *
 * The record writer's modes say where a new block may come from: under the output cap
 * (a mark that finds no room is counted in oprof.marks_lost), forced (the stream's header
 * and thread names at start: the session cannot begin otherwise), or from the blocks set
 * aside at start for the closing records, so that a session always ends properly.
 */
#include "internal.h"

void rec_lost(void *p, uint16_t core, uint16_t reason, uint64_t count, uint64_t tsc)
{
	struct opf_lost *l = p;

	l->h.type = OPF_LOST;
	l->h.flags = 0;
	l->h.len = sizeof(*l);
	l->core = core;
	l->reason = reason;
	l->pad = 0;
	l->count = count;
	l->tsc = tsc;
}

bool rec_lost_all(uint64_t count[OPF_LOST_NREASONS], uint16_t core, uint64_t tsc,
		  rec_reserve_fn reserve, void *arg)
{
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		void *p;

		if (!count[r])
			continue;
		if (!(p = reserve(arg, sizeof(struct opf_lost))))
			return false;
		rec_lost(p, core, (uint16_t)r, count[r], tsc);
		count[r] = 0;
	}
	return true;
}

static uint16_t name_len(const char *name)
{
	return (uint16_t)strnlen(name ? name : "", OPF_MAX_NAME);
}

uint32_t rec_thread_len(const char *name)
{
	return opf_thread_len(name_len(name));
}

void rec_thread(void *p, uint32_t tid, int core, const char *name, uint64_t tsc)
{
	uint16_t namelen = name_len(name);
	struct opf_thread *t = p;

	memset(t, 0, opf_thread_len(namelen));
	t->h.type = OPF_THREAD;
	t->h.len = opf_thread_len(namelen);
	t->tid = tid;
	t->core = (uint16_t)core;
	t->namelen = namelen;
	t->tsc = tsc;
	memcpy(t->name, name, namelen);
}

void rec_throttle(void *p, int core, uint32_t old_hz, uint32_t new_hz, uint64_t tsc,
		  uint32_t budget)
{
	struct opf_throttle *t = p;

	t->h.type = OPF_THROTTLE;
	t->h.flags = 0;
	t->h.len = sizeof(*t);
	t->core = (uint32_t)core;
	t->new_hz = new_hz;
	t->tsc = tsc;
	t->old_hz = old_hz;
	t->budget_pct = budget;
}

void rec_mark(void *p, uint16_t type, uint16_t core, uint64_t tsc)
{
	struct opf_mark *m = p;

	m->h.type = type;
	m->h.flags = 0;
	m->h.len = sizeof(*m);
	m->tsc = tsc;
	m->core = core;
	m->pad = 0;
}

void rec_snapshot(void *p, uint16_t flags, uint64_t seq, uint64_t tsc)
{
	struct opf_snapshot *m = p;

	m->h.type = OPF_SNAPSHOT;
	m->h.flags = flags;
	m->h.len = sizeof(*m);
	m->seq = seq;
	m->tsc = tsc;
}

void rec_drop(void *p, uint16_t flags, uint16_t core, uint64_t seq, uint32_t blocks,
	      uint64_t samples)
{
	struct opf_drop *d = p;

	d->h.type = OPF_DROP;
	d->h.flags = flags;
	d->h.len = sizeof(*d);
	d->core = core;
	d->pad = 0;
	d->blocks = blocks;
	d->seq = seq;
	d->samples = samples;
}

/*
 * The block was written by our own hot path, so its records are well formed; the walk
 * stops at anything that is not.
 */
void rec_salvage(const struct block *b, struct salvage *sv)
{
	memset(sv, 0, sizeof(*sv));
	for (const uint8_t *p = b->rp; p + sizeof(struct opf_rec) <= b->wp;) {
		const struct opf_rec *r = (const void *)p;

		if (r->len < sizeof(*r) || r->len > (size_t)(b->wp - p))
			break;
		if (r->type == OPF_SAMPLE) {
			sv->samples++;
			sv->truncated += (r->flags & OPF_F_TRUNCATED) != 0;
			sv->depth_cut += (r->flags & OPF_F_DEPTH) != 0;
		} else if (r->type == OPF_LOST) {
			const struct opf_lost *l = (const void *)r;

			if (l->reason < OPF_LOST_NREASONS)
				sv->lost[l->reason] += l->count;
		} else if (r->type == OPF_THREAD) {
			sv->threads++;
		} else if (r->type >= OPF_SWITCH && r->type <= OPF_LOCKWAIT) {
			sv->ev[r->type - OPF_SWITCH]++;
			sv->events++;
		}
		p += r->len;
	}
}

/* --- The record writer (session lock held) --- */

/* A new block for w by its mode, framed (its header reserved), or NULL. */
static struct block *recw_block(struct recw *w, uint32_t len)
{
	struct block *b = NULL;

	switch (w->mode) {
	case RECW_CAPPED:
		/* this block and the writer's current one, both to be queued, under the cap */
		if (qroom(oprof.outq) >= (w->b ? 2u : 1u) * oprof.bmem)
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
	block_reset(b);
	b->wp += BLK_HDR;
	b->flags = 0;
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

	if (!w->b || BFREE(w->b) < len) {
		if (!(b = recw_block(w, len)))
			return NULL;
		if (w->b)
			outq_put(w->b);
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
			w->b->stamp = oprof.session_id;	/* whose stream it ends */
		}
		outq_put(w->b);
	}
	w->b = NULL;
}

bool rec_session(uint64_t tsc)
{
	struct opf_session *s = &oprof.header;
	struct block *b = pool_get(true);
	const uint8_t *id;
	size_t idlen = 0;

	if (!b)
		return false;
	memset(s, 0, sizeof(*s));
	s->h.type = OPF_SESSION;
	s->h.len = sizeof(*s);
	s->magic = OPF_MAGIC;
	s->version = OPF_VERSION;
	s->ncores = (uint32_t)oprof.ncores;
	s->hz = oprof.cfg.hz;
	s->depth = oprof.cfg.depth;
	s->tsc_hz = tsc_hz();
	s->start_tsc = tsc;
	s->start_ns = nsec();
	s->block_bytes = oprof.cfg.block_bytes;
	s->period_ms = oprof.cfg.period_ms;
	s->flags = (oprof.cfg.snapshot ? OPF_S_SNAPSHOT : 0) | (oprof.cfg.events ? OPF_S_SCHED : 0);
	id = kernel_build_id(&idlen);
	idlen = id ? MIN(idlen, (size_t)OPF_MAX_BUILD_ID) : 0;
	s->build_id_len = (uint32_t)idlen;
	if (idlen)
		memcpy(s->build_id, id, idlen);
	s->session_id = oprof.session_id;
	s->source = oprof.cfg.source;
	s->cap = oprof.cap;
	block_reset(b);
	memcpy(b->wp, s, sizeof(*s));
	b->wp += sizeof(*s);
	b->flags = BLK_SESSION;
	b->stamp = oprof.session_id;
	outq_put(b);
	return true;
}

/* OPF_DROP for c's drops not told yet, listed and (at the end) unlisted. */
bool rec_drops(struct recw *w, int core)
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

/* Everything core has not told yet, then its OPF_CORE_END. False: no room. */
bool rec_core_end(struct recw *w, int core, uint64_t tsc)
{
	struct opcore *c = &opcores[core];
	struct opf_core_end *e;
	void *p;

	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		c->lrep.unreported[r] += c->w.unreported[r];
		c->w.unreported[r] = 0;
	}
	if (!rec_drops(w, core) ||
	    !rec_lost_all(c->lrep.unreported, (uint16_t)core, tsc, recw_reserve_for, w))
		return false;
	if (c->w.unlisted) {
		if (!(p = recw_reserve(w, sizeof(struct opf_drop))))
			return false;
		rec_drop(p, OPF_D_UNLISTED, (uint16_t)core, 0, (uint32_t)c->w.unlisted,
			 c->w.unlisted_samples);
	}
	if (!(e = recw_reserve(w, sizeof(*e))))
		return false;
	e->h.type = OPF_CORE_END;
	e->h.len = sizeof(*e);
	e->core = (uint32_t)core;
	e->taken = c->cnt.taken;
	e->delivered = opcore_delivered(c);
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++)
		e->lost[r] = c->cnt.lost[r];
	e->lost[OPF_LOST_OUTPUT_FULL] = c->w.dropped_samples;
	e->overwritten = c->fr.overwritten;
	e->truncated = opcore_truncated(c);
	e->blocks = c->cnt.blocks;
	e->throttles = c->bud.throttles;
	e->final_hz = c->bud.hz;
	e->missed = __atomic_load_n(&c->cnt.missed, __ATOMIC_RELAXED);
	e->blocks_dropped = c->w.dropped_blocks;
	e->blocks_unlisted = c->w.unlisted;
	e->blocks_overwritten = c->fr.ow_blocks;
	e->depth_cut = opcore_depth_cut(c);
	return true;
}

/* A session with events: core's OPF_SCHED_END. False: no room. */
bool rec_sched_end(struct recw *w, int core)
{
	struct opcore *c = &opcores[core];
	struct opf_sched_end *e = recw_reserve(w, sizeof(*e));

	if (!e)
		return false;
	memset(e, 0, sizeof(*e));
	e->h.type = OPF_SCHED_END;
	e->h.len = sizeof(*e);
	e->core = (uint32_t)core;
	e->taken = cnt_get(&c->ev.taken);
	for (unsigned k = 0; k < OPF_EV_N; k++)
		e->written[k] = cnt_get(&c->ev.written[k]);
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++)
		e->lost[r] = cnt_get(&c->ev.lost[r]);
	e->lost[OPF_LOST_OUTPUT_FULL] = c->w.ev_dropped;
	e->overwritten = cnt_get(&c->fr.ev_ow);
	return true;
}

bool rec_session_end(struct recw *w, uint64_t tsc, uint16_t flags)
{
	struct opf_session_end *e = recw_reserve(w, sizeof(*e));

	if (!e)
		return false;
	e->h.type = OPF_SESSION_END;
	e->h.flags = flags;
	e->h.len = sizeof(*e);
	e->end_tsc = tsc;
	e->end_ns = nsec();
	e->blocks_dropped = oprof.blocks_dropped;
	e->bytes = oprof.stream_bytes + BLEN(w->b) - sizeof(*e);
	e->marks_lost = oprof.marks_lost;
	for (int i = 0; i < oprof.ncores; i++)
		e->marks_lost += cnt_get(&opcores[i].cnt.marks_lost);
	return true;
}
