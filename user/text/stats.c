/*
 * stats.c: --stats, called by opreport.c: every session's header and closing records, its
 * flight-recorder dumps, one accounting row per core (and, in format 2, one block row), then
 * the findings of the conservation check (audit.c), whose verdict is opreport's exit status:
 * 0 it holds, 3 it does not, 4 the stream is incomplete and what it holds adds up.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/audit.h"
#include "model/clockdesc.h"
#include "text/text.h"
#include "util/textfmt.h"

/* Columns of the per-core table after "core": what the stream holds, then OPF_CORE_END. */
enum { C_INFILE, C_TAKEN, C_DELIV, C_LOST0, C_OVERWR = C_LOST0 + OPF_LOST_NREASONS, C_TRUNC,
       C_BLOCKS, C_THROTT, C_MISSED, C_N };

static void session_head(const struct session *s, uint32_t si, FILE *out)
{
	const struct opf_session *h = &s->hdr;
	char clk[128];

	fprintf(out, "Session %u (id %" PRIu64 ") at offset %" PRIu64 ": format %u, %u cores, %u Hz, "
		"depth %u, block %u bytes, worker period %u ms, flags 0x%x%s\n", si + 1,
		h->session_id, s->off, h->version, h->ncores, h->hz, h->depth, h->block_bytes,
		h->period_ms, h->flags, (h->flags & OPF_S_SNAPSHOT) ? " (flight recorder)" : "");
	if (h->version >= 2)
		fprintf(out, "  source %s, output cap %" PRIu64 " bytes%s\n",
			h->source == OPF_SRC_NMI ? "nmi" : "timer", h->cap,
			(h->flags & OPF_S_RESUMED) ? ", resumed (a reader opened mid-stream)" : "");
	fprintf(out, "  clock %s%s\n", clock_text(h, clk, sizeof(clk)),
		(h->flags & OPF_S_CLOCK_TOLD) ? " (told by the launcher)" : "");
	fprintf(out, "  jitter %s\n", jitter_text(h, clk, sizeof(clk)));
	fprintf(out, "  tsc_hz %" PRIu64 ", start_tsc %" PRIu64 ", start_ns %" PRIu64 ", build-id ",
		h->tsc_hz, h->start_tsc, h->start_ns);
	if (h->build_id_len)
		print_hex(out, h->build_id, h->build_id_len);
	else
		fprintf(out, "none");
	fputc('\n', out);
}

static void end_line(const struct session *s, FILE *out)
{
	if (s->joins)
		fprintf(out, "  continued by %u later reader%s (the files concatenated; the session "
			"header each repeats and a begun block's header are not counted)\n", s->joins,
			s->joins == 1 ? "" : "s");
	if (!s->have_end) {
		fprintf(out, "  end: no OPF_SESSION_END (incomplete stream)\n");
		return;
	}
	fprintf(out, "  end: end_tsc %" PRIu64 ", end_ns %" PRIu64 ", blocks dropped %" PRIu64
		", bytes %" PRIu64 " (%s: %" PRIu64 ")", s->end.end_tsc, s->end.end_ns,
		s->end.blocks_dropped, s->end.bytes,
		s->end.bytes == s->end_off - s->off - s->join_bytes ? "matches stream" :
		session_discarded(s) ? "discarded, the stream has" : "MISMATCH, stream has",
		s->end_off - s->off - s->join_bytes);
	if (s->hdr.version >= 2)
		fprintf(out, ", marks lost %" PRIu64 "%s", s->end.marks_lost,
			(s->end.h.flags & OPF_SE_DISCARDED) ? ", DISCARDED" : "");
	fputc('\n', out);
}

static void session_tail(const struct profile *p, const struct session *s, uint32_t si, FILE *out)
{
	double sec = session_seconds(s);
	uint64_t paused_tsc, pauses = session_pauses(s, &paused_tsc);
	int still = 0;

	end_line(s, out);
	for (uint32_t k = 0; k < s->hdr.ncores; k++)
		still |= s->cores[k].paused;
	if (sec >= 0)
		fprintf(out, "  duration %.3f s", sec);
	else
		fprintf(out, "  duration unknown");
	fprintf(out, ", snapshots %" PRIu64 ", pauses %" PRIu64, s->snapshots, pauses);
	if (s->hdr.tsc_hz && pauses)
		fprintf(out, " (%.3f s)", (double)paused_tsc / (double)s->hdr.tsc_hz);
	fprintf(out, "%s\n", still ? ", still paused at end" : "");
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

/* Every flight-recorder dump: when (s since start) and its samples per core. */
static void dump_lines(const struct session *s, FILE *out)
{
	for (uint32_t i = 0; i < s->ndumps; i++) {
		const struct dump *d = &s->dumps[i];
		uint64_t all = 0;

		fprintf(out, "  dump %" PRIu64 " at ", d->seq);
		if (s->hdr.tsc_hz && d->tsc >= s->hdr.start_tsc)
			fprintf(out, "%.3f s", (double)(d->tsc - s->hdr.start_tsc) /
				(double)s->hdr.tsc_hz);
		else
			fprintf(out, "tsc %" PRIu64, d->tsc);
		fprintf(out, ": samples per core");
		for (uint32_t k = 0; k < s->hdr.ncores; k++) {
			fprintf(out, " %" PRIu64, d->samples[k]);
			all += d->samples[k];
		}
		fprintf(out, " (%" PRIu64 " in all)%s\n", all, d->closed ? "" : ", no end mark");
	}
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

static void row_closed(uint32_t k, const struct core_acct *a, int bad, uint64_t *sum, FILE *out)
{
	const struct opf_core_end *e = &a->end;
	uint64_t v[C_N] = { a->samples, e->taken, e->delivered, e->lost[0], e->lost[1], e->lost[2],
			    e->lost[3], e->overwritten, e->truncated, e->blocks, e->throttles,
			    e->missed };

	fprintf(out, "  %4u %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9"
		PRIu64 " %9" PRIu64 " %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %6" PRIu64 " %8u %7"
		PRIu64 "  %s\n", k, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10],
		e->final_hz, v[11], bad ? "FAIL" : "ok");
	for (int j = 0; j < C_N; j++)
		sum[j] += v[j];
}

static void core_table(const struct session *s, const uint8_t *bad, FILE *out)
{
	uint64_t sum[C_N] = { 0 };

	fprintf(out, "  core   in-file     taken delivered  no-block  out-full    paused     other"
		"  overwr  trunc  blocks thrott final-hz  missed  check\n");
	for (uint32_t k = 0; k < s->hdr.ncores; k++) {
		if (s->cores[k].have_end)
			row_closed(k, &s->cores[k], bad[k], sum, out);
		else
			row_open(k, &s->cores[k], sum, out);
	}
	if (s->hdr.ncores > 1)
		fprintf(out, "   all %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
			" %9" PRIu64 " %9" PRIu64 " %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %6" PRIu64
			" %8s %7" PRIu64 "\n", sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6],
			sum[7], sum[8], sum[9], sum[10], "", sum[11]);
}

/* Format 2: per core, the blocks it pushed and what became of them. */
static void block_table(const struct session *s, FILE *out)
{
	uint32_t nw = s->hdr.ncores;

	fprintf(out, "  core    pushed in-file  dropped   listed unlisted   overwr depth-cut   irqoff\n");
	for (uint32_t k = 0; k < nw; k++) {
		const struct core_acct *c = &s->cores[k];
		const struct opf_core_end *e = &c->end;

		fprintf(out, "  %4u", k);
		if (c->have_end)
			fprintf(out, " %9" PRIu64, e->blocks);
		else
			fprintf(out, " %9s", "-");
		fprintf(out, " %7u", s->writers[k].n);
		if (c->have_end)
			fprintf(out, " %8" PRIu64, e->blocks_dropped);
		else
			fprintf(out, " %8s", "-");
		fprintf(out, " %8" PRIu64, c->drop_blocks);
		if (c->have_end)
			fprintf(out, " %8" PRIu64 " %8" PRIu64, e->blocks_unlisted,
				e->blocks_overwritten);
		else
			fprintf(out, " %8s %8s", "-", "-");
		fprintf(out, " %9" PRIu64 " %8" PRIu64 "\n", c->depth_cut, c->irqoff);
	}
	fprintf(out, "  stream's own blocks: %u\n", s->writers[nw].n);
}

/* One session's part of --stats; returns its audit verdict (AUDIT_*), or -1 (no memory). */
static int stats_session(const struct profile *p, uint32_t si, FILE *out)
{
	const struct session *s = &p->sess[si];
	uint8_t *bad = calloc(s->hdr.ncores, 1);

	if (!bad || audit_session(p, si, NULL, bad) & AUDIT_NOMEM) {
		free(bad);
		return -1;
	}
	session_head(s, si, out);
	session_tail(p, s, si, out);
	dump_lines(s, out);
	core_table(s, bad, out);
	if (s->hdr.version >= 2)
		block_table(s, out);
	free(bad);
	int v = audit_session(p, si, out, NULL);
	return v & AUDIT_NOMEM ? -1 : v;
}

static void verdict_line(const struct profile *p, int v, FILE *out)
{
	int v2 = 0;

	for (uint32_t i = 0; i < p->nsess; i++)
		v2 |= p->sess[i].hdr.version >= 2;
	if (v & AUDIT_FAIL)
		fprintf(out, "Conservation: FAILED (see the FAIL lines above)\n");
	else if (v & AUDIT_INCOMPLETE)
		fprintf(out, "Conservation: incomplete stream: what it holds adds up, the rest "
			"cannot be checked (see the incomplete lines above)\n");
	else if (p->nsess && session_is_crash(&p->sess[0]))
		fprintf(out, "Conservation: ok as far as a crash dump tells (per core: its window's "
			"blocks gapless, each as its header says; see the crash dump lines above)\n");
	else if (v2)
		fprintf(out, "Conservation: ok (per core: every block in the stream, dropped or "
			"overwritten, each as its header says; samples in stream == delivered; "
			"taken == delivered + lost + overwritten; losses told add up)\n");
	else
		fprintf(out, "Conservation: ok (per core: samples in stream == delivered, "
			"taken == delivered + lost + overwritten)\n");
}

int report_stats(const struct ctx *c, FILE *out)
{
	const struct profile *p = c->p;
	int v = 0;

	for (uint32_t i = 0; i < p->nsess; i++) {
		int r = stats_session(p, i, out);

		if (r < 0)
			return -1;
		v |= r;
	}
	if (p->unknown) {
		fprintf(out, "Skipped %" PRIu64 " record(s) of unknown type (types", p->unknown);
		for (uint32_t i = 0; i < p->nunknown_types; i++)
			fprintf(out, " %u", p->unknown_types[i]);
		fprintf(out, "%s)\n", p->nunknown_types == 8 ? " ..." : "");
	}
	fprintf(out, "Threads named: %u\n", p->nthreads);
	fprintf(out, "Unique stacks: %zu\n", p->stacks.n);
	verdict_line(p, v, out);
	if (sched_any(&p->sched) && sched_stats(p, out))
		v |= AUDIT_FAIL;
	return v & AUDIT_FAIL ? 3 : v & AUDIT_INCOMPLETE ? 4 : 0;
}
