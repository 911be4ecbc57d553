/*
 * sched_stats.c: the part of --stats (stats.c calls sched_stats) that checks a session's
 * scheduler events from the stream alone, and says which core or thread is wrong:
 *	per core	taken == its event records in the stream + lost[] + overwritten, and
 *			written == in the stream + lost OUTPUT_FULL + overwritten (OPF_SCHED_END);
 *			every switch's prev is the thread the core's last switch put there.
 *	per thread	every switch-out's prev_cpu (the kernel's count) advanced by exactly the
 *			time the switches say it ran; every sample of it fell in its time on
 *			that core (to within a sampling period).
 * With events lost the time checks cannot hold and are skipped (said so).
 */
#include <inttypes.h>

#include "text/text.h"
#include "util/textenc.h"

static uint64_t sum(const uint64_t *v, unsigned n)
{
	uint64_t t = 0;

	for (unsigned i = 0; i < n; i++)
		t += v[i];
	return t;
}

/*
 * One core's event accounting: a row, and 0 or 1 (does not add up). A core the stream never
 * closed (no OPF_CORE_END: an incomplete stream) has no OPF_SCHED_END either: its totals
 * cannot be checked, which is the verdict "incomplete" (--stats says so), not a failure.
 */
static int core_row(const struct sched_core *c, uint32_t k, int closed, FILE *out)
{
	const struct opf_sched_end *e = &c->end;
	uint64_t in = sum(c->recs, OPF_EV_N), lost = sum(e->lost, OPF_LOST_NREASONS);
	int bad = !c->have_end ? closed : e->taken != in + lost + e->overwritten ||
		  sum(e->written, OPF_EV_N) != in + e->lost[OPF_LOST_OUTPUT_FULL] + e->overwritten;

	fprintf(out, "  %4u %9" PRIu64 " %9" PRIu64 " %8" PRIu64 " %6" PRIu64 " %9" PRIu64
		" %9" PRIu64 " %8" PRIu64 " %6" PRIu64 " %6" PRIu64 "  %s\n", k, e->taken,
		c->recs[OPF_EV_SWITCH], c->recs[OPF_EV_WAKEUP], c->recs[OPF_EV_LOCK],
		e->lost[OPF_LOST_NO_BLOCK], e->lost[OPF_LOST_OUTPUT_FULL], e->lost[OPF_LOST_PAUSED],
		e->lost[OPF_LOST_OTHER], e->overwritten, !c->have_end ? (closed ? "NO OPF_SCHED_END" :
		"n/a (incomplete)") : bad ? "MISMATCH" : "ok");
	if (bad && c->have_end)
		fprintf(out, "  core %u: events taken %" PRIu64 " != in stream %" PRIu64 " + lost %"
			PRIu64 " + overwritten %" PRIu64 " (written %" PRIu64 ")\n", k, e->taken, in,
			lost, e->overwritten, sum(e->written, OPF_EV_N));
	return bad;
}

/* The event accounting of every core of session ps; *lost: events lost anywhere. Returns the
 * failures. */
static int events_table(const struct session *ps, const struct sched_sess *s, FILE *out,
			uint64_t *lost)
{
	int bad = 0;

	fprintf(out, "  core     taken  switches  wakeups  locks  no-block  out-full   paused  "
		"other overwr  check\n");
	*lost = 0;
	for (uint32_t k = 0; k < s->ncores; k++) {
		bad += core_row(&s->cores[k], k, ps->cores[k].have_end, out);
		*lost += sum(s->cores[k].end.lost, OPF_LOST_NREASONS) + s->cores[k].end.overwritten;
	}
	return bad;
}

/* Per core: running + idle is the session; every switch continues the last. */
static int core_times(const struct sched_sess *s, FILE *out, int check)
{
	int bad = 0;

	fprintf(out, "  core   busy ms   idle ms  session ms  switches  check\n");
	for (uint32_t k = 0; k < s->ncores; k++) {
		const struct sched_core *c = &s->cores[k];
		int b = check && c->bad;

		fprintf(out, "  %4u %9.3f %9.3f %11.3f %9" PRIu64 "  %s\n", k, sched_ms(s, c->busy),
			sched_ms(s, c->idle), sched_ms(s, s->end - s->start), c->nswitch,
			!check ? "not checked" : b ? "MISMATCH" : "ok");
		if (b)
			fprintf(out, "  core %u: %u switch(es) from a thread that was not running "
				"there, first at %.3f ms: a switch is missing\n", k, c->bad,
				sched_ms(s, c->bad_tsc - s->start));
		bad += b;
	}
	return bad;
}

/* Per thread: the kernel's CPU time and the samples agree with the switches. */
static int thread_checks(const struct profile *p, const struct sched_sess *s, FILE *out)
{
	int bad = 0;

	for (uint32_t i = 0; i < s->nthr; i++) {
		const struct sthread *t = &s->thr[i];
		char name[SHOWN_SIZE(OPF_MAX_NAME)];

		shown_copy(name, sizeof(name), profile_thread_label(p, t->tid));
		if (t->bad_cpu)
			fprintf(out, "  thread %u (%s): %u switch-out(s) where the kernel's CPU time "
				"disagrees with the switches\n", t->tid, name, t->bad_cpu);
		if (t->bad_samples)
			fprintf(out, "  thread %u (%s): %u sample(s) outside its time on core %u by "
				"the switches\n", t->tid, name, t->bad_samples, t->core);
		bad += t->bad_cpu || t->bad_samples;
	}
	return bad;
}

/* Waits whose stack was in the part of a block an earlier reader's file has (OPF_B_PARTIAL). */
static void same_unknown(const struct sched_sess *s, FILE *out)
{
	for (uint32_t k = 0; k < s->ncores; k++)
		if (s->cores[k].same_unknown)
			fprintf(out, "  core %u: %" PRIu64 " wait(s) without a stack: their "
				"OPF_SWITCH is in an earlier file\n", k, s->cores[k].same_unknown);
}

int sched_stats(const struct profile *p, FILE *out)
{
	int bad = 0;

	for (uint32_t i = 0; i < p->sched.nsess; i++) {
		const struct sched_sess *s = &p->sched.sess[i];
		uint64_t lost;
		int b;

		if (!s->on)
			continue;
		fprintf(out, "Scheduler events, session %u:\n", i + 1);
		bad += events_table(&p->sess[i], s, out, &lost);
		bad += core_times(s, out, !lost);
		same_unknown(s, out);
		if (lost) {
			fprintf(out, "  time checks: not checked (%" PRIu64 " events lost)\n", lost);
			continue;
		}
		b = thread_checks(p, s, out);
		fprintf(out, "  threads: %u; kernel CPU time and samples agree with the switches: "
			"%s\n", s->nthr, b ? "NO" : "ok");
		bad += b;
	}
	return bad ? 3 : 0;
}
