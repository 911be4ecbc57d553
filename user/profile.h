/*
 * profile.h: everything opreport keeps from a stream: per-session header and accounting, thread
 * names, throttle events, and the unique-stack table. Filled by the parser (stream.c) through
 * profile_sink; read by the report modules.
 */
#ifndef OPREPORT_PROFILE_H
#define OPREPORT_PROFILE_H

#include <stdint.h>

#include "stacks.h"
#include "stream.h"

/* Per session and core: what the stream says, counted while reading. */
struct core_acct {
	uint64_t samples;			/* OPF_SAMPLE records of this core */
	uint64_t truncated;			/* of those, flagged OPF_F_TRUNCATED */
	uint64_t idle;				/* of those, flagged OPF_F_IDLE */
	uint64_t lost_rec[OPF_LOST_NREASONS];	/* sums of OPF_LOST records */
	int have_end;
	struct opf_core_end end;		/* valid if have_end */
};

struct session {
	struct opf_session hdr;
	uint64_t off;			/* stream offset of the OPF_SESSION record */
	struct core_acct *cores;	/* hdr.ncores entries */
	int have_end;
	struct opf_session_end end;
	uint64_t end_off;		/* stream offset of the OPF_SESSION_END record */
	uint64_t last_tsc;		/* latest timestamp seen in any record */
	uint64_t snapshots;		/* OPF_SNAPSHOT begin marks */
	uint64_t pauses;
	uint64_t paused_tsc;		/* ticks between pause and resume marks */
	uint64_t pause_at;		/* tsc of the pending pause, if paused */
	int paused;
	uint64_t after_end;		/* records seen after OPF_SESSION_END */
};

struct throttle_ev {
	uint32_t session;		/* index into profile.sess */
	struct opf_throttle t;
};

struct thread_name {
	uint32_t tid;
	uint16_t core;
	char name[OPF_MAX_NAME + 1];
};

struct profile {
	struct session *sess;
	uint32_t nsess;
	uint32_t ncores;		/* of the first session; later ones must agree */
	struct stacks stacks;
	uint64_t samples;		/* all OPF_SAMPLE records */
	struct thread_name *threads;
	uint32_t nthreads;
	struct throttle_ev *thr;
	uint32_t nthr;
	uint64_t unknown;		/* records of unknown type, skipped */
	uint16_t unknown_types[8];	/* the first distinct unknown types */
	uint32_t nunknown_types;
};

extern const struct opf_sink profile_sink;	/* arg: struct profile *, zeroed */

void profile_free(struct profile *p);

/* Name of thread tid ("idle" for 0), or NULL if the stream never named it. Latest wins. */
const char *profile_thread_name(const struct profile *p, uint32_t tid);

/* Session duration in seconds (start_tsc to OPF_SESSION_END, else to the last timestamp
 * seen), or -1 if tsc_hz is 0 or the timestamps run backwards. */
double session_seconds(const struct session *s);

/* Lost samples of core c: OPF_CORE_END.lost[] when present, else the OPF_LOST records. */
uint64_t core_lost(const struct core_acct *c, int reason);

/* 1 when every session has its OPF_SESSION_END and every core its OPF_CORE_END. */
int profile_complete(const struct profile *p);

extern const char *const lost_reason_name[OPF_LOST_NREASONS];

/* An OPF_THROTTLE that raised a throttled core's rate back, rather than lowered it. */
static inline int throttle_raised(const struct opf_throttle *t)
{
	return t->new_hz > t->old_hz;
}

#endif
