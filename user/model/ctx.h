/*
 * ctx.h: what every report reads: the options, the parsed profile, the symbols, and the
 * per-function totals derived from the unique stacks (ctx.c). opreport.c fills a ctx, calls
 * ctx_aggregate once the symbols are resolved, then the sections of text/ and the files of
 * export/ in its order tables; each reads the ctx and writes one section or file.
 */
#ifndef OPREPORT_CTX_H
#define OPREPORT_CTX_H

#include <stdint.h>

#include "ingest/profile.h"
#include "model/filter.h"
#include "model/options.h"
#include "model/symbols.h"

struct ctx {
	const struct options *o;
	struct profile *p;
	struct symbols *sym;
	const char *kernel_path;	/* ELF actually used, NULL for raw addresses */
	int kernel_forced;		/* it is not the stream's kernel (--force-kernel) */
	uint32_t ncores, nfuncs;
	uint64_t total;		/* what the report counts: periods, or samples (--weight) */
	uint64_t samples, periods;	/* both totals of what is reported */
	uint64_t *self;		/* per function: samples with it as the leaf (pc) */
	uint64_t *incl;		/* per function: samples with it anywhere, once per sample */
	uint64_t *self_core;	/* [f * ncores + c] */
	uint64_t *incl_core;
	double *self_w2, *incl_w2;	/* per function: its samples' squared weights (self, anywhere) */
	double total_w2;	/* of all samples: what a share's half-width needs (model/noise.h) */
	uint32_t nruns;		/* runs: the sessions (of every file) the report counts */
	uint64_t *run_total;	/* per run, what it counts */
	uint64_t *self_run;	/* [f * nruns + r]: per function and run (--diff's noise) */
	uint64_t *incl_run;
	double dispersion;	/* how much more the runs vary than sampling (model/noise.h): >= 1 */
	struct perf_samples *perf;	/* --perf-data: the samples kept while reading */
	struct filter_use fu;	/* the filters (fu.f) and what they left out */
};

/* What a report counts for stack s, in all and per core (periods, or samples). */
static inline uint64_t stack_value(const struct ctx *c, const struct stack *s)
{
	return c->o->by_samples ? s->total : s->weight;
}

/* The sum of the squares of what its samples count (each 1 with --weight samples). */
static inline double stack_value2(const struct ctx *c, const struct stack *s)
{
	return c->o->by_samples ? (double)s->total : (double)s->weight2;
}

/* The 95% half-width, in points, of the share v of the report's total whose samples' squares
 * add up to v2 (model/noise.h). */
double ctx_hw(const struct ctx *c, uint64_t v, double v2);

static inline const uint64_t *stack_values(const struct ctx *c, struct stack *s)
{
	return stack_cores(s) + (c->o->by_samples ? 0 : c->ncores);
}

/* "samples" or "periods": the unit of the counts, for column heads. */
static inline const char *ctx_unit(const struct ctx *c)
{
	return c->o->by_samples ? "samples" : "periods";
}

/* Compute the per-function totals (symbols must be resolved). Returns 0 or -1 (no memory). */
int ctx_aggregate(struct ctx *c);

/*
 * One report of n parts, each aggregated against its own kernel (the streams or sessions of
 * different kernels): their functions matched by name into out, whose sym is names (made
 * here: names only) and whose runs are theirs in turn; the profile and options are the first
 * part's. Every table of ctx holds; nothing that needs the stacks (they are the parts').
 * 0 or -1 (no memory); free with ctx_free and sym_close(names).
 */
int ctx_merge(struct ctx *out, struct symbols *names, struct ctx *const *parts, uint32_t n);
void ctx_free(struct ctx *c);

/* Function ids with a nonzero key[] (or all when key is NULL), sorted by key desc then name. */
uint32_t *ctx_ranked(const struct ctx *c, const uint64_t *key, uint32_t *n);

/* n cut to the -n limit. */
uint32_t ctx_limit(const struct ctx *c, uint32_t n);

#endif
