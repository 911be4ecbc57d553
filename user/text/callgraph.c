/*
 * callgraph.c: the opreport -c style call graph. Per function (ranked by inclusive samples):
 * its callers indented above it, the function line itself (inclusive samples, % of all), then
 * "[self]" and its callees indented below. An edge caller->callee counts the samples whose
 * stack contains that call at least once; caller/callee percentages are of the function's
 * inclusive samples (under recursion they may sum past 100%). Called by opreport.c for
 * --callgraph.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"
#include "util/textfmt.h"
#include "util/u64map.h"

struct edge {
	uint32_t from, to;	/* caller, callee */
	uint64_t n;
};

static const struct func *cg_funcs;

/* An edge's grouping function (its callee when listing callers) and the other end. */
static uint32_t group(const struct edge *e, int by_callee)
{
	return by_callee ? e->to : e->from;
}

static uint32_t other(const struct edge *e, int by_callee)
{
	return by_callee ? e->from : e->to;
}

/* Order by the grouping function, then count desc, then the other end's name. */
static int edge_order(const struct edge *x, const struct edge *y, int by_callee)
{
	uint32_t gx = group(x, by_callee), gy = group(y, by_callee);
	uint32_t ox = other(x, by_callee), oy = other(y, by_callee);

	if (gx != gy)
		return gx < gy ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	int r = strcmp(cg_funcs[ox].name, cg_funcs[oy].name);
	return r ? r : (ox > oy) - (ox < oy);
}

static int by_to(const void *a, const void *b)
{
	return edge_order(a, b, 1);
}

static int by_from(const void *a, const void *b)
{
	return edge_order(a, b, 0);
}

/* First index in e[0..n) whose grouping function is >= f. */
static size_t lower(const struct edge *e, size_t n, uint32_t f, int by_callee)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (group(&e[mid], by_callee) < f)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#define DASHES "-------------------------------------------------------------------------------\n"

/* Count each caller->callee edge once per sample that contains it, keyed from << 32 | to. */
static int count_edges(const struct ctx *c, struct u64map *m)
{
	struct stacks *t = &c->p->stacks;

	for (size_t i = 0; i < t->n; i++) {
		struct stack *s = t->list[i];

		for (uint16_t j = 0; j + 1 < s->nfids; j++) {
			uint32_t to = s->fids[j], from = s->fids[j + 1];
			uint16_t k;

			for (k = 0; k < j; k++)	/* this edge already counted for this stack? */
				if (s->fids[k] == to && s->fids[k + 1] == from)
					break;
			if (k < j)
				continue;
			uint64_t *cnt = u64map_get(m, (uint64_t)from << 32 | to);
			if (!cnt)
				return -1;
			*cnt += stack_value(c, s);
		}
	}
	return 0;
}

/* The edges twice: sorted by callee (callers of a function) and by caller (its callees). */
struct edges {
	struct edge *callers, *callees;
	size_t n;
};

static int sort_edges(const struct ctx *c, const struct u64map *m, struct edges *e)
{
	e->callers = malloc((m->n + 1) * sizeof(*e->callers));
	e->callees = malloc((m->n + 1) * sizeof(*e->callees));
	if (!e->callers || !e->callees)
		return -1;
	e->n = 0;
	for (size_t j = 0; j <= m->mask; j++)
		if (m->used[j])
			e->callers[e->n++] = (struct edge){ (uint32_t)(m->keys[j] >> 32),
							    (uint32_t)m->keys[j], m->vals[j] };
	memcpy(e->callees, e->callers, e->n * sizeof(*e->callers));
	cg_funcs = c->sym->funcs;
	qsort(e->callers, e->n, sizeof(*e->callers), by_to);
	qsort(e->callees, e->n, sizeof(*e->callees), by_from);
	return 0;
}

static void edge_line(const struct ctx *c, uint64_t n, uint32_t f, uint32_t other, FILE *out)
{
	fprintf(out, "%8" PRIu64 " %6.2f%%      %s\n", n, pct(n, c->incl[f]),
		c->sym->funcs[other].name);
}

/* Function f's block: callers, itself, [self], callees. */
static void block(const struct ctx *c, const struct edges *e, uint32_t f, FILE *out)
{
	const char *name = c->sym->funcs[f].name;

	fputs(DASHES, out);
	for (size_t i = lower(e->callers, e->n, f, 1); i < e->n && e->callers[i].to == f; i++)
		edge_line(c, e->callers[i].n, f, e->callers[i].from, out);
	fprintf(out, "%8" PRIu64 " %6.2f%%  %s\n", c->incl[f], pct(c->incl[f], c->total), name);
	if (c->self[f])
		fprintf(out, "%8" PRIu64 " %6.2f%%      %s [self]\n", c->self[f],
			pct(c->self[f], c->incl[f]), name);
	for (size_t i = lower(e->callees, e->n, f, 0); i < e->n && e->callees[i].from == f; i++)
		edge_line(c, e->callees[i].n, f, e->callees[i].to, out);
}

int report_callgraph(const struct ctx *c, FILE *out)
{
	struct u64map m;
	struct edges e = { NULL, NULL, 0 };
	uint32_t *v = NULL, n;
	int rc = -1;

	if (u64map_init(&m, 1024))
		return -1;
	if (count_edges(c, &m) || sort_edges(c, &m, &e) || !(v = ctx_ranked(c, c->incl, &n)))
		goto out;
	n = ctx_limit(c, n);
	fprintf(out, " %s       %%  symbol (callers above, [self] and callees below; "
		"indented %% are of the function's inclusive %s)\n", ctx_unit(c), ctx_unit(c));
	for (uint32_t i = 0; i < n; i++)
		block(c, &e, v[i], out);
	if (n)
		fputs(DASHES, out);
	rc = 0;
out:
	free(v);
	free(e.callers);
	free(e.callees);
	u64map_free(&m);
	return rc;
}
