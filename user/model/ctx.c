/*
 * ctx.c: per-function totals derived from the unique stacks, and the ranking every table
 * uses. Called by opreport.c once the symbols are resolved (ctx_aggregate), then read by the
 * report modules (flat.c, lines.c, callgraph.c, ...).
 *
 * A stack's frames (struct stack.fids, leaf first) count once per sample for each function in
 * them however often it recurs, so inclusive counts never exceed the total.
 */
#include <stdlib.h>
#include <string.h>

#include "model/ctx.h"
#include "model/noise.h"

static int ctx_alloc(struct ctx *c)
{
	size_t nf = (size_t)c->nfuncs + 1, nc = c->ncores;

	c->self = calloc(nf, sizeof(uint64_t));
	c->incl = calloc(nf, sizeof(uint64_t));
	c->self_core = calloc(nf * nc, sizeof(uint64_t));
	c->incl_core = calloc(nf * nc, sizeof(uint64_t));
	c->self_w2 = calloc(nf, sizeof(double));
	c->incl_w2 = calloc(nf, sizeof(double));
	return c->self && c->incl && c->self_core && c->incl_core && c->self_w2 && c->incl_w2 ?
	       0 : -1;
}

/* Add v[k] to row f of a per-core table. */
static void add_cores(uint64_t *table, uint32_t f, const uint64_t *v, uint32_t nc)
{
	for (uint32_t k = 0; k < nc; k++)
		table[(size_t)f * nc + k] += v[k];
}

int ctx_aggregate(struct ctx *c)
{
	struct stacks *t = &c->p->stacks;
	uint32_t nc = c->ncores;
	uint32_t *stamp;

	c->nfuncs = c->sym->nfuncs;
	stamp = calloc((size_t)c->nfuncs + 1, sizeof(uint32_t));
	if (ctx_alloc(c) || !stamp) {
		free(stamp);
		return -1;
	}
	c->total = c->samples = c->periods = 0;
	c->total_w2 = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct stack *s = t->list[i];
		const uint64_t *pc = stack_values(c, s);
		uint64_t v = stack_value(c, s);
		double v2 = stack_value2(c, s);

		c->samples += s->total;
		c->periods += s->weight;
		c->total += v;
		c->total_w2 += v2;
		c->self[s->fids[0]] += v;
		c->self_w2[s->fids[0]] += v2;
		add_cores(c->self_core, s->fids[0], pc, nc);
		for (uint16_t j = 0; j < s->nfids; j++) {
			uint32_t f = s->fids[j];

			if (stamp[f] == i + 1)
				continue;	/* recursion: count once per sample */
			stamp[f] = (uint32_t)(i + 1);
			c->incl[f] += v;
			c->incl_w2[f] += v2;
			add_cores(c->incl_core, f, pc, nc);
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
	free(c->self_w2);
	free(c->incl_w2);
}

double ctx_hw(const struct ctx *c, uint64_t v, double v2)
{
	return noise_hw((double)v, (double)c->total, v2, c->total_w2);
}

/* qsort has no argument for the comparison: the key and names of the current ranking. */
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

uint32_t ctx_limit(const struct ctx *c, uint32_t n)
{
	return c->o->limit >= 0 && (uint64_t)c->o->limit < n ? (uint32_t)c->o->limit : n;
}
