/*
 * events.h: the scheduler and lock events of a stream (sessions started with "-e sched",
 * OPF_S_SCHED), kept by profile.c while parsing (sched_add, sched_sample; events.c) in the
 * profile's struct sched_data, and turned into time accounting by model/sched_acct.c's
 * sched_analyze, which fills the fields marked "derived": per core, which thread ran when;
 * per thread, its time on a CPU, runnable and blocked by reason. The views (--wall,
 * --offcpu, --locks, --timeline), the checks of --stats and the perf.data/pprof writers
 * read the result.
 */
#ifndef OPREPORT_EVENTS_H
#define OPREPORT_EVENTS_H

#include <stdint.h>
#include <stdio.h>

#include "ingest/parser.h"

enum sev_kind { SEV_SWITCH, SEV_WAKEUP, SEV_LOCK, SEV_CREATE };

/* One event as read, in a session's time order after sched_analyze. */
struct sev {
	uint64_t tsc;
	uint64_t seq;		/* stream order: ties of tsc keep it */
	uint64_t x;		/* SWITCH: prev_cpu; LOCK: wait (TSC ticks) */
	uint64_t obj, site;	/* SWITCH: obj, site; LOCK: the lock's address */
	uint32_t a, b;		/* SWITCH: prev, next; WAKEUP: woken, waker; LOCK: tid, holder;
				   CREATE: the thread an OPF_THREAD named */
	uint32_t holder;	/* SWITCH: the qlock's holder */
	uint32_t frames;	/* first frame in sched_data.frames */
	uint16_t nframes;
	uint16_t core;		/* the core it happened on */
	uint16_t why;		/* SWITCH: enum opf_why; WAKEUP: target core; LOCK: lock kind */
	uint8_t kind;		/* enum sev_kind */
	uint8_t out;		/* derived: left out of the report by its filters (model/filter.c) */
	char name[OPF_OBJ_NAME + 1];
};

/* A sample, for checking it against the switches: its thread ran there then. */
struct ssample {
	uint64_t tsc;
	uint32_t tid;
	uint16_t core;
};

/* What the stream says of one core's events. */
struct sched_core {
	uint64_t recs[OPF_EV_N];	/* records of this core in the stream, by kind */
	int have_end;
	struct opf_sched_end end;
	/* derived: */
	uint64_t busy, idle;		/* TSC ticks running a thread / its idle thread */
	uint64_t nswitch;
	uint32_t bad;			/* switches whose prev was not the thread running */
	uint64_t bad_tsc;		/* the first one's time */
	/* while parsing: the OPF_SWITCH events of the core's open block, by thread, for its
	   OPF_SWITCH_SAME records (one per thread: the last) */
	uint32_t *same;
	uint32_t nsame, samecap;
	int partial;			/* the open block began with OPF_B_PARTIAL */
	uint64_t same_unknown;		/* OPF_SWITCH_SAME whose OPF_SWITCH an earlier file had */
};

/* A thread's time in one session (sched_analyze). */
struct sthread {
	uint32_t tid;
	uint16_t core;
	uint8_t state;			/* ST_* while analyzing */
	uint8_t exited;
	uint8_t created;		/* an OPF_THREAD says it began in the session */
	uint64_t first, last;		/* its time in the session: [first, last) */
	uint64_t since;			/* when its state began */
	uint16_t why;			/* blocked: the reason */
	uint32_t out;			/* index of its last switch-out event, or UINT32_MAX */
	uint64_t on, runnable, unknown, blocked[OPF_WHY_N];
	uint64_t samples;		/* its samples (on-CPU by sampling) */
	uint64_t kcpu;			/* kernel's CPU time at its last switch-out */
	int have_kcpu;
	uint32_t bad_cpu;		/* switch-outs whose prev_cpu disagrees with the switches */
	uint32_t bad_samples;		/* samples outside its time on the core */
	uint64_t wakes;			/* times it was woken */
	uint64_t wake_tsc;		/* its last wake-up since its last switch-out, or 0 */
	uint64_t on_at_out;		/* on at its last switch-out */
};

/* One stretch off a CPU: a switch-out and what ended it (for --offcpu, flame, pprof). */
struct offcpu {
	uint32_t ev;			/* the switch-out event */
	uint32_t tid;
	uint64_t blocked;		/* switch-out to wake-up (0 when it stayed runnable) */
	uint64_t total;			/* switch-out to switch-in (or the session's end) */
};

/* A pause or resume mark of a session with events (for --timeline, --trace). */
struct smark {
	uint64_t tsc;
	uint16_t core;			/* SMARK_ALL: format 1, every core */
	uint16_t type;			/* OPF_PAUSE or OPF_RESUME */
};
#define SMARK_ALL	0xffffu

struct sched_sess {
	struct sev *ev;
	uint32_t nev, evcap;
	struct ssample *smp;
	uint32_t nsmp, smpcap;
	struct sched_core *cores;
	uint32_t ncores;
	int on;				/* the session has OPF_S_SCHED */
	uint64_t start, end, tsc_hz, period;	/* period: TSC ticks per sample */
	uint64_t from, to;		/* the report's window, TSC ([from, to): --time, set by
					   model/filter.c), which the accounting clips to */
	/* derived: */
	struct sthread *thr;
	uint32_t nthr, thrcap;
	struct offcpu *off;
	uint32_t noff, offcap;
	struct smark *marks;
	uint32_t nmarks, markcap;
};

struct sched_data {
	struct sched_sess *sess;
	uint32_t nsess;
	uint64_t *frames;	/* every event's stack (sev.frames); not NULL once a switch or
				   lock event is kept, with frames or without */
	size_t nframes, framecap;
	uint64_t seq;
	uint32_t *roots;	/* --offcpu (--locks) stacks: root marker - 1 -> its switch-out
				   (lock) event */
	uint32_t *root_sess;	/* ... and that event's session */
	uint32_t nroots;
};

/*
 * profile.c, while parsing, each on the profile's d: a session began (its header h); an
 * event record (OPF_THREAD included); a sample; a pause or resume mark (core SMARK_ALL in
 * format 1). Each 0, or -1 (memory; sched_add: or an error in err).
 */
int sched_session(struct sched_data *d, const struct opf_session *h);
int sched_add(struct sched_data *d, const struct opf_view *v, char *err, size_t errlen);
/* profile.c: a new block of core opened (not the rest of one already open). */
void sched_block(struct sched_data *d, uint32_t core, int partial);
int sched_sample(struct sched_data *d, const struct opf_sample *h);
int sched_mark(struct sched_data *d, uint16_t type, uint64_t tsc, uint16_t core);
void sched_free(struct sched_data *d);

/* Any session with events. */
int sched_any(const struct sched_data *d);

/* A switch's or block's reason (enum opf_why) in a word: "sleep", "qlock", ... */
const char *sched_why_name(unsigned why);
/* ticks of session s's TSC in milliseconds (0 when its rate is unknown). */
double sched_ms(const struct sched_sess *s, uint64_t ticks);
/* Session s's length in the report's window (all of it without --time), TSC ticks. */
uint64_t sched_len(const struct sched_sess *s);

#endif
