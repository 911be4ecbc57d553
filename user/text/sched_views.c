/*
 * sched_views.c: the text views of scheduler events, sections of opreport's report:
 *	--wall		per thread, its time in the session split into on a CPU (by the
 *			switches, and by the samples), runnable and blocked by reason; per
 *			core, busy and idle.
 *	--offcpu	time off a CPU by reason, thread and stack (switch-out to switch-in).
 *	--locks		per contended lock: contentions, total and longest wait, holders, the
 *			stacks that waited most.
 * Called by opreport.c after sched_analyze, with the symbols open.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"
#include "util/textenc.h"
#include "util/textfmt.h"

/*
 * The function at return address a (a frame: the innermost of its inlined chain), or the
 * one that starts at a (a function's address: the outermost, the function itself).
 */
static const char *fname(const struct ctx *c, uint64_t a, int frame)
{
	const struct frame *f;
	uint32_t n = sym_frames(c->sym, frame && a ? a - 1 : a, a, &f);

	if (!n)
		return "?";
	return c->sym->funcs[f[frame ? 0 : n - 1].fid].name;
}

/* Up to max frames of a stack, innermost first, skipping the scheduler's own. */
static void print_stack(const struct ctx *c, const uint64_t *fr, unsigned n, int max, FILE *out)
{
	static const char *const skip[] = { "switch_locked", "switch_and_finish",
					    "sched_sleep_release", "rendez_sleep_until",
					    "rendez_sleep", "qlock_event", "ev_walk", NULL };
	int shown = 0;

	for (unsigned i = 0; i < n && shown < max; i++) {
		const char *name = fname(c, fr[i], 1);
		int internal = 0;

		for (unsigned k = 0; skip[k] && !shown; k++)
			internal |= !strcmp(skip[k], name);
		if (internal)
			continue;
		fprintf(out, "%s%s", shown++ ? " <- " : "", name);
	}
	fputs(shown ? "\n" : "-\n", out);
}

static uint64_t blocked_sum(const struct sthread *t)
{
	uint64_t b = 0;

	for (unsigned w = 0; w < OPF_WHY_N; w++)
		b += t->blocked[w];
	return b;
}

static void wall_thread(const struct ctx *c, const struct sched_sess *s, const struct sthread *t,
			FILE *out)
{
	uint64_t life = t->last - t->first;
	char name[SHOWN_SIZE(OPF_MAX_NAME)];

	fprintf(out, "  %5u %s %4u %9.3f %9.3f %6.2f%% %6.2f%% %6.2f%% %6.2f%% %6.2f%% "
		"%6.2f%% %6.2f%% %6.2f%% %6.2f%%  ", t->tid,
		term_cell(name, sizeof(name), profile_thread_label(c->p, t->tid), 16), t->core,
		sched_ms(s, life), sched_ms(s, t->on), pct(t->on, life),
		pct(t->samples * s->period, life), pct(t->runnable, life),
		pct(blocked_sum(t), life), pct(t->blocked[OPF_WHY_SLEEP], life),
		pct(t->blocked[OPF_WHY_RENDEZ], life), pct(t->blocked[OPF_WHY_QLOCK], life),
		pct(t->blocked[OPF_WHY_IO], life), pct(t->unknown, life));
	if (t->created && t->exited)
		fprintf(out, "%9.3f\n", sched_ms(s, t->kcpu));
	else
		fputs("        -\n", out);
}

static int by_on(const void *a, const void *b)
{
	const struct sthread *x = a, *y = b;

	if (x->on != y->on)
		return x->on < y->on ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int report_wall(const struct ctx *c, FILE *out)
{
	for (uint32_t i = 0; i < c->p->sched.nsess; i++) {
		struct sched_sess *s = &c->p->sched.sess[i];

		if (!s->on)
			continue;
		if (s->nthr)	/* thr is NULL while there is none */
			qsort(s->thr, s->nthr, sizeof(*s->thr), by_on);
		report_filter_lines(c, 1, out);
		fprintf(out, "Wall time per thread, session %u (%.3f ms): percent of each thread's "
			"time in the session\n", i + 1, sched_ms(s, sched_len(s)));
		fprintf(out, "    tid name             core   time ms     on ms  on-cpu samples runnable"
			"  blocked   sleep  rendez   qlock      io unknown  kernel ms\n");
		for (uint32_t k = 0; k < s->nthr; k++)
			if (s->thr[k].tid)
				wall_thread(c, s, &s->thr[k], out);
		fprintf(out, "\nPer core, session %u\n  core   busy ms   busy%%   idle ms   idle%%\n",
			i + 1);
		for (uint32_t k = 0; k < s->ncores; k++) {
			const struct sched_core *sc = &s->cores[k];
			uint64_t len = sched_len(s);

			if (!filter_core(c->fu.f, k))
				continue;
			fprintf(out, "  %4u %9.3f %6.2f%% %9.3f %6.2f%%\n", k, sched_ms(s, sc->busy),
				pct(sc->busy, len), sched_ms(s, sc->idle), pct(sc->idle, len));
		}
	}
	return 0;
}

/* qsort has no argument: the session and frames being grouped. */
static const struct sched_sess *g_s;
static const uint64_t *g_fr;

/* Same reason, object, thread and stack: one row of --offcpu. */
static int off_cmp(const struct offcpu *x, const struct offcpu *y)
{
	const struct sev *a = &g_s->ev[x->ev], *b = &g_s->ev[y->ev];

	if (a->why != b->why)
		return a->why < b->why ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	int r = strcmp(a->name, b->name);
	if (r)
		return r;
	if (a->nframes != b->nframes)
		return a->nframes < b->nframes ? -1 : 1;
	return memcmp(g_fr + a->frames, g_fr + b->frames, 8 * (size_t)a->nframes);
}

static int off_sort(const void *a, const void *b)
{
	return off_cmp(a, b);
}

struct offrow {
	uint32_t first;		/* the first entry of the group in s->off */
	uint32_t count;
	uint64_t total, blocked, max;
};

static int by_total(const void *a, const void *b)
{
	const struct offrow *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* s->off grouped into rows (sorted by time, most first); NULL: out of memory. */
static struct offrow *off_rows(const struct profile *p, struct sched_sess *s, uint32_t *n)
{
	struct offrow *r = calloc(s->noff + 1, sizeof(*r));

	*n = 0;
	if (!r)
		return NULL;
	g_s = s;
	g_fr = p->sched.frames;
	if (s->noff)	/* off is NULL while there is none */
		qsort(s->off, s->noff, sizeof(*s->off), off_sort);
	for (uint32_t i = 0; i < s->noff; i++) {
		const struct offcpu *o = &s->off[i];

		if (!*n || off_cmp(&s->off[r[*n - 1].first], o))
			r[(*n)++].first = i;
		struct offrow *w = &r[*n - 1];
		w->count++;
		w->total += o->total;
		w->blocked += o->blocked;
		if (o->total > w->max)
			w->max = o->total;
	}
	qsort(r, *n, sizeof(*r), by_total);
	return r;
}

/* The reason a switch-out names, with its object: "qlock lockpair", "rendez thread_gone". */
static void reason(const struct ctx *c, const struct sev *e, char *buf, size_t n)
{
	if (e->why == OPF_WHY_RENDEZ && e->site)
		snprintf(buf, n, "rendez %s", fname(c, e->site, 0));
	else if (e->name[0])
		snprintf(buf, n, "%s %s", sched_why_name(e->why), e->name);
	else
		snprintf(buf, n, "%s", sched_why_name(e->why));
}

static int offcpu_session(const struct ctx *c, struct sched_sess *s, uint32_t si, FILE *out)
{
	uint32_t n, lim;
	struct offrow *r = off_rows(c->p, s, &n);
	uint64_t all = 0;
	char why[64], wcell[SHOWN_SIZE(sizeof(why))], tcell[SHOWN_SIZE(OPF_MAX_NAME)];

	if (!r)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		all += r[i].total;
	lim = ctx_limit(c, n);
	report_filter_lines(c, 1, out);
	fprintf(out, "Off-CPU time by reason, thread and stack, session %u (%.3f ms in all; "
		"blocked: until woken, the rest runnable)\n", si + 1, sched_ms(s, all));
	fprintf(out, "  off ms       %%  blocked ms  count   max ms  reason                   thread"
		"                 stack (innermost first)\n");
	for (uint32_t i = 0; i < lim; i++) {
		const struct offcpu *o = &s->off[r[i].first];
		const struct sev *e = &s->ev[o->ev];

		reason(c, e, why, sizeof(why));
		fprintf(out, "%9.3f %6.2f%% %10.3f %6u %8.3f  %s %5u %s ",
			sched_ms(s, r[i].total), pct(r[i].total, all), sched_ms(s, r[i].blocked),
			r[i].count, sched_ms(s, r[i].max), term_cell(wcell, sizeof(wcell), why, 24),
			o->tid,
			term_cell(tcell, sizeof(tcell), profile_thread_label(c->p, o->tid), 16));
		print_stack(c, c->p->sched.frames + e->frames, e->nframes, 5, out);
	}
	free(r);
	return 0;
}

int report_offcpu(const struct ctx *c, FILE *out)
{
	for (uint32_t i = 0; i < c->p->sched.nsess; i++)
		if (c->p->sched.sess[i].on && offcpu_session(c, &c->p->sched.sess[i], i, out))
			return -1;
	return 0;
}

/* Lock events of one lock in a row of the sorted index: [from, to). */
struct lockrow {
	uint32_t from, to;
	uint64_t total, max;
};

static int lock_cmp(const void *a, const void *b)
{
	const struct sev *x = &g_s->ev[*(const uint32_t *)a], *y = &g_s->ev[*(const uint32_t *)b];

	if (x->obj != y->obj)
		return x->obj < y->obj ? -1 : 1;
	if (x->why != y->why)
		return x->why < y->why ? -1 : 1;
	if (x->nframes != y->nframes)
		return x->nframes < y->nframes ? -1 : 1;
	int r = memcmp(g_fr + x->frames, g_fr + y->frames, 8 * (size_t)x->nframes);
	if (r)
		return r;
	return x->a < y->a ? -1 : x->a > y->a;
}

static int by_wait(const void *a, const void *b)
{
	const struct lockrow *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return x->from < y->from ? -1 : x->from > y->from;
}

/* Holders of one lock's contentions, most often first: "tid 4 x35" or "core 1 x2". */
static void holders(const struct sched_sess *s, const uint32_t *ix, const struct lockrow *l,
		    FILE *out)
{
	uint32_t who[8], cnt[8], n = 0;

	for (uint32_t i = l->from; i < l->to; i++) {
		uint32_t h = s->ev[ix[i]].b, k = 0;

		while (k < n && who[k] != h)
			k++;
		if (k == n && n < 8) {
			who[n] = h;
			cnt[n++] = 0;
		}
		if (k < n)
			cnt[k]++;
	}
	fputs("    holders:", out);
	for (uint32_t shown = 0; shown < 3 && shown < n; shown++) {
		uint32_t best = 0;

		for (uint32_t k = 1; k < n; k++)
			if (cnt[k] > cnt[best])
				best = k;
		if (who[best] == (OPF_HOLDER_CORE | OPF_HOLDER_NONE))
			fprintf(out, " core ? x%u", cnt[best]);
		else if (who[best] & OPF_HOLDER_CORE)
			fprintf(out, " core %u x%u", who[best] & ~OPF_HOLDER_CORE, cnt[best]);
		else
			fprintf(out, " tid %u x%u", who[best], cnt[best]);
		cnt[best] = 0;
	}
	fputc('\n', out);
}

/* The stacks that waited for one lock, most wait first (at most 3). */
static void wait_stacks(const struct ctx *c, const struct sched_sess *s, const uint32_t *ix,
			const struct lockrow *l, FILE *out)
{
	struct lockrow st[64];
	uint32_t n = 0;

	for (uint32_t i = l->from; i < l->to && n < 64; i++) {
		if (!n || lock_cmp(&ix[st[n - 1].from], &ix[i]))
			st[n++] = (struct lockrow){ i, i, 0, 0 };
		st[n - 1].to = i + 1;
		st[n - 1].total += s->ev[ix[i]].x;
	}
	qsort(st, n, sizeof(*st), by_wait);
	for (uint32_t k = 0; k < n && k < 3; k++) {
		const struct sev *e = &s->ev[ix[st[k].from]];

		fprintf(out, "    %9.3f ms %5u x  tid %-4u ", sched_ms(s, st[k].total),
			st[k].to - st[k].from, e->a);
		print_stack(c, c->p->sched.frames + e->frames, e->nframes, 5, out);
	}
}

static int locks_session(const struct ctx *c, struct sched_sess *s, uint32_t si, FILE *out)
{
	uint32_t *ix = malloc((s->nev + 1) * sizeof(*ix)), n = 0, nl = 0;
	struct lockrow *l = calloc(s->nev + 1, sizeof(*l));

	if (!ix || !l) {
		free(ix);
		free(l);
		return -1;
	}
	for (uint32_t i = 0; i < s->nev; i++)
		if (s->ev[i].kind == SEV_LOCK && !s->ev[i].out)	/* out: the filters' */
			ix[n++] = i;
	g_s = s;
	g_fr = c->p->sched.frames;
	qsort(ix, n, sizeof(*ix), lock_cmp);
	for (uint32_t i = 0; i < n; i++) {
		const struct sev *e = &s->ev[ix[i]];

		if (!nl || s->ev[ix[l[nl - 1].from]].obj != e->obj ||
		    s->ev[ix[l[nl - 1].from]].why != e->why)
			l[nl++] = (struct lockrow){ i, i, 0, 0 };
		l[nl - 1].to = i + 1;
		l[nl - 1].total += e->x;
		l[nl - 1].max = e->x > l[nl - 1].max ? e->x : l[nl - 1].max;
	}
	qsort(l, nl, sizeof(*l), by_wait);
	report_filter_lines(c, 1, out);
	fprintf(out, "Lock contention, session %u: %u contended acquisitions of %u locks\n"
		"  lock             kind   contentions  total wait ms  max wait ms  mean wait ms\n",
		si + 1, n, nl);
	for (uint32_t k = 0; k < ctx_limit(c, nl); k++) {
		const struct sev *e = &s->ev[ix[l[k].from]];
		uint32_t cnt = l[k].to - l[k].from;
		char name[SHOWN_SIZE(OPF_OBJ_NAME)];

		fprintf(out, "  %s %-6s %11u %14.3f %12.3f %13.3f\n",
			term_cell(name, sizeof(name), e->name[0] ? e->name : "?", 16),
			e->why == OPF_LK_SPIN ? "spin" : "qlock", cnt, sched_ms(s, l[k].total),
			sched_ms(s, l[k].max), sched_ms(s, l[k].total) / cnt);
		holders(s, ix, &l[k], out);
		wait_stacks(c, s, ix, &l[k], out);
	}
	free(ix);
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
