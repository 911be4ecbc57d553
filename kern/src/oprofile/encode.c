/*
 * The stream encoder: every record the profiler writes is built here (encode.h has the
 * contract and the hot path's inline sample). docs/FORMAT.md and kern/include/abi/oprofile.h
 * say what each record means; user/stream.c decodes them.
 *
 * Two kinds of writer use these builders. A core writes its own records into its own
 * blocks (hotpath.c, budget.c); the record writer (struct recw) below writes the kernel's
 * own records -- the session header, thread names at start and in snapshot dumps, losses
 * the worker tells, snapshot and pause marks, the closing statistics -- into pool blocks,
 * and queues each block on the stream (outq_put) when it is full or finished.
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

void rec_mark(void *p, uint16_t type, uint64_t tsc)
{
	struct opf_mark *m = p;

	m->h.type = type;
	m->h.flags = 0;
	m->h.len = OPF_MARK_V1_LEN;
	m->tsc = tsc;
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

/*
 * What a block about to leave the stream unread held that must not be forgotten. Adds its
 * OPF_LOST counts to lost[reason]; returns its OPF_THREAD records. The block was written by
 * our own hot path, so its records are well formed; the walk stops at anything that is not.
 */
uint64_t rec_salvage(const struct block *b, uint64_t *lost)
{
	uint64_t threads = 0;

	for (const uint8_t *p = b->rp; p + sizeof(struct opf_rec) <= b->wp;) {
		const struct opf_rec *r = (const void *)p;

		if (r->len < sizeof(*r) || r->len > (size_t)(b->wp - p))
			break;
		if (r->type == OPF_LOST) {
			const struct opf_lost *l = (const void *)r;

			if (l->reason < OPF_LOST_NREASONS)
				lost[l->reason] += l->count;
		} else if (r->type == OPF_THREAD) {
			threads++;
		}
		p += r->len;
	}
	return threads;
}

/* --- The record writer (session lock held) --- */

void *recw_reserve(struct recw *w, uint32_t len)
{
	void *p;

	if (w->b && BFREE(w->b) < len) {
		outq_put(w->b);
		w->b = NULL;
	}
	if (!w->b && !(w->b = pool_get(w->force)))
		return NULL;
	if (BFREE(w->b) < len)
		return NULL;	/* cannot happen: blocks hold at least OPROF_MIN_BLOCK */
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
	if (w->b)
		outq_put(w->b);
	w->b = NULL;
}

bool rec_session(struct recw *w, uint64_t tsc)
{
	struct opf_session *s = recw_reserve(w, OPF_SESSION_V1_LEN);
	const uint8_t *id;
	size_t idlen = 0;

	if (!s)
		return false;
	s->h.type = OPF_SESSION;
	s->h.len = OPF_SESSION_V1_LEN;
	s->magic = OPF_MAGIC;
	s->version = 1;	/* v2 framing is not written yet */
	s->ncores = (uint32_t)oprof.ncores;
	s->hz = oprof.cfg.hz;
	s->depth = oprof.cfg.depth;
	s->tsc_hz = tsc_hz();
	s->start_tsc = tsc;
	s->start_ns = nsec();
	s->block_bytes = oprof.cfg.block_bytes;
	s->period_ms = oprof.cfg.period_ms;
	s->flags = oprof.cfg.snapshot ? OPF_S_SNAPSHOT : 0;
	id = kernel_build_id(&idlen);
	idlen = id ? MIN(idlen, (size_t)OPF_MAX_BUILD_ID) : 0;
	s->build_id_len = (uint32_t)idlen;
	if (idlen)
		memcpy(s->build_id, id, idlen);
	s->session_id = oprof.session_id;
	return true;
}

/* OPF_LOST for everything core has not told yet, then its OPF_CORE_END. False: no memory. */
bool rec_core_end(struct recw *w, int core, uint64_t tsc)
{
	struct opcore *c = &opcores[core];
	struct opf_core_end *e;

	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		c->lrep.unreported[r] += c->w.unreported[r];
		c->w.unreported[r] = 0;
	}
	if (!rec_lost_all(c->lrep.unreported, (uint16_t)core, tsc, recw_reserve_for, w))
		return false;
	if (!(e = recw_reserve(w, OPF_CORE_END_V1_LEN)))
		return false;
	e->h.type = OPF_CORE_END;
	e->h.len = OPF_CORE_END_V1_LEN;
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
	return true;
}

bool rec_session_end(struct recw *w, uint64_t tsc)
{
	struct opf_session_end *e = recw_reserve(w, OPF_SESSION_END_V1_LEN);

	if (!e)
		return false;
	e->h.type = OPF_SESSION_END;
	e->h.len = OPF_SESSION_END_V1_LEN;
	e->end_tsc = tsc;
	e->end_ns = nsec();
	e->blocks_dropped = oprof.blocks_dropped;
	e->bytes = oprof.stream_bytes + BLEN(w->b) - OPF_SESSION_END_V1_LEN;
	return true;
}
