/*
 * sched_records.c: the scheduler events of a stream (OPF_S_SCHED sessions) as Linux's
 * sched:sched_switch, sched_wakeup and sched_stat_runtime tracepoint samples in the
 * perf.data file that perfdata.c writes for --perf-data, so `perf sched timehist`, `perf
 * sched latency`, `perf timechart`, `perf script` and hotspot's off-CPU view read them.
 * Called by perfdata.c, after sched_analyze has put every session's events in time order.
 * The tracepoints themselves (formats, raw records, attributes) are tracepoints.c's.
 *
 * Mapping: a switch is emitted on its core by prev (sample pid/tid prev), prev_state from
 * the reason (preempted or yielded: R; sleep, rendez, qlock: S; I/O: D; exit: X); a wake-up
 * on the waker's core by the waker; before each switch, a sched_stat_runtime of prev for
 * its run since the core's previous switch (perf sched latency's runtime column). tid 0 is
 * the idle thread, as Linux's pid 0. Every thread has priority 120 (the kernel has no
 * priorities).
 *
 * For hotspot (1.3.0: src/parsers/perf/perfparser.cpp), whose off-CPU time of a thread runs
 * from a PERF_RECORD_SWITCH out to its next switch in and lands on the call chain of the
 * thread's last sched_switch sample: the sched_switch samples carry prev's stack of the
 * switch record (PERF_SAMPLE_CALLCHAIN), each switch writes its switch records (see
 * put_switch_recs), and the session's end switches in every thread still out, so hotspot's
 * stretches are exactly opreport --offcpu's (tests/t/sched-hotspot).
 */
#include <stdlib.h>
#include <string.h>

#include "export/perf/sched_records.h"
#include "export/perf/tracepoints.h"
#include "util/textenc.h"
#include "util/u64map.h"

/* Linux's task state bits, as perf prints them (R S D ... X) */
static int64_t prev_state(unsigned why)
{
	switch (why) {
	case OPF_WHY_PREEMPT: case OPF_WHY_YIELD: return 0;	/* R */
	case OPF_WHY_IO: return 2;				/* D */
	case OPF_WHY_EXIT: return 0x10;				/* X */
	default: return 1;					/* S */
	}
}

static void comm(const struct profile *p, uint32_t tid, char out[16])
{
	memset(out, 0, 16);
	shown_copy(out, 16, tid ? profile_thread_label(p, tid) : "swapper");	/* whole chars */
}

int perf_sched_on(const struct ctx *c)
{
	return sched_any(&c->p->sched);
}

/* Where a session's samples go, and what writing them keeps. */
struct tp_writer {
	const struct profile *p;
	const struct session *ss;
	FILE *f;
	uint64_t *since;	/* per core: when its running thread was switched in (ns) */
	struct u64map out;	/* tid -> 1 + the core it left, while switched out */
};

/* What a tracepoint sample says besides its raw record. */
struct tp_sample {
	uint64_t id, ns;
	uint32_t tid, cpu;
	const uint64_t *chain;	/* call chain (sched_switch only: PERF_SAMPLE_CALLCHAIN) */
	uint16_t nchain;
};

/* One tracepoint sample: records.h's tp_sample_head (period 1), [call chain], the raw
 * record, padded. */
static int put_tp(FILE *f, const struct tp_sample *t, const void *raw, uint32_t n)
{
	static const uint8_t zero[8];
	uint32_t size = n + (8 - (n + 4) % 8) % 8;	/* the u32 and the record fill 8s */
	uint64_t nr = t->nchain;
	size_t chain = t->chain ? 8 * (1 + (size_t)nr) : 0;
	struct tp_sample_head h = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL,
				      (uint16_t)(sizeof(h) + chain + 4 + size) },
				    t->id, t->tid, t->tid, t->ns, t->cpu, 0, 1 };

	fwrite(&h, sizeof(h), 1, f);
	if (t->chain) {
		fwrite(&nr, 8, 1, f);
		fwrite(t->chain, 8, nr, f);
	}
	fwrite(&size, 4, 1, f);
	fwrite(raw, 1, n, f);
	fwrite(zero, 1, size - n, f);
	return ferror(f) ? -1 : 0;
}

/* prev's run that switch e ends (at ns), since its core's previous switch (*since, ns) */
static int put_runtime(const struct profile *p, const struct sev *e, uint64_t ns,
		       uint64_t *since, FILE *f)
{
	struct tp_runtime r = { { TP_RUNTIME_ID, 0, 0, (int32_t)e->a }, "", (int32_t)e->a, 0,
				ns > *since ? ns - *since : 0, 0 };
	struct tp_sample t = { PERF_SAMPLE_ID_VALUE + 3, ns, e->a, e->core, NULL, 0 };
	int rc = 0;

	comm(p, e->a, r.comm);
	if (e->a)	/* the idle thread's time is no thread's runtime */
		rc = put_tp(f, &t, &r, sizeof(r));
	*since = ns;
	return rc;
}

/*
 * prev's stack at switch e as perf's kernel call chain: the context marker, the innermost
 * frame as it is, each return address minus one (inside its call, as opreport looks it up).
 */
static uint16_t switch_chain(const struct profile *p, const struct sev *e,
			     uint64_t chain[OPF_MAX_DEPTH + 2])
{
	const uint64_t *fr = p->sched.frames + e->frames;
	uint16_t n = e->nframes < OPF_MAX_DEPTH + 1 ? e->nframes : OPF_MAX_DEPTH + 1;

	chain[0] = PERF_CONTEXT_KERNEL;
	for (uint16_t i = 0; i < n; i++)
		chain[1 + i] = fr[i] - (i && fr[i] ? 1 : 0);
	return (uint16_t)(1 + n);
}

/*
 * The context switch records of switch e (perf record --switch-events): prev out (none for
 * an exit: it never comes back), next in. hotspot counts a thread's off-CPU time from its
 * switch-out to its next switch-in and gives it the stack of its last sched_switch sample.
 * They are stamped 1 ns after the tracepoint, as in Linux, where the tracepoint fires
 * before the switch is recorded: hotspot's parser passes on records of one time before
 * samples of that time, and the switch-out must find the thread (made by its sample).
 */
static int put_switch_recs(struct tp_writer *w, const struct sev *e, uint64_t ns)
{
	static const uint64_t none;
	uint16_t misc = PERF_RECORD_MISC_SWITCH_OUT;
	uint64_t *v;

	if (prev_state(e->why) == 0)
		misc |= PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;	/* still runnable */
	if (e->a && e->why != OPF_WHY_EXIT) {
		perf_put_rec(w->f, PERF_RECORD_SWITCH, misc, &none, 0, e->a, e->a, ns + 1, e->core);
		if (!(v = u64map_get(&w->out, e->a)))
			return -1;
		*v = 1u + e->core;
	}
	if (e->b) {
		perf_put_rec(w->f, PERF_RECORD_SWITCH, 0, &none, 0, e->b, e->b, ns + 1, e->core);
		if ((v = u64map_find(&w->out, e->b)))
			*v = 0;
	}
	return ferror(w->f) ? -1 : 0;
}

/* Switch e: prev's runtime, the sched_switch sample with prev's stack, the switch records. */
static int put_switch(struct tp_writer *w, const struct sev *e, uint64_t ns)
{
	struct tp_switch r = { { TP_SWITCH_ID, 0, 0, (int32_t)e->a }, "", (int32_t)e->a,
			       TP_PRIO, prev_state(e->why), "", (int32_t)e->b, TP_PRIO };
	uint64_t chain[OPF_MAX_DEPTH + 2];
	struct tp_sample t = { PERF_SAMPLE_ID_VALUE + 1, ns, e->a, e->core, chain, 0 };

	t.nchain = switch_chain(w->p, e, chain);
	comm(w->p, e->a, r.prev_comm);
	comm(w->p, e->b, r.next_comm);
	return put_runtime(w->p, e, ns, &w->since[e->core], w->f) ||
	       put_tp(w->f, &t, &r, sizeof(r)) || put_switch_recs(w, e, ns);
}

static int put_event(struct tp_writer *w, const struct sev *e)
{
	uint64_t ns = perf_ns_of(w->ss, e->tsc);

	if (e->kind == SEV_SWITCH)
		return put_switch(w, e, ns);
	if (e->kind == SEV_WAKEUP) {
		struct tp_wakeup r = { { TP_WAKEUP_ID, 0, 0, (int32_t)e->b }, "", (int32_t)e->a,
				       TP_PRIO, e->why };
		struct tp_sample t = { PERF_SAMPLE_ID_VALUE + 2, ns, e->b, e->core, NULL, 0 };

		comm(w->p, e->a, r.comm);
		return put_tp(w->f, &t, &r, sizeof(r));
	}
	return 0;
}

/*
 * The session's end ends every stretch off a CPU still open, as opreport --offcpu ends it:
 * a switch-in then of each thread still out, so hotspot counts that stretch too.
 */
static int put_closing(struct tp_writer *w, const struct sched_sess *s)
{
	static const uint64_t none;
	uint64_t ns = perf_ns_of(w->ss, s->end) + 1;

	for (uint32_t i = 0; i < s->nthr; i++) {
		uint64_t *v = u64map_find(&w->out, s->thr[i].tid);

		if (v && *v)
			perf_put_rec(w->f, PERF_RECORD_SWITCH, 0, &none, 0, s->thr[i].tid,
				     s->thr[i].tid, ns, (uint32_t)(*v - 1));
	}
	return ferror(w->f) ? -1 : 0;
}

/* Session si's switches (each after the runtime it ends) and wake-ups, in time order. */
static int put_session(const struct profile *p, uint32_t si, FILE *f)
{
	const struct sched_sess *s = &p->sched.sess[si];
	struct tp_writer w = { p, &p->sess[si], f, calloc(s->ncores + 1, sizeof(uint64_t)),
			       { 0 } };
	int rc = w.since && !u64map_init(&w.out, 64) ? 0 : -1;

	for (uint32_t k = 0; !rc && k < s->ncores; k++)
		w.since[k] = perf_ns_of(w.ss, s->start);
	for (uint32_t i = 0; !rc && i < s->nev; i++)
		if (s->ev[i].core < s->ncores && !s->ev[i].out)	/* out: the filters' */
			rc = put_event(&w, &s->ev[i]);
	if (!rc)
		rc = put_closing(&w, s);
	u64map_free(&w.out);
	free(w.since);
	return rc;
}

int perf_sched_samples(const struct ctx *c, FILE *f)
{
	const struct profile *p = c->p;

	for (uint32_t si = 0; si < p->sched.nsess && si < p->nsess; si++)
		if (p->sched.sess[si].on && put_session(p, si, f))
			return -1;
	return 0;
}
