/*
 * report.c: the text reports over per-function totals: header, flat symbol table (self or
 * inclusive, optionally per core), threads, source lines, and the --stats accounting view.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

int ctx_aggregate(struct ctx *c)
{
	struct stacks *t = &c->p->stacks;
	uint32_t nf = c->sym->nfuncs, nc = c->ncores;
	uint32_t *stamp;

	c->nfuncs = nf;
	c->self = calloc(nf + 1, sizeof(uint64_t));
	c->incl = calloc(nf + 1, sizeof(uint64_t));
	c->self_core = calloc((size_t)(nf + 1) * nc, sizeof(uint64_t));
	c->incl_core = calloc((size_t)(nf + 1) * nc, sizeof(uint64_t));
	stamp = calloc(nf + 1, sizeof(uint32_t));
	if (!c->self || !c->incl || !c->self_core || !c->incl_core || !stamp) {
		free(stamp);
		return -1;
	}
	c->total = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct stack *s = t->list[i];
		const uint64_t *pc = stack_cores(s);
		uint32_t leaf = s->fids[0];

		c->total += s->total;
		c->self[leaf] += s->total;
		for (uint32_t k = 0; k < nc; k++)
			c->self_core[(size_t)leaf * nc + k] += pc[k];
		for (uint16_t j = 0; j < s->naddr; j++) {
			uint32_t f = s->fids[j];

			if (stamp[f] == i + 1)
				continue;	/* recursion: count once per sample */
			stamp[f] = (uint32_t)(i + 1);
			c->incl[f] += s->total;
			for (uint32_t k = 0; k < nc; k++)
				c->incl_core[(size_t)f * nc + k] += pc[k];
		}
	}
	free(stamp);
	return 0;
}

void ctx_free(struct ctx *c)
{
	free(c->self);
	free(c->incl);
	free(c->self_core);
	free(c->incl_core);
}

static const uint64_t *rank_key;
static const struct func *rank_funcs;

static int by_key(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (rank_key && rank_key[x] != rank_key[y])
		return rank_key[x] < rank_key[y] ? 1 : -1;
	int r = strcmp(rank_funcs[x].name, rank_funcs[y].name);
	if (r)
		return r;
	return x < y ? -1 : x > y;
}

uint32_t *ctx_ranked(const struct ctx *c, const uint64_t *key, uint32_t *n)
{
	uint32_t *v = malloc((c->nfuncs + 1) * sizeof(*v)), k = 0;

	if (!v)
		return NULL;
	for (uint32_t f = 0; f < c->nfuncs; f++)
		if (!key || key[f])
			v[k++] = f;
	rank_key = key;
	rank_funcs = c->sym->funcs;
	qsort(v, k, sizeof(*v), by_key);
	*n = k;
	return v;
}

static void hex(FILE *out, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%02x", b[i]);
}

/* Totals over every session and core. */
struct totals {
	uint64_t taken, lost, overwritten, missed, lost_by[OPF_LOST_NREASONS];
	double seconds;
	uint64_t snapshots, pauses, paused_tsc;
};

static void totals(const struct profile *p, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (uint32_t i = 0; i < p->nsess; i++) {
		const struct session *s = &p->sess[i];
		double sec = session_seconds(s);

		if (sec > 0)
			t->seconds += sec;
		t->snapshots += s->snapshots;
		t->pauses += s->pauses;
		if (s->hdr.tsc_hz)
			t->paused_tsc += s->paused_tsc;
		for (uint32_t k = 0; k < s->hdr.ncores; k++) {
			const struct core_acct *a = &s->cores[k];
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
	}
}

/* An OPF_THROTTLE that raised a throttled core's rate back, rather than lowered it. */
static int throttle_raised(const struct opf_throttle *t)
{
	return t->new_hz > t->old_hz;
}

static void incomplete_status(const struct profile *p, FILE *out)
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

void report_header(const struct ctx *c, FILE *out)
{
	const struct profile *p = c->p;
	const struct session *s0 = &p->sess[0];
	struct totals t;

	totals(p, &t);
	fprintf(out, "File:        %s\n", c->o->file);
	if (c->kernel_path) {
		const uint8_t *id;
		size_t n = sym_build_id(c->sym, &id);

		fprintf(out, "Kernel:      %s (build-id ", c->kernel_path);
		if (n)
			hex(out, id, n);
		else
			fprintf(out, "none");
		fprintf(out, ")\n");
	} else {
		fprintf(out, "Kernel:      none (raw addresses)\n");
	}
	if (p->nsess > 1)
		fprintf(out, "Sessions:    %u\n", p->nsess);
	fprintf(out, "Cores:       %u\n", c->ncores);
	fprintf(out, "Rate:        %u Hz per core\n", s0->hdr.hz);
	fprintf(out, "Depth:       %u frames\n", s0->hdr.depth);
	if (t.seconds > 0 || s0->hdr.tsc_hz)
		fprintf(out, "Duration:    %.3f s\n", t.seconds);
	else
		fprintf(out, "Duration:    unknown (tsc_hz is 0)\n");
	fprintf(out, "Samples:     %" PRIu64 "\n", c->total);
	fprintf(out, "Lost:        %" PRIu64 " (%.3f%% of %" PRIu64 " taken)\n", t.lost,
		pct(t.lost, t.taken), t.taken);
	if (t.overwritten)
		fprintf(out, "Overwritten: %" PRIu64 " (flight recorder)\n", t.overwritten);
	if (t.missed)
		fprintf(out, "Missed:      %" PRIu64 " of %" PRIu64 " timer ticks (%.3f%%): cores held "
			"off (interrupts off, or vCPU not running)\n", t.missed,
			t.taken + t.missed, pct(t.missed, t.taken + t.missed));
	if (t.lost * 10000 > t.taken) {
		const char *sep = ": ";

		fprintf(out, "WARNING: %" PRIu64 " of %" PRIu64 " samples lost (%.3f%%)", t.lost,
			t.taken, pct(t.lost, t.taken));
		for (int r = 0; r < OPF_LOST_NREASONS; r++) {
			if (!t.lost_by[r])
				continue;
			fprintf(out, "%s%" PRIu64 " %s", sep, t.lost_by[r], lost_reason_name[r]);
			sep = ", ";
		}
		fputc('\n', out);
	}
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
	if (t.snapshots || (s0->hdr.flags & OPF_S_SNAPSHOT))
		fprintf(out, "Snapshots:   %" PRIu64 "\n", t.snapshots);
	if (t.pauses)
		fprintf(out, "Paused:      %" PRIu64 " time(s), %.3f s\n", t.pauses,
			s0->hdr.tsc_hz ? (double)t.paused_tsc / (double)s0->hdr.tsc_hz : 0.0);
	if (p->unknown)
		fprintf(out, "Skipped:     %" PRIu64 " record(s) of unknown type\n", p->unknown);
	if (!profile_complete(p)) {
		fprintf(out, "Status:      incomplete:");
		incomplete_status(p, out);
		fputc('\n', out);
	}
	if (conservation_failed(p))
		fprintf(out, "WARNING: sample accounting does not add up (see --stats)\n");
	fputc('\n', out);
}

static void cpu_header(uint32_t ncores, FILE *out)
{
	char b[16];

	for (uint32_t k = 0; k < ncores; k++) {
		snprintf(b, sizeof(b), "cpu%u", k);
		fprintf(out, " %8s", b);
	}
}

static void limit_rows(const struct ctx *c, uint32_t *n)
{
	if (c->o->limit >= 0 && (uint64_t)c->o->limit < *n)
		*n = (uint32_t)c->o->limit;
}

void report_symbols(const struct ctx *c, FILE *out)
{
	const uint64_t *key = c->o->inclusive ? c->incl : c->self;
	const uint64_t *core = c->o->inclusive ? c->incl_core : c->self_core;
	uint32_t n;
	uint32_t *v = ctx_ranked(c, key, &n);

	if (!v)
		return;
	limit_rows(c, &n);
	fprintf(out, "%s samples       %%", c->o->inclusive ? "incl." : "");
	if (c->o->cpu)
		cpu_header(c->ncores, out);
	fprintf(out, "  symbol\n");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t f = v[i];

		fprintf(out, "%s%8" PRIu64 " %6.2f%%", c->o->inclusive ? "     " : "", key[f],
			pct(key[f], c->total));
		if (c->o->cpu)
			for (uint32_t k = 0; k < c->ncores; k++)
				fprintf(out, " %8" PRIu64, core[(size_t)f * c->ncores + k]);
		fprintf(out, "  %s\n", c->sym->funcs[f].name);
	}
	free(v);
}

struct trow {
	uint32_t tid;
	uint64_t n;
	uint64_t *core;
};

static int by_thread(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void report_threads(const struct ctx *c, FILE *out)
{
	struct stacks *t = &c->p->stacks;
	struct u64map m;
	struct trow *rows = NULL;
	uint32_t nrows = 0, nc = c->ncores;

	if (u64map_init(&m, 64))
		return;
	for (size_t i = 0; i < t->n; i++) {
		struct stack *s = t->list[i];
		uint64_t *v = u64map_get(&m, s->tid);

		if (!v)
			goto out;
		if (!*v) {
			struct trow *r = realloc(rows, (nrows + 1) * sizeof(*r));

			if (!r)
				goto out;
			rows = r;
			rows[nrows].tid = s->tid;
			rows[nrows].n = 0;
			rows[nrows].core = calloc(nc, sizeof(uint64_t));
			if (!rows[nrows].core)
				goto out;
			*v = ++nrows;
		}
		struct trow *r = &rows[*v - 1];
		r->n += s->total;
		for (uint32_t k = 0; k < nc; k++)
			r->core[k] += stack_cores(s)[k];
	}
	if (nrows)
		qsort(rows, nrows, sizeof(*rows), by_thread);
	uint32_t n = nrows;
	limit_rows(c, &n);
	fprintf(out, " samples       %%       tid");
	if (c->o->cpu)
		cpu_header(nc, out);
	fprintf(out, "  thread\n");
	for (uint32_t i = 0; i < n; i++) {
		const char *name = profile_thread_name(c->p, rows[i].tid);

		fprintf(out, "%8" PRIu64 " %6.2f%% %9u", rows[i].n, pct(rows[i].n, c->total),
			rows[i].tid);
		if (c->o->cpu)
			for (uint32_t k = 0; k < nc; k++)
				fprintf(out, " %8" PRIu64, rows[i].core[k]);
		fprintf(out, "  %s\n", name ? name : "[unnamed]");
	}
out:
	for (uint32_t i = 0; i < nrows; i++)
		free(rows[i].core);
	free(rows);
	u64map_free(&m);
}

/* A (function, file, line) bucket of self samples. */
struct lrow {
	uint32_t func;
	const char *file;	/* NULL: no line information */
	int line;
	uint64_t n;
};

static int by_line(const void *a, const void *b)
{
	const struct lrow *x = a, *y = b;

	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	if (!x->file || !y->file)
		return !x->file - !y->file;
	int r = strcmp(x->file, y->file);
	return r ? r : (x->line > y->line) - (x->line < y->line);
}

void report_lines(const struct ctx *c, FILE *out)
{
	struct stacks *t = &c->p->stacks;
	struct u64map pcs = { 0 };
	uint32_t n;
	uint32_t *v = ctx_ranked(c, c->self, &n);
	uint32_t *rank = calloc(c->nfuncs + 1, sizeof(*rank));
	struct lrow *rows = NULL;
	size_t nrows = 0;

	if (!v || !rank || u64map_init(&pcs, 256))
		goto out;
	if (c->o->limit >= 0) {
		if ((uint64_t)c->o->limit < n)
			n = (uint32_t)c->o->limit;
	} else if (n > 10) {
		n = 10;
	}
	for (uint32_t i = 0; i < n; i++)
		rank[v[i]] = i + 1;
	/* Self samples per distinct pc of the chosen functions. */
	for (size_t i = 0; i < t->n; i++) {
		struct stack *s = t->list[i];

		if (!rank[s->fids[0]])
			continue;
		uint64_t *cnt = u64map_get(&pcs, s->addr[0]);
		if (!cnt)
			goto out;
		*cnt += s->total;
	}
	/* Fold pcs into (function, file:line) rows. */
	for (size_t j = 0; j <= pcs.mask; j++) {
		if (!pcs.used[j])
			continue;
		uint64_t pc = pcs.keys[j];
		uint32_t f = sym_func(c->sym, pc, pc);
		const char *file = NULL;
		int line = 0;

		if (f == UINT32_MAX)
			goto out;
		if (sym_line(c->sym, pc, &file, &line))
			file = NULL;
		size_t r;
		for (r = 0; r < nrows; r++)
			if (rows[r].func == f && rows[r].file == file && rows[r].line == line)
				break;
		if (r == nrows) {
			struct lrow *nr = realloc(rows, (nrows + 1) * sizeof(*nr));

			if (!nr)
				goto out;
			rows = nr;
			rows[nrows++] = (struct lrow){ f, file, line, 0 };
		}
		rows[r].n += pcs.vals[j];
	}
	for (size_t r = 0; r < nrows; r++)
		rows[r].func = rank[rows[r].func] - 1;	/* order rows by function rank */
	if (nrows)
		qsort(rows, nrows, sizeof(*rows), by_line);
	fprintf(out, " samples       %%  symbol, then its hottest source lines (%% of its samples)\n");
	for (size_t r = 0; r < nrows; r++) {
		uint32_t f = v[rows[r].func];

		if (r == 0 || rows[r].func != rows[r - 1].func)
			fprintf(out, "%8" PRIu64 " %6.2f%%  %s\n", c->self[f], pct(c->self[f], c->total),
				c->sym->funcs[f].name);
		if (rows[r].file)
			fprintf(out, "%8" PRIu64 " %6.2f%%      %s:%d\n", rows[r].n,
				pct(rows[r].n, c->self[f]), rows[r].file, rows[r].line);
		else
			fprintf(out, "%8" PRIu64 " %6.2f%%      [no line information]\n", rows[r].n,
				pct(rows[r].n, c->self[f]));
	}
out:
	free(rows);
	free(rank);
	free(v);
	u64map_free(&pcs);
}

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

static void stats_session(const struct ctx *c, uint32_t si, FILE *out, int *failed, int *unchecked)
{
	const struct profile *p = c->p;
	const struct session *s = &p->sess[si];
	const struct opf_session *h = &s->hdr;
	uint64_t sum[13] = { 0 };
	double sec = session_seconds(s);

	fprintf(out, "Session %u (id %" PRIu64 ") at offset %" PRIu64 ": format %u, %u cores, %u Hz, "
		"depth %u, block %u bytes, worker period %u ms, flags 0x%x%s\n", si + 1,
		h->session_id, s->off, h->version, h->ncores, h->hz, h->depth, h->block_bytes,
		h->period_ms, h->flags, (h->flags & OPF_S_SNAPSHOT) ? " (flight recorder)" : "");
	fprintf(out, "  tsc_hz %" PRIu64 ", start_tsc %" PRIu64 ", start_ns %" PRIu64 ", build-id ",
		h->tsc_hz, h->start_tsc, h->start_ns);
	if (h->build_id_len)
		hex(out, h->build_id, h->build_id_len);
	else
		fprintf(out, "none");
	fputc('\n', out);
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
	if (h->tsc_hz && s->pauses)
		fprintf(out, " (%.3f s)", (double)s->paused_tsc / (double)h->tsc_hz);
	fprintf(out, "%s\n", s->paused ? ", still paused at end" : "");
	for (uint32_t i = 0; i < p->nthr; i++)
		if (p->thr[i].session == si)
			fprintf(out, "  throttle: core %u %u -> %u Hz at tsc %" PRIu64 " (%sbudget "
				"%u%%)\n", p->thr[i].t.core, p->thr[i].t.old_hz, p->thr[i].t.new_hz,
				p->thr[i].t.tsc, throttle_raised(&p->thr[i].t) ? "back under " : "",
				p->thr[i].t.budget_pct);
	if (s->after_end)
		fprintf(out, "  %" PRIu64 " sample(s) after OPF_SESSION_END\n", s->after_end);
	fprintf(out, "  core   in-file     taken delivered  no-block  out-full    paused     other"
		"  overwr  trunc  blocks thrott final-hz  missed  check\n");
	for (uint32_t k = 0; k < h->ncores; k++) {
		const struct core_acct *a = &s->cores[k];
		const struct opf_core_end *e = &a->end;

		fprintf(out, "  %4u %9" PRIu64, k, a->samples);
		sum[0] += a->samples;
		if (!a->have_end) {
			fprintf(out, " %9s %9s", "-", "-");
			for (int r = 0; r < OPF_LOST_NREASONS; r++) {
				fprintf(out, " %9" PRIu64, a->lost_rec[r]);
				sum[3 + r] += a->lost_rec[r];
			}
			fprintf(out, " %7s %6" PRIu64 " %7s %6s %8s %7s  n/a (no OPF_CORE_END)\n",
				"-", a->truncated, "-", "-", "-", "-");
			sum[8] += a->truncated;
			*unchecked = 1;
			continue;
		}
		uint64_t v[] = { e->taken, e->delivered, e->lost[0], e->lost[1], e->lost[2],
				 e->lost[3], e->overwritten, e->truncated, e->blocks, e->throttles };
		fprintf(out, " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
			" %9" PRIu64 " %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %6" PRIu64 " %8u",
			v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], e->final_hz);
		fprintf(out, " %7" PRIu64, e->missed);
		for (int j = 0; j < 10; j++)
			sum[1 + j] += v[j];
		sum[11] += e->missed;
		int bad = core_fails(a);
		fprintf(out, "  %s\n", bad ? "FAIL" : "ok");
		*failed |= bad;
	}
	if (h->ncores > 1)
		fprintf(out, "   all %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9" PRIu64
			" %9" PRIu64 " %9" PRIu64 " %7" PRIu64 " %6" PRIu64 " %7" PRIu64 " %6" PRIu64
			" %8s %7" PRIu64 "\n", sum[0], sum[1], sum[2], sum[3], sum[4], sum[5], sum[6],
			sum[7], sum[8], sum[9], sum[10], "", sum[11]);
	/* Problems, one line each, so the numbers are explained. */
	for (uint32_t k = 0; k < h->ncores; k++) {
		const struct core_acct *a = &s->cores[k];
		const struct opf_core_end *e = &a->end;
		uint64_t lost = 0;

		if (!a->have_end)
			continue;
		for (int r = 0; r < OPF_LOST_NREASONS; r++) {
			lost += e->lost[r];
			if (a->lost_rec[r] != e->lost[r])
				fprintf(out, "  note: core %u: OPF_LOST records count %" PRIu64 " %s, "
					"OPF_CORE_END says %" PRIu64 "\n", k, a->lost_rec[r],
					lost_reason_name[r], e->lost[r]);
		}
		if (a->samples != e->delivered)
			fprintf(out, "  FAIL: core %u: %" PRIu64 " samples in the stream but "
				"delivered is %" PRIu64 "\n", k, a->samples, e->delivered);
		if (e->taken != e->delivered + lost + e->overwritten)
			fprintf(out, "  FAIL: core %u: taken %" PRIu64 " != delivered %" PRIu64
				" + lost %" PRIu64 " + overwritten %" PRIu64 " = %" PRIu64 "\n", k,
				e->taken, e->delivered, lost, e->overwritten,
				e->delivered + lost + e->overwritten);
		if (a->truncated != e->truncated)
			fprintf(out, "  note: core %u: %" PRIu64 " samples flagged truncated in the "
				"stream, OPF_CORE_END says %" PRIu64 "\n", k, a->truncated, e->truncated);
	}
}

int report_stats(const struct ctx *c, FILE *out)
{
	const struct profile *p = c->p;
	int failed = 0, unchecked = 0;

	for (uint32_t i = 0; i < p->nsess; i++)
		stats_session(c, i, out, &failed, &unchecked);
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
