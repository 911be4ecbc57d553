/*
 * profile.c: the parser's sink. Turns validated records into struct profile: accounting per
 * session and core, names, events, and sample aggregation into the unique-stack table.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

const char *const lost_reason_name[OPF_LOST_NREASONS] = {
	"no empty block", "output queue full", "paused", "other",
};

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

static int on_session(void *arg, uint64_t off, const struct opf_session *h, char *err,
		      size_t errlen)
{
	struct profile *p = arg;

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
	s->off = off;
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

static int on_sample(void *arg, const struct opf_sample *h, const uint8_t *frames)
{
	struct profile *p = arg;
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
	return stacks_add(&p->stacks, h->tid, h->core, h->pc, frames, h->nframes);
}

static int on_thread(void *arg, const struct opf_thread *t, const char *name)
{
	struct profile *p = arg;

	if ((p->nthreads & (p->nthreads - 1)) == 0) {
		size_t cap = p->nthreads ? 2u * p->nthreads : 16;
		struct thread_name *n = realloc(p->threads, cap * sizeof(*n));

		if (!n)
			return -1;
		p->threads = n;
	}
	struct thread_name *tn = &p->threads[p->nthreads++];
	tn->tid = t->tid;
	tn->core = t->core;
	snprintf(tn->name, sizeof(tn->name), "%s", name);
	return 0;
}

static int on_lost(void *arg, const struct opf_lost *l)
{
	struct profile *p = arg;

	cur(p)->cores[l->core].lost_rec[l->reason] += l->count;
	saw_tsc(p, l->tsc);
	return 0;
}

static int on_core_end(void *arg, uint64_t off, const struct opf_core_end *e, char *err,
		       size_t errlen)
{
	struct profile *p = arg;
	struct core_acct *c = &cur(p)->cores[e->core];

	(void)off;
	if (c->have_end) {
		snprintf(err, errlen, "second OPF_CORE_END for core %u in session %u", e->core,
			 p->nsess);
		return -1;
	}
	c->have_end = 1;
	c->end = *e;
	return 0;
}

static int on_session_end(void *arg, uint64_t off, const struct opf_session_end *e)
{
	struct profile *p = arg;
	struct session *s = cur(p);

	/* A repeated OPF_SESSION_END replaces the first; harmless for reporting. */
	s->have_end = 1;
	s->end = *e;
	s->end_off = off;
	saw_tsc(p, e->end_tsc);
	return 0;
}

static int on_throttle(void *arg, const struct opf_throttle *t)
{
	struct profile *p = arg;

	if ((p->nthr & (p->nthr - 1)) == 0) {
		size_t cap = p->nthr ? 2u * p->nthr : 16;
		struct throttle_ev *n = realloc(p->thr, cap * sizeof(*n));

		if (!n)
			return -1;
		p->thr = n;
	}
	p->thr[p->nthr].session = p->nsess - 1;
	p->thr[p->nthr].t = *t;
	p->nthr++;
	saw_tsc(p, t->tsc);
	return 0;
}

static int on_snapshot(void *arg, const struct opf_snapshot *sn)
{
	struct profile *p = arg;

	if (sn->h.flags & OPF_SNAP_BEGIN)
		cur(p)->snapshots++;
	saw_tsc(p, sn->tsc);
	return 0;
}

static int on_mark(void *arg, uint16_t type, const struct opf_mark *m)
{
	struct profile *p = arg;
	struct session *s = cur(p);

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

static int on_unknown(void *arg, uint64_t off, uint16_t type, uint32_t len)
{
	struct profile *p = arg;

	(void)off;
	(void)len;
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
	.flush = on_flush,
	.session = on_session,
	.sample = on_sample,
	.thread = on_thread,
	.lost = on_lost,
	.core_end = on_core_end,
	.session_end = on_session_end,
	.throttle = on_throttle,
	.snapshot = on_snapshot,
	.mark = on_mark,
	.unknown = on_unknown,
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
