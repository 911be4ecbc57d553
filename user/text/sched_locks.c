/*
 * sched_locks.c: --locks, a section of opreport's report (called by opreport.c after
 * sched_analyze, with the symbols open): per lock, every wait for it (model/lock_waits.c),
 * finished or not, most waited first:
 *	the row		waits, those not finished by the end, the time waited in all (a
 *			wait not finished counts to the end), the longest and the mean;
 *	holders		for a qlock, the holder each waiter's switch-out names, with the
 *			off-CPU time that followed (a waiter sleeps again each time the lock
 *			changes hands); for a spinlock, the core that held it;
 *	waiters		every thread that waited, its waits and time, "not finished" when
 *			it still waited at the end;
 *	inside		waits of other locks inside these (a spin inside qlock_wait): shown
 *			here, counted in the outer wait only, so no time is counted twice;
 *	stacks		the stacks that waited most.
 * Its totals are those of --locks --pprof (the mutex profile) and --folded. With filters,
 * the waits they keep (by their event: model/filter.c), each its part in the --time window.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/lock_waits.h"
#include "model/sched_gaps.h"
#include "text/text.h"
#include "util/textenc.h"
#include "util/u64map.h"

/* One lock: its waits s->waits[from, to) (by lock, kind, thread, time), those it counts. */
struct lockrow {
	uint32_t from, to;
	uint32_t waits, open;		/* not nested: all, and not finished */
	uint64_t total, max;
};

/* The report's part of wait w (model/lock_waits.h); the session is the one being shown. */
static const struct sched_sess *cur;

static uint64_t len(const struct lwait *w)
{
	return lwait_len(cur, w);
}

static int by_total(const void *a, const void *b)
{
	const struct lockrow *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* The rows of s's locks that have waits of their own (not all inside others). */
static struct lockrow *rows_of(const struct sched_sess *s, uint32_t *n)
{
	struct lockrow *r = calloc(s->nwaits + 1, sizeof(*r));

	cur = s;
	*n = 0;
	for (uint32_t i = 0; r && i < s->nwaits; i++) {
		const struct lwait *w = &s->waits[i];

		if (!*n || s->waits[r[*n - 1].from].obj != w->obj ||
		    s->waits[r[*n - 1].from].kind != w->kind)
			r[(*n)++] = (struct lockrow){ i, i, 0, 0, 0, 0 };
		r[*n - 1].to = i + 1;
		if (w->outer != UINT32_MAX || !len(w))
			continue;
		r[*n - 1].waits++;
		r[*n - 1].open += !w->done;
		r[*n - 1].total += len(w);
		r[*n - 1].max = len(w) > r[*n - 1].max ? len(w) : r[*n - 1].max;
	}
	if (r)
		qsort(r, *n, sizeof(*r), by_total);
	return r;
}

/* A holder in words: "tid 7", "core 1", "core ?". */
static void holder_name(uint32_t h, char *buf, size_t n)
{
	if (h == (OPF_HOLDER_CORE | OPF_HOLDER_NONE))
		snprintf(buf, n, "core ?");
	else if (h & OPF_HOLDER_CORE)
		snprintf(buf, n, "core %" PRIu32, h & ~OPF_HOLDER_CORE);
	else
		snprintf(buf, n, "tid %" PRIu32, h);
}

/* Tallies by key (a holder, a thread): how often, how long; at most 64 kept. */
struct tally {
	uint32_t key[64], n[64];
	uint64_t t[64];
	uint8_t open[64];
	uint32_t used;
};

static void count(struct tally *y, uint32_t key, uint64_t t, int open)
{
	uint32_t k = 0;

	while (k < y->used && y->key[k] != key)
		k++;
	if (k == y->used && y->used == 64)
		return;
	if (k == y->used)
		y->used++, y->key[k] = key, y->n[k] = 0, y->t[k] = 0, y->open[k] = 0;
	y->n[k]++;
	y->t[k] += t;
	y->open[k] |= open;
}

/* The holders a lock's waiters named: a qlock's at each switch-out (the off-CPU time after
 * it), a spinlock's per wait. Most time first. */
static void holders(const struct sched_sess *s, const struct lockrow *l, FILE *out)
{
	const struct lwait *w0 = &s->waits[l->from];
	struct tally y = { 0 };
	char who[32];

	if (w0->kind == OPF_LK_QLOCK) {
		for (uint32_t i = 0; i < s->noff; i++) {
			const struct sev *e = &s->ev[s->off[i].ev];

			if (e->why == OPF_WHY_QLOCK && e->obj == w0->obj)
				count(&y, e->holder, s->off[i].total, 0);
		}
	} else {
		for (uint32_t i = l->from; i < l->to; i++)
			if (s->waits[i].outer == UINT32_MAX && len(&s->waits[i]))
				count(&y, s->ev[s->waits[i].ev].b, len(&s->waits[i]), 0);
	}
	fprintf(out, "    holders%s:", w0->kind == OPF_LK_QLOCK ? " (at each switch-out)" : "");
	for (uint32_t shown = 0; shown < y.used; shown++) {
		uint32_t best = 0;

		for (uint32_t k = 1; k < y.used; k++)
			if (y.t[k] > y.t[best] || (y.t[k] == y.t[best] && y.n[k] > y.n[best]))
				best = k;
		holder_name(y.key[best], who, sizeof(who));
		fprintf(out, "%s %s x%" PRIu32 " %.3f ms", shown ? "," : "", who, y.n[best],
			sched_ms(s, y.t[best]));
		y.t[best] = 0;
		y.n[best] = 0;
		if (shown == 5 && y.used > 6) {
			fprintf(out, ", ... (%" PRIu32 " in all)", y.used);
			break;
		}
	}
	fputc('\n', out);
}

/* Every thread that waited for the lock (its own waits, not the ones inside others). */
static void waiters(const struct sched_sess *s, const struct lockrow *l, FILE *out)
{
	struct tally y = { 0 };

	for (uint32_t i = l->from; i < l->to; i++)
		if (s->waits[i].outer == UINT32_MAX && len(&s->waits[i]))
			count(&y, s->waits[i].tid, len(&s->waits[i]), !s->waits[i].done);
	fprintf(out, "    waiters:");
	for (uint32_t k = 0; k < y.used; k++)
		fprintf(out, "%s tid %" PRIu32 " x%" PRIu32 " %.3f ms%s", k ? "," : "", y.key[k],
			y.n[k], sched_ms(s, y.t[k]), y.open[k] ? " (not finished by the end)" : "");
	fputc('\n', out);
}

/* The waits of other locks inside this lock's waits: by lock, shown, not added. */
static void inside(const struct sched_sess *s, const struct lockrow *l, FILE *out)
{
	struct u64map mine;
	struct inner { uint64_t obj; uint16_t kind; uint32_t n, ev; uint64_t t; } in[8];
	uint32_t nin = 0;

	if (u64map_init(&mine, 64))
		return;
	for (uint32_t i = l->from; i < l->to; i++) {
		uint64_t *v = u64map_get(&mine, s->waits[i].ev);

		if (v)
			*v = 1;
	}
	for (uint32_t i = 0; i < s->nwaits; i++) {
		const struct lwait *w = &s->waits[i];
		uint32_t k = 0;

		if (w->outer == UINT32_MAX || !u64map_find(&mine, w->outer) || !len(w))
			continue;
		while (k < nin && (in[k].obj != w->obj || in[k].kind != w->kind))
			k++;
		if (k == nin && nin == 8)
			continue;
		if (k == nin)
			in[nin++] = (struct inner){ w->obj, w->kind, 0, w->ev, 0 };
		in[k].n++;
		in[k].t += len(w);
	}
	for (uint32_t k = 0; k < nin; k++) {
		const struct sev *e = &s->ev[in[k].ev];
		char name[SHOWN_SIZE(OPF_OBJ_NAME)];

		fprintf(out, "    inside these waits (counted in them, not again): %s %s x%" PRIu32
			" %.3f ms\n", in[k].kind == OPF_LK_SPIN ? "spin" : "qlock",
			term_cell(name, sizeof(name), e->name[0] ? e->name : "?", 0), in[k].n,
			sched_ms(s, in[k].t));
	}
	u64map_free(&mine);
}

/* The stacks that waited most (at most 3): a finished wait's where it asked, an unfinished
 * one's at its first switch-out. */
static void stacks(const struct ctx *c, const struct sched_sess *s, const struct lockrow *l,
		   FILE *out)
{
	const uint64_t *fr = c->p->sched.frames;
	struct group { uint32_t first, n; uint64_t t; } st[64];
	uint32_t n = 0;

	for (uint32_t i = l->from; i < l->to; i++) {
		const struct lwait *w = &s->waits[i];
		const struct sev *e = &s->ev[w->ev];
		uint32_t k = 0;

		if (w->outer != UINT32_MAX || !len(w))
			continue;
		for (; k < n; k++) {
			const struct sev *f = &s->ev[s->waits[st[k].first].ev];

			if (s->waits[st[k].first].tid == w->tid && f->nframes == e->nframes &&
			    !memcmp(fr + f->frames, fr + e->frames, 8 * (size_t)e->nframes))
				break;
		}
		if (k == n && n == 64)
			continue;
		if (k == n)
			st[n++] = (struct group){ i, 0, 0 };
		st[k].n++;
		st[k].t += len(w);
	}
	for (uint32_t shown = 0; shown < 3 && shown < n; shown++) {
		uint32_t best = 0;

		for (uint32_t k = 1; k < n; k++)
			if (st[k].t > st[best].t)
				best = k;
		const struct sev *e = &s->ev[s->waits[st[best].first].ev];

		fprintf(out, "    %9.3f ms %5" PRIu32 " x  tid %-4" PRIu32 " ", sched_ms(s, st[best].t),
			st[best].n, s->waits[st[best].first].tid);
		sched_print_stack(c, fr + e->frames, e->nframes, 5, out);
		st[best].t = 0;
		st[best].n = 0;
	}
}

static int locks_session(const struct ctx *c, const struct sched_sess *s, uint32_t si, FILE *out)
{
	uint32_t n, waits = 0, open = 0;
	struct lockrow *l = rows_of(s, &n);
	uint64_t all = 0;

	if (!l)
		return -1;
	for (uint32_t k = 0; k < n; k++) {
		waits += l[k].waits;
		open += l[k].open;
		all += l[k].total;
	}
	report_filter_lines(c, 1, out);
	fprintf(out, "Lock waits, session %u: %" PRIu32 " waits (%" PRIu32 " not finished by the "
		"end) for %" PRIu32 " locks, %.3f ms in all; a wait inside another is shown beneath it "
		"and counted once\n", si + 1, waits, open, n, sched_ms(s, all));
	sched_unknown_line(s, si, out);
	fprintf(out, "  lock             kind   waits  not done  total wait ms  max wait ms  "
		"mean wait ms\n");
	for (uint32_t k = 0; k < ctx_limit(c, n); k++) {
		const struct sev *e = &s->ev[s->waits[l[k].from].ev];
		char name[SHOWN_SIZE(OPF_OBJ_NAME)];

		if (!l[k].waits)	/* only inside others: shown beneath them */
			continue;
		fprintf(out, "  %s %-6s %5" PRIu32 " %9" PRIu32 " %14.3f %12.3f %13.3f\n",
			term_cell(name, sizeof(name), e->name[0] ? e->name : "?", 16), s->waits[l[k].from].kind == OPF_LK_SPIN ? "spin" :
			"qlock", l[k].waits, l[k].open, sched_ms(s, l[k].total), sched_ms(s, l[k].max),
			sched_ms(s, l[k].total) / l[k].waits);
		holders(s, &l[k], out);
		waiters(s, &l[k], out);
		inside(s, &l[k], out);
		stacks(c, s, &l[k], out);
	}
	free(l);
	return 0;
}

int report_locks(const struct ctx *c, FILE *out)
{
	for (uint32_t i = 0; i < c->p->sched.nsess; i++)
		if (c->p->sched.sess[i].on && locks_session(c, &c->p->sched.sess[i], i, out))
			return -1;
	return 0;
}
