/*
 * sched_acct.c: where every thread's time went, replayed from a session's events (kept by
 * ingest/events.c). Called once by opreport.c after the parse (sched_analyze); --stats
 * (text/sched_stats.c), the views, the timeline and the exports read the result.
 *
 * First sched_gaps.c finds where each core's events are not complete and puts those gaps
 * among the events (SEV_GAP). The accounting then replays each session's events in time
 * order (ties in stream order):
 *	per core	what runs between two switches: a thread (busy), its idle thread, or
 *			unknown -- inside a gap, and until the events say (a gap's end names
 *			what runs from there: sched_gaps.c). A switch whose prev is not the
 *			thread the last switch put there means a switch is missing: counted
 *			bad. The result is the core's spans (struct cspan), start to end.
 *	per thread	a state machine: ON from a switch-in to a switch-out; then RUNNABLE
 *			(preempted, yield) or BLOCKED by reason until a wake-up; RUNNABLE
 *			until the next switch-in; gone at exit. UNKNOWN before its first event
 *			(unless its core's first span is its own) and from the start of a gap
 *			in its core's events until an event says again: a gap's time is never
 *			credited to the state before it. Threads are pinned: a thread's core
 *			is where its switches, creation, samples or wake-ups say it lives.
 * With --time (s->from, s->to: model/filter.c) every time counted is its part in that
 * window (a thread's life too); the spans stay whole, the views clip them.
 * One check needs nothing but the switches: every switch-out's prev_cpu (the kernel's count)
 * advances by exactly the time the switches say the thread ran since its last switch-out
 * (not across a gap). The samples are checked against the spans by sched_check.c.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "model/sched_acct.h"
#include "model/lock_waits.h"
#include "model/sched_check.h"
#include "model/sched_gaps.h"

enum { ST_UNKNOWN, ST_ON, ST_RUNNABLE, ST_BLOCKED, ST_GONE };

/* The replay's view of one core: what runs since when, and whether its events are complete. */
struct corestate {
	uint32_t running;	/* tid, or SEV_NOBODY: not known */
	uint64_t since;
	int gap;		/* inside a gap of its events */
};

/* The thread tid of s, made (UNKNOWN since the start) if new; NULL: out of memory. */
static struct sthread *thread_of(struct sched_sess *s, uint32_t tid)
{
	for (uint32_t i = 0; i < s->nthr; i++)
		if (s->thr[i].tid == tid)
			return &s->thr[i];
	if (s->nthr == s->thrcap) {
		uint32_t nc = s->thrcap ? 2 * s->thrcap : 64;
		struct sthread *nt = realloc(s->thr, nc * sizeof(*nt));

		if (!nt)
			return NULL;
		s->thr = nt;
		s->thrcap = nc;
	}
	struct sthread *t = &s->thr[s->nthr++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->first = t->since = s->start;
	t->out = UINT32_MAX;
	t->core = UINT16_MAX;
	return t;
}

/* Thread tid (not idle) lives on core, unless something surer said where (sure: a switch).
 * One whose first event is its creation after the start begins to exist then. */
static int place(struct sched_sess *s, const struct sev *e, uint32_t tid, uint16_t core,
		 int sure)
{
	uint32_t n = s->nthr;
	struct sthread *t;

	if (!tid || tid == SEV_NOBODY)
		return 0;
	if (!(t = thread_of(s, tid)))
		return -1;
	if (sure || t->core == UINT16_MAX)
		t->core = core;
	if (s->nthr > n && e && e->kind == SEV_CREATE && e->tsc > s->start) {
		t->first = t->since = e->tsc;
		t->created = 1;
	}
	return 0;
}

/* Every thread the session names, on its core, before the replay (a gap ends the states
 * of its core's threads, so each must be known by then). Events are in time order. */
static int place_threads(struct sched_sess *s)
{
	int rc = 0;

	for (uint32_t i = 0; i < s->nev && !rc; i++) {
		const struct sev *e = &s->ev[i];

		if (e->kind == SEV_SWITCH)
			rc = place(s, e, e->a, e->core, 1) || place(s, e, e->b, e->core, 1);
		else if (e->kind == SEV_CREATE || e->kind == SEV_LOCK)
			rc = place(s, e, e->a, e->core, 0);
	}
	for (uint32_t i = 0; i < s->nsmp && !rc; i++)
		rc = place(s, NULL, s->smp[i].tid, s->smp[i].core, 0);
	for (uint32_t i = 0; i < s->nev && !rc; i++)
		if (s->ev[i].kind == SEV_WAKEUP)	/* why: the woken thread's core */
			rc = place(s, NULL, s->ev[i].a, s->ev[i].why, 0);
	for (uint32_t i = 0; i < s->nthr; i++)
		if (s->thr[i].core == UINT16_MAX)
			s->thr[i].core = 0;
	return rc;
}

/* The part of [a, b) in the report's window (--time: s->from, s->to; else all of it). */
static uint64_t in_window(const struct sched_sess *s, uint64_t a, uint64_t b)
{
	a = a > s->from ? a : s->from;
	b = b < s->to ? b : s->to;
	return b > a ? b - a : 0;
}

/* t's state ends at tsc: its time so far (in the window) goes to the state's bucket. Before
 * t begins to exist (since: its creation) there is nothing to count. */
static void close_state(const struct sched_sess *s, struct sthread *t, uint64_t tsc)
{
	uint64_t d;

	if (tsc <= t->since)
		return;
	d = in_window(s, t->since, tsc);
	switch (t->state) {
	case ST_ON: t->on += d; break;
	case ST_RUNNABLE: t->runnable += d; break;
	case ST_BLOCKED: t->blocked[t->why] += d; break;
	case ST_UNKNOWN: t->unknown += d; break;
	default: break;
	}
	t->since = tsc;
}

/* The stretch off a CPU that began at t's last switch-out ends at tsc (cut: by a gap in its
 * core's events, not by its switch-in); kept (its part in the window) when it overlaps the
 * window. */
static int end_offcpu(struct sched_sess *s, struct sthread *t, uint64_t tsc, int cut)
{
	struct offcpu *o;
	uint64_t out = t->out == UINT32_MAX ? 0 : s->ev[t->out].tsc;

	if (t->out == UINT32_MAX || !in_window(s, out, tsc)) {
		t->out = UINT32_MAX;
		t->wake_tsc = 0;
		return 0;
	}
	if (grow_room((void **)&s->off, &s->offcap, s->noff, sizeof(*s->off), 256))
		return -1;
	o = &s->off[s->noff];
	o->ev = t->out;
	o->tid = t->tid;
	o->total = in_window(s, out, tsc);
	o->blocked = t->wake_tsc > out ? in_window(s, out, t->wake_tsc) : 0;
	o->cut = cut;
	t->cut += cut;
	s->noff++;
	t->out = UINT32_MAX;
	t->wake_tsc = 0;
	return 0;
}

/* Core k ran what it runs now from its last change to tsc: one span (end: the switch that
 * ended it, or UINT32_MAX). 0 or -1 (memory). */
static int close_span(struct sched_sess *s, uint32_t k, struct corestate *cs, uint64_t tsc,
		      uint32_t end)
{
	struct sched_core *c = &s->cores[k];

	if (tsc > cs->since) {
		if (grow_room((void **)&c->spans, &c->spancap, c->nspans, sizeof(*c->spans), 64))
			return -1;
		c->spans[c->nspans++] = (struct cspan){ cs->since, tsc, cs->running, end };
	}
	cs->since = tsc;
	return 0;
}

/* prev leaves its core at event i: ON until now; its kernel CPU time checks the switches. */
static void switch_out(struct sched_sess *s, struct sthread *t, uint32_t i)
{
	const struct sev *e = &s->ev[i];

	close_state(s, t, e->tsc);
	if (t->have_kcpu && e->x - t->kcpu != t->on - t->on_at_out)
		t->bad_cpu++;
	t->on_at_out = t->on;
	t->kcpu = e->x;
	t->have_kcpu = 1;
	t->out = i;
	t->why = e->why;
	t->state = e->why == OPF_WHY_EXIT ? ST_GONE : e->why <= OPF_WHY_YIELD ? ST_RUNNABLE :
		   ST_BLOCKED;
	if (t->state == ST_GONE) {
		t->exited = 1;
		t->last = e->tsc;
	}
}

/* One switch: the core's continuity and span, prev out, next in. 0 or -1 (memory). */
static int replay_switch(struct sched_sess *s, uint32_t i, struct corestate *cs)
{
	const struct sev *e = &s->ev[i];
	struct sched_core *c = &s->cores[e->core];
	struct sthread *t;

	c->nswitch++;
	if (cs->gap)		/* its prev's and next's states stay unknown, as its time */
		return 0;
	if (cs->running != SEV_NOBODY && cs->running != e->a && !c->bad++)
		c->bad_tsc = e->tsc;
	if (close_span(s, e->core, cs, e->tsc, i))
		return -1;
	cs->running = e->b;
	if (e->a) {
		if (!(t = thread_of(s, e->a)))
			return -1;
		switch_out(s, t, i);
	}
	if (!e->b)
		return 0;
	if (!(t = thread_of(s, e->b)) || end_offcpu(s, t, e->tsc, 0))
		return -1;
	close_state(s, t, e->tsc);
	t->state = ST_ON;
	return 0;
}

/* tid made runnable: blocked time ends (its off-CPU stretch keeps the blocked part). A
 * wake-up inside a gap of its core's events changes nothing: that time is unknown. */
static int replay_wake(struct sched_sess *s, const struct sev *e, const struct corestate *cs)
{
	struct sthread *t = thread_of(s, e->a);

	if (!t)
		return -1;
	t->wakes++;
	if (cs[t->core].gap)
		return 0;
	if (t->state == ST_BLOCKED || t->state == ST_UNKNOWN) {
		close_state(s, t, e->tsc);
		t->state = ST_RUNNABLE;
		t->wake_tsc = e->tsc;
	}
	return 0;
}

/*
 * A gap in core k's events begins (every thread of k: its state so far counted, unknown from
 * here, its off-CPU stretch cut, its kernel CPU time not comparable across) or ends (what
 * runs from here, if known, is on its core). 0 or -1 (memory).
 */
static int replay_gap(struct sched_sess *s, const struct sev *e, struct corestate *cs)
{
	struct sthread *t;

	if (close_span(s, e->core, cs, e->tsc, UINT32_MAX))
		return -1;
	cs->gap = e->a;
	cs->running = e->a ? SEV_NOBODY : e->b;
	for (uint32_t i = 0; e->a && i < s->nthr; i++) {
		t = &s->thr[i];
		if (t->core != e->core || t->state == ST_GONE)
			continue;
		close_state(s, t, e->tsc);
		if (end_offcpu(s, t, e->tsc, 1))
			return -1;
		t->state = ST_UNKNOWN;
		t->have_kcpu = 0;
	}
	if (e->a || !e->b || e->b == SEV_NOBODY)
		return 0;
	if (!(t = thread_of(s, e->b)))
		return -1;
	close_state(s, t, e->tsc);
	t->state = ST_ON;
	return 0;
}

/* Replay session s's events; then every thread's last state and core's span run to the end. */
static int replay(struct sched_sess *s)
{
	struct corestate *cs = calloc(s->ncores ? s->ncores : 1, sizeof(*cs));
	int rc = cs ? 0 : -1;

	for (uint32_t k = 0; k < s->ncores && cs; k++)
		cs[k] = (struct corestate){ SEV_NOBODY, s->start, 0 };
	for (uint32_t i = 0; i < s->nev && !rc; i++) {
		const struct sev *e = &s->ev[i];

		if (e->kind != SEV_CREATE && e->core >= s->ncores)
			continue;
		if (e->kind == SEV_SWITCH)
			rc = replay_switch(s, i, &cs[e->core]);
		else if (e->kind == SEV_WAKEUP)
			rc = replay_wake(s, e, cs);
		else if (e->kind == SEV_GAP)
			rc = replay_gap(s, e, &cs[e->core]);
	}
	for (uint32_t k = 0; k < s->ncores && !rc; k++)
		rc = close_span(s, k, &cs[k], s->end, UINT32_MAX);
	for (uint32_t i = 0; i < s->nthr && !rc; i++) {
		struct sthread *t = &s->thr[i];

		if (t->state == ST_GONE)
			continue;
		close_state(s, t, s->end);
		t->last = s->end;
		rc = end_offcpu(s, t, s->end, 0);
	}
	for (uint32_t i = 0; i < s->nthr; i++) {	/* its life in the window */
		struct sthread *t = &s->thr[i];

		t->first = t->first > s->from ? t->first : s->from;
		t->last = t->last < s->to ? t->last : s->to;
		t->last = t->last > t->first ? t->last : t->first;
	}
	free(cs);
	return rc;
}

/* Per core: busy, idle and unknown, from its spans (their part in the window). */
static void core_times(struct sched_sess *s)
{
	s->unknown = 0;
	for (uint32_t k = 0; k < s->ncores; k++) {
		struct sched_core *c = &s->cores[k];

		c->busy = c->idle = c->unknown = 0;
		for (uint32_t j = 0; j < c->nspans; j++) {
			const struct cspan *sp = &c->spans[j];
			uint64_t d = in_window(s, sp->t0, sp->t1);

			if (sp->tid == SEV_NOBODY)
				c->unknown += d;
			else if (sp->tid)
				c->busy += d;
			else
				c->idle += d;
		}
		s->unknown += c->unknown;
	}
}

static int by_core_time(const void *a, const void *b)
{
	const struct ssample *x = a, *y = b;

	if (x->core != y->core)
		return x->core < y->core ? -1 : 1;
	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

/*
 * When session ps stopped recording: the stop closes the gates of samples and events on every
 * core together, then finishes (OPF_SESSION_END's time) with no record of what ran meanwhile.
 * So: the last record of the cores whose last block is in the stream (format 2: a core
 * samples every period, idle or not); without one, OPF_SESSION_END's time, else the stream's
 * last timestamp.
 */
static uint64_t recorded_until(const struct session *ps)
{
	uint64_t end = 0;

	for (uint32_t k = 0; ps->hdr.version >= 2 && k < ps->hdr.ncores; k++) {
		const struct writer_blocks *w = &ps->writers[k];
		const struct core_acct *c = &ps->cores[k];

		if (c->have_end && w->n && w->b[w->n - 1].seq + 1 == c->end.blocks &&
		    w->b[w->n - 1].t1 > end)
			end = w->b[w->n - 1].t1;
	}
	if (end)
		return end;
	return ps->have_end ? ps->end.end_tsc : ps->last_tsc;
}

int sched_analyze(struct profile *p)
{
	for (uint32_t i = 0; i < p->sched.nsess && i < p->nsess; i++) {
		struct sched_sess *s = &p->sched.sess[i];
		const struct session *ps = &p->sess[i];

		if (!s->on)
			continue;
		s->end = recorded_until(ps);
		if (s->nsmp)
			qsort(s->smp, s->nsmp, sizeof(*s->smp), by_core_time);
		sched_sort_events(s);
		if (place_threads(s) || sched_gaps(ps, s) || replay(s))
			return -1;
		core_times(s);
		sched_check(s);
		if (sched_lock_waits(s))
			return -1;
	}
	return 0;
}
