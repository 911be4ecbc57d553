/*
 * report.h: what the output modules share: the options, the parsed profile, the symbols, and
 * per-function totals derived from the unique stacks (ctx.c). opreport.c fills a ctx and calls
 * the report_* functions in its order table; each writes one section or file.
 */
#ifndef OPREPORT_REPORT_H
#define OPREPORT_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "symbols.h"

struct options {
	const char *file;
	const char *base;	/* --diff BASE NEW: BASE (file is NEW) */
	const char *kernel;	/* -k, or NULL for the default */
	long limit;		/* -n: most rows (or blocks, or symbols); -1 for all */
	long snapshot;		/* --snapshot N; 0: every sample */
	int by_samples;		/* --weight samples: count samples, not the periods they stand for */
	int inclusive, cpu, thread, lines, callgraph, folded, stats, bench_stats, diff;
	int wall, offcpu, locks;	/* scheduler events: views (sched_views.c) */
	int offcpu_text;	/* derived: --offcpu as a table (no --folded, --flame, --pprof) */
	int locks_text;		/* derived: --locks as a table (likewise) */
	int delay;		/* derived: the stacks are waits (--offcpu or --locks with --folded,
				   --flame or --pprof), weighing microseconds: pprof's delay types */
	int symbols, header, need_elf;	/* derived by plan() in opreport.c */
	const char *flame;	/* --flame FILE.svg */
	const char *pprof;	/* --pprof FILE.pb.gz */
	const char *perf_data;	/* --perf-data FILE */
	const char *timeline;	/* --timeline FILE.html: per core over time (timeline.c) */
	const char *trace;	/* --trace FILE.json: the same as Chrome trace events */
	int no_buildid_cache;	/* --no-buildid-cache: leave perf's build-id cache alone */
	int argc;		/* the command line, for perf.data's cmdline feature */
	char **argv;
};

struct ctx {
	const struct options *o;
	struct profile *p;
	struct symbols *sym;
	const char *kernel_path;	/* ELF actually used, NULL for raw addresses */
	uint32_t ncores, nfuncs;
	uint64_t total;		/* what the report counts: periods, or samples (--weight) */
	uint64_t samples, periods;	/* both totals of what is reported */
	uint64_t *self;		/* per function: samples with it as the leaf (pc) */
	uint64_t *incl;		/* per function: samples with it anywhere, once per sample */
	uint64_t *self_core;	/* [f * ncores + c] */
	uint64_t *incl_core;
	struct perf_samples *perf;	/* --perf-data: the samples kept while reading */
};

/* What a report counts for stack s, in all and per core (periods, or samples). */
static inline uint64_t stack_value(const struct ctx *c, const struct stack *s)
{
	return c->o->by_samples ? s->total : s->weight;
}

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
void ctx_free(struct ctx *c);

/* Function ids with a nonzero key[] (or all when key is NULL), sorted by key desc then name. */
uint32_t *ctx_ranked(const struct ctx *c, const uint64_t *key, uint32_t *n);

/* n cut to the -n limit. */
uint32_t ctx_limit(const struct ctx *c, uint32_t n);

/* clockdesc.c: what the samples weigh, in the same words everywhere */
const char *clock_text(const struct opf_session *h, char *buf, size_t n);
const char *clock_advice(const struct opf_session *h);	/* plain TCG's caveat, or NULL */

double pct(uint64_t part, uint64_t whole);
void print_hex(FILE *out, const uint8_t *b, size_t n);

/* Text sections: 0, or -1 when out of memory. */
int report_header(const struct ctx *c, FILE *out);
int report_symbols(const struct ctx *c, FILE *out);
int report_threads(const struct ctx *c, FILE *out);
int report_lines(const struct ctx *c, FILE *out);
int report_callgraph(const struct ctx *c, FILE *out);
int report_folded(const struct ctx *c, FILE *out);
int report_wall(const struct ctx *c, FILE *out);	/* sched_views.c */
int report_offcpu(const struct ctx *c, FILE *out);
int report_locks(const struct ctx *c, FILE *out);

/* Returns 0 when conservation holds, 3 if not, 4 when the stream is incomplete and what it
 * holds adds up; -1 when out of memory. */
int report_stats(const struct ctx *c, FILE *out);

/* audit.c: the conservation check of session si, findings printed to out (NULL: none);
 * core_fail (NULL, or ncores bytes) gets 1 for each core a check about it failed. */
enum { AUDIT_FAIL = 1, AUDIT_INCOMPLETE = 2 };
int audit_session(const struct profile *p, uint32_t si, FILE *out, uint8_t *core_fail);
int audit_profile(const struct profile *p);	/* AUDIT_* over every session */
/* 1 when some complete core violates the conservation rule (for warnings outside --stats). */
int conservation_failed(const struct profile *p);
/* " no OPF_SESSION_END; no OPF_CORE_END for core 0,1;" for each session that lacks them. */
void incomplete_status(const struct profile *p, FILE *out);

/* flame.c, shared with timeline.c: s escaped for XML and HTML text and attributes (control
 * characters as '?'); a stable hash of a name, for its colour. */
void xml_escape(FILE *out, const char *s);
unsigned name_hash(const char *s);

/* Files: 0, or -1 (errno tells why when it was the file). */
int report_flame(const struct ctx *c, const char *path);
/* --diff --flame: the new profile's graph coloured by change from base. */
int report_diff_flame(const struct ctx *base, const struct ctx *c, const char *path);
int report_pprof(const struct ctx *c, const char *path);
int report_perf(const struct ctx *c, const char *path);
int report_timeline(const struct ctx *c, const char *path);
int report_trace(const struct ctx *c, const char *path);

/* --diff: the change per function from base to c (both aggregated over one symbol table). */
int report_diff(const struct ctx *base, const struct ctx *c, FILE *out);

/*
 * buildid_cache.c: put the kernel ELF elf (whose build-id is id, n bytes) into the user's perf
 * build-id cache, as `perf record` and `perf buildid-cache -a` do, plus the kallsyms file
 * hotspot looks for; says what it added on stderr. Returns 0, or -1 (said on stderr).
 */
int buildid_cache_add(const char *elf, const uint8_t *id, size_t n);

/* perfdata.c: keep every reported sample of p for report_perf (installs p's hook). */
struct perf_samples *perf_collect(struct profile *p);
void perf_free(struct perf_samples *ps);

#endif
