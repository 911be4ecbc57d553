/*
 * callgraph.c: the opreport -c style call graph. Per function (ranked by inclusive samples):
 * its callers indented above it, the function line itself (inclusive samples, % of all), then
 * "[self]" and its callees indented below. An edge caller->callee counts the samples whose
 * stack contains that call at least once; caller/callee percentages are of the function's
 * inclusive samples (under recursion they may sum past 100%).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct edge {
	uint32_t from, to;	/* caller, callee */
	uint64_t n;
};

static const struct func *cg_funcs;

/* Order by the grouping function (to for callers, from for callees), then count desc, name. */
static int by_to(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	int r = strcmp(cg_funcs[x->from].name, cg_funcs[y->from].name);
	return r ? r : (x->from > y->from) - (x->from < y->from);
}

static int by_from(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->n != y->n)
		return x->n < y->n ? 1 : -1;
	int r = strcmp(cg_funcs[x->to].name, cg_funcs[y->to].name);
	return r ? r : (x->to > y->to) - (x->to < y->to);
}

/* First index in e[0..n) whose key (to or from) is >= f. */
static size_t lower(const struct edge *e, size_t n, uint32_t f, int use_to)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint32_t k = use_to ? e[mid].to : e[mid].from;

		if (k < f)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#define DASHES "-------------------------------------------------------------------------------\n"

int report_callgraph(const struct ctx *c, FILE *out)
{
	struct stacks *t = &c->p->stacks;
	struct u64map m;
	struct edge *callers = NULL, *callees = NULL;
	uint32_t *v = NULL, n;
	int rc = -1;

	if (u64map_init(&m, 1024))
		return -1;
	for (size_t i = 0; i < t->n; i++) {
		struct stack *s = t->list[i];

		for (uint16_t j = 0; j + 1 < s->naddr; j++) {
			uint32_t to = s->fids[j], from = s->fids[j + 1];
			uint16_t k;

			for (k = 0; k < j; k++)	/* this edge already counted for this stack? */
				if (s->fids[k] == to && s->fids[k + 1] == from)
					break;
			if (k < j)
				continue;
			uint64_t *cnt = u64map_get(&m, (uint64_t)from << 32 | to);
			if (!cnt)
				goto out;
			*cnt += s->total;
		}
	}
	callers = malloc((m.n + 1) * sizeof(*callers));
	callees = malloc((m.n + 1) * sizeof(*callees));
	if (!callers || !callees)
		goto out;
	size_t ne = 0;
	for (size_t j = 0; j <= m.mask; j++)
		if (m.used[j])
			callers[ne++] = (struct edge){ (uint32_t)(m.keys[j] >> 32),
						       (uint32_t)m.keys[j], m.vals[j] };
	memcpy(callees, callers, ne * sizeof(*callers));
	cg_funcs = c->sym->funcs;
	qsort(callers, ne, sizeof(*callers), by_to);
	qsort(callees, ne, sizeof(*callees), by_from);

	v = ctx_ranked(c, c->incl, &n);
	if (!v)
		goto out;
	if (c->o->limit >= 0 && (uint64_t)c->o->limit < n)
		n = (uint32_t)c->o->limit;
	fprintf(out, " samples       %%  symbol (callers above, [self] and callees below; "
		"indented %% are of the function's inclusive samples)\n");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t f = v[i];
		const char *name = c->sym->funcs[f].name;

		fputs(DASHES, out);
		for (size_t e = lower(callers, ne, f, 1); e < ne && callers[e].to == f; e++)
			fprintf(out, "%8" PRIu64 " %6.2f%%      %s\n", callers[e].n,
				pct(callers[e].n, c->incl[f]), c->sym->funcs[callers[e].from].name);
		fprintf(out, "%8" PRIu64 " %6.2f%%  %s\n", c->incl[f], pct(c->incl[f], c->total), name);
		if (c->self[f])
			fprintf(out, "%8" PRIu64 " %6.2f%%      %s [self]\n", c->self[f],
				pct(c->self[f], c->incl[f]), name);
		for (size_t e = lower(callees, ne, f, 0); e < ne && callees[e].from == f; e++)
			fprintf(out, "%8" PRIu64 " %6.2f%%      %s\n", callees[e].n,
				pct(callees[e].n, c->incl[f]), c->sym->funcs[callees[e].to].name);
	}
	if (n)
		fputs(DASHES, out);
	rc = 0;
out:
	free(v);
	free(callers);
	free(callees);
	u64map_free(&m);
	return rc;
}
