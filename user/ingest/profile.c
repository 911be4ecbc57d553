/*
 * profile.c: the parser's sink (profile_sink, given to parser.c by opreport.c). Turns validated
 * records into struct profile: accounting per session and core, names, events, and sample
 * aggregation into the unique-stack table. One handler per record type, in the table at the
 * end; the report modules read the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/profile.h"

const char *const lost_reason_name[OPF_LOST_NREASONS] = {
	"no empty block", "output queue full", "paused", "other",
};

/* Make room for element n of an array grown in powers of two (16, 32, ...). 0 or -1. */
static int room_for(void **arr, uint32_t n, size_t elem)
{
	if (n & (n - 1))
		return 0;
	void *na = realloc(*arr, (n ? 2 * (size_t)n : 16) * elem);

	if (!na)
		return -1;
	*arr = na;
	return 0;
}

/* A sample whose backtrace was cut (depth limit, or a broken chain) gets a [truncated] root. */
static int stack_cut(uint16_t flags)
{
	return (flags & (OPF_F_DEPTH | OPF_F_TRUNCATED)) != 0;
}

static struct session *cur(struct profile *p)
{
	return &p->sess[p->nsess - 1];
}

static void saw_tsc(struct profile *p, uint64_t tsc)
{
	struct session *s = cur(p);

	if (tsc > s->last_tsc)
		s->last_tsc = tsc;
}

/* A record of the open block's core at tsc, in the core's order of time: the block's extent. */
static void blk_time(struct session *s, uint64_t tsc)
{
	struct blk *b;

	if (s->open_writer < 0 || (uint32_t)s->open_writer >= s->hdr.ncores)
		return;
	b = &s->writers[s->open_writer].b[s->writers[s->open_writer].n - 1];
	if (!b->t0 || tsc < b->t0)
		b->t0 = tsc;
	if (tsc > b->t1)
		b->t1 = tsc;
}

/*
 * Every handler has the parser's signature; most never fail with a reason of their own, so
 * err and errlen are marked unused once here.
 */
#define HANDLER(name) static int name(void *arg, const struct opf_view *v, \
				      char *err __attribute__((unused)), \
				      size_t errlen __attribute__((unused)))

static int new_session(struct profile *p, const struct opf_view *v)
{
	const struct opf_session *h = &v->r->session;
	struct session *ns = realloc(p->sess, (p->nsess + 1) * sizeof(*ns));

	if (!ns)
		return -1;
	p->sess = ns;
	struct session *s = &ns[p->nsess];
	memset(s, 0, sizeof(*s));
	s->hdr = *h;
	s->off = v->off;
	s->last_tsc = h->start_tsc;
	s->open_writer = -1;
	s->open_dump = -1;
	s->cores = calloc(h->ncores, sizeof(*s->cores));
	s->writers = calloc(h->ncores + 1, sizeof(*s->writers));
	p->nsess++;
	if (!s->cores || !s->writers)
		return -1;
	for (uint32_t k = 0; k < h->ncores; k++)
		s->cores[k].hz = h->hz;
	return 0;
}

/*
 * h is the repeated header a later reader of s's session got (OPF_S_RESUMED), s has no end
 * yet: the files of two readers were concatenated (cat a.out b.out, after a Ctrl-C on the
 * first cat), and the stream goes on as one. The first block after it is the rest of the
 * block the earlier reader began, if it began one (OPF_B_PARTIAL, on_block).
 */
static int continues(const struct session *s, const struct opf_session *h)
{
	return (h->flags & OPF_S_RESUMED) && !s->have_end &&
	       s->hdr.session_id == h->session_id && s->hdr.start_tsc == h->start_tsc &&
	       s->hdr.ncores == h->ncores;
}

HANDLER(on_session)
{
	struct profile *p = arg;
	const struct opf_session *h = &v->r->session;

	if (p->nsess && h->ncores != p->ncores) {
		snprintf(err, errlen, "session %u has %u cores but session 1 had %u; "
			 "split the file per session", p->nsess + 1, h->ncores, p->ncores);
		return -1;
	}
	if (!p->nsess) {
		p->ncores = h->ncores;
		if (stacks_init(&p->stacks, h->ncores))
			return -1;
	}
	if (p->nsess && continues(cur(p), h)) {
		struct session *s = cur(p);

		s->joins++;
		s->join_bytes += v->len;
		s->open_writer = -1;
		return 0;
	}
	if (new_session(p, v) || sched_session(&p->sched, h))
		return -1;
	p->stacks.run = p->nsess - 1;	/* each session its own run (ctx.c: per-run shares) */
	return 0;
}

/*
 * The periods a sample stands for, in periods of the session's rate (opf_session.hz), so
 * that cores sampling at different rates weigh alike: the time since its core's previous
 * sample in periods of the core's current rate, at least 1, times the session periods one
 * of those is (a core throttled to half the rate weighs 2 a sample). More than 1 when ticks
 * were missed (interrupts held off, or the virtual CPU not running), which counting samples
 * would under-weigh. The first sample of a core, and the first after a pause or a gap in its
 * blocks (dropped, overwritten, or gone to another reader), weighs one of its periods: the
 * time before it was not sampled, not missed.
 *
 * Rounding carries over: acc_tsc is the time the weights so far account for, so a tick taken
 * 0.6 periods late (weight 2) and the next on time (weight 1, not 2 + 1 for 2 periods) leave
 * acc_tsc ahead, and the next late tick absorbs it; acc_tsc never runs more than a period
 * ahead of the latest sample. Over a run, a core's weights add up to the session's periods
 * it was sampled for.
 */
static uint64_t sample_weight(const struct session *s, struct core_acct *c, uint64_t tsc,
			      uint64_t *periods)
{
	uint64_t period = c->hz ? s->hdr.tsc_hz / c->hz : 0, w = 1;
	uint64_t scale = c->hz && s->hdr.hz > c->hz ? (s->hdr.hz + c->hz / 2) / c->hz : 1;

	*periods = 1;
	if (!c->acc_tsc || !period) {
		c->acc_tsc = tsc;
		return scale;
	}
	if (tsc > c->acc_tsc)
		w = (tsc - c->acc_tsc + period / 2) / period;
	w = w ? w : 1;
	c->acc_tsc += w * period;
	if (c->acc_tsc > tsc + period)
		c->acc_tsc = tsc + period;
	*periods = w;
	return w * scale;
}

/*
 * A sample standing for more than one of its core's periods: those it stands for less the
 * samples lost since the previous one (OPF_LOST) were missed, due from one period after
 * that sample on. Sessions with scheduler events keep where (struct missed_gap).
 */
static int note_gap(struct session *s, struct core_acct *c, const struct opf_sample *h,
		    uint64_t periods)
{
	uint64_t prev = c->prev_tsc, lost = c->lost_since;

	c->prev_tsc = h->tsc;
	c->lost_since = 0;
	if (!(s->hdr.flags & OPF_S_SCHED) || !prev || !c->hz || periods <= 1 + lost)
		return 0;
	if (room_for((void **)&s->gaps, s->ngaps, sizeof(*s->gaps)))
		return -1;
	s->gaps[s->ngaps++] = (struct missed_gap){ prev + s->hdr.tsc_hz / c->hz, h->tsc,
						   periods - 1 - lost, h->core };
	return 0;
}

/* Count a sample in the block and the dump it belongs to; 1 if it goes to the report. */
static int sample_place(struct profile *p, struct session *s, uint16_t core)
{
	struct dump *d = s->open_dump >= 0 ? &s->dumps[s->open_dump] : NULL;

	if (s->open_writer >= 0) {
		struct writer_blocks *w = &s->writers[s->open_writer];

		w->b[w->n - 1].samples++;
		w->b[w->n - 1].foreign += (uint32_t)s->open_writer != core;
	}
	if (d)
		d->samples[core]++;
	return !p->snapshot || (d && d->seq == p->snapshot);
}

HANDLER(on_sample)
{
	struct profile *p = arg;
	const struct opf_sample *h = &v->r->sample;
	struct session *s = cur(p);
	struct core_acct *c = &s->cores[h->core];

	c->samples++;
	c->truncated += (h->h.flags & OPF_F_TRUNCATED) != 0;
	c->depth_cut += (h->h.flags & OPF_F_DEPTH) != 0;
	c->idle += (h->h.flags & OPF_F_IDLE) != 0;
	c->irqoff += (h->h.flags & OPF_F_IRQOFF) != 0;
	uint64_t periods, w = sample_weight(s, c, h->tsc, &periods);

	if (note_gap(s, c, h, periods))
		return -1;
	c->periods += w;
	saw_tsc(p, h->tsc);
	blk_time(s, h->tsc);
	if (s->have_end)
		s->after_end++;
	p->samples++;
	p->periods += w;
	if (!sample_place(p, s, h->core))
		return 0;
	if ((s->hdr.flags & OPF_S_SCHED) && sched_sample(&p->sched, h, w))
		return -1;	/* every sample, filtered or not: the checks of the events */
	if (p->keep && !p->keep(p->keep_arg, p, h, w))
		return 0;
	p->reported++;
	if (p->hook && p->hook(p->hook_arg, s, h, v->tail, w))
		return -1;
	return stacks_add(&p->stacks, h->tid, h->core, stack_cut(h->h.flags), w, h->pc, v->tail,
			  h->nframes);
}

HANDLER(on_thread)
{
	struct profile *p = arg;
	const struct opf_thread *t = &v->r->thread;
	/* Longer names than the ABI allows are cut, not rejected. */
	int n = t->namelen < OPF_MAX_NAME ? t->namelen : OPF_MAX_NAME;

	if (room_for((void **)&p->threads, p->nthreads, sizeof(*p->threads)))
		return -1;
	struct thread_name *tn = &p->threads[p->nthreads++];
	tn->tid = t->tid;
	tn->core = t->core;
	memcpy(tn->name, v->tail, (size_t)n);
	tn->name[n] = 0;
	return sched_add(&p->sched, v, err, errlen);
}

HANDLER(on_sched)
{
	struct profile *p = arg;
	uint16_t type = v->r->h.type;

	if (type == OPF_SWITCH || type == OPF_SWITCH_SHORT || type == OPF_SWITCH_SAME)
		blk_time(cur(p), v->r->sw.tsc);
	else if (type == OPF_LOCKWAIT)
		blk_time(cur(p), v->r->lockwait.tsc);
	return sched_add(&p->sched, v, err, errlen);
}

HANDLER(on_lost)
{
	struct profile *p = arg;
	const struct opf_lost *l = &v->r->lost;

	cur(p)->cores[l->core].lost_rec[l->reason] += l->count;
	cur(p)->cores[l->core].lost_since += l->count;
	if (v->version >= 2 && l->reason == OPF_LOST_OUTPUT_FULL)
		cur(p)->lost_full_recs++;
	saw_tsc(p, l->tsc);
	blk_time(cur(p), l->tsc);
	return 0;
}

HANDLER(on_core_end)
{
	struct profile *p = arg;
	const struct opf_core_end *e = &v->r->core_end;
	struct core_acct *c = &cur(p)->cores[e->core];

	if (c->have_end) {
		snprintf(err, errlen, "second OPF_CORE_END for core %u in session %u", e->core,
			 p->nsess);
		return -1;
	}
	c->have_end = 1;
	c->end = *e;
	return 0;
}

HANDLER(on_session_end)
{
	struct profile *p = arg;
	const struct opf_session_end *e = &v->r->session_end;
	struct session *s = cur(p);

	/* A repeated OPF_SESSION_END replaces the first; harmless for reporting. */
	s->have_end = 1;
	s->end = *e;
	s->end_off = v->off;
	saw_tsc(p, e->end_tsc);
	return 0;
}

HANDLER(on_throttle)
{
	struct profile *p = arg;
	const struct opf_throttle *t = &v->r->throttle;

	if (room_for((void **)&p->thr, p->nthr, sizeof(*p->thr)))
		return -1;
	p->thr[p->nthr].session = p->nsess - 1;
	p->thr[p->nthr].t = *t;
	p->nthr++;
	cur(p)->cores[t->core].hz = t->new_hz;	/* the periods of its next samples */
	saw_tsc(p, t->tsc);
	blk_time(cur(p), t->tsc);
	return 0;
}

static int open_dump(struct session *s, const struct opf_snapshot *sn)
{
	struct dump *d;

	if (room_for((void **)&s->dumps, s->ndumps, sizeof(*s->dumps)))
		return -1;
	d = &s->dumps[s->ndumps];
	*d = (struct dump){ sn->seq, sn->tsc, 0, calloc(s->hdr.ncores, sizeof(uint64_t)), 0 };
	if (!d->samples)
		return -1;
	s->open_dump = (int32_t)s->ndumps++;
	return 0;
}

HANDLER(on_snapshot)
{
	struct profile *p = arg;
	const struct opf_snapshot *sn = &v->r->snapshot;
	struct session *s = cur(p);

	saw_tsc(p, sn->tsc);
	if (sn->h.flags & OPF_SNAP_BEGIN) {
		s->snapshots++;
		return open_dump(s, sn);
	}
	if ((sn->h.flags & OPF_SNAP_END) && s->open_dump >= 0 &&
	    s->dumps[s->open_dump].seq == sn->seq) {
		s->dumps[s->open_dump].closed = 1;
		s->dumps[s->open_dump].end_tsc = sn->tsc;
		s->open_dump = -1;
	}
	return 0;
}

static void core_mark(struct core_acct *c, uint16_t type, uint64_t tsc)
{
	c->acc_tsc = 0;		/* no weight spans a pause */
	if (type == OPF_PAUSE && !c->paused) {
		c->paused = 1;
		c->pauses++;
		c->pause_at = tsc;
	} else if (type == OPF_RESUME && c->paused) {
		c->paused = 0;
		if (tsc > c->pause_at)
			c->paused_tsc += tsc - c->pause_at;
	}
}

/* Format 1 marks are session-wide: every core pauses; format 2 marks name their core. */
HANDLER(on_mark)
{
	struct profile *p = arg;
	struct session *s = cur(p);

	for (uint32_t k = 0; k < s->hdr.ncores; k++)
		if (v->version < 2 || k == v->r->mark.core)
			core_mark(&s->cores[k], v->r->h.type, v->r->mark.tsc);
	saw_tsc(p, v->r->mark.tsc);
	blk_time(s, v->r->mark.tsc);
	return sched_mark(&p->sched, v->r->h.type, v->r->mark.tsc,
			  v->version < 2 ? SMARK_ALL : (uint16_t)v->r->mark.core);
}

HANDLER(on_block)
{
	struct profile *p = arg;
	const struct opf_block *b = &v->r->block;
	struct session *s = cur(p);
	uint32_t wi = b->core == OPF_CORE_STREAM ? s->hdr.ncores : b->core;
	struct writer_blocks *w = &s->writers[wi];

	if (s->joins && (b->h.flags & OPF_B_PARTIAL) && w->n && w->b[w->n - 1].seq == b->seq) {
		/* the rest of the block an earlier reader's file ends in: one block again */
		s->join_bytes += v->len;
		w->b[w->n - 1].bytes -= v->len;	/* on_every adds this record's length */
		s->open_writer = (int32_t)wi;
		return 0;
	}
	if (room_for((void **)&w->b, w->n, sizeof(*w->b)))
		return -1;
	if (wi < s->hdr.ncores) {	/* no weight spans a gap in the core's blocks */
		struct core_acct *c = &s->cores[wi];

		if (c->have_seq && b->seq != c->last_seq + 1)
			c->acc_tsc = 0;
		c->last_seq = b->seq;
		c->have_seq = 1;
	}
	w->b[w->n++] = (struct blk){ b->seq, v->off, b->samples, b->bytes, 0, 0, 0, b->h.flags,
				     0, 0 };
	s->open_writer = (int32_t)wi;
	if (wi < s->hdr.ncores)
		sched_block(&p->sched, wi, (b->h.flags & OPF_B_PARTIAL) != 0);
	return 0;
}

HANDLER(on_drop)
{
	struct profile *p = arg;
	const struct opf_drop *d = &v->r->drop;
	struct session *s = cur(p);

	s->cores[d->core].drop_samples += d->samples;
	if (d->h.flags & OPF_D_UNLISTED) {	/* counted only: which blocks is not known */
		s->cores[d->core].unlisted += d->blocks;
		return 0;
	}
	if (room_for((void **)&s->drops, s->ndrops, sizeof(*s->drops)))
		return -1;
	s->drops[s->ndrops++] = (struct drop_ev){ v->off, d->seq, d->samples, d->core, d->blocks };
	s->cores[d->core].drop_blocks += d->blocks;
	return 0;
}

/* After every record of a format-2 session: its bytes belong to the open block. */
HANDLER(on_every)
{
	struct profile *p = arg;
	struct session *s = cur(p);

	if (v->version < 2 || v->r->h.type == OPF_SESSION)
		return 0;
	if (s->open_writer < 0) {
		if (!s->outside++)
			s->outside_off = v->off;
		return 0;
	}
	s->writers[s->open_writer].b[s->writers[s->open_writer].n - 1].bytes += v->len;
	return 0;
}

/* A crash dump's own records: crashinfo.c keeps them with their session. */
static int on_crash(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct session *s = cur(arg);

	return crash_add(&s->crash, &s->hdr, s->off, v, err, errlen);
}

HANDLER(on_unknown)
{
	struct profile *p = arg;
	uint16_t type = v->r->h.type;

	p->unknown++;
	for (uint32_t i = 0; i < p->nunknown_types; i++)
		if (p->unknown_types[i] == type)
			return 0;
	if (p->nunknown_types < sizeof(p->unknown_types) / sizeof(p->unknown_types[0]))
		p->unknown_types[p->nunknown_types++] = type;
	return 0;
}

static int on_flush(void *arg)
{
	struct profile *p = arg;

	return p->nsess ? stacks_flush(&p->stacks) : 0;
}

const struct opf_sink profile_sink = {
	.on = {
		[OPF_SESSION] = on_session,
		[OPF_SAMPLE] = on_sample,
		[OPF_THREAD] = on_thread,
		[OPF_LOST] = on_lost,
		[OPF_CORE_END] = on_core_end,
		[OPF_SESSION_END] = on_session_end,
		[OPF_THROTTLE] = on_throttle,
		[OPF_SNAPSHOT] = on_snapshot,
		[OPF_PAUSE] = on_mark,
		[OPF_RESUME] = on_mark,
		[OPF_BLOCK] = on_block,
		[OPF_DROP] = on_drop,
		[OPF_CRASH] = on_crash,
		[OPF_CRASH_CORE] = on_crash,
		[OPF_CRASH_END] = on_crash,
		[OPF_SWITCH] = on_sched,
		[OPF_WAKEUP] = on_sched,
		[OPF_LOCKWAIT] = on_sched,
		[OPF_SCHED_END] = on_sched,
		[OPF_SWITCH_SHORT] = on_sched,
		[OPF_SWITCH_SAME] = on_sched,
	},
	.unknown = on_unknown,
	.every = on_every,
	.flush = on_flush,
};

static void session_free(struct session *s)
{
	for (uint32_t w = 0; s->writers && w <= s->hdr.ncores; w++)
		free(s->writers[w].b);
	for (uint32_t d = 0; d < s->ndumps; d++)
		free(s->dumps[d].samples);
	free(s->writers);
	free(s->dumps);
	free(s->drops);
	free(s->cores);
	free(s->gaps);
	crash_free(s->crash);
}

void profile_free(struct profile *p)
{
	for (uint32_t i = 0; i < p->nsess; i++)
		session_free(&p->sess[i]);
	free(p->sess);
	free(p->threads);
	free(p->thr);
	sched_free(&p->sched);
	if (p->nsess)
		stacks_free(&p->stacks);
	memset(p, 0, sizeof(*p));
}

const char *profile_thread_name(const struct profile *p, uint32_t tid)
{
	for (uint32_t i = p->nthreads; i-- > 0;)
		if (p->threads[i].tid == tid)
			return p->threads[i].name;
	return tid == 0 ? "idle" : NULL;
}

const char *profile_thread_label(const struct profile *p, uint32_t tid)
{
	const char *n = profile_thread_name(p, tid);

	return n ? n : "?";
}

double session_seconds(const struct session *s)
{
	uint64_t end = s->have_end ? s->end.end_tsc : s->last_tsc;

	if (!s->hdr.tsc_hz || end < s->hdr.start_tsc)
		return -1;
	return (double)(end - s->hdr.start_tsc) / (double)s->hdr.tsc_hz;
}

const struct dump *profile_dump(const struct profile *p, uint64_t seq)
{
	for (uint32_t i = 0; i < p->nsess; i++)
		for (uint32_t d = 0; d < p->sess[i].ndumps; d++)
			if (p->sess[i].dumps[d].seq == seq)
				return &p->sess[i].dumps[d];
	return NULL;
}

uint64_t profile_dumps(const struct profile *p)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < p->nsess; i++)
		n += p->sess[i].ndumps;
	return n;
}

int session_resumed(const struct session *s)
{
	return (s->hdr.flags & OPF_S_RESUMED) != 0;
}

int session_is_crash(const struct session *s)
{
	return (s->hdr.flags & OPF_S_CRASH) != 0;
}

int session_discarded(const struct session *s)
{
	return s->have_end && (s->end.h.flags & OPF_SE_DISCARDED);
}

uint64_t session_pauses(const struct session *s, uint64_t *paused_tsc)
{
	uint64_t n = 0;

	*paused_tsc = 0;
	for (uint32_t k = 0; k < s->hdr.ncores; k++) {
		if (s->cores[k].pauses > n)
			n = s->cores[k].pauses;
		if (s->cores[k].paused_tsc > *paused_tsc)
			*paused_tsc = s->cores[k].paused_tsc;
	}
	return n;
}

uint64_t profile_missed(const struct profile *p, uint64_t *due)
{
	uint64_t missed = 0;

	*due = 0;
	for (uint32_t i = 0; i < p->nsess; i++)
		for (uint32_t k = 0; k < p->sess[i].hdr.ncores; k++)
			if (p->sess[i].cores[k].have_end) {
				missed += p->sess[i].cores[k].end.missed;
				*due += p->sess[i].cores[k].end.taken + p->sess[i].cores[k].end.missed;
			}
	return missed;
}

uint64_t core_lost(const struct core_acct *c, int reason)
{
	return c->have_end ? c->end.lost[reason] : c->lost_rec[reason];
}

int profile_complete(const struct profile *p)
{
	for (uint32_t i = 0; i < p->nsess; i++) {
		if (!p->sess[i].have_end || session_resumed(&p->sess[i]) ||
		    session_discarded(&p->sess[i]))
			return 0;
		for (uint32_t c = 0; c < p->sess[i].hdr.ncores; c++)
			if (!p->sess[i].cores[c].have_end)
				return 0;
	}
	return 1;
}
