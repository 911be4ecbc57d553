/*
 * flat.c: the flat tables, called by opreport.c: symbols (self or inclusive, optionally one
 * column per core) and threads. Both read the per-function totals of ctx.c or the unique
 * stacks directly. Every share has its 95% half-width beside it, in points, in the column
 * headed "±" (model/noise.h: binomial on the samples, their weights honoured). A thread's row
 * of a session with scheduler events also gives its on-CPU time by the switches as a share
 * of the same whole (all cores' time the events cover), which the samples' share estimates
 * (not with filters: the shares are then of what they kept).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/sched_gaps.h"
#include "text/text.h"
#include "util/textenc.h"
#include "util/textfmt.h"
#include "util/u64map.h"

static void cpu_header(uint32_t ncores, FILE *out)
{
	char b[16];

	for (uint32_t k = 0; k < ncores; k++) {
		snprintf(b, sizeof(b), "cpu%u", k);
		fprintf(out, " %8s", b);
	}
}

static void cpu_columns(const uint64_t *v, uint32_t ncores, FILE *out)
{
	for (uint32_t k = 0; k < ncores; k++)
		fprintf(out, " %8" PRIu64, v[k]);
}

int report_symbols(const struct ctx *c, FILE *out)
{
	const uint64_t *key = c->o->inclusive ? c->incl : c->self;
	const double *key2 = c->o->inclusive ? c->incl_w2 : c->self_w2;
	const uint64_t *core = c->o->inclusive ? c->incl_core : c->self_core;
	const char *indent = c->o->inclusive ? "     " : "";
	uint32_t n;
	uint32_t *v = ctx_ranked(c, key, &n);

	if (!v)
		return -1;
	n = ctx_limit(c, n);
	fprintf(out, "%s %s       %%      \u00b1", c->o->inclusive ? "incl." : "", ctx_unit(c));
	if (c->o->cpu)
		cpu_header(c->ncores, out);
	fprintf(out, "  symbol\n");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t f = v[i];

		fprintf(out, "%s%8" PRIu64 " %6.2f%% %6.2f", indent, key[f], pct(key[f], c->total),
			ctx_hw(c, key[f], key2[f]));
		if (c->o->cpu)
			cpu_columns(core + (size_t)f * c->ncores, c->ncores, out);
		fprintf(out, "  %s\n", c->sym->funcs[f].name);
	}
	free(v);
	return 0;
}

/* One thread's row: its samples in all and per core. */
struct trow {
	uint32_t tid;
	uint64_t n;
	double n2;		/* its samples' squared weights */
	uint64_t *core;
};

static int by_thread(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;

	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* Sum the stacks into one row per thread in *rows (*nrows of them, to free even on failure).
 * Returns 0 or -1 (no memory). */
static int thread_rows(const struct ctx *c, struct trow **rows, uint32_t *nrows)
{
	struct stacks *t = &c->p->stacks;
	struct u64map m;
	int rc = 0;

	if (u64map_init(&m, 64))
		return -1;
	for (size_t i = 0; i < t->n && !rc; i++) {
		struct stack *s = t->list[i];
		uint64_t *v = u64map_get(&m, s->tid);
		struct trow *r;

		if (v && !*v && (r = realloc(*rows, (*nrows + 1) * sizeof(*r)))) {
			*rows = r;
			r[*nrows] = (struct trow){ s->tid, 0, 0, calloc(c->ncores, sizeof(uint64_t)) };
			*v = ++*nrows;
		}
		if (!v || !*v || !(*rows)[*v - 1].core) {
			rc = -1;
			break;
		}
		r = &(*rows)[*v - 1];
		r->n += stack_value(c, s);
		r->n2 += stack_value2(c, s);
		for (uint32_t k = 0; k < c->ncores; k++)
			r->core[k] += stack_values(c, s)[k];
	}
	u64map_free(&m);
	return rc;
}

/* Every session has scheduler events: its threads' on-CPU time by the switches is a share of
 * every core's time the events cover (the whole the sample weights stand for). */
static int all_sched(const struct profile *p)
{
	for (uint32_t i = 0; i < p->sched.nsess; i++)
		if (!p->sched.sess[i].on)
			return 0;
	return p->sched.nsess > 0;
}

/* Thread tid's on-CPU time by the switches, as a percent of every core's known time. */
static double on_cpu_share(const struct profile *p, uint32_t tid)
{
	uint64_t on = 0, known = 0;

	for (uint32_t i = 0; i < p->sched.nsess; i++) {
		const struct sched_sess *s = &p->sched.sess[i];

		for (uint32_t k = 0; k < s->ncores; k++)
			known += s->cores[k].busy + s->cores[k].idle;
		for (uint32_t j = 0; j < s->nthr; j++)
			if (s->thr[j].tid == tid) {
				on += s->thr[j].on;
				if (!tid)
					on = 0;
			}
		for (uint32_t k = 0; !tid && k < s->ncores; k++)
			on += s->cores[k].idle;
	}
	return pct(on, known);
}

int report_threads(const struct ctx *c, FILE *out)
{
	struct trow *rows = NULL;
	uint32_t nrows = 0;
	/* on-cpu is of the whole: not beside shares of what filters kept */
	int rc = thread_rows(c, &rows, &nrows), sched = all_sched(c->p) && !(c->fu.f && c->fu.f->on);
	uint32_t n = rc ? 0 : ctx_limit(c, nrows);

	if (!rc) {
		if (nrows)
			qsort(rows, nrows, sizeof(*rows), by_thread);
		for (uint32_t i = 0; sched && i < c->p->sched.nsess; i++)
			sched_unknown_line(&c->p->sched.sess[i], i, out);
		fprintf(out, " %s       %%      \u00b1       tid", ctx_unit(c));
		if (c->o->cpu)
			cpu_header(c->ncores, out);
		fprintf(out, "%s  thread\n", sched ? "  on-cpu" : "");
	}
	for (uint32_t i = 0; i < n; i++) {
		const char *name = profile_thread_name(c->p, rows[i].tid);

		fprintf(out, "%8" PRIu64 " %6.2f%% %6.2f %9u", rows[i].n, pct(rows[i].n, c->total),
			ctx_hw(c, rows[i].n, rows[i].n2), rows[i].tid);
		if (c->o->cpu)
			cpu_columns(rows[i].core, c->ncores, out);
		if (sched)
			fprintf(out, " %6.2f%%", on_cpu_share(c->p, rows[i].tid));
		fputs("  ", out);
		term_puts(out, name ? name : "[unnamed]");
		fputc('\n', out);
	}
	for (uint32_t i = 0; i < nrows; i++)
		free(rows[i].core);
	free(rows);
	return rc;
}
