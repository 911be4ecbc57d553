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

enum sev_kind { SEV_SWITCH, SEV_WAKEUP, SEV_LOCK, SEV_CREATE, SEV_GAP };

/*
 * SEV_GAP (derived: model/sched_gaps.c puts them among the events before the replay): the
 * events of core stop being complete at tsc (a = 1: a block lost, overwritten or not yet
 * read, a pause, a switch missing) or are complete again from tsc (a = 0), b then the
 * thread that runs there at tsc (SEV_NOBODY: nothing says which).
 */
#define SEV_NOBODY	UINT32_MAX

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

/* A sample, for checking it against the switches: its thread ran there then, for w periods
 * of the session's rate (its weight, profile.c). */
struct ssample {
	uint64_t tsc;
	uint32_t tid;
	uint16_t core;
	uint16_t pad;
	uint64_t w;
};

/* What core ran over [t0, t1) (derived by the replay): tid (0: idle; SEV_NOBODY: unknown,
 * no event covers it); end: the switch event that ended it, or UINT32_MAX. */
struct cspan {
	uint64_t t0, t1;
	uint32_t tid;
	uint32_t end;
};

/* Samples against switches over a core's known time, or one thread's (model/sched_check.c):
 * the on-CPU share by the switches and by the samples' weights, and how far apart they may
 * be (model/noise.h). */
struct timecheck {
	uint64_t known;			/* TSC ticks the core's events cover */
	uint64_t on;			/* of them, on a CPU by the switches (a core: busy) */
	uint64_t periods, on_periods;	/* sample weights in the known time; of them, on a CPU */
	double sw2, on_sw2;		/* the sums of their squares */
	double var_span;		/* periodic sampling: per on-CPU span of l periods, the
					   variance of the ticks that hit it, frac(l)(1 - frac(l)) */
	double slack;			/* periods the samples may have put on the wrong thread:
					   late samples' where another ran too, and one a span (a
					   tick taken late lands after the switch that ended it) */
	double share_sw, share_smp;	/* on / known, on_periods / periods, in points */
	double hw;			/* share_smp's 95% half-width, points */
	int bad;			/* the two differ by more than sampling allows */
};

/* What the stream says of one core's events. */
struct sched_core {
	uint64_t recs[OPF_EV_N];	/* records of this core in the stream, by kind */
	int have_end;
	struct opf_sched_end end;
	/* derived: */
	uint64_t busy, idle;		/* TSC ticks running a thread / its idle thread */
	uint64_t unknown;		/* TSC ticks no event covers (model/sched_gaps.c) */
	uint64_t lost_placed;		/* events lost where a gap stands for them */
	uint64_t unplaced;		/* events lost that no gap places (no block, other) */
	uint32_t ngaps;			/* gaps in its events */
	uint32_t missing;		/* of them, where a switch is missing */
	struct cspan *spans;		/* what ran when, start to end, in time order */
	uint32_t nspans, spancap;
	struct timecheck check;		/* its busy time, by the switches and the samples */
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
	struct timecheck check;		/* its on-CPU time, by the switches and the samples */
	uint32_t cut;			/* off-CPU stretches a gap in its core's events ended */
};

/* One stretch off a CPU: a switch-out and what ended it (for --offcpu, flame, pprof). */
struct offcpu {
	uint32_t ev;			/* the switch-out event */
	uint32_t tid;
	uint64_t blocked;		/* switch-out to wake-up (0 when it stayed runnable) */
	uint64_t total;			/* switch-out to switch-in (or the session's end, or the
					   start of a gap in its core's events: cut) */
	int cut;			/* ended by a gap: its true end is not known */
};

/*
 * One wait for a lock (derived: model/lock_waits.c), from t0 to t1: acquired at t1 (done),
 * or not by the session's end (then t1 is the end, or where a gap in its core's events began:
 * cut). Inside another wait of the same thread (outer: that wait's ev), it is counted there.
 */
struct lwait {
	uint64_t t0, t1;
	uint64_t obj;			/* the lock */
	uint32_t tid;
	uint32_t ev;			/* its OPF_LOCKWAIT event, or (not done) its first switch-out */
	uint32_t outer;			/* the ev of the wait it is inside, or UINT32_MAX */
	uint16_t kind;			/* OPF_LK_QLOCK or OPF_LK_SPIN */
	uint8_t done, cut;
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
	int resumed;			/* OPF_S_RESUMED: its beginning went to another reader */
	uint64_t start, end, tsc_hz, period;	/* period: TSC ticks per sample */
	uint64_t from, to;		/* the report's window, TSC ([from, to): --time, set by
					   model/filter.c), which the accounting clips to */
	/* derived: */
	uint64_t unknown;		/* TSC ticks of core time no event covers, all cores */
	uint64_t ev_taken, ev_lost;	/* events the cores took, and lost or overwritten */
	uint64_t ev_lost_by[OPF_LOST_NREASONS + 1];	/* ... by reason, then overwritten */
	struct sthread *thr;
	uint32_t nthr, thrcap;
	struct offcpu *off;
	uint32_t noff, offcap;
	struct lwait *waits;		/* every wait for a lock, by lock and thread */
	uint32_t nwaits, waitcap;
	struct smark *marks;
	uint32_t nmarks, markcap;
};

struct sched_data {
	struct sched_sess *sess;
	uint32_t nsess;
	uint64_t *frames;	/* every event's stack (sev.frames); not NULL once a switch or
				   lock event is kept, with frames or without */
	size_t nframes, framecap;
	uint64_t seq;		/* the last event's stream order (from 1: 0 sorts first) */
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
int sched_sample(struct sched_data *d, const struct opf_sample *h, uint64_t w);
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
