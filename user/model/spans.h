/*
 * spans.h: a session's time per core as spans (which thread ran from when to when, and
 * why it stopped) and the profiler's own marks, for the --timeline page (timeline.c) and the
 * --trace JSON (trace_json.c). spans.c computes both from what sched_analyze left
 * (the events in time order) and from the session's pause, throttle and snapshot records.
 */
#ifndef OPREPORT_TIMELINE_H
#define OPREPORT_TIMELINE_H

#include "ingest/profile.h"
#include "model/filter.h"

/* Core runs tid (0: idle; TSPAN_UNKNOWN: no event covers that time) over [t0, t1), TSC
 * ticks; end: the switch that ended it, or NULL when it still ran at the session's end, or
 * when a gap in the core's events began (cut). */
struct tspan {
	uint64_t t0, t1;
	uint32_t tid;
	int cut;
	const struct sev *end;
};
#define TSPAN_UNKNOWN	SEV_NOBODY

enum tmark_kind { TM_PAUSE, TM_RESUME, TM_THROTTLE, TM_SNAPSHOT, TM_MISSED };

/* A profiler mark at [t0, t1) (t1 == t0: an instant) on core (TM_ALL: every core). A
 * TM_MISSED mark is periods a core missed: from when the first was due to the late tick. */
struct tmark {
	uint64_t t0, t1;
	uint32_t core;
	enum tmark_kind kind;
	char text[96];		/* what it says, e.g. "throttle 1000 -> 500 Hz" */
};
#define TM_ALL	UINT32_MAX

typedef int (*tspan_fn)(void *arg, uint32_t core, const struct tspan *sp);
typedef int (*tmark_fn)(void *arg, const struct tmark *m);

/* 1 when p has a session with events; else says so on stderr (naming opt) and returns 0. */
int timeline_check(const struct profile *p, const char *opt);
/* Each span of core k of session si that the filters f (NULL: none) keep, in time order,
 * clipped to their window: the replay's spans, start to end, unknown time included; stops
 * at fn's first nonzero return. */
int timeline_spans(const struct profile *p, uint32_t si, uint32_t k, struct filter *f,
		   tspan_fn fn, void *arg);
/* Each mark of session si the filters keep (pauses, resumes, throttles, snapshot dumps,
 * missed periods). */
int timeline_marks(const struct profile *p, uint32_t si, struct filter *f, tmark_fn fn,
		   void *arg);

/* Why sp's thread stopped, in words ("preempted", "qlock biglock held by tid 7", "running at
 * the end"); "" for an idle or unknown span. */
const char *timeline_why(const struct tspan *sp, char *buf, size_t n);
/* Timer periods core k missed, as its OPF_CORE_END says (0 when it does not). */
uint64_t timeline_missed(const struct profile *p, uint32_t si, uint32_t k);
/* Of those, the periods its samples place (the TM_MISSED marks of core k). */
uint64_t timeline_missed_placed(const struct profile *p, uint32_t si, uint32_t k);
/* Microseconds from s's start to tsc. */
double timeline_us(const struct sched_sess *s, uint64_t tsc);

#endif
