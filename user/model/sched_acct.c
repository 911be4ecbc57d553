/*
 * sched_acct.c: where every thread's time went, replayed from a session's events (kept by
 * ingest/events.c). Called once by opreport.c after the parse (sched_analyze); --stats
 * (text/sched_stats.c), the views, the timeline and the exports read the result.
 *
 * The accounting replays each session's events in time order (ties in stream order):
 *	per core	the thread running between two switches: busy, or idle (tid 0). A
 *			switch whose prev is not the thread the last switch put there means
 *			a switch is missing: counted bad.
 *	per thread	a state machine: ON from a switch-in to a switch-out; then RUNNABLE
 *			(preempted, yield) or BLOCKED by reason until a wake-up; RUNNABLE
 *			until the next switch-in; gone at exit. Before its first event a
 *			thread alive at start is UNKNOWN, unless that event says otherwise (a
 *			switch-out: it ran since the start).
 * Two checks need nothing but the stream: every switch-out's prev_cpu (the kernel's count)
 * advances by exactly the time the switches say the thread ran since its last switch-out,
 * and every sample of a thread falls in its time on that core (to within a sampling period).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/sched_acct.h"

enum { ST_UNKNOWN, ST_ON, ST_RUNNABLE, ST_BLOCKED, ST_GONE };

static int by_time(const void *a, const void *b)
{
	const struct sev *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

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
	return t;
}

/* The part of [a, b) in the report's window (--time: s->from, s->to; else all of it). */
static uint64_t in_window(const struct sched_sess *s, uint64_t a, uint64_t b)
{
	a = a > s->from ? a : s->from;
	b = b < s->to ? b : s->to;
	return b > a ? b - a : 0;
}

/* t's state ends at tsc: its time so far (in the window) goes to the state's bucket. */
static void close_state(const struct sched_sess *s, struct sthread *t, uint64_t tsc)
{
	uint64_t d = in_window(s, t->since, tsc);

	switch (t->state) {
	case ST_ON: t->on += d; break;
	case ST_RUNNABLE: t->runnable += d; break;
	case ST_BLOCKED: t->blocked[t->why] += d; break;
	case ST_UNKNOWN: t->unknown += d; break;
	default: break;
	}
	t->since = tsc;
}

/* The stretch off a CPU that began at t's last switch-out ends at tsc; kept (its part in the
 * window) when it overlaps the window. */
static int end_offcpu(struct sched_sess *s, struct sthread *t, uint64_t tsc)
{
	struct offcpu *o;
	uint64_t out = t->out == UINT32_MAX ? 0 : s->ev[t->out].tsc;

	if (t->out == UINT32_MAX || !in_window(s, out, tsc)) {
		t->out = UINT32_MAX;
		t->wake_tsc = 0;
		return 0;
	}
	if (s->noff == s->offcap) {
		uint32_t nc = s->offcap ? 2 * s->offcap : 256;
		struct offcpu *no = realloc(s->off, nc * sizeof(*no));

		if (!no)
			return -1;
		s->off = no;
		s->offcap = nc;
	}
	o = &s->off[s->noff];
	o->ev = t->out;
	o->tid = t->tid;
	o->total = in_window(s, out, tsc);
	o->blocked = t->wake_tsc > out ? in_window(s, out, t->wake_tsc) : 0;
	s->noff++;
	t->out = UINT32_MAX;
	t->wake_tsc = 0;
	return 0;
}

/* prev leaves its core at event i: ON until now; its kernel CPU time checks the switches. */
static void switch_out(struct sched_sess *s, struct sthread *t, uint32_t i)
{
	const struct sev *e = &s->ev[i];

	if (t->state == ST_UNKNOWN)
		t->state = ST_ON;	/* it ran since it was first seen */
	if (t->state != ST_ON && !s->cores[e->core].bad++)
		s->cores[e->core].bad_tsc = e->tsc;
	close_state(s, t, e->tsc);
	if (t->have_kcpu && e->x - t->kcpu != t->on - t->on_at_out)
		t->bad_cpu++;
	t->on_at_out = t->on;
	t->kcpu = e->x;
	t->have_kcpu = 1;
	t->core = e->core;
	t->out = i;
	t->why = e->why;
	t->state = e->why == OPF_WHY_EXIT ? ST_GONE : e->why <= OPF_WHY_YIELD ? ST_RUNNABLE :
		   ST_BLOCKED;
	if (t->state == ST_GONE) {
		t->exited = 1;
		t->last = e->tsc;
	}
}

/* One switch: the core's continuity, prev out, next in. 0 or -1 (memory). */
static int replay_switch(struct sched_sess *s, uint32_t i, uint32_t *running)
{
	const struct sev *e = &s->ev[i];
	struct sched_core *c = &s->cores[e->core];
	struct sthread *t = NULL;

	if (running[e->core] != UINT32_MAX && running[e->core] != e->a && !c->bad++)
		c->bad_tsc = e->tsc;
	running[e->core] = e->b;
	c->nswitch++;
	if (e->a) {
		if (!(t = thread_of(s, e->a)))
			return -1;
		switch_out(s, t, i);
	}
	if (!e->b)
		return 0;
	if (!(t = thread_of(s, e->b)) || end_offcpu(s, t, e->tsc))
		return -1;
	close_state(s, t, e->tsc);
	t->state = ST_ON;
	t->core = e->core;
	return 0;
}

/* tid made runnable: blocked time ends (its off-CPU stretch keeps the blocked part). */
static int replay_wake(struct sched_sess *s, const struct sev *e)
{
	struct sthread *t = thread_of(s, e->a);

	if (!t)
		return -1;
	if (t->state == ST_BLOCKED || t->state == ST_UNKNOWN) {
		close_state(s, t, e->tsc);
		t->state = ST_RUNNABLE;
		t->wake_tsc = e->tsc;
		t->wakes++;
	}
	return 0;
}

/* A thread named by an OPF_THREAD after the start begins to exist then, runnable. */
static int replay_create(struct sched_sess *s, const struct sev *e)
{
	struct sthread *t = thread_of(s, e->a);

	if (!t)
		return -1;
	if (e->tsc > s->start && t->state == ST_UNKNOWN && t->since == s->start) {
		t->first = t->since = e->tsc;
		t->created = 1;
	}
	return 0;
}

/* Replay session s's events; then every thread's last state runs to the end. */
static int replay(struct sched_sess *s)
{
	uint32_t running[OPF_MAX_CORES];
	int rc = 0;

	for (uint32_t k = 0; k < s->ncores; k++)
		running[k] = UINT32_MAX;
	if (s->nev)	/* qsort of no array: undefined with a null pointer */
		qsort(s->ev, s->nev, sizeof(*s->ev), by_time);
	for (uint32_t i = 0; i < s->nev && !rc; i++) {
		const struct sev *e = &s->ev[i];

		if (e->kind == SEV_SWITCH)
			rc = replay_switch(s, i, running);
		else if (e->kind == SEV_WAKEUP)
			rc = replay_wake(s, e);
		else if (e->kind == SEV_CREATE)
			rc = replay_create(s, e);
	}
	for (uint32_t i = 0; i < s->nthr && !rc; i++) {
		struct sthread *t = &s->thr[i];

		if (t->state == ST_GONE)
			continue;
		close_state(s, t, s->end);
		t->last = s->end;
		rc = end_offcpu(s, t, s->end);
	}
	for (uint32_t i = 0; i < s->nthr; i++) {	/* its life in the window */
		struct sthread *t = &s->thr[i];

		t->first = t->first > s->from ? t->first : s->from;
		t->last = t->last < s->to ? t->last : s->to;
		t->last = t->last > t->first ? t->last : t->first;
	}
	return rc;
}

/* Per core: busy and idle from the switches, start to end. */
static void core_times(struct sched_sess *s)
{
	uint64_t last[OPF_MAX_CORES];
	uint32_t tid[OPF_MAX_CORES];

	for (uint32_t k = 0; k < s->ncores; k++) {
		last[k] = s->start;
		tid[k] = UINT32_MAX;	/* until its first switch: what that switch's prev says */
	}
	for (uint32_t i = 0; i < s->nev; i++) {
		const struct sev *e = &s->ev[i];
		struct sched_core *c = &s->cores[e->core];
		uint64_t d = in_window(s, last[e->core], e->tsc);

		if (e->kind != SEV_SWITCH)
			continue;
		if ((tid[e->core] == UINT32_MAX ? e->a : tid[e->core]) == 0)
			c->idle += d;
		else
			c->busy += d;
		last[e->core] = e->tsc;
		tid[e->core] = e->b;
	}
	for (uint32_t k = 0; k < s->ncores; k++) {
		uint64_t d = in_window(s, last[k], s->end);

		if (tid[k] == 0)
			s->cores[k].idle += d;
		else
			s->cores[k].busy += d;
	}
}

/* The thread core k ran at tsc, by the switches (sw: k's switch events, in time order). */
static uint32_t running_at(const struct sched_sess *s, const uint32_t *sw, uint32_t n,
			   uint64_t tsc, uint64_t *near)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {		/* first switch after tsc */
		uint32_t mid = (lo + hi) / 2;

		if (s->ev[sw[mid]].tsc <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	*near = UINT64_MAX;
	if (lo < n)
		*near = s->ev[sw[lo]].tsc - tsc;
	if (lo > 0 && tsc - s->ev[sw[lo - 1]].tsc < *near)
		*near = tsc - s->ev[sw[lo - 1]].tsc;
	return lo ? s->ev[sw[lo - 1]].b : s->ev[sw[0]].a;
}

/* Every sample's thread ran on its core then (a period's slack around a switch). */
static int check_samples(struct sched_sess *s)
{
	uint32_t *sw = malloc((s->nev + 1) * sizeof(*sw)), n;

	if (!sw)
		return -1;
	for (uint32_t k = 0; k < s->ncores; k++) {
		n = 0;
		for (uint32_t i = 0; i < s->nev; i++)
			if (s->ev[i].kind == SEV_SWITCH && s->ev[i].core == k)
				sw[n++] = i;
		for (uint32_t j = 0; j < s->nsmp && n; j++) {
			const struct ssample *m = &s->smp[j];
			uint64_t near;
			uint32_t tid;
			struct sthread *t;

			if (m->core != k)
				continue;
			tid = running_at(s, sw, n, m->tsc, &near);
			if (!m->tid && !tid)
				continue;
			t = thread_of(s, m->tid ? m->tid : tid);
			if (!t) {
				free(sw);
				return -1;
			}
			t->samples += m->tid != 0 && m->tsc >= s->from && m->tsc < s->to;
			if (tid != m->tid && near > s->period)
				t->bad_samples++;
		}
	}
	free(sw);
	return 0;
}

int sched_analyze(struct profile *p)
{
	for (uint32_t i = 0; i < p->sched.nsess && i < p->nsess; i++) {
		struct sched_sess *s = &p->sched.sess[i];
		const struct session *ps = &p->sess[i];

		if (!s->on)
			continue;
		s->end = ps->have_end ? ps->end.end_tsc : ps->last_tsc;
		if (replay(s) || check_samples(s))
			return -1;
		core_times(s);
	}
	return 0;
}
