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
	size_t nf = (size_t)c->nfuncs + 1, nc = c->ncores, nr = c->nruns;

	c->run_total = calloc(nr + 1, sizeof(uint64_t));
	c->self_run = calloc(nf * nr + 1, sizeof(uint64_t));
	c->incl_run = calloc(nf * nr + 1, sizeof(uint64_t));
	if (!c->run_total || !c->self_run || !c->incl_run)
		return -1;
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
	c->nruns = 1;
	for (size_t i = 0; i < t->n; i++)
		if (t->list[i]->run >= c->nruns)
			c->nruns = t->list[i]->run + 1;
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
		c->run_total[s->run] += v;
		c->self[s->fids[0]] += v;
		c->self_w2[s->fids[0]] += v2;
		c->self_run[(size_t)s->fids[0] * c->nruns + s->run] += v;
		add_cores(c->self_core, s->fids[0], pc, nc);
		for (uint16_t j = 0; j < s->nfids; j++) {
			uint32_t f = s->fids[j];

			if (stamp[f] == i + 1)
				continue;	/* recursion: count once per sample */
			stamp[f] = (uint32_t)(i + 1);
			c->incl[f] += v;
			c->incl_w2[f] += v2;
			c->incl_run[(size_t)f * c->nruns + s->run] += v;
			add_cores(c->incl_core, f, pc, nc);
		}
	}
	free(stamp);
	c->dispersion = noise_dispersion(c->self_run, c->run_total, c->nfuncs, c->nruns);
	return 0;
}

/* Part q's function f into out's row m, its runs from run r0 on. */
static void merge_row(struct ctx *out, const struct ctx *q, uint32_t f, uint32_t m, uint32_t r0)
{
	out->self[m] += q->self[f];
	out->incl[m] += q->incl[f];
	out->self_w2[m] += q->self_w2[f];
	out->incl_w2[m] += q->incl_w2[f];
	for (uint32_t k = 0; k < q->ncores; k++) {
		out->self_core[(size_t)m * out->ncores + k] += q->self_core[(size_t)f * q->ncores + k];
		out->incl_core[(size_t)m * out->ncores + k] += q->incl_core[(size_t)f * q->ncores + k];
	}
	for (uint32_t r = 0; r < q->nruns; r++) {
		out->self_run[(size_t)m * out->nruns + r0 + r] += q->self_run[(size_t)f * q->nruns + r];
		out->incl_run[(size_t)m * out->nruns + r0 + r] += q->incl_run[(size_t)f * q->nruns + r];
	}
}

int ctx_merge(struct ctx *out, struct symbols *names, struct ctx *const *parts, uint32_t n)
{
	uint32_t r0 = 0, **map = calloc(n, sizeof(*map));
	int rc = !map || sym_init_raw(names) ? -1 : 0;

	*out = (struct ctx){ .o = parts[0]->o, .p = parts[0]->p, .sym = names };
	for (uint32_t i = 0; i < n && !rc; i++) {	/* every name once, in parts' order */
		out->ncores = parts[i]->ncores > out->ncores ? parts[i]->ncores : out->ncores;
		out->nruns += parts[i]->nruns;
		if (!(map[i] = malloc(((size_t)parts[i]->nfuncs + 1) * sizeof(**map))))
			rc = -1;
		for (uint32_t f = 0; !rc && f < parts[i]->nfuncs; f++)
			if (parts[i]->incl[f] &&
			    (map[i][f] = sym_synthetic(names, parts[i]->sym->funcs[f].name)) == UINT32_MAX)
				rc = -1;
	}
	out->nfuncs = names->nfuncs;
	rc = rc || ctx_alloc(out);
	for (uint32_t i = 0; i < n && !rc; i++) {
		const struct ctx *q = parts[i];

		for (uint32_t f = 0; f < q->nfuncs; f++)
			if (q->incl[f])
				merge_row(out, q, f, map[i][f], r0);
		for (uint32_t r = 0; r < q->nruns; r++)
			out->run_total[r0 + r] = q->run_total[r];
		r0 += q->nruns;
		out->total += q->total;
		out->total_w2 += q->total_w2;
		out->samples += q->samples;
		out->periods += q->periods;
	}
	for (uint32_t i = 0; map && i < n; i++)
		free(map[i]);
	free(map);
	if (!rc)
		out->dispersion = noise_dispersion(out->self_run, out->run_total, out->nfuncs,
						   out->nruns);
	return rc;
}

void ctx_free(struct ctx *c)
{
	free(c->self);
	free(c->incl);
	free(c->self_core);
	free(c->incl_core);
	free(c->self_w2);
	free(c->incl_w2);
	free(c->run_total);
	free(c->self_run);
	free(c->incl_run);
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
