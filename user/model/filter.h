/*
 * filter.h: the report's filters (--tid, --comm, --cores, --time, --no-idle, --focus,
 * --ignore), one predicate (filter_judge) over anything a report counts: a sample, a span of
 * time, a scheduler event. opreport.c parses them (filter_parse) and applies them where the
 * data is aggregated, once each, so every view and export after that sees only what they
 * keep (filter.c says where and why there):
 *	while the stream is read	each sample's core and time (filter_attach);
 *	when the events are replayed	the window, which clips every stretch (filter_window);
 *	after the replay		threads, off-CPU stretches, events (filter_sched);
 *	once the stacks are resolved	each unique stack's thread and frames (filter_stacks).
 */
#ifndef OPREPORT_FILTER_H
#define OPREPORT_FILTER_H

#include <regex.h>
#include <stdint.h>

#include "ingest/profile.h"
#include "model/options.h"
#include "model/symbols.h"

/* A thread in the scheduler views is idle (for --no-idle) when it ran less than this share of
 * the report's window, in thousandths: a daemon that only waits (the profiler's worker, the
 * watchdog). tid 0, the cores' idle loop, is idle everywhere. */
#define FILTER_IDLE_PERMILLE	10

struct filter {
	int on;				/* any filter given */
	uint32_t *tids, ntids;		/* --tid: kept thread ids (none: any) */
	char **comms;			/* --comm: kept thread names */
	uint32_t ncomms;
	uint8_t *cores;			/* --cores: OPF_MAX_CORES flags (NULL: any core) */
	double from, to;		/* --time: seconds from each session's start; to < 0: open */
	int timed;
	regex_t focus, ignore;		/* --focus, --ignore: on function names */
	int have_focus, have_ignore;
	int no_idle;			/* --no-idle */
	char desc[512];			/* the filters as given, for the headers */
	struct symbols *sym;		/* for the frames of stacks given as addresses */
	uint8_t *match;			/* per function id: FM_* bits, once looked at */
	uint32_t nmatch;
};

/* What one profile's filters left out, for the header (counts: [0] samples, [1] periods). */
struct filter_use {
	struct filter *f;		/* NULL or !f->on: no filter */
	uint64_t seen[2];		/* samples read, before any filter */
	uint64_t kept[2];		/* in the report */
	uint64_t idle[2];		/* left out by --no-idle alone */
	uint32_t idle_threads;		/* scheduler views: threads --no-idle left out */
	uint64_t idle_tsc;		/* ... their time in the window */
};

/* One thing a report counts. A field the caller has no value for is FI_NONE (not judged). */
struct fitem {
	uint32_t sess;			/* session index */
	uint32_t core;
	uint32_t tid, tid2;		/* its thread; an event's other one (a switch's next) */
	uint64_t t0, t1;		/* TSC: an instant (t0 == t1), or the stretch [t0, t1) */
	const uint32_t *fids;		/* its stack as function ids, or NULL */
	uint32_t nfids;
	const uint64_t *addrs;		/* or as lookup addresses (filter->sym resolves them) */
	uint32_t naddrs;
};
#define FI_NONE	UINT32_MAX

/* What each filter looks at; filter_judge's what is a set of them. */
enum { FJ_WHEN = 1, FJ_WHERE = 2, FJ_WHO = 4, FJ_WHAT = 8, FJ_IDLE = 16, FJ_ALL = 31 };

enum fverdict {
	FV_OUT,		/* a filter leaves it out */
	FV_KEEP,	/* in the report (a stretch: its part in the window, it->t0 and t1) */
	FV_IDLE,	/* only --no-idle leaves it out */
};

/* The options' filters into f. 0, or 2 with the reason in err (a usage error). */
int filter_parse(struct filter *f, const struct options *o, char *err, size_t errlen);
void filter_free(struct filter *f);

/* The one predicate: whether the report keeps it, by the filters in what. A stretch is
 * clipped to the window (--time) when kept. (Out of memory for the cache of which function
 * names match, a frame matches neither --focus nor --ignore.) */
enum fverdict filter_judge(struct filter *f, const struct profile *p, struct fitem *it,
			   unsigned what);
/* Whether core k's lane is in the report (--cores). */
int filter_core(const struct filter *f, uint32_t k);

/* Before the parse: judge every sample's core and time as it is read (profile.c's keep). */
void filter_attach(struct filter_use *u, struct profile *p);
/* After the parse, before sched_analyze: each session's window (sched_sess.from, to). */
void filter_window(const struct filter *f, struct profile *p);
/* After the symbols resolved the stacks: drop the stacks whose thread or frames the filters
 * leave out. 0 or -1 (memory). */
int filter_stacks(struct filter_use *u, struct profile *p, struct symbols *sym);
/* After sched_analyze, before the off-CPU or lock stacks are made: the threads, off-CPU
 * stretches and events the scheduler views and exports show; what: judge their stacks too
 * (--focus, --ignore; 0 when filter_stacks will, on the stacks made of them). 0 or -1. */
int filter_sched(struct filter_use *u, struct profile *p, struct symbols *sym, int what);

#endif
