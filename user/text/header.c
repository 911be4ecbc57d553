/*
 * header.c: the header above every text report (opreport.c prints it before the symbol,
 * thread, line and call-graph sections): the file and kernel, the session's shape, samples,
 * losses, rate changes and the stream's status. Totals add up every session and core.
 */
#include <inttypes.h>
#include <string.h>

#include "ingest/audit.h"
#include "model/clockdesc.h"
#include "text/text.h"
#include "util/textfmt.h"

/* Totals over every session and core. */
struct totals {
	uint64_t taken, lost, overwritten, missed, lost_by[OPF_LOST_NREASONS];
	double seconds;
	uint64_t snapshots, pauses, paused_tsc;
};

/* Add one core: its OPF_CORE_END when present, else what the stream showed of it. */
static void core_totals(const struct core_acct *a, struct totals *t)
{
	uint64_t lost = 0;

	for (int r = 0; r < OPF_LOST_NREASONS; r++) {
		t->lost_by[r] += core_lost(a, r);
		lost += core_lost(a, r);
	}
	t->lost += lost;
	if (a->have_end) {
		t->taken += a->end.taken;
		t->overwritten += a->end.overwritten;
		t->missed += a->end.missed;
	} else {
		t->taken += a->samples + lost;
	}
}

static void totals(const struct profile *p, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (uint32_t i = 0; i < p->nsess; i++) {
		const struct session *s = &p->sess[i];
		double sec = session_seconds(s);

		if (sec > 0)
			t->seconds += sec;
		uint64_t ptsc, pauses = session_pauses(s, &ptsc);

		t->snapshots += s->snapshots;
		t->pauses += pauses;
		if (s->hdr.tsc_hz)
			t->paused_tsc += ptsc;
		for (uint32_t k = 0; k < s->hdr.ncores; k++)
			core_totals(&s->cores[k], t);
	}
}

/*
 * Marks the kernel could not write or that left with a dropped or overwritten block: a
 * pause, resume, throttle or snapshot mark the report cannot see, so its pause time, the
 * weights of a throttled core or a dump's bounds may be off.
 */
static void marks_lost_line(const struct profile *p, FILE *out)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < p->nsess; i++)
		n += p->sess[i].have_end ? p->sess[i].end.marks_lost : 0;
	if (n)
		fprintf(out, "WARNING: %" PRIu64 " mark(s) lost (pause, resume, throttle or "
			"snapshot): pause times and weights may be off\n", n);
}

static void kernel_line(const struct ctx *c, FILE *out)
{
	const uint8_t *id;
	size_t n;

	if (!c->kernel_path) {
		fprintf(out, "Kernel:      none (raw addresses)\n");
		return;
	}
	n = sym_build_id(c->sym, &id);
	fprintf(out, "Kernel:      %s (build-id ", c->kernel_path);
	if (n)
		print_hex(out, id, n);
	else
		fprintf(out, "none");
	fprintf(out, ")\n");
	if (c->kernel_forced) {
		const struct opf_session *h0 = &c->p->sess[0].hdr;

		fprintf(out, "WARNING: that is not the kernel that made the stream (build-id ");
		print_hex(out, h0->build_id, h0->build_id_len);
		fprintf(out, "): read against it by --force-kernel, its names may be wrong\n");
	}
}

static void loss_lines(const struct totals *t, int nmi, FILE *out)
{
	const char *sep = ": ";

	fprintf(out, "Lost:        %" PRIu64 " (%.3f%% of %" PRIu64 " taken)\n", t->lost,
		pct(t->lost, t->taken), t->taken);
	if (t->overwritten)
		fprintf(out, "Overwritten: %" PRIu64 " (flight recorder)\n", t->overwritten);
	if (t->missed)
		fprintf(out, "Missed:      %" PRIu64 " of %" PRIu64 " periods (%.3f%%): cores held "
			"off (%s)\n", t->missed, t->taken + t->missed,
			pct(t->missed, t->taken + t->missed), nmi ?
			"vCPU not running, or still in the last NMI" :
			"interrupts off, or vCPU not running");
	if (t->lost * 10000 <= t->taken)
		return;
	fprintf(out, "WARNING: %" PRIu64 " of %" PRIu64 " samples lost (%.3f%%)", t->lost, t->taken,
		pct(t->lost, t->taken));
	for (int r = 0; r < OPF_LOST_NREASONS; r++) {
		if (!t->lost_by[r])
			continue;
		fprintf(out, "%s%" PRIu64 " %s", sep, t->lost_by[r], lost_reason_name[r]);
		sep = ", ";
	}
	fputc('\n', out);
}

static void throttle_lines(const struct profile *p, FILE *out)
{
	for (uint32_t i = 0; i < p->nthr; i++) {
		const struct throttle_ev *e = &p->thr[i];
		const struct session *s = &p->sess[e->session];

		fprintf(out, "Throttle:    core %u %u -> %u Hz", e->t.core, e->t.old_hz, e->t.new_hz);
		if (s->hdr.tsc_hz && e->t.tsc >= s->hdr.start_tsc)
			fprintf(out, " at %.3f s", (double)(e->t.tsc - s->hdr.start_tsc) /
				(double)s->hdr.tsc_hz);
		fprintf(out, " (%sbudget %u%%)\n", throttle_raised(&e->t) ? "back under " : "",
			e->t.budget_pct);
	}
}

/* 0, or -1 when out of memory for the accounting's verdict. */
static int status_lines(const struct profile *p, const struct totals *t, FILE *out)
{
	const struct opf_session *h0 = &p->sess[0].hdr;

	if (t->snapshots || (h0->flags & OPF_S_SNAPSHOT))
		fprintf(out, "Snapshots:   %" PRIu64 "\n", t->snapshots);
	if (t->pauses)
		fprintf(out, "Paused:      %" PRIu64 " time(s), %.3f s\n", t->pauses,
			h0->tsc_hz ? (double)t->paused_tsc / (double)h0->tsc_hz : 0.0);
	if (p->unknown)
		fprintf(out, "Skipped:     %" PRIu64 " record(s) of unknown type\n", p->unknown);
	if (!profile_complete(p) && !session_is_crash(&p->sess[0])) {	/* crash_header's */
		fprintf(out, "Status:      incomplete:");
		incomplete_status(p, out);
		fputc('\n', out);
	}
	int cf = conservation_failed(p);

	if (cf < 0)
		return -1;
	if (cf)
		fprintf(out, "WARNING: sample accounting does not add up (see --stats)\n");
	marks_lost_line(p, out);
	return 0;
}

/* The clock, and under plain TCG its caveat, wrapped to 96 columns under the value column;
 * then how the periods were placed (the jitter). */
static void clock_lines(const struct opf_session *h0, FILE *out)
{
	const char *a = clock_advice(h0), *lead = "Note:       ";
	char buf[128];

	fprintf(out, "Clock:       %s\n", clock_text(h0, buf, sizeof(buf)));
	while (a && *a) {
		size_t n = strlen(a), cut = n;

		if (n > 83)
			for (cut = 83; cut > 0 && a[cut] != ' '; cut--)
				;
		fprintf(out, "%s %.*s\n", lead, (int)cut, a);
		lead = "            ";
		a += cut + (a[cut] == ' ');
	}
	fprintf(out, "Jitter:      %s\n", jitter_text(h0, buf, sizeof(buf)));
}

/* --snapshot N: which dump the report is of. */
static void snapshot_line(const struct ctx *c, FILE *out)
{
	const struct dump *d = profile_dump(c->p, (uint64_t)c->o->snapshot);
	const struct opf_session *h0 = &c->p->sess[0].hdr;

	fprintf(out, "Snapshot:    dump %ld of %" PRIu64, c->o->snapshot, profile_dumps(c->p));
	if (d && h0->tsc_hz && d->tsc >= h0->start_tsc)
		fprintf(out, ", taken at %.3f s", (double)(d->tsc - h0->start_tsc) /
			(double)h0->tsc_hz);
	fprintf(out, " (the stream holds %" PRIu64 " samples in all)\n", c->p->samples);
}

void report_filter_lines(const struct ctx *c, int sched, FILE *out)
{
	const struct filter_use *u = &c->fu;
	int w = !c->o->by_samples;	/* counts: [0] samples, [1] periods */

	if (!u->f || !u->f->on)
		return;
	fprintf(out, "Filters:     %s", u->f->desc);
	if (!sched)
		fprintf(out, ": %" PRIu64 " of %" PRIu64 " %s kept (%.2f%%)", u->kept[w],
			u->seen[w], ctx_unit(c), pct(u->kept[w], u->seen[w]));
	fputc('\n', out);
	if (!sched && u->f->no_idle)
		fprintf(out, "Idle:        %" PRIu64 " %s (%.2f%% of what the other filters kept) "
			"left out by --no-idle\n", u->idle[w], ctx_unit(c),
			pct(u->idle[w], u->idle[w] + u->kept[w]));
	else if (sched && u->f->no_idle)
		fprintf(out, "Idle:        %u thread(s) on a CPU less than %d%% of the window left "
			"out by --no-idle (%.3f ms of their time), and idle itself\n",
			u->idle_threads, FILTER_IDLE_PERMILLE / 10,
			c->p->sched.nsess ? sched_ms(&c->p->sched.sess[0], u->idle_tsc) : 0.0);
}

int report_header(const struct ctx *c, FILE *out)
{
	const struct profile *p = c->p;
	const struct opf_session *h0 = &p->sess[0].hdr;
	int nmi = h0->version >= 2 && h0->source == OPF_SRC_NMI;
	struct totals t;

	totals(p, &t);
	fprintf(out, "File:        %s\n", c->o->file);
	kernel_line(c, out);
	if (p->nsess > 1)
		fprintf(out, "Sessions:    %u\n", p->nsess);
	fprintf(out, "Cores:       %u\n", c->ncores);
	fprintf(out, "Rate:        %u Hz per core, %s\n", h0->hz, nmi ?
		"by NMI (interrupts-off code is sampled too)" : "by timer interrupt");
	clock_lines(h0, out);
	fprintf(out, "Depth:       %u frames\n", h0->depth);
	if (t.seconds > 0 || h0->tsc_hz)
		fprintf(out, "Duration:    %.3f s\n", t.seconds);
	else
		fprintf(out, "Duration:    unknown (tsc_hz is 0)\n");
	fprintf(out, "Samples:     %" PRIu64 "\n", c->samples);
	fprintf(out, "Periods:     %" PRIu64 " (each sample weighs the periods since its core's "
		"previous one)\n", c->periods);
	fprintf(out, "Weight:      %s%s\n", ctx_unit(c), c->o->by_samples ? " (--weight samples)" :
		" (--weight samples counts samples)");
	if (c->o->snapshot)
		snapshot_line(c, out);
	report_filter_lines(c, 0, out);
	loss_lines(&t, nmi, out);
	throttle_lines(p, out);
	if (status_lines(p, &t, out))
		return -1;
	crash_header(c, out);
	fputc('\n', out);
	return 0;
}
