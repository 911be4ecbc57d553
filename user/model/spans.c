/*
 * spans.c: the spans and marks of a session with scheduler events (spans.h); called
 * by timeline.c (--timeline) and trace_json.c (--trace) after sched_analyze. The spans are
 * the replay's (model/sched_acct.c): every core from the session's start to its end, what
 * ran there -- a thread, idle, or unknown where no event covers the time (a gap in its
 * events: model/sched_gaps.c). A core that never switches ran what its samples say all
 * along. Spans of no length are not made.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/spans.h"

double timeline_us(const struct sched_sess *s, uint64_t tsc)
{
	return 1e3 * sched_ms(s, tsc > s->start ? tsc - s->start : 0);
}

/* Span sp of core k, its part the filters keep (a span cut at the window's end did not
 * stop there); fn's return, or 0 when the filters leave it out. */
static int filtered(const struct profile *p, uint32_t si, uint32_t k, struct filter *f,
		    struct tspan sp, tspan_fn fn, void *arg)
{
	struct fitem it = { si, k, sp.tid, FI_NONE, sp.t0, sp.t1, NULL, 0, NULL, 0 };

	if (sp.t1 <= sp.t0 || filter_judge(f, p, &it, FJ_ALL) != FV_KEEP)
		return 0;
	if (it.t1 < sp.t1) {
		sp.end = NULL;
		sp.cut = 0;
	}
	sp.t0 = it.t0;
	sp.t1 = it.t1;
	return fn(arg, k, &sp);
}

int timeline_spans(const struct profile *p, uint32_t si, uint32_t k, struct filter *f,
		   tspan_fn fn, void *arg)
{
	const struct sched_sess *s = &p->sched.sess[si];
	const struct sched_core *c = &s->cores[k];
	int rc = 0;

	for (uint32_t j = 0; j < c->nspans && !rc; j++) {
		const struct cspan *x = &c->spans[j];
		struct tspan sp = { x->t0, x->t1, x->tid, x->end == UINT32_MAX && x->t1 < s->end,
				    x->end == UINT32_MAX ? NULL : &s->ev[x->end] };

		rc = filtered(p, si, k, f, sp, fn, arg);
	}
	return rc;
}

/* Mark m, when the filters keep its core and time. */
static int mark_kept(const struct profile *p, uint32_t si, struct filter *f, struct tmark *m,
		     tmark_fn fn, void *arg)
{
	struct fitem it = { si, m->core == TM_ALL ? FI_NONE : m->core, FI_NONE, FI_NONE, m->t0,
			    m->t1, NULL, 0, NULL, 0 };

	if (filter_judge(f, p, &it, FJ_WHEN | FJ_WHERE) != FV_KEEP)
		return 0;
	m->t0 = it.t0;
	m->t1 = it.t1;
	return fn(arg, m);
}

const char *timeline_why(const struct tspan *sp, char *buf, size_t n)
{
	const struct sev *e = sp->end;

	if (!sp->tid || sp->tid == TSPAN_UNKNOWN)
		snprintf(buf, n, "%s", "");
	else if (sp->cut)
		snprintf(buf, n, "running when its core's events stop (a gap)");
	else if (!e)
		snprintf(buf, n, "still running at the end");
	else if (e->why == OPF_WHY_QLOCK && e->holder)
		snprintf(buf, n, "qlock %s held by tid %" PRIu32, e->name[0] ? e->name : "?",
			 e->holder);
	else if ((e->why == OPF_WHY_QLOCK || e->why == OPF_WHY_IO) && e->name[0])
		snprintf(buf, n, "%s %s", sched_why_name(e->why), e->name);
	else
		snprintf(buf, n, "%s", sched_why_name(e->why));
	return buf;
}

uint64_t timeline_missed(const struct profile *p, uint32_t si, uint32_t k)
{
	const struct session *s = &p->sess[si];

	return k < s->hdr.ncores && s->cores[k].have_end ? s->cores[k].end.missed : 0;
}

uint64_t timeline_missed_placed(const struct profile *p, uint32_t si, uint32_t k)
{
	const struct session *s = &p->sess[si];
	uint64_t n = 0;

	for (uint32_t i = 0; i < s->ngaps; i++)
		n += s->gaps[i].core == k ? s->gaps[i].periods : 0;
	return n;
}

/* Where each core's samples show periods it missed (profile.c's note_gap). */
static int missed_marks(const struct profile *p, uint32_t si, struct filter *f, tmark_fn fn,
			void *arg)
{
	const struct session *ps = &p->sess[si];
	int rc = 0;

	for (uint32_t i = 0; i < ps->ngaps && !rc; i++) {
		const struct missed_gap *g = &ps->gaps[i];
		struct tmark m = { g->t0, g->t1, g->core, TM_MISSED, "" };

		snprintf(m.text, sizeof(m.text), "core %" PRIu32 " missed %" PRIu64 " timer "
			 "period%s", g->core, g->periods, g->periods == 1 ? "" : "s");
		rc = mark_kept(p, si, f, &m, fn, arg);
	}
	return rc;
}

static int pause_marks(const struct profile *p, uint32_t si, struct filter *f, tmark_fn fn,
		       void *arg)
{
	const struct sched_sess *s = &p->sched.sess[si];
	int rc = 0;

	for (uint32_t i = 0; i < s->nmarks && !rc; i++) {
		const struct smark *m = &s->marks[i];
		struct tmark t = { m->tsc, m->tsc, m->core == SMARK_ALL ? TM_ALL : m->core,
				   m->type == OPF_PAUSE ? TM_PAUSE : TM_RESUME, "" };

		snprintf(t.text, sizeof(t.text), "sampling %s", m->type == OPF_PAUSE ? "paused" :
			 "resumed");
		rc = mark_kept(p, si, f, &t, fn, arg);
	}
	return rc;
}

int timeline_marks(const struct profile *p, uint32_t si, struct filter *f, tmark_fn fn,
		   void *arg)
{
	const struct session *ps = &p->sess[si];
	int rc = pause_marks(p, si, f, fn, arg);

	for (uint32_t i = 0; i < p->nthr && !rc; i++) {
		const struct opf_throttle *t = &p->thr[i].t;
		struct tmark m = { t->tsc, t->tsc, t->core, TM_THROTTLE, "" };

		if (p->thr[i].session != si)
			continue;
		snprintf(m.text, sizeof(m.text), "%s %" PRIu32 " -> %" PRIu32 " Hz",
			 throttle_raised(t) ? "rate raised" : "throttled", t->old_hz, t->new_hz);
		rc = mark_kept(p, si, f, &m, fn, arg);
	}
	for (uint32_t i = 0; i < ps->ndumps && !rc; i++) {
		const struct dump *d = &ps->dumps[i];
		struct tmark m = { d->tsc, d->closed ? d->end_tsc : d->tsc, TM_ALL, TM_SNAPSHOT, "" };

		snprintf(m.text, sizeof(m.text), "snapshot dump %" PRIu64, d->seq);
		rc = mark_kept(p, si, f, &m, fn, arg);
	}
	return rc ? rc : missed_marks(p, si, f, fn, arg);
}

int timeline_check(const struct profile *p, const char *opt)
{
	if (sched_any(&p->sched))
		return 1;
	fprintf(stderr, "opreport: %s: the stream has no scheduler events (start the session "
		"with \"oprofile start -e sched\")\n", opt);
	errno = 0;
	return 0;
}
