/*
 * filter.c: the report's filters (filter.h), parsed from the options by opreport.c and
 * applied once each where the data is aggregated, never per view:
 *
 *	filter_attach	profile.c's keep, called for each sample as the stream is read: its
 *			core (--cores) and time (--time). The time is gone once the sample is in
 *			the unique-stack table, so it is judged here; a sample left out still
 *			advances its core's clock (profile.c weighs it first), so the next one
 *			kept weighs what it did.
 *	filter_window	each session's window in TSC ticks, which sched_analyze clips every
 *			thread's and core's time to (model/sched_acct.c).
 *	filter_stacks	each unique stack once the symbols are resolved: its thread (--tid,
 *			--comm: a thread's name is known only once the whole stream is read, as
 *			its OPF_THREAD may come after its samples) and frames (--focus,
 *			--ignore), then --no-idle; the ones left out leave the table, so every
 *			stack report and export (flat, call graph, lines, folded, flame, pprof)
 *			and the per-function totals see only the rest.
 *	filter_sched	after the replay: the threads of --wall, the off-CPU stretches of
 *			--offcpu, and each event's mark (struct sev.out) read by --locks, the
 *			off-CPU and lock stacks, and perf.data's scheduler records.
 * The spans of --timeline and --trace are judged as they are drawn (spans.c), and the samples
 * perf.data keeps (collected while reading) as they are written (perfdata.c): the same
 * predicate, filter_judge.
 *
 * --focus and --ignore mean what they mean in pprof: a sample is kept when a frame of its
 * stack matches focus, and left out when one matches ignore (POSIX extended regular
 * expressions, unanchored, on function names, inlined ones included). --no-idle leaves out
 * the idle thread (tid 0) and, in the scheduler views, threads on a CPU for less than
 * FILTER_IDLE_PERMILLE of the window; the header says what it left out.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/filter.h"

enum { FM_SEEN = 1, FM_FOCUS = 2, FM_IGNORE = 4 };

/* --- parsing -------------------------------------------------------------------------- */

/* "N" or "A-B" at *s (advanced past it) into [*a, *b]. 0 or -1. */
static int parse_range(const char **s, unsigned long *a, unsigned long *b)
{
	char *end;

	errno = 0;
	*a = strtoul(*s, &end, 10);
	if (end == *s || errno || **s == '-' || **s == '+')
		return -1;
	*b = *a;
	if (*end == '-') {
		const char *t = end + 1;

		*b = strtoul(t, &end, 10);
		if (end == t || errno || *t == '-' || *t == '+' || *b < *a)
			return -1;
	}
	*s = end;
	return 0;
}

/* A comma list of N and A-B, each at most max, calling put for each value. 0 or -1. */
static int parse_list(const char *arg, unsigned long max, int (*put)(void *, unsigned long),
		      void *ctx)
{
	const char *s = arg;

	for (;;) {
		unsigned long a, b;

		if (parse_range(&s, &a, &b) || b > max || b - a > 1000000)
			return -1;
		for (unsigned long v = a; v <= b; v++)
			if (put(ctx, v))
				return -1;
		if (!*s)
			return 0;
		if (*s++ != ',')
			return -1;
	}
}

static int put_tid(void *arg, unsigned long v)
{
	struct filter *f = arg;
	uint32_t *n = realloc(f->tids, (f->ntids + 1) * sizeof(*n));

	if (!n)
		return -1;
	f->tids = n;
	f->tids[f->ntids++] = (uint32_t)v;
	return 0;
}

static int put_core(void *arg, unsigned long v)
{
	((struct filter *)arg)->cores[v] = 1;
	return 0;
}

static int parse_comms(struct filter *f, const char *arg)
{
	const char *s = arg;

	do {
		size_t n = strcspn(s, ",");
		char **c = realloc(f->comms, (f->ncomms + 1) * sizeof(*c));

		if (!c)
			return -1;
		f->comms = c;
		if (!n || !(f->comms[f->ncomms] = strndup(s, n)))
			return -1;
		f->ncomms++;
		s += n;
	} while (*s++ == ',');
	return 0;
}

/* One side of --time: empty is open (*v untouched); else seconds >= 0. 0 or -1. */
static int parse_seconds(const char *s, size_t n, double *v)
{
	char buf[64], *end;

	if (!n)
		return 0;
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = 0;
	errno = 0;
	*v = strtod(buf, &end);
	return errno || *end || end == buf || !(*v >= 0) ? -1 : 0;
}

static int parse_time(struct filter *f, const char *arg)
{
	const char *comma = strchr(arg, ',');

	f->from = 0;
	f->to = -1;
	if (!comma || strchr(comma + 1, ',') ||
	    parse_seconds(arg, (size_t)(comma - arg), &f->from) ||
	    parse_seconds(comma + 1, strlen(comma + 1), &f->to))
		return -1;
	return f->to >= 0 && f->to <= f->from ? -1 : 0;
}

static int parse_re(regex_t *re, int *have, const char *arg, const char *opt, char *err,
		    size_t errlen)
{
	char why[128];
	int rc = regcomp(re, arg, REG_EXTENDED | REG_NOSUB);

	if (!rc) {
		*have = 1;
		return 0;
	}
	regerror(rc, re, why, sizeof(why));
	snprintf(err, errlen, "%s: bad regular expression '%s': %s", opt, arg, why);
	return 2;
}

/* " --opt ARG" onto the description. */
static void describe(struct filter *f, const char *opt, const char *arg)
{
	size_t n = strlen(f->desc);

	snprintf(f->desc + n, sizeof(f->desc) - n, "%s%s%s%s", n ? " " : "", opt, arg ? " " : "",
		 arg ? arg : "");
	f->on = 1;
}

/* Say opt's argument is wrong and what it wants; 2. */
static int bad(char *err, size_t errlen, const char *opt, const char *arg, const char *want)
{
	snprintf(err, errlen, "%s wants %s, not '%s'", opt, want, arg);
	return 2;
}

int filter_parse(struct filter *f, const struct options *o, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->to = -1;
	if (o->f_tid && (describe(f, "--tid", o->f_tid), parse_list(o->f_tid, UINT32_MAX - 1,
								     put_tid, f)))
		return bad(err, errlen, "--tid", o->f_tid, "thread ids: N, A-B or a comma list");
	if (o->f_comm && (describe(f, "--comm", o->f_comm), parse_comms(f, o->f_comm)))
		return bad(err, errlen, "--comm", o->f_comm, "thread names, comma separated");
	if (o->f_cores) {
		describe(f, "--cores", o->f_cores);
		if (!(f->cores = calloc(OPF_MAX_CORES, 1)) ||
		    parse_list(o->f_cores, OPF_MAX_CORES - 1, put_core, f))
			return bad(err, errlen, "--cores", o->f_cores,
				   "cores: N, A-B or a comma list");
	}
	if (o->f_time && (describe(f, "--time", o->f_time), f->timed = 1, parse_time(f, o->f_time)))
		return bad(err, errlen, "--time", o->f_time, "START,END in seconds from the "
			   "session's start, START before END (either may be empty)");
	if (o->f_focus && (describe(f, "--focus", o->f_focus),
			   parse_re(&f->focus, &f->have_focus, o->f_focus, "--focus", err, errlen)))
		return 2;
	if (o->f_ignore && (describe(f, "--ignore", o->f_ignore),
			    parse_re(&f->ignore, &f->have_ignore, o->f_ignore, "--ignore", err,
				     errlen)))
		return 2;
	if (o->no_idle) {
		describe(f, "--no-idle", NULL);
		f->no_idle = 1;
	}
	return 0;
}

void filter_free(struct filter *f)
{
	for (uint32_t i = 0; i < f->ncomms; i++)
		free(f->comms[i]);
	free(f->comms);
	free(f->tids);
	free(f->cores);
	free(f->match);
	if (f->have_focus)
		regfree(&f->focus);
	if (f->have_ignore)
		regfree(&f->ignore);
	memset(f, 0, sizeof(*f));
}

/* --- the predicate -------------------------------------------------------------------- */

int filter_core(const struct filter *f, uint32_t k)
{
	return !f || !f->cores || (k < OPF_MAX_CORES && f->cores[k]);
}

/* Session si's window in TSC ticks: [*w0, *w1). */
static void window(const struct filter *f, const struct profile *p, uint32_t si, uint64_t *w0,
		   uint64_t *w1)
{
	const struct opf_session *h = &p->sess[si].hdr;

	*w0 = 0;
	*w1 = UINT64_MAX;
	if (!f->timed)
		return;
	*w0 = h->start_tsc + (uint64_t)(f->from * (double)h->tsc_hz);
	if (f->to >= 0)
		*w1 = h->start_tsc + (uint64_t)(f->to * (double)h->tsc_hz);
}

/* An instant in [w0, w1), or a stretch clipped to it with something left. */
static int when_ok(const struct filter *f, const struct profile *p, struct fitem *it)
{
	uint64_t w0, w1;

	if (it->sess == FI_NONE || it->sess >= p->nsess)
		return 1;
	window(f, p, it->sess, &w0, &w1);
	if (it->t0 == it->t1)
		return it->t0 >= w0 && it->t0 < w1;
	it->t0 = it->t0 > w0 ? it->t0 : w0;
	it->t1 = it->t1 < w1 ? it->t1 : w1;
	return it->t0 < it->t1;
}

/* Thread tid is one --tid and --comm keep. */
static int who_ok(const struct filter *f, const struct profile *p, uint32_t tid)
{
	int ok = !f->ntids;
	const char *name;

	for (uint32_t i = 0; i < f->ntids && !ok; i++)
		ok = f->tids[i] == tid;
	if (!ok || !f->ncomms)
		return ok;
	if (!(name = profile_thread_name(p, tid)))
		return 0;
	for (uint32_t i = 0; i < f->ncomms; i++)
		if (!strcmp(f->comms[i], name))
			return 1;
	return 0;
}

/* The symbol table the function ids of the items judged next belong to (with --diff of two
 * kernels, each side has its own): the matches known so far are of the last one's ids. */
static void use_symbols(struct filter *f, struct symbols *sym)
{
	if (f->sym == sym)
		return;
	f->sym = sym;
	f->nmatch = 0;	/* fid_match grows and clears it again */
}

/* FM_* of function fid, matched once. 0 when out of memory (matches nothing). */
static unsigned fid_match(struct filter *f, uint32_t fid)
{
	if (!f->sym || fid >= f->sym->nfuncs)
		return 0;
	if (fid >= f->nmatch) {
		uint32_t n = f->sym->nfuncs + 64;
		uint8_t *m = realloc(f->match, n);

		if (!m)
			return 0;
		memset(m + f->nmatch, 0, n - f->nmatch);
		f->match = m;
		f->nmatch = n;
	}
	if (!f->match[fid]) {
		const char *name = f->sym->funcs[fid].name;

		f->match[fid] = FM_SEEN;
		if (f->have_focus && !regexec(&f->focus, name, 0, NULL, 0))
			f->match[fid] |= FM_FOCUS;
		if (f->have_ignore && !regexec(&f->ignore, name, 0, NULL, 0))
			f->match[fid] |= FM_IGNORE;
	}
	return f->match[fid];
}

/* FM_* of any frame of the item's stack. */
static unsigned stack_match(struct filter *f, const struct fitem *it)
{
	unsigned m = 0;

	for (uint32_t i = 0; it->fids && i < it->nfids; i++)
		m |= fid_match(f, it->fids[i]);
	for (uint32_t i = 0; it->addrs && f->sym && i < it->naddrs; i++) {
		const struct frame *fr;
		uint32_t n = sym_frames(f->sym, it->addrs[i], it->addrs[i], &fr);

		for (uint32_t k = 0; k < n; k++)
			m |= fid_match(f, fr[k].fid);
	}
	return m;
}

static int what_ok(struct filter *f, const struct fitem *it)
{
	unsigned m;

	if (!f->have_focus && !f->have_ignore)
		return 1;
	m = stack_match(f, it);
	return (!f->have_focus || (m & FM_FOCUS)) && !(m & FM_IGNORE);
}

/* Whose it is: its thread, or for an event either of its two. */
static enum fverdict who_verdict(const struct filter *f, const struct profile *p,
				 const struct fitem *it, unsigned what)
{
	int who = !(what & FJ_WHO);
	int busy = !(what & FJ_IDLE) || !f->no_idle;

	if (it->tid == FI_NONE)
		return FV_KEEP;
	if (!who)
		who = who_ok(f, p, it->tid) || (it->tid2 != FI_NONE && who_ok(f, p, it->tid2));
	if (!busy)
		busy = it->tid != 0 || (it->tid2 != FI_NONE && it->tid2 != 0);
	return !who ? FV_OUT : busy ? FV_KEEP : FV_IDLE;
}

enum fverdict filter_judge(struct filter *f, const struct profile *p, struct fitem *it,
			   unsigned what)
{
	enum fverdict v;

	if (!f || !f->on)
		return FV_KEEP;
	if ((what & FJ_WHERE) && it->core != FI_NONE && !filter_core(f, it->core))
		return FV_OUT;
	if ((what & FJ_WHEN) && !when_ok(f, p, it))
		return FV_OUT;
	v = who_verdict(f, p, it, what);
	if (v == FV_OUT || ((what & FJ_WHAT) && !what_ok(f, it)))
		return FV_OUT;
	return v;
}

/* --- where each is applied -------------------------------------------------------------- */

/* profile.c's keep: one sample, its core and time. */
static int keep_sample(void *arg, const struct profile *p, const struct opf_sample *h,
		       uint64_t weight)
{
	struct filter_use *u = arg;
	struct fitem it = { p->nsess - 1, h->core, FI_NONE, FI_NONE, h->tsc, h->tsc, NULL, 0,
			    NULL, 0 };

	u->seen[0]++;
	u->seen[1] += weight;
	return filter_judge(u->f, p, &it, FJ_WHEN | FJ_WHERE) != FV_OUT;
}

void filter_attach(struct filter_use *u, struct profile *p)
{
	p->keep = keep_sample;
	p->keep_arg = u;
}

void filter_window(const struct filter *f, struct profile *p)
{
	for (uint32_t si = 0; f && f->on && si < p->sched.nsess && si < p->nsess; si++)
		window(f, p, si, &p->sched.sess[si].from, &p->sched.sess[si].to);
}

int filter_stacks(struct filter_use *u, struct profile *p, struct symbols *sym)
{
	struct stacks *t = &p->stacks;
	size_t n = 0;

	u->kept[0] = u->kept[1] = u->idle[0] = u->idle[1] = 0;
	if (u->f)
		use_symbols(u->f, sym);
	for (size_t i = 0; i < t->n; i++) {
		struct stack *s = t->list[i];
		struct fitem it = { FI_NONE, FI_NONE, s->tid, FI_NONE, 0, 0, s->fids, s->nfids,
				    NULL, 0 };
		enum fverdict v = filter_judge(u->f, p, &it, FJ_WHO | FJ_WHAT | FJ_IDLE);

		if (v == FV_IDLE) {
			u->idle[0] += s->total;
			u->idle[1] += s->weight;
		}
		if (v != FV_KEEP) {	/* out of the list: stacks_free no longer sees its frames */
			free(s->fids);
			s->fids = NULL;
			s->nfids = 0;
			continue;
		}
		u->kept[0] += s->total;
		u->kept[1] += s->weight;
		t->list[n++] = s;
	}
	t->n = n;
	return 0;
}

/* The lookup addresses of event e's stack (the innermost as is, the others minus one). */
static uint32_t event_addrs(const struct profile *p, const struct sev *e, uint64_t *a)
{
	const uint64_t *fr = p->sched.frames + e->frames;
	uint32_t n = e->nframes < OPF_MAX_DEPTH + 1 ? e->nframes : OPF_MAX_DEPTH + 1;

	for (uint32_t i = 0; i < n; i++)
		a[i] = fr[i] - (i && fr[i] ? 1 : 0);
	return n;
}

/* A thread of the scheduler views: the filters on it; --no-idle, on a CPU too little. */
static enum fverdict judge_thread(struct filter_use *u, const struct profile *p, uint32_t si,
				  const struct sthread *t)
{
	struct fitem it = { si, t->core, t->tid, FI_NONE, t->first, t->last, NULL, 0, NULL, 0 };
	enum fverdict v = filter_judge(u->f, p, &it, FJ_WHERE | FJ_WHO | FJ_IDLE);
	uint64_t life = t->last - t->first;

	if (t->last <= t->first)
		return FV_OUT;
	if (v == FV_KEEP && u->f->no_idle && t->on * 1000 < life * FILTER_IDLE_PERMILLE)
		return FV_IDLE;
	return v;
}

/* Session si: keep the threads and stretches of the filters' threads, cores and stacks. */
static void keep_threads(struct filter_use *u, struct profile *p, uint32_t si, unsigned what)
{
	struct sched_sess *s = &p->sched.sess[si];
	uint32_t n = 0;

	for (uint32_t i = 0; i < s->nthr; i++) {
		enum fverdict v = judge_thread(u, p, si, &s->thr[i]);

		if (v == FV_IDLE && s->thr[i].tid) {
			u->idle_threads++;
			u->idle_tsc += s->thr[i].last - s->thr[i].first;
		}
		if (v == FV_KEEP)
			s->thr[n++] = s->thr[i];
	}
	s->nthr = n;
	n = 0;
	for (uint32_t i = 0; i < s->noff; i++) {
		const struct offcpu *o = &s->off[i];
		const struct sev *e = &s->ev[o->ev];
		uint64_t a[OPF_MAX_DEPTH + 1];
		struct fitem it = { si, e->core, FI_NONE, FI_NONE, 0, 0, NULL, 0, a,
				    event_addrs(p, e, a) };
		int kept = 0;

		/* its time is the window's already (sched_acct.c clipped it) */
		for (uint32_t k = 0; k < s->nthr && !kept; k++)
			kept = s->thr[k].tid == o->tid;
		if (kept && filter_judge(u->f, p, &it, what) == FV_KEEP)
			s->off[n++] = *o;
	}
	s->noff = n;
}

/* Each event's mark: a switch or wake-up is kept when either thread is, a lock wait by its
 * waiter; its core, time (a wait: its stretch) and stack. */
static void mark_events(struct filter_use *u, struct profile *p, uint32_t si, unsigned what)
{
	struct sched_sess *s = &p->sched.sess[si];
	uint64_t a[OPF_MAX_DEPTH + 1];

	for (uint32_t i = 0; i < s->nev; i++) {
		struct sev *e = &s->ev[i];
		int lock = e->kind == SEV_LOCK;
		struct fitem it = { si, e->core, e->a, lock ? FI_NONE : e->b, e->tsc, e->tsc,
				    NULL, 0, a, 0 };

		if (e->kind == SEV_CREATE)
			continue;
		if (lock)
			it.t0 = e->tsc > e->x ? e->tsc - e->x : 0;
		if (lock || (e->kind == SEV_SWITCH && e->nframes))
			it.naddrs = event_addrs(p, e, a);
		e->out = filter_judge(u->f, p, &it, what) != FV_KEEP;
		if (lock && !e->out)
			e->x = it.t1 - it.t0;	/* its wait in the window */
	}
}

int filter_sched(struct filter_use *u, struct profile *p, struct symbols *sym, int what)
{
	if (!u->f || !u->f->on)
		return 0;
	use_symbols(u->f, sym);
	for (uint32_t si = 0; si < p->sched.nsess && si < p->nsess; si++) {
		if (!p->sched.sess[si].on)
			continue;
		mark_events(u, p, si, what ? FJ_ALL : FJ_ALL & ~FJ_WHAT);
		keep_threads(u, p, si, what ? FJ_WHERE | FJ_WHAT : FJ_WHERE);
	}
	return 0;
}
