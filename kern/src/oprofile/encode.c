/*
 * The stream encoder: every record the profiler writes is built here (encode.h has the
 * contract and the hot paths' inline records). docs/FORMAT.md and
 * kern/include/abi/oprofile.h say what each record means; user/ingest/parser.c decodes them.
 *
 * Pure builders: each fills a record in memory its caller reserved and owns, and reads no
 * session state, so any context may call them -- a core's hot path (hotpath.c, budget.c)
 * writing into its own blocks, a scheduler event (sched_events.c), the stream writer
 * (stream.c) writing the kernel's own records into pool blocks, the crash dump
 * (crashdump.c) in a panic. Every byte of a record is written, its padding zero.
 * blk_salvage counts what a block that will never be read held.
 */
#include "internal.h"

void rec_lost(void *p, uint16_t core, uint16_t reason, uint64_t count, uint64_t tsc)
{
	struct opf_lost *l = p;

	rec_hdr(&l->h, OPF_LOST, 0, sizeof(*l));
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
	rec_hdr(&t->h, OPF_THREAD, 0, opf_thread_len(namelen));
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

	rec_hdr(&t->h, OPF_THROTTLE, 0, sizeof(*t));
	t->core = (uint32_t)core;
	t->new_hz = new_hz;
	t->tsc = tsc;
	t->old_hz = old_hz;
	t->budget_pct = budget;
}

void rec_mark(void *p, uint16_t type, uint16_t core, uint64_t tsc)
{
	struct opf_mark *m = p;

	rec_hdr(&m->h, type, 0, sizeof(*m));
	m->tsc = tsc;
	m->core = core;
	m->pad = 0;
}

void rec_snapshot(void *p, uint16_t flags, uint64_t seq, uint64_t tsc)
{
	struct opf_snapshot *m = p;

	rec_hdr(&m->h, OPF_SNAPSHOT, flags, sizeof(*m));
	m->seq = seq;
	m->tsc = tsc;
}

void rec_drop(void *p, uint16_t flags, uint16_t core, uint64_t seq, uint32_t blocks,
	      uint64_t samples)
{
	struct opf_drop *d = p;

	rec_hdr(&d->h, OPF_DROP, flags, sizeof(*d));
	d->core = core;
	d->pad = 0;
	d->blocks = blocks;
	d->seq = seq;
	d->samples = samples;
}

void rec_session(struct opf_session *s, const struct rec_session_desc *d)
{
	const uint8_t *id;
	size_t idlen = 0;

	memset(s, 0, sizeof(*s));
	rec_hdr(&s->h, OPF_SESSION, 0, sizeof(*s));
	s->magic = OPF_MAGIC;
	s->version = OPF_VERSION;
	s->ncores = d->ncores;
	s->hz = d->hz;
	s->depth = d->depth;
	s->tsc_hz = tsc_hz();
	s->start_tsc = d->start_tsc;
	s->start_ns = d->start_ns;
	s->block_bytes = d->block_bytes;
	s->period_ms = d->period_ms;
	s->flags = d->flags;
	id = kernel_build_id(&idlen);
	idlen = id ? MIN(idlen, (size_t)OPF_MAX_BUILD_ID) : 0;
	s->build_id_len = (uint32_t)idlen;
	if (idlen)
		memcpy(s->build_id, id, idlen);
	s->session_id = d->session_id;
	s->source = d->source;
	s->cap = d->cap;
	clock_describe(s);
	s->jitter_seed = d->jitter_seed;
	s->jitter = d->jitter;
}

void rec_core_end(void *p, uint32_t core, const struct opcore_acct *a)
{
	struct opf_core_end *e = p;

	memset(e, 0, sizeof(*e));
	rec_hdr(&e->h, OPF_CORE_END, 0, sizeof(*e));
	e->core = core;
	e->taken = a->taken;
	e->delivered = a->delivered;
	e->lost[OPF_LOST_NO_BLOCK] = a->lost_noblock;
	e->lost[OPF_LOST_OUTPUT_FULL] = a->lost_outfull;
	e->lost[OPF_LOST_PAUSED] = a->lost_paused;
	e->lost[OPF_LOST_OTHER] = a->lost_other;
	e->overwritten = a->overwritten;
	e->truncated = a->truncated;
	e->blocks = a->blocks;
	e->throttles = a->throttles;
	e->final_hz = (uint32_t)a->hz;
	e->missed = a->missed;
	e->blocks_dropped = a->blocks_dropped;
	e->blocks_unlisted = a->blocks_unlisted;
	e->blocks_overwritten = a->blocks_overwritten;
	e->depth_cut = a->depth_cut;
}

void rec_sched_end(void *p, uint32_t core, uint64_t taken, const uint64_t written[OPF_EV_N],
		   const uint64_t lost[OPF_LOST_NREASONS], uint64_t overwritten)
{
	struct opf_sched_end *e = p;

	memset(e, 0, sizeof(*e));
	rec_hdr(&e->h, OPF_SCHED_END, 0, sizeof(*e));
	e->core = core;
	e->taken = taken;
	memcpy(e->written, written, sizeof(e->written));
	memcpy(e->lost, lost, sizeof(e->lost));
	e->overwritten = overwritten;
}

void rec_session_end(void *p, uint16_t flags, uint64_t end_tsc, uint64_t end_ns,
		     uint64_t blocks_dropped, uint64_t bytes, uint64_t marks_lost)
{
	struct opf_session_end *e = p;

	rec_hdr(&e->h, OPF_SESSION_END, flags, sizeof(*e));
	e->end_tsc = end_tsc;
	e->end_ns = end_ns;
	e->blocks_dropped = blocks_dropped;
	e->bytes = bytes;
	e->marks_lost = marks_lost;
}

/*
 * name, NUL-padded, into a record: built in a register-sized buffer and stored in two
 * words, so a record without a name (most switches) costs two stores, not a byte loop.
 */
static void rec_name(char dst[OPF_OBJ_NAME], const char *name)
{
	union { char c[OPF_OBJ_NAME]; uint64_t q[OPF_OBJ_NAME / 8]; } b = { .q = { 0, 0 } };

	for (unsigned i = 0; name && name[i] && i < OPF_OBJ_NAME - 1; i++)
		b.c[i] = name[i];
	__builtin_memcpy(dst, b.q, OPF_OBJ_NAME);
}

void rec_switch(struct opf_switch *r, const struct schedev_switch *sw, unsigned nframes)
{
	const struct schedev_why *w = sw->w;

	rec_hdr(&r->h, OPF_SWITCH, 0, opf_switch_len(nframes));
	r->core = sw->core;
	r->why = sw->why;
	r->nframes = (uint16_t)nframes;
	r->pad = r->pad2 = 0;
	r->prev_tid = sw->prev_tid;
	r->next_tid = sw->next_tid;
	r->tsc = sw->tsc;
	r->prev_cpu = sw->prev_cpu;
	r->obj = w->set ? (uintptr_t)w->obj : 0;
	r->site = w->set ? (uintptr_t)w->site : 0;
	r->holder = w->set ? w->holder : 0;
	rec_name(r->name, w->set ? w->name : NULL);
}

void rec_lockwait(struct opf_lockwait *r, uint16_t core, const struct schedev_lock *lk,
		  unsigned nframes)
{
	rec_hdr(&r->h, OPF_LOCKWAIT, 0, opf_lockwait_len(nframes));
	r->core = core;
	r->kind = lk->kind;
	r->nframes = (uint16_t)nframes;
	r->pad = 0;
	r->tid = lk->tid;
	r->holder = lk->holder;
	r->tsc = lk->tsc;
	r->wait = lk->tsc - lk->start;
	r->lock = (uintptr_t)lk->lock;
	rec_name(r->name, lk->name);
}

/* The length of a record of head bytes and nframes frames after them, padded to 8. */
static uint32_t rec_frames_len(size_t head, unsigned nframes)
{
	return opf_align((uint32_t)head + 8 * nframes);
}

/* Such a record at p, zeroed, with its header and frames written; returns its length. */
static uint32_t rec_with_frames(void *p, uint16_t type, uint16_t flags, size_t head,
				const uint64_t *frames, uint16_t nframes)
{
	uint32_t len = rec_frames_len(head, nframes);

	memset(p, 0, len);
	rec_hdr(p, type, flags, len);
	memcpy((uint8_t *)p + head, frames, 8 * (size_t)nframes);
	return len;
}

uint32_t rec_crash_len(unsigned nframes)
{
	return rec_frames_len(sizeof(struct opf_crash), nframes);
}

void rec_crash(void *p, uint16_t flags, uint16_t core, uint32_t cause, uint64_t tsc,
	       uint64_t ns, uint64_t pc, const char *msg, const uint64_t *frames,
	       uint16_t nframes)
{
	struct opf_crash *c = p;

	rec_with_frames(p, OPF_CRASH, flags, sizeof(*c), frames, nframes);
	c->core = core;
	c->nframes = nframes;
	c->cause = cause;
	c->tsc = tsc;
	c->ns = ns;
	c->pc = pc;
	memcpy(c->msg, msg, strnlen(msg, sizeof(c->msg) - 1));	/* NUL-padded: zeroed */
}

uint32_t rec_crash_core_len(unsigned nframes)
{
	return rec_frames_len(sizeof(struct opf_crash_core), nframes);
}

void rec_crash_core(void *p, uint16_t flags, uint16_t core, uint16_t state, uint32_t tid,
		    uint32_t blocks, uint64_t tsc, uint64_t pc, uint64_t taken,
		    uint64_t overwritten, const uint64_t *frames, uint16_t nframes)
{
	struct opf_crash_core *cc = p;

	rec_with_frames(p, OPF_CRASH_CORE, flags, sizeof(*cc), frames, nframes);
	cc->core = core;
	cc->state = state;
	cc->nframes = nframes;
	cc->tid = tid;
	cc->blocks = blocks;
	cc->tsc = tsc;
	cc->pc = pc;
	cc->taken = taken;
	cc->overwritten = overwritten;
}

void rec_crash_end(void *p, uint64_t bytes, uint64_t tsc)
{
	struct opf_crash_end *e = p;

	rec_hdr(&e->h, OPF_CRASH_END, 0, sizeof(*e));
	e->bytes = bytes;
	e->tsc = tsc;
}

/*
 * The block was written by our own hot path, so its records are well formed; the walk
 * stops at anything that is not.
 */
void rec_salvage(const struct block *b, struct salvage *sv)
{
	memset(sv, 0, sizeof(*sv));
	for (const struct opf_rec *r = rec_first(b); r; r = rec_next(b, r)) {
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
		} else if (r->type == OPF_PAUSE || r->type == OPF_RESUME ||
			   r->type == OPF_THROTTLE) {
			sv->marks++;	/* pause time and rates a reader can no longer tell */
		} else if (r->type >= OPF_SWITCH && r->type <= OPF_LOCKWAIT) {
			sv->ev[r->type - OPF_SWITCH]++;
		} else if (r->type == OPF_SWITCH_SHORT || r->type == OPF_SWITCH_SAME) {
			sv->ev[OPF_EV_SWITCH]++;
		}
	}
}

uint64_t blk_salvage(const struct block *b, struct blk_gone *gone,
		     uint64_t unreported[OPF_LOST_NREASONS], uint32_t *pending)
{
	struct salvage sv;

	rec_salvage(b, &sv);
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		if (!sv.lost[r])
			continue;
		unreported[r] += sv.lost[r];
		if (pending)
			*pending = 1;
	}
	cnt_add(&gone->blocks, 1);
	cnt_add(&gone->samples, sv.samples);
	cnt_add(&gone->truncated, sv.truncated);
	cnt_add(&gone->depth_cut, sv.depth_cut);
	cnt_add(&gone->threads, sv.threads);
	cnt_add(&gone->marks, sv.marks);
	for (unsigned k = 0; k < OPF_EV_N; k++)
		cnt_add(&gone->ev[k], sv.ev[k]);
	return sv.samples;
}
