/*
 * profile.h: everything opreport keeps from a stream: per-session header and accounting, thread
 * names, throttle events, and the unique-stack table. Filled by the parser (parser.c) through
 * profile_sink; read by the report modules.
 */
#ifndef OPREPORT_PROFILE_H
#define OPREPORT_PROFILE_H

#include <stdint.h>

#include "ingest/crashinfo.h"
#include "ingest/events.h"
#include "ingest/parser.h"
#include "ingest/stacks.h"

/* Per session and core: what the stream says, counted while reading. */
struct core_acct {
	uint64_t samples;			/* OPF_SAMPLE records of this core */
	uint64_t truncated;			/* of those, flagged OPF_F_TRUNCATED */
	uint64_t depth_cut;			/* of those, flagged OPF_F_DEPTH */
	uint64_t idle;				/* of those, flagged OPF_F_IDLE */
	uint64_t irqoff;			/* of those, flagged OPF_F_IRQOFF */
	uint64_t lost_rec[OPF_LOST_NREASONS];	/* sums of OPF_LOST records */
	uint64_t drop_blocks, drop_samples;	/* sums of OPF_DROP records */
	uint64_t unlisted;			/* blocks an OPF_D_UNLISTED drop counted */
	uint64_t pauses, paused_tsc, pause_at;	/* this core's marks (format 1: all cores') */
	int paused;
	uint64_t acc_tsc;			/* time its weights account for; 0: none yet */
	uint32_t hz;				/* its rate now (throttle records change it) */
	uint64_t last_seq;			/* format 2: its latest block's seq */
	int have_seq;
	uint64_t periods;			/* the periods its samples stand for */
	uint64_t prev_tsc;			/* its latest sample's tsc; 0: none yet */
	uint64_t lost_since;			/* OPF_LOST counts since that sample */
	int have_end;
	struct opf_core_end end;		/* valid if have_end */
};

/* One block as the stream showed it (format 2): its header, and what followed it. */
struct blk {
	uint64_t seq;
	uint64_t off;		/* stream offset of its OPF_BLOCK */
	uint32_t hdr_samples;	/* what the header says */
	uint32_t hdr_bytes;
	uint32_t samples;	/* OPF_SAMPLE records up to the next block */
	uint32_t bytes;		/* bytes up to the next block, its OPF_BLOCK included */
	uint32_t foreign;	/* samples of another core in a core's block */
	uint16_t flags;		/* OPF_B_* */
	uint64_t t0, t1;	/* a core's block: the first and last time of the records its
				   core wrote in time order (samples, switches, lock waits, marks,
				   losses, throttles; not wake-ups, which carry the waker's time);
				   0: none. What the block's loss would leave unknown. */
};

/* The blocks of one writer (a core, or the stream's own) in stream order. */
struct writer_blocks {
	struct blk *b;
	uint32_t n;
};

/* An OPF_DROP as read. */
struct drop_ev {
	uint64_t off, seq, samples;
	uint32_t core, blocks;
};

/* A flight-recorder dump: between OPF_SNAPSHOT begin and end with the same seq. */
struct dump {
	uint64_t seq, tsc, end_tsc;
	uint64_t *samples;		/* per core */
	int closed;			/* its end mark was seen */
};

/*
 * Periods a core missed, where its samples show it: a sample later than one of the core's
 * periods after its previous one stands for the periods in between, less the samples lost
 * there (OPF_LOST). Kept for sessions with scheduler events (the --timeline draws them).
 */
struct missed_gap {
	uint64_t t0;		/* when the first missed period was due: previous sample + period */
	uint64_t t1;		/* the late sample that came at last */
	uint64_t periods;	/* missed in between */
	uint32_t core;
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
	uint64_t after_end;		/* records seen after OPF_SESSION_END */
	/* format 2 */
	struct writer_blocks *writers;	/* hdr.ncores + 1: the cores, then the stream's own */
	int32_t open_writer;		/* writer of the block records now belong to; -1: none */
	uint64_t outside, outside_off;	/* records in no block, and the first one's offset */
	uint64_t lost_full_recs;	/* OPF_LOST records with reason OUTPUT_FULL (not in v2) */
	struct drop_ev *drops;
	uint32_t ndrops;
	struct dump *dumps;
	uint32_t ndumps;
	int32_t open_dump;		/* index of the dump samples now belong to; -1: none */
	/* later readers' files of this session, concatenated after it (profile.c, on_session) */
	uint32_t joins;			/* their repeated session headers, skipped */
	uint64_t join_bytes;		/* bytes they add to the stream: headers repeated */
	struct crash_info *crash;	/* a crash dump's own records (crashinfo.c), or NULL */
	struct missed_gap *gaps;	/* OPF_S_SCHED sessions: in the order of the stream */
	uint32_t ngaps;
};

/* Pauses of a session: the most any core had, and their length. */
uint64_t session_pauses(const struct session *s, uint64_t *paused_tsc);

struct throttle_ev {
	uint32_t session;		/* index into profile.sess */
	struct opf_throttle t;
};

struct thread_name {
	uint32_t tid;
	uint16_t core;
	char name[OPF_MAX_NAME + 1];
};

struct session;
struct profile;

/* Called for every reported sample with the periods it stands for (perfdata.c keeps them). */
typedef int (*sample_hook)(void *arg, const struct session *s, const struct opf_sample *h,
			   const uint8_t *frames, uint64_t weight);
/* Whether a sample read goes to the report (the filters' judge, model/filter.c): 0 leaves it
 * out, after its weight was taken, so that the next sample of its core weighs what it did. */
typedef int (*sample_keep)(void *arg, const struct profile *p, const struct opf_sample *h,
			   uint64_t weight);

struct profile {
	struct session *sess;
	uint32_t nsess;
	uint32_t ncores;		/* of the first session; later ones must agree */
	struct stacks stacks;
	uint64_t samples;		/* all OPF_SAMPLE records */
	uint64_t periods;		/* the sampling periods they stand for */
	struct thread_name *threads;
	uint32_t nthreads;
	struct throttle_ev *thr;
	uint32_t nthr;
	uint64_t unknown;		/* records of unknown type, skipped */
	uint64_t snapshot;		/* --snapshot N: report dump N only; 0: every sample */
	uint64_t reported;		/* samples in the report (all, or dump N's) */
	sample_hook hook;		/* NULL, or called for each reported sample */
	void *hook_arg;
	sample_keep keep;		/* NULL, or judges each sample before the hook */
	void *keep_arg;
	uint16_t unknown_types[8];	/* the first distinct unknown types */
	uint32_t nunknown_types;
	struct sched_data sched;	/* scheduler events (events.c) */
	/* read through kernels_sink (ingest/kernels.c): only the sessions of one kernel */
	const uint8_t *only_id;		/* its build-id */
	size_t only_len;
	int skipping;			/* the current session is another kernel's */
};

/* The first dump numbered seq in any session, or NULL; and how many dumps there are. */
const struct dump *profile_dump(const struct profile *p, uint64_t seq);
uint64_t profile_dumps(const struct profile *p);

extern const struct opf_sink profile_sink;	/* arg: struct profile *, zeroed */

void profile_free(struct profile *p);

/* Name of thread tid ("idle" for 0), or NULL if the stream never named it. Latest wins. */
const char *profile_thread_name(const struct profile *p, uint32_t tid);
/* The same, "?" for a thread the stream never named: for the views of the events. */
const char *profile_thread_label(const struct profile *p, uint32_t tid);

/* Session duration in seconds (start_tsc to OPF_SESSION_END, else to the last timestamp
 * seen), or -1 if tsc_hz is 0 or the timestamps run backwards. */
double session_seconds(const struct session *s);

/* Periods the cores missed, and how many periods were due in all (taken + missed), over
 * every session and core that says (OPF_CORE_END). */
uint64_t profile_missed(const struct profile *p, uint64_t *due);

/* Lost samples of core c: OPF_CORE_END.lost[] when present, else the OPF_LOST records. */
uint64_t core_lost(const struct core_acct *c, int reason);

/* A session whose beginning went to another reader; one the user discarded; a crash dump
 * (OPF_S_CRASH: its own records in crash). */
int session_resumed(const struct session *s);
int session_discarded(const struct session *s);
int session_is_crash(const struct session *s);

/* 1 when every session has its OPF_SESSION_END and every core its OPF_CORE_END, and no
 * session was resumed or discarded. */
int profile_complete(const struct profile *p);

extern const char *const lost_reason_name[OPF_LOST_NREASONS];

/* An OPF_THROTTLE that raised a throttled core's rate back, rather than lowered it. */
static inline int throttle_raised(const struct opf_throttle *t)
{
	return t->new_hz > t->old_hz;
}

#endif
