/*
 * sched_check.c: a session's samples against its switches, over the time its events cover
 * (the spans the replay made: sched_acct.c). Called by sched_analyze after the replay;
 * --stats prints the verdicts (text/sched_stats.c), --wall and --thread show the shares.
 *
 * Two checks, each a property of the stream the kernel must keep:
 *	each sample	its thread is what its core's span at its time says ran there (idle
 *			for tid 0), unless a switch is within a period of it. A sample in
 *			unknown time checks nothing.
 *	each core and	the share of the known time on a CPU by the switches (a core: busy;
 *	thread		a thread: on its core) against the share of the sample weights there
 *			that are its. The kernel's ticks are periodic, so a span of l periods
 *			takes floor(l) or floor(l) + 1 of them: a variance of frac(l)(1 -
 *			frac(l)) a span (not a binomial's, which the "±" of a share assumes and
 *			which is far wider). How far the two may be apart, in periods of the
 *			core: SCHED_CHECK_SIGMAS standard deviations of that, plus
 *			SCHED_CHECK_SLACK, plus the periods late samples stand for where
 *			another thread (or idle) ran too -- a late sample puts them all where
 *			it landed (interrupts held off in timer mode, a virtual CPU not running)
 *			-- and one a span: a sample is taken when its interrupt is taken, which
 *			may come after the switch that ended the span (the switches run with
 *			interrupts off, and under -icount QEMU passes an NMI on to another core
 *			only when the sending one yields), so the tick lands in the next span.
 *			Time credited to the wrong state (a gap counted as the state before it)
 *			makes the two disagree by far more.
 * With --time, over the window only (s->from, s->to).
 */
#include <math.h>

#include "model/noise.h"
#include "model/sched_check.h"

/* The thread tid of s (made by the replay's placement), or NULL (idle, or none). */
static struct sthread *find(struct sched_sess *s, uint32_t tid)
{
	for (uint32_t i = 0; tid && i < s->nthr; i++)
		if (s->thr[i].tid == tid)
			return &s->thr[i];
	return NULL;
}

/* The part of span x in the report's window (--time), TSC ticks. */
static uint64_t clipped(const struct sched_sess *s, const struct cspan *x)
{
	uint64_t a = x->t0 > s->from ? x->t0 : s->from, b = x->t1 < s->to ? x->t1 : s->to;

	return b > a ? b - a : 0;
}

/* The variance of the ticks a span of d TSC ticks takes (periodic sampling). */
static double span_var(const struct sched_sess *s, uint64_t d)
{
	double l = s->period ? (double)d / (double)s->period : 0, f = l - floor(l);

	return f * (1 - f);
}

/* c's shares and verdict (its sums filled): the samples' half-width as of any share
 * (model/noise.h); the tolerance of periodic ticks (the file's opening comment). */
static void verdict(struct timecheck *c)
{
	double n = (double)c->periods, tol;

	c->share_sw = c->known ? 100.0 * (double)c->on / (double)c->known : 0;
	c->share_smp = c->periods ? 100.0 * (double)c->on_periods / n : 0;
	c->hw = noise_hw((double)c->on_periods, n, c->on_sw2, c->sw2);
	tol = SCHED_CHECK_SIGMAS * sqrt(c->var_span) + SCHED_CHECK_SLACK + c->slack;
	c->bad = c->periods && fabs(c->share_sw - c->share_smp) * n / 100.0 > tol;
}

/* Core k's spans: each thread's and the core's busy runs, for their variance. */
static void span_vars(struct sched_sess *s, uint32_t k)
{
	struct sched_core *c = &s->cores[k];
	uint64_t run = 0;

	for (uint32_t j = 0; j < c->nspans; j++) {
		const struct cspan *x = &c->spans[j];
		struct sthread *t = x->tid != SEV_NOBODY ? find(s, x->tid) : NULL;

		if (!clipped(s, x))
			continue;
		if (t) {
			t->check.var_span += span_var(s, clipped(s, x));
			t->check.slack += 1;
		}
		if (t && x->tid) {
			run += clipped(s, x);
			continue;
		}
		c->check.var_span += span_var(s, run);
		c->check.slack += run != 0;
		run = 0;
	}
	c->check.var_span += span_var(s, run);
	c->check.slack += run != 0;
}

/*
 * Late sample m (core k's span sp holds it; prev: the core's sample before it) stands for
 * periods since prev: any thread that ran there but m's, and m's own, may be off by them.
 */
static void late(struct sched_sess *s, uint32_t k, uint32_t sp, const struct ssample *m,
		 uint64_t prev)
{
	struct sched_core *c = &s->cores[k];
	double extra = (double)(m->w - 1);
	int mixed = 0, busy_mixed = 0;

	for (uint32_t j = sp + 1; j-- > 0 && c->spans[j].t1 > prev;) {
		const struct cspan *x = &c->spans[j];
		struct sthread *t;

		if (x->tid == SEV_NOBODY || x->tid == m->tid)
			continue;
		mixed = 1;
		busy_mixed |= !x->tid != !m->tid;
		if ((t = find(s, x->tid)))
			t->check.slack += extra;
	}
	if (mixed && find(s, m->tid))
		find(s, m->tid)->check.slack += extra;
	if (busy_mixed)
		c->check.slack += extra;
}

/* Core k's samples (from *j on, s->smp sorted by core and time) against its spans. */
static void check_core(struct sched_sess *s, uint32_t k, uint32_t *j)
{
	struct sched_core *c = &s->cores[k];
	uint64_t prev = 0;
	uint32_t sp = 0;

	for (; *j < s->nsmp && s->smp[*j].core == k; ++*j) {
		const struct ssample *m = &s->smp[*j];
		const struct cspan *x;
		struct sthread *t;
		double w = (double)m->w;

		while (sp < c->nspans && c->spans[sp].t1 <= m->tsc &&
		       !(sp + 1 == c->nspans && m->tsc == s->end))	/* the end's own tick */
			sp++;
		if (sp == c->nspans || m->tsc < c->spans[sp].t0 || c->spans[sp].tid == SEV_NOBODY ||
		    m->tsc < s->from || m->tsc >= s->to) {
			prev = 0;	/* in no span (past the end), unknown time, or not the window */
			continue;
		}
		x = &c->spans[sp];
		c->check.periods += m->w;
		c->check.sw2 += w * w;
		if (m->tid) {
			c->check.on_periods += m->w;
			c->check.on_sw2 += w * w;
		}
		if ((t = find(s, m->tid))) {
			t->check.on_periods += m->w;
			t->check.on_sw2 += w * w;
		}
		if (m->w > 1 && prev)
			late(s, k, sp, m, prev);
		prev = m->tsc;
		t = find(s, m->tid ? m->tid : x->tid);
		if (m->tid != x->tid && t && m->tsc - x->t0 > s->period && x->t1 - m->tsc > s->period)
			t->bad_samples++;
	}
}

void sched_check(struct sched_sess *s)
{
	uint32_t j = 0;

	for (uint32_t i = 0; i < s->nthr; i++) {
		s->thr[i].check = (struct timecheck){ 0 };
		s->thr[i].bad_samples = 0;
	}
	for (uint32_t k = 0; k < s->ncores; k++) {
		struct sched_core *c = &s->cores[k];

		c->check = (struct timecheck){ .known = c->busy + c->idle, .on = c->busy };
		span_vars(s, k);
		while (j < s->nsmp && s->smp[j].core < k)
			j++;
		check_core(s, k, &j);
		verdict(&c->check);
	}
	for (uint32_t i = 0; i < s->nthr; i++) {
		struct sthread *t = &s->thr[i];
		const struct timecheck *c = &s->cores[t->core < s->ncores ? t->core : 0].check;

		t->check.known = c->known;
		t->check.on = t->on;
		t->check.periods = c->periods;
		t->check.sw2 = c->sw2;
		verdict(&t->check);
	}
}
