/*
 * profile.c: the parser's sink (profile_sink, given to stream.c by opreport.c). Turns validated
 * records into struct profile: accounting per session and core, names, events, and sample
 * aggregation into the unique-stack table. One handler per record type, in the table at the
 * end; the report modules read the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

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

static int on_session(void *arg, const struct opf_view *v, char *err, size_t errlen)
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
			goto oom;
	}
	struct session *ns = realloc(p->sess, (p->nsess + 1) * sizeof(*ns));
	if (!ns)
		goto oom;
	p->sess = ns;
	struct session *s = &ns[p->nsess];
	memset(s, 0, sizeof(*s));
	s->hdr = *h;
	s->off = v->off;
	s->last_tsc = h->start_tsc;
	s->cores = calloc(h->ncores, sizeof(*s->cores));
	if (!s->cores)
		goto oom;
	p->nsess++;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

static int on_sample(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	const struct opf_sample *h = &v->r->sample;
	struct session *s = cur(p);
	struct core_acct *c = &s->cores[h->core];

	c->samples++;
	if (h->h.flags & OPF_F_TRUNCATED)
		c->truncated++;
	if (h->h.flags & OPF_F_IDLE)
		c->idle++;
	if (h->tsc > s->last_tsc)
		s->last_tsc = h->tsc;
	if (s->have_end)
		s->after_end++;
	p->samples++;
	(void)err;
	(void)errlen;
	return stacks_add(&p->stacks, h->tid, h->core, h->pc, v->tail, h->nframes);
}

static int on_thread(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	const struct opf_thread *t = &v->r->thread;
	/* Longer names than the ABI allows are cut, not rejected. */
	int n = t->namelen < OPF_MAX_NAME ? t->namelen : OPF_MAX_NAME;

	(void)err;
	(void)errlen;

	if (room_for((void **)&p->threads, p->nthreads, sizeof(*p->threads)))
		return -1;
	struct thread_name *tn = &p->threads[p->nthreads++];
	tn->tid = t->tid;
	tn->core = t->core;
	memcpy(tn->name, v->tail, (size_t)n);
	tn->name[n] = 0;
	return 0;
}

static int on_lost(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	const struct opf_lost *l = &v->r->lost;

	(void)err;
	(void)errlen;
	cur(p)->cores[l->core].lost_rec[l->reason] += l->count;
	saw_tsc(p, l->tsc);
	return 0;
}

static int on_core_end(void *arg, const struct opf_view *v, char *err, size_t errlen)
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

static int on_session_end(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	const struct opf_session_end *e = &v->r->session_end;
	struct session *s = cur(p);

	(void)err;
	(void)errlen;
	/* A repeated OPF_SESSION_END replaces the first; harmless for reporting. */
	s->have_end = 1;
	s->end = *e;
	s->end_off = v->off;
	saw_tsc(p, e->end_tsc);
	return 0;
}

static int on_throttle(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	const struct opf_throttle *t = &v->r->throttle;

	(void)err;
	(void)errlen;
	if (room_for((void **)&p->thr, p->nthr, sizeof(*p->thr)))
		return -1;
	p->thr[p->nthr].session = p->nsess - 1;
	p->thr[p->nthr].t = *t;
	p->nthr++;
	saw_tsc(p, t->tsc);
	return 0;
}

static int on_snapshot(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	const struct opf_snapshot *sn = &v->r->snapshot;

	(void)err;
	(void)errlen;
	if (sn->h.flags & OPF_SNAP_BEGIN)
		cur(p)->snapshots++;
	saw_tsc(p, sn->tsc);
	return 0;
}

static int on_mark(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	const struct opf_mark *m = &v->r->mark;
	uint16_t type = v->r->h.type;
	struct session *s = cur(p);

	(void)err;
	(void)errlen;
	if (type == OPF_PAUSE && !s->paused) {
		s->paused = 1;
		s->pauses++;
		s->pause_at = m->tsc;
	} else if (type == OPF_RESUME && s->paused) {
		s->paused = 0;
		if (m->tsc > s->pause_at)
			s->paused_tsc += m->tsc - s->pause_at;
	}
	saw_tsc(p, m->tsc);
	return 0;
}

static int on_unknown(void *arg, const struct opf_view *v, char *err, size_t errlen)
{
	struct profile *p = arg;
	uint16_t type = v->r->h.type;

	(void)err;
	(void)errlen;
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
	},
	.unknown = on_unknown,
	.flush = on_flush,
};

void profile_free(struct profile *p)
{
	for (uint32_t i = 0; i < p->nsess; i++)
		free(p->sess[i].cores);
	free(p->sess);
	free(p->threads);
	free(p->thr);
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

double session_seconds(const struct session *s)
{
	uint64_t end = s->have_end ? s->end.end_tsc : s->last_tsc;

	if (!s->hdr.tsc_hz || end < s->hdr.start_tsc)
		return -1;
	return (double)(end - s->hdr.start_tsc) / (double)s->hdr.tsc_hz;
}

uint64_t core_lost(const struct core_acct *c, int reason)
{
	return c->have_end ? c->end.lost[reason] : c->lost_rec[reason];
}

int profile_complete(const struct profile *p)
{
	for (uint32_t i = 0; i < p->nsess; i++) {
		if (!p->sess[i].have_end)
			return 0;
		for (uint32_t c = 0; c < p->sess[i].hdr.ncores; c++)
			if (!p->sess[i].cores[c].have_end)
				return 0;
	}
	return 1;
}
