/*
 * sched_offcpu.c: off-CPU and lock-wait stacks for the stack-based reports (--offcpu or
 * --locks with --folded, --flame, --pprof). Called by opreport.c: sched_offcpu_stacks after sched_analyze, before
 * the symbols resolve the stacks; sched_offcpu_roots right after.
 *
 * Each stretch a thread spent off a CPU (switch-out to switch-in) becomes one sample of its
 * thread and core weighing its microseconds: the pc is the innermost frame of the switch-out,
 * then its other frames, then a marker address (1, 2, ...: no kernel code lives there) whose
 * frame sched_offcpu_roots renames to the reason, so the reason is the root of the flame. A
 * short switch (preempted, yield: no stack) is the marker alone: its reason as a root.
 * With --locks each wait for a lock (model/lock_waits.c: finished or not; one inside another
 * is counted in the outer only) is one such sample instead: the waiter's stack where it
 * asked for the lock (not finished: where it first slept on it), weighing its wait, rooted
 * in the lock's kind and name -- so the mutex profile's totals are --locks'.
 */
#include <stdlib.h>
#include <string.h>

#include "model/lock_waits.h"
#include "model/sched_offcpu.h"

/* One more root marker for event ev of session si; its address, or 0 (no memory). */
static uint64_t new_root(struct sched_data *d, uint32_t si, uint32_t ev)
{
	if (!(d->nroots & (d->nroots - 1)) || !d->nroots) {
		size_t n = d->nroots ? 2 * (size_t)d->nroots : 64;
		uint32_t *r = realloc(d->roots, n * sizeof(*r));
		uint32_t *s = r ? realloc(d->root_sess, n * sizeof(*s)) : NULL;

		if (r)
			d->roots = r;
		if (!s)
			return 0;
		d->root_sess = s;
	}
	d->roots[d->nroots] = ev;
	d->root_sess[d->nroots++] = si;
	return d->nroots;
}

/* The stack of event ev of session si, for tid, weighing ticks (as microseconds). */
static int add_wait(struct profile *p, struct stacks *t, uint32_t si, uint32_t ev, uint32_t tid,
		    uint64_t ticks)
{
	struct sched_data *d = &p->sched;
	const struct sched_sess *s = &d->sess[si];
	const struct sev *e = &s->ev[ev];
	uint64_t fr[OPF_MAX_DEPTH + 1];
	uint64_t us = s->tsc_hz ? (ticks * 1000000 + s->tsc_hz / 2) / s->tsc_hz : 0;	/* rounded */
	uint16_t n = e->nframes;
	uint64_t root;

	if (!us)
		return 0;
	if (!(root = new_root(d, si, ev)))
		return -1;
	if (!n)		/* a short switch (runnable, exit): its reason alone */
		return stacks_add(t, tid, e->core, 0, us, root, (const uint8_t *)fr, 0) ||
		       stacks_flush(t);
	memcpy(fr, d->frames + e->frames + 1, 8 * (size_t)(n - 1));
	fr[n - 1] = root;
	/* the table batches its input by pointer: done with fr before it goes out of scope */
	return stacks_add(t, tid, e->core, 0, us, d->frames[e->frames], (const uint8_t *)fr, n) ||
	       stacks_flush(t);
}

/* Session si's stretches off a CPU, or (locks) its contended acquisitions, into t. */
static int add_session(struct profile *p, struct stacks *t, uint32_t si, int locks)
{
	const struct sched_sess *s = &p->sched.sess[si];

	t->run = si;
	if (locks) {	/* every wait, finished or not, the ones inside others left out */
		for (uint32_t i = 0; i < s->nwaits; i++) {
			const struct lwait *w = &s->waits[i];
			uint64_t d = lwait_len(s, w);

			if (w->outer == UINT32_MAX && d && add_wait(p, t, si, w->ev, w->tid, d))
				return -1;
		}
		return 0;
	}
	for (uint32_t i = 0; i < s->noff; i++)
		if (add_wait(p, t, si, s->off[i].ev, s->off[i].tid, s->off[i].total))
			return -1;
	return 0;
}

int sched_offcpu_stacks(struct profile *p, int locks)
{
	struct stacks t;

	if (!p->nsess || stacks_init(&t, p->ncores))
		return -1;
	for (uint32_t si = 0; si < p->sched.nsess; si++)
		if (add_session(p, &t, si, locks)) {
			stacks_free(&t);
			return -1;
		}
	if (stacks_flush(&t)) {
		stacks_free(&t);
		return -1;
	}
	stacks_free(&p->stacks);
	p->stacks = t;
	return 0;
}

/* "[sleep]", "[qlock lockpair]", "[rendez thread_gone]", "[spin rq]": the reason of event e. */
static void root_name(struct symbols *sym, const struct sev *e, char *buf, size_t n)
{
	const struct frame *f;
	uint32_t k;

	if (e->kind == SEV_LOCK)
		snprintf(buf, n, "[%s %s]", e->why == OPF_LK_SPIN ? "spin" : "qlock",
			 e->name[0] ? e->name : "?");
	else if (e->why == OPF_WHY_RENDEZ && e->site && (k = sym_frames(sym, e->site, e->site, &f)))
		snprintf(buf, n, "[rendez %s]", sym->funcs[f[k - 1].fid].name);
	else if (e->name[0])
		snprintf(buf, n, "[%s %s]", sched_why_name(e->why), e->name);
	else
		snprintf(buf, n, "[%s]", sched_why_name(e->why));
}

int sched_offcpu_roots(struct profile *p, struct symbols *sym)
{
	struct sched_data *d = &p->sched;
	char name[96];

	for (size_t i = 0; i < p->stacks.n; i++) {
		struct stack *st = p->stacks.list[i];
		uint64_t m = st->addr[st->naddr - 1];

		if (!st->nfids || m == 0 || m > d->nroots)
			continue;
		root_name(sym, &d->sess[d->root_sess[m - 1]].ev[d->roots[m - 1]], name, sizeof(name));
		if ((st->fids[st->nfids - 1] = sym_synthetic(sym, name)) == UINT32_MAX)
			return -1;
	}
	return 0;
}
