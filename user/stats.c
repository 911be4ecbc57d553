/*
 * stats.c: --stats, called by opreport.c: every session's header and closing records, one
 * accounting row per core, and the conservation check, whose verdict is opreport's exit status
 * (0 holds, 3 does not). conservation_failed lets the other reports warn.
 */
#include <inttypes.h>
#include <string.h>

#include "report.h"

/* Columns of the per-core table after "core": what the stream holds, then OPF_CORE_END. */
enum { C_INFILE, C_TAKEN, C_DELIV, C_LOST0, C_OVERWR = C_LOST0 + OPF_LOST_NREASONS, C_TRUNC,
       C_BLOCKS, C_THROTT, C_MISSED, C_N };

/* Conservation of one core with its OPF_CORE_END; 1 when it fails. */
static int core_fails(const struct core_acct *a)
{
	uint64_t lost = 0;

	if (!a->have_end)
		return 0;
	for (int r = 0; r < OPF_LOST_NREASONS; r++)
		lost += a->end.lost[r];
	return a->samples != a->end.delivered ||
	       a->end.taken != a->end.delivered + lost + a->end.overwritten;
}

int conservation_failed(const struct profile *p)
{
	for (uint32_t i = 0; i < p->nsess; i++)
		for (uint32_t k = 0; k < p->sess[i].hdr.ncores; k++)
			if (core_fails(&p->sess[i].cores[k]))
				return 1;
	return 0;
}

void incomplete_status(const struct profile *p, FILE *out)
{
	for (uint32_t i = 0; i < p->nsess; i++) {
		const struct session *s = &p->sess[i];
		int first = 1;

		if (p->nsess > 1)
			fprintf(out, " session %u:", i + 1);
		if (!s->have_end)
			fprintf(out, " no OPF_SESSION_END;");
		for (uint32_t k = 0; k < s->hdr.ncores; k++) {
			if (s->cores[k].have_end)
				continue;
			fprintf(out, first ? " no OPF_CORE_END for core %u" : ",%u", k);
			first = 0;
		}
		if (!first)
			fputc(';', out);
	}
}

static void session_head(const struct session *s, uint32_t si, FILE *out)
{
	const struct opf_session *h = &s->hdr;

	fprintf(out, "Session %u (id %" PRIu64 ") at offset %" PRIu64 ": format %u, %u cores, %u Hz, "
		"depth %u, block %u bytes, worker period %u ms, flags 0x%x%s\n", si + 1,
		h->session_id, s->off, h->version, h->ncores, h->hz, h->depth, h->block_bytes,
		h->period_ms, h->flags, (h->flags & OPF_S_SNAPSHOT) ? " (flight recorder)" : "");
	fprintf(out, "  tsc_hz %" PRIu64 ", start_tsc %" PRIu64 ", start_ns %" PRIu64 ", build-id ",
		h->tsc_hz, h->start_tsc, h->start_ns);
	if (h->build_id_len)
		print_hex(out, h->build_id, h->build_id_len);
	else
		fprintf(out, "none");
	fputc('\n', out);
}

static void session_tail(const struct profile *p, const struct session *s, uint32_t si, FILE *out)
{
	double sec = session_seconds(s);

	if (s->have_end)
		fprintf(out, "  end: end_tsc %" PRIu64 ", end_ns %" PRIu64 ", blocks dropped %" PRIu64
			", bytes %" PRIu64 " (%s: %" PRIu64 ")\n", s->end.end_tsc, s->end.end_ns,
			s->end.blocks_dropped, s->end.bytes,
			s->end.bytes == s->end_off - s->off ? "matches stream" : "MISMATCH, stream has",
			s->end_off - s->off);
	else
		fprintf(out, "  end: no OPF_SESSION_END (incomplete stream)\n");
	if (sec >= 0)
		fprintf(out, "  duration %.3f s", sec);
	else
		fprintf(out, "  duration unknown");
	fprintf(out, ", snapshots %" PRIu64 ", pauses %" PRIu64, s->snapshots, s->pauses);
	if (s->hdr.tsc_hz && s->pauses)
		fprintf(out, " (%.3f s)", (double)s->paused_tsc / (double)s->hdr.tsc_hz);
	fprintf(out, "%s\n", s->paused ? ", still paused at end" : "");
	for (uint32_t i = 0; i < p->nthr; i++) {
		const struct opf_throttle *t = &p->thr[i].t;

		if (p->thr[i].session == si)
			fprintf(out, "  throttle: core %u %u -> %u Hz at tsc %" PRIu64 " (%sbudget "
				"%u%%)\n", t->core, t->old_hz, t->new_hz, t->tsc,
				throttle_raised(t) ? "back under " : "", t->budget_pct);
	}
	if (s->after_end)
		fprintf(out, "  %" PRIu64 " sample(s) after OPF_SESSION_END\n", s->after_end);
}

/* A core without OPF_CORE_END: what the stream showed, "-" for the rest. */
static void row_open(uint32_t k, const struct core_acct *a, uint64_t *sum, FILE *out)
{
	fprintf(out, "  %4u %9" PRIu64 " %9s %9s", k, a->samples, "-", "-");
	sum[C_INFILE] += a->samples;
	for (int r = 0; r < OPF_LOST_NREASONS; r++) {
		fprintf(out, " %9" PRIu64, a->lost_rec[r]);
		sum[C_LOST0 + r] += a->lost_rec[r];
	}
	fprintf(out, " %7s %6" PRIu64 " %7s %6s %8s %7s  n/a (no OPF_CORE_END)\n", "-",
		a->truncated, "-", "-", "-", "-");
	sum[C_TRUNC] += a->truncated;
}

static void row_closed(uint32_t k, const struct core_acct *a, uint64_t *sum, FILE *out)
{
	const struct opf_core_end *e = &a->end;
	uint64_t v[C_N] = { a->samples, e->taken, e->delivered, e->lost[0], e->lost[1], e->lost[2],
			    e->lost[3], e->overwritten, e->truncated, e->blocks, e->throttles,
			    e->missed };

	fprintf(out, "  %4u %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9"
		PRIu64 " %9" PRIu64 " %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %6" PRIu64 " %8u %7"
		PRIu64 "  %s\n", k, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10],
		e->final_hz, v[11], core_fails(a) ? "FAIL" : "ok");
	for (int j = 0; j < C_N; j++)
		sum[j] += v[j];
}

static void core_table(const struct session *s, FILE *out)
{
	uint64_t sum[C_N] = { 0 };

	fprintf(out, "  core   in-file     taken delivered  no-block  out-full    paused     other"
		"  overwr  trunc  blocks thrott final-hz  missed  check\n");
	for (uint32_t k = 0; k < s->hdr.ncores; k++) {
		if (s->cores[k].have_end)
			row_closed(k, &s->cores[k], sum, out);
		else
			row_open(k, &s->cores[k], sum, out);
	}
	if (s->hdr.ncores > 1)
		fprintf(out, "   all %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
			" %9" PRIu64 " %9" PRIu64 " %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %6" PRIu64
			" %8s %7" PRIu64 "\n", sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6],
			sum[7], sum[8], sum[9], sum[10], "", sum[11]);
}

/* Problems of a closed core, one line each, so the numbers are explained. */
static void core_problems(uint32_t k, const struct core_acct *a, FILE *out)
{
	const struct opf_core_end *e = &a->end;
	uint64_t lost = 0;

	for (int r = 0; r < OPF_LOST_NREASONS; r++) {
		lost += e->lost[r];
		if (a->lost_rec[r] != e->lost[r])
			fprintf(out, "  note: core %u: OPF_LOST records count %" PRIu64 " %s, "
				"OPF_CORE_END says %" PRIu64 "\n", k, a->lost_rec[r],
				lost_reason_name[r], e->lost[r]);
	}
	if (a->samples != e->delivered)
		fprintf(out, "  FAIL: core %u: %" PRIu64 " samples in the stream but delivered is %"
			PRIu64 "\n", k, a->samples, e->delivered);
	if (e->taken != e->delivered + lost + e->overwritten)
		fprintf(out, "  FAIL: core %u: taken %" PRIu64 " != delivered %" PRIu64 " + lost %"
			PRIu64 " + overwritten %" PRIu64 " = %" PRIu64 "\n", k, e->taken, e->delivered,
			lost, e->overwritten, e->delivered + lost + e->overwritten);
	if (a->truncated != e->truncated)
		fprintf(out, "  note: core %u: %" PRIu64 " samples flagged truncated in the stream, "
			"OPF_CORE_END says %" PRIu64 "\n", k, a->truncated, e->truncated);
}

/* One session's part of --stats; sets *failed or *unchecked. */
static void stats_session(const struct profile *p, uint32_t si, FILE *out, int *failed,
			  int *unchecked)
{
	const struct session *s = &p->sess[si];

	session_head(s, si, out);
	session_tail(p, s, si, out);
	core_table(s, out);
	for (uint32_t k = 0; k < s->hdr.ncores; k++) {
		if (!s->cores[k].have_end) {
			*unchecked = 1;
			continue;
		}
		*failed |= core_fails(&s->cores[k]);
		core_problems(k, &s->cores[k], out);
	}
}

int report_stats(const struct ctx *c, FILE *out)
{
	const struct profile *p = c->p;
	int failed = 0, unchecked = 0;

	for (uint32_t i = 0; i < p->nsess; i++)
		stats_session(p, i, out, &failed, &unchecked);
	if (p->unknown) {
		fprintf(out, "Skipped %" PRIu64 " record(s) of unknown type (types", p->unknown);
		for (uint32_t i = 0; i < p->nunknown_types; i++)
			fprintf(out, " %u", p->unknown_types[i]);
		fprintf(out, "%s)\n", p->nunknown_types == 8 ? " ..." : "");
	}
	fprintf(out, "Threads named: %u\n", p->nthreads);
	fprintf(out, "Unique stacks: %zu\n", p->stacks.n);
	if (failed)
		fprintf(out, "Conservation: FAILED (per core: samples in stream == delivered, "
			"taken == delivered + lost + overwritten)\n");
	else if (unchecked)
		fprintf(out, "Conservation: not checkable for cores without OPF_CORE_END "
			"(incomplete stream); the others hold\n");
	else
		fprintf(out, "Conservation: ok (per core: samples in stream == delivered, "
			"taken == delivered + lost + overwritten)\n");
	return failed ? 3 : 0;
}
