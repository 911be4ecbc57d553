/*
 * lines.c: --lines, called by opreport.c: the hottest source lines of the top symbols by self
 * samples. Each pc with self samples is looked up in the DWARF line table (symbols.c) and
 * the samples are folded into (function, file:line) rows.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"
#include "util/textfmt.h"
#include "util/u64map.h"

#define LINES_DEFAULT_SYMBOLS	10	/* symbols shown without -n */

/* A (function, file, line) bucket of self samples. */
struct lrow {
	uint32_t func;		/* rank of the function while sorting, its id before */
	const char *file;	/* NULL: no line information */
	int line;
	uint64_t n;
};

struct lines {
	struct lrow *rows;
	size_t n;
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

/* Self samples per distinct pc of the functions with a rank. */
static int pc_counts(const struct ctx *c, const uint32_t *rank, struct u64map *pcs)
{
	struct stacks *t = &c->p->stacks;

	for (size_t i = 0; i < t->n; i++) {
		struct stack *s = t->list[i];
		uint64_t *cnt;

		if (!rank[s->fids[0]])
			continue;
		if (!(cnt = u64map_get(pcs, s->addr[0])))
			return -1;
		*cnt += stack_value(c, s);
	}
	return 0;
}

/* Add n samples to the row of (f, file, line), making it if new. */
static int add_row(struct lines *l, uint32_t f, const char *file, int line, uint64_t n)
{
	size_t r;

	for (r = 0; r < l->n; r++)
		if (l->rows[r].func == f && l->rows[r].file == file && l->rows[r].line == line)
			break;
	if (r == l->n) {
		struct lrow *nr = realloc(l->rows, (l->n + 1) * sizeof(*nr));

		if (!nr)
			return -1;
		l->rows = nr;
		l->rows[l->n++] = (struct lrow){ f, file, line, 0 };
	}
	l->rows[r].n += n;
	return 0;
}

/* Fold the pcs into (function, file:line) rows. */
static int fold_pcs(const struct ctx *c, const struct u64map *pcs, struct lines *l)
{
	for (size_t j = 0; j <= pcs->mask; j++) {
		uint64_t pc = pcs->keys[j];
		const char *file = NULL;
		int line = 0;

		if (!pcs->used[j])
			continue;
		uint32_t f = sym_leaf(c->sym, pc);
		if (f == UINT32_MAX)
			return -1;
		int r = sym_line(c->sym, pc, &file, &line);

		if (r)
			file = NULL;
		if (r < 0 || add_row(l, f, file, line, pcs->vals[j]))
			return -1;
	}
	return 0;
}

static void print_rows(const struct ctx *c, const uint32_t *v, const struct lines *l, FILE *out)
{
	fprintf(out, " %s       %%  symbol, then its hottest source lines (%% of its %s)\n",
		ctx_unit(c), ctx_unit(c));
	for (size_t r = 0; r < l->n; r++) {
		const struct lrow *row = &l->rows[r];
		uint32_t f = v[row->func];

		if (r == 0 || row->func != l->rows[r - 1].func)
			fprintf(out, "%8" PRIu64 " %6.2f%%  %s\n", c->self[f], pct(c->self[f], c->total),
				c->sym->funcs[f].name);
		if (row->file)
			fprintf(out, "%8" PRIu64 " %6.2f%%      %s:%d\n", row->n,
				pct(row->n, c->self[f]), row->file, row->line);
		else
			fprintf(out, "%8" PRIu64 " %6.2f%%      [no line information]\n", row->n,
				pct(row->n, c->self[f]));
	}
}

int report_lines(const struct ctx *c, FILE *out)
{
	struct u64map pcs = { 0 };
	struct lines l = { NULL, 0 };
	uint32_t n;
	uint32_t *v = ctx_ranked(c, c->self, &n);
	uint32_t *rank = calloc(c->nfuncs + 1, sizeof(*rank));
	int rc = -1;

	if (!v || !rank || u64map_init(&pcs, 256))
		goto out;
	n = c->o->limit >= 0 ? ctx_limit(c, n) : n < LINES_DEFAULT_SYMBOLS ? n : LINES_DEFAULT_SYMBOLS;
	for (uint32_t i = 0; i < n; i++)
		rank[v[i]] = i + 1;
	if (pc_counts(c, rank, &pcs) || fold_pcs(c, &pcs, &l))
		goto out;
	for (size_t r = 0; r < l.n; r++)
		l.rows[r].func = rank[l.rows[r].func] - 1;	/* order rows by function rank */
	if (l.n)
		qsort(l.rows, l.n, sizeof(*l.rows), by_line);
	print_rows(c, v, &l, out);
	rc = 0;
out:
	free(l.rows);
	free(rank);
	free(v);
	u64map_free(&pcs);
	return rc;
}
