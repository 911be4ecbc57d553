/*
 * lock_waits.c: every wait for a lock in a session, finished or not, and which waits lie
 * inside others (docs/FORMAT.md, "Lock waits"). Called by sched_analyze after the replay;
 * --locks and its stacks (--folded, --flame, --pprof: the mutex profile) read the result.
 *
 * A finished wait is an OPF_LOCKWAIT: the thread asked at tsc - wait and took the lock at
 * tsc. A qlock waiter also switches out (why qlock, obj the lock) each time it sleeps on it;
 * one that never takes the lock before the session ends has no OPF_LOCKWAIT, only those
 * switch-outs: its wait runs from the switch-in before the first of them (it asked while on
 * a CPU) to the end, or to where a gap in its core's events begins (the acquisition may be
 * in it: cut), and is marked not done.
 *
 * A wait inside another wait of the same thread -- the spinlock spin inside qlock_wait, on
 * the lock's rendez or its own spinlock, while the thread waits for the qlock -- is time the
 * outer wait already counts: it is marked nested (its outer wait named), shown beneath it
 * and added to no total. A wait is inside another when its whole time lies within it.
 */
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "model/lock_waits.h"
#include "util/u64map.h"

/* A thread's state in the scan: its last switch-in, and a qlock wait it has not finished. */
struct wstate {
	uint64_t in;			/* when it last began to run (or its core's events did) */
	uint64_t obj, t0;
	uint32_t ev;
	uint16_t core;
	uint8_t open;
};

static int add(struct sched_sess *s, struct lwait w)
{
	if (grow_room((void **)&s->waits, &s->waitcap, s->nwaits, sizeof(*s->waits), 64))
		return -1;
	s->waits[s->nwaits++] = w;
	return 0;
}

/* The state of thread tid (index in st by s->thr's order), or NULL. */
static struct wstate *state(struct u64map *m, struct wstate *st, uint32_t tid)
{
	uint64_t *v = u64map_find(m, tid);

	return v ? &st[*v] : NULL;
}

/* An unfinished wait of w's thread tid ends at t1 (cut: where its core's events stop). */
static int close_open(struct sched_sess *s, struct wstate *w, uint32_t tid, uint64_t t1,
		      int cut)
{
	w->open = 0;
	return add(s, (struct lwait){ w->t0, t1, w->obj, tid, w->ev, UINT32_MAX, OPF_LK_QLOCK,
				      0, (uint8_t)cut });
}

/* One event of the scan (the file's opening comment). */
static int scan_one(struct sched_sess *s, struct u64map *m, struct wstate *st, uint32_t i)
{
	const struct sev *e = &s->ev[i];
	struct wstate *w;
	int rc = 0;

	if (e->kind == SEV_SWITCH) {
		if (e->b && (w = state(m, st, e->b)))
			w->in = e->tsc;
		w = e->a ? state(m, st, e->a) : NULL;
		if (w && e->why == OPF_WHY_QLOCK && !w->open)
			*w = (struct wstate){ w->in, e->obj, w->in, i, w->core, 1 };
	} else if (e->kind == SEV_LOCK) {
		rc = add(s, (struct lwait){ e->tsc - e->x, e->tsc, e->obj, e->a, i, UINT32_MAX,
					    e->why, 1, 0 });
		if ((w = state(m, st, e->a)) && e->why == OPF_LK_QLOCK && w->obj == e->obj)
			w->open = 0;
	} else if (e->kind == SEV_GAP) {
		for (uint32_t t = 0; t < s->nthr && !rc; t++)
			if (st[t].core == e->core && e->a && st[t].open)
				rc = close_open(s, &st[t], s->thr[t].tid, e->tsc, 1);
			else if (st[t].core == e->core && !e->a)
				st[t].in = e->tsc;
	}
	return rc;
}

static int by_thread_time(const void *a, const void *b)
{
	const struct lwait *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->t0 != y->t0)
		return x->t0 < y->t0 ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;	/* a qlock before its spins */
}

static int by_lock(const void *a, const void *b)
{
	const struct lwait *x = a, *y = b;

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return by_thread_time(a, b);
}

/* Unfinished waits that a finished one of the same thread and lock overlaps (its end came
 * after a gap): the finished one stands. Then the inner waits. s->waits sorted by thread. */
static void settle(struct sched_sess *s)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->nwaits; i++) {
		const struct lwait *w = &s->waits[i];
		int dup = 0;

		for (uint32_t j = i + 1; !w->done && j < s->nwaits && s->waits[j].tid == w->tid &&
					 s->waits[j].t0 < w->t1; j++)
			dup |= s->waits[j].done && s->waits[j].obj == w->obj;
		for (uint32_t j = i; !w->done && j-- > 0 && s->waits[j].tid == w->tid;)
			dup |= s->waits[j].done && s->waits[j].obj == w->obj && s->waits[j].t1 > w->t0;
		if (!dup)
			s->waits[n++] = *w;
	}
	s->nwaits = n;
	for (uint32_t i = 0; i < s->nwaits; i++) {	/* the qlock wait a spin lies inside */
		struct lwait *w = &s->waits[i];

		for (uint32_t j = i; w->kind == OPF_LK_SPIN && j-- > 0 && s->waits[j].tid == w->tid;)
			if (s->waits[j].kind == OPF_LK_QLOCK && s->waits[j].t0 <= w->t0 &&
			    w->t1 <= s->waits[j].t1) {
				w->outer = s->waits[j].ev;	/* an index would not survive a sort */
				break;
			}
	}
}

int sched_lock_waits(struct sched_sess *s)
{
	struct wstate *st = calloc(s->nthr + 1, sizeof(*st));
	struct u64map m;
	int rc = st && !u64map_init(&m, 2 * (size_t)s->nthr + 16) ? 0 : -1;

	s->nwaits = 0;
	for (uint32_t t = 0; t < s->nthr && !rc; t++) {
		uint64_t *v = u64map_get(&m, s->thr[t].tid);

		st[t] = (struct wstate){ s->thr[t].first, 0, 0, 0, s->thr[t].core, 0 };
		rc = v ? (*v = t, 0) : -1;
	}
	for (uint32_t i = 0; i < s->nev && !rc; i++)
		rc = scan_one(s, &m, st, i);
	for (uint32_t t = 0; t < s->nthr && !rc; t++)
		if (st[t].open)
			rc = close_open(s, &st[t], s->thr[t].tid, s->end, 0);
	if (st)
		u64map_free(&m);
	free(st);
	if (rc || !s->nwaits)
		return rc;
	qsort(s->waits, s->nwaits, sizeof(*s->waits), by_thread_time);
	settle(s);
	qsort(s->waits, s->nwaits, sizeof(*s->waits), by_lock);	/* for the views */
	return 0;
}

uint64_t lwait_len(const struct sched_sess *s, const struct lwait *w)
{
	uint64_t a = w->t0 > s->from ? w->t0 : s->from, b = w->t1 < s->to ? w->t1 : s->to;

	return s->ev[w->ev].out || b <= a ? 0 : b - a;
}
