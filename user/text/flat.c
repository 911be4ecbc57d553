/*
 * flat.c: the flat tables, called by opreport.c: symbols (self or inclusive, optionally one
 * column per core) and threads. Both read the per-function totals of ctx.c or the unique
 * stacks directly.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

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
	const uint64_t *core = c->o->inclusive ? c->incl_core : c->self_core;
	const char *indent = c->o->inclusive ? "     " : "";
	uint32_t n;
	uint32_t *v = ctx_ranked(c, key, &n);

	if (!v)
		return -1;
	n = ctx_limit(c, n);
	fprintf(out, "%s %s       %%", c->o->inclusive ? "incl." : "", ctx_unit(c));
	if (c->o->cpu)
		cpu_header(c->ncores, out);
	fprintf(out, "  symbol\n");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t f = v[i];

		fprintf(out, "%s%8" PRIu64 " %6.2f%%", indent, key[f], pct(key[f], c->total));
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
			r[*nrows] = (struct trow){ s->tid, 0, calloc(c->ncores, sizeof(uint64_t)) };
			*v = ++*nrows;
		}
		if (!v || !*v || !(*rows)[*v - 1].core) {
			rc = -1;
			break;
		}
		r = &(*rows)[*v - 1];
		r->n += stack_value(c, s);
		for (uint32_t k = 0; k < c->ncores; k++)
			r->core[k] += stack_values(c, s)[k];
	}
	u64map_free(&m);
	return rc;
}

int report_threads(const struct ctx *c, FILE *out)
{
	struct trow *rows = NULL;
	uint32_t nrows = 0;
	int rc = thread_rows(c, &rows, &nrows);
	uint32_t n = rc ? 0 : ctx_limit(c, nrows);

	if (!rc) {
		if (nrows)
			qsort(rows, nrows, sizeof(*rows), by_thread);
		fprintf(out, " %s       %%       tid", ctx_unit(c));
		if (c->o->cpu)
			cpu_header(c->ncores, out);
		fprintf(out, "  thread\n");
	}
	for (uint32_t i = 0; i < n; i++) {
		const char *name = profile_thread_name(c->p, rows[i].tid);

		fprintf(out, "%8" PRIu64 " %6.2f%% %9u", rows[i].n, pct(rows[i].n, c->total),
			rows[i].tid);
		if (c->o->cpu)
			cpu_columns(rows[i].core, c->ncores, out);
		fputs("  ", out);
		term_puts(out, name ? name : "[unnamed]");
		fputc('\n', out);
	}
	for (uint32_t i = 0; i < nrows; i++)
		free(rows[i].core);
	free(rows);
	return rc;
}
