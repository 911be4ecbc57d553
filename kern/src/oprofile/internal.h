/*
 * What the profiler's files share; nothing outside kern/src/oprofile includes this.
 *
 * One file per mechanism, and the prefix of its functions:
 *	hotpath.c	hot_		the sampling interrupt on each core: reserve, record,
 *					push, switch blocks; an NMI's deferred sample
 *	guard.h		hot_		the writer guard every writer uses (hot_on, hot_enter,
 *					hot_leave)
 *	ring.h, ring.c	ring_		the single-producer single-consumer rings of blocks
 *	budget.c	budget_, hot_	the overhead budget: a core over it halves its own rate
 *	flight.c	flight_		the flight recorder: windows, their handover, snapshot
 *					dumps (flight_hot_*: on the core, in its writer)
 *	opcore.c	opcore_		the ctl side of a core's state: set-up, the gate,
 *					tear-down, accounting (opcore_account, OPCORE_ACCT)
 *	sched_events.c	ev_, sched_events_	scheduler and lock events (the schedev.h hooks)
 *	encode.h, encode.c	rec_, blk_	the record builders: every record the kernel
 *					writes is built there; what a lost block held
 *	stream.c	stream_, recw_	the stream writer: the output queue, the kernel's own
 *					records on it
 *	clock.c		clock_		the session header's clock: the machine, what samples weigh
 *	pool.c		pool_		the pool of recycled blocks
 *	worker.c	worker_		the core-0 worker: cores' full blocks to the stream,
 *					empty ones back
 *	top.c		top_		`oprofile top`: counts the blocks the worker drains
 *					(top_tap), never taking one
 *	session.c	session_	the state machine, start and stop
 *	ctl.c		ctl_, cfg_	the command language of /dev/oprofilectl (two tables)
 *	reader.c	reader_		/dev/oprofile's reader
 *	stat.c		stat_, sbuf_	/dev/oprofilestat (two tables), and the text buffer sbuf
 *	backtrace.h, backtrace.c	bt_	the frame-pointer walk (oprof_backtrace outside)
 *	sampler.h, sampler.c	sampler_	kernel only: the sampling source (timer or NMI),
 *					missed periods
 *	glue.c, devoprofile.c	glue_		kernel only: the hooks, the worker thread, the
 *					device files
 *	crashrec.h, crashrec.c, crashdump.c, watchdog.c	crash_, crec_, watchdog_
 *			kernel only: the always-on crash recorder, its dump at a panic, the NMI
 *			hard-lockup watchdog (crash.h, crashrec.h; they share only the record
 *			builders with the rest, not this header)
 * oprof_* are the entry points the rest of the kernel calls (oprofile.h).
 *
 * Names say who may call: hot_* run on the core whose state they touch, interrupts off,
 * inside its writer guard (its sampling interrupt or NMI, or a thread on that core:
 * guard.h), or in the ctl thread acting for a stopped core; ev_* are the hooks' (on the
 * core, interrupts off) or the stop's; worker_*, session_*, stream_*, recw_*, opcore_*,
 * flight_* (but flight_hot_*), ctl_* and stat_* run in a thread with the session lock
 * held; reader_* in the reader's thread; pool_* in any thread; rec_* and blk_* touch only
 * memory the caller owns (a record, a block, counters it alone writes), in any context.
 *
 * Ownership of the shared state (see each file's opening comment for the why):
 *	struct opcore, hot half		written only by its core inside its writer guard;
 *					read by the ctl thread once the core is stopped
 *					(session_stop_cores), counters by anyone with cnt_get.
 *	struct opcore, worker half	written only with the session lock held.
 *	struct oprof_global		written with the session lock held; the hot path reads
 *					cfg (constant while a session runs, published by
 *					opcore_enable), paused, flushgen, snap_gen and pass_gen
 *					(atomics).
 *	struct opcore, fr.snap		the core (or ctl, once the core is stopped) writes the
 *					window it hands over; ctl takes it after fr.ack.
 */
#ifndef OPROF_INTERNAL_H
#define OPROF_INTERNAL_H

#include "kernel.h"
#include "abi/oprofile.h"
#include "arch.h"
#include "block.h"
#include "lock.h"
#include "oprofile.h"
#include "qio.h"
#include "qlock.h"
#include "rendez.h"
#include "ring.h"
#include "encode.h"
#include "schedev.h"

/* Single-writer counters: the owner adds, anyone reads; relaxed atomics, no RMW. */
static inline uint64_t cnt_get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void cnt_add(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

static inline uint32_t flag_get(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void flag_set(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* block->flags of the profiler's blocks (bits below 16 are qio's: none today) */
#define BLK_EOS		0x10000	/* the stream ends after this block: the reader's EOF */
#define BLK_SESSION	0x20000	/* holds the session header, which is unframed */

/* Length of the OPF_BLOCK header that starts every framed block. */
#define BLK_HDR		((uint32_t)sizeof(struct opf_block))

/* A framed block with nothing after its header. */
static inline bool blk_empty(const struct block *b)
{
	return BLEN(b) <= BLK_HDR;
}

/*
 * b emptied and framed: its OPF_BLOCK header reserved (filled when it is queued), no flags,
 * no samples counted (aux: a core's block counts its samples there).
 */
static inline void blk_frame(struct block *b)
{
	block_reset(b);
	b->wp += BLK_HDR;
	b->flags = 0;
	b->aux = 0;
}

/*
 * Host tests only: a point in the hot path where an NMI may land (tests/host/shim calls
 * the sampling entry re-entrantly from here). Nothing in the kernel.
 */
#if defined(HOST_SHIM) && !defined(OPROF_BENCH)
void shim_nmi_point(void);
#define NMI_POINT()	shim_nmi_point()
#else
#define NMI_POINT()	do { } while (0)
#endif
/* Host tests only: a point outside the hot path where a test may interleave (same hook). */
#define HOST_POINT()	NMI_POINT()

/* A session's settings; ctl.c's table names each field. */
struct oprof_cfg {
	uint32_t hz;		/* per-core sampling rate */
	uint32_t depth;		/* most frames per sample, 0..OPF_MAX_DEPTH */
	uint32_t block_bytes;	/* size of every block of the session */
	uint32_t period_ms;	/* worker period */
	uint32_t stale;		/* push a partial block older than this many periods */
	uint32_t emptydepth;	/* target depth of each core's empty queue */
	uint64_t cap;		/* output queue cap, bytes */
	uint32_t snapshot;	/* flight recorder: windows reach the stream only in snapshots */
	uint32_t window;	/* flight recorder: blocks each core keeps (cur included) */
	uint32_t budget;	/* percent of a core's time sampling may use; 100: no limit */
	uint32_t maxhz;		/* highest rate "start -f" accepts */
	uint32_t source;	/* enum opf_source: the timer interrupt or NMIs */
	uint32_t events;	/* 1: scheduler and lock events too (OPF_S_SCHED) */
	uint32_t jitter;	/* percent of a period each sample's moment spreads over */
	uint64_t seed;		/* the jitter's seed; 0 in a setting: a new one each session */
};

enum oprof_state {
	OPROF_IDLE,		/* no session; a reader waits for the next one */
	OPROF_RUNNING,		/* cores sample */
	OPROF_PAUSED,		/* cores count ticks as lost (PAUSED) */
	OPROF_STOPPING,		/* ctl is stopping the cores and closing the stream */
	OPROF_DRAINING,		/* stream closed and hung up; the reader has not reached EOF */
};

/* A sample an NMI took while a writer was active on its core, for that writer to record. */
struct pend_sample {
	struct oprof_tick t;	/* the NMI's tick; t.flags has its walk's flags added */
	uint16_t nframes;	/* frames[] walked already */
	uint16_t paused;	/* the session was paused when the NMI came */
	uint64_t frames[OPF_MAX_DEPTH];
};

/* Drops of consecutive blocks of one core, not yet told in an OPF_DROP record. */
struct drop_run {
	uint64_t seq;		/* first block */
	uint32_t blocks;
	uint64_t samples;
};
#define DROP_RUNS	8	/* runs a core keeps before counting more as unlisted */

/* The profiler's state of one core, grouped by the mechanism that owns each part. */
struct opcore {
	/*
	 * The gate and the writer guard (guard.h). on: the ctl thread lets the core record
	 * (release; the core reads it with acquire). nest: a writer (a tick, an event, or a
	 * thread on this core writing a record) is between hot_enter and hot_leave; an NMI
	 * that finds it set leaves its sample in pend for that writer instead of touching the
	 * buffers.
	 */
	uint32_t on;
	uint32_t nest;
	struct {
		uint32_t any;		/* NMI sets after filling s or counting an overflow;
					   the writer clears it before it looks */
		uint32_t full;		/* NMI sets (sample in s), writer clears once recorded */
		uint32_t overflow;	/* NMIs that found the slot full; written by NMIs only */
		uint32_t folded;	/* of overflow, already counted by a writer */
		uint32_t ovf_paused;	/* the same while paused; written by NMIs only */
		uint32_t folded_paused;	/* of ovf_paused, already counted by a writer */
		struct pend_sample s;
	} pend;

	/*
	 * Buffers (hotpath.c). full: produced by the core, consumed by the worker (by the core
	 * itself in the flight recorder, whose window it is). empty: produced by the worker,
	 * consumed by the core.
	 */
	struct {
		struct block *cur;	/* block being filled, or NULL; set by hot_set_cur only */
		uint64_t cur_gen;	/* changes whenever cur does (hot_set_cur) */
		uint64_t born;		/* TSC of the tick that took cur: its age, for the bound */
		struct ring full;
		struct ring empty;
		uint32_t seen_flush;	/* last oprof.flushgen this core honoured */
		uint32_t seen_pause;	/* the pause state this core last noticed */
		uint32_t nmarks;	/* marks noticed but not yet written (at most 2) */
		uint64_t mark_tsc[2];	/* their times: a pause, then a resume */
		uint32_t starving;	/* empty ran dry; the worker was kicked */
		uint32_t kicked_pass;	/* oprof.pass_gen when the core last kicked at low water */
	} buf;

	/* What the core counts (hotpath.c): written by the core, read with cnt_get. */
	struct {
		uint64_t taken;		/* sampling interrupts while on */
		uint64_t written;	/* sample records written into blocks */
		uint64_t truncated;	/* of those, with OPF_F_TRUNCATED */
		uint64_t depth_cut;	/* of those, with OPF_F_DEPTH */
		uint64_t blocks;	/* blocks pushed: the next block's seq */
		uint64_t threads;	/* OPF_THREAD records written */
		uint64_t threads_lost;	/* OPF_THREAD records that found no block */
		uint64_t marks_lost;	/* pause/resume marks that could never be written */
		uint64_t missed;	/* sampling periods the core was too late for (glue) */
		uint64_t refused;	/* ticks that found the gate closed (stopping) */
		uint64_t lost[OPF_LOST_NREASONS];	/* all but OUTPUT_FULL */
	} cnt;

	/*
	 * Scheduler events (sched_events.c): written by the core inside its writer guard,
	 * read with cnt_get. Those in blocks that left unread are in fr.gone.ev (overwritten)
	 * and w.gone.ev (dropped: lost OUTPUT_FULL).
	 */
	struct {
		uint64_t taken;			/* events while on */
		uint64_t written[OPF_EV_N];	/* records written into blocks, by kind */
		uint64_t lost[OPF_LOST_NREASONS];	/* NO_BLOCK, PAUSED, OTHER */
	} ev;

	/* Losses the stream has not told yet (hotpath.c). */
	struct {
		uint64_t unreported[OPF_LOST_NREASONS];	/* for the next OPF_LOST records */
		uint32_t pending;	/* some unreported[] is not 0 */
	} lrep;

	/*
	 * The flight recorder (flight.c). snap: the window handed to a snapshot, produced by
	 * the core, consumed by the ctl thread once ack says the hand-over is complete.
	 */
	struct {
		struct ring snap;
		uint32_t seen;		/* last oprof.snap_gen this core handed its window for */
		uint32_t ack;		/* = seen once the window is in snap; release */
		struct blk_gone gone;	/* blocks reused for newer: overwritten */
	} fr;

	/* The overhead budget (budget.c). */
	struct {
		uint32_t hz;		/* current rate (below cfg.hz once throttled) */
		uint32_t n;		/* ticks, for timing one in OPROF_BUDGET_EVERY */
		uint32_t strikes;	/* budget windows over budget in a row */
		uint32_t calm;		/* throttled, windows under a quarter of budget in a row */
		uint64_t win_start;	/* TSC at the start of the budget window */
		uint64_t win_cost;	/* TSC spent in the hot path in this window */
		uint64_t load_pm;	/* hot-path share of the last window, per mille */
		uint64_t tick_max;	/* most TSC ticks one tick is charged: a period, capped */
		uint64_t throttles;	/* times this core halved its rate */
		uint64_t raises;	/* times it doubled it back (never above cfg.hz) */
	} bud;

	uint64_t nmi_frames[OPF_MAX_DEPTH];	/* an NMI's, while it defers to a writer */

	/* The worker's half (worker.c): session lock held. */
	struct {
		struct blk_gone gone;		/* dropped blocks: samples lost OUTPUT_FULL */
		uint64_t unlisted;		/* dropped blocks no OPF_DROP will name */
		uint64_t unlisted_samples;	/* their samples */
		uint64_t unreported[OPF_LOST_NREASONS];	/* OPF_LOST of dropped blocks */
		struct drop_run runs[DROP_RUNS];	/* drops not yet told */
		uint32_t nruns;
		uint64_t blocks;		/* blocks at the last pass, for the rate of use */
		uint64_t noblock;		/* lost NO_BLOCK at the last pass */
		uint64_t tsc;			/* TSC of the last pass */
		uint32_t target;		/* empty-ring depth the worker keeps */
		uint32_t low;			/* hot path kicks the worker at or below this */
	} w __aligned(CACHELINE);
} __aligned(CACHELINE);

struct oprof_global {
	struct qlock lock;		/* the session lock (session.c) */
	const struct oprof_hooks *hooks;
	struct oprof_cfg cfg;		/* the session's settings; constant while it runs */
	struct oprof_cfg next;		/* settings for the next session */
	uint32_t state;			/* enum oprof_state; flag_get anywhere */
	uint32_t paused;		/* hot path: count ticks as lost PAUSED */
	uint32_t flushgen;		/* bumped by "flush"; cores push on change */
	uint32_t wait_ms;		/* worker period in effect; flag_get anywhere */
	uint32_t snap_gen;		/* snapshot requests since boot; cores hand over on change */
	uint32_t pass_gen;		/* worker passes this session; low-water kicks key on it */
	uint32_t kick;			/* a core wants an early worker pass (NMI-safe flag) */
	uint32_t faults;		/* OPROF_FAULT_* bits armed by "inject" (tests) */
	uint64_t snapshots;		/* dumps this session (the seq of the last) */
	uint64_t budget_ticks;		/* length of a budget window in TSC ticks */
	uint64_t tick_max_ticks;	/* most TSC ticks one tick is charged to the budget */
	uint32_t max_target;		/* most blocks the worker puts on one empty ring */
	uint32_t ring_slots;		/* capacity of the session's rings */
	int ncores;			/* cores of the session */
	uint64_t stale_ticks;		/* cfg.stale periods in TSC ticks */
	uint64_t session_id;		/* sessions since boot */
	uint64_t cap;			/* the output cap in effect: cfg.cap, or less (memory) */
	uint64_t bmem;			/* the memory a block of the session really holds */
	uint64_t rec_cap;		/* the cap less the reserve: bound of capped records */
	struct opf_session header;	/* this session's header, again for a resumed reader */
	struct queue *outq;		/* the stream, /dev/oprofile; limit: rec_cap - bmem */
	uint64_t stream_bytes;		/* bytes queued on outq this session */
	uint64_t stream_seq;		/* the kernel's own blocks queued this session */
	uint64_t blocks_dropped;	/* this session */
	uint64_t marks_lost;		/* kernel records that found no room under the cap */
	struct block *reserve;		/* blocks set aside at start for the closing records */
	struct rendez snap_r;		/* ctl waits here for the cores' fr.ack */
};


extern struct oprof_global oprof;
extern struct opcore opcores[MAX_CPUS];

/*
 * cur becomes b (NULL: none) with a new generation, so that whatever was remembered of the
 * old cur (sched_events.c's stack cache) is seen to be stale. By the core inside its
 * writer guard, or the ctl thread acting for a stopped core.
 */
static inline void hot_set_cur(struct opcore *c, struct block *b)
{
	c->buf.cur = b;
	c->buf.cur_gen++;
}

/* The session lock (sleeping) serializes ctl, worker passes and stat (session.c). */
static inline void session_lock(void)
{
	qlock(&oprof.lock);
}

static inline void session_unlock(void)
{
	qunlock(&oprof.lock);
}

/* The rule of worker_*, session_*, stream_*, recw_*, opcore_*, flight_*, ctl_*, stat_*. */
#define must_hold_session()	must(qholding(&oprof.lock), "session lock held")

/* session.c: every core's gate closed and its writers waited out (session_stop_cores). */
bool session_cores_stopped(void);
#define must_be_stopped()	must(session_cores_stopped(), "every core stopped")

/* RUNNING or PAUSED; any context. */
static inline bool session_active(void)
{
	uint32_t s = flag_get(&oprof.state);

	return s == OPROF_RUNNING || s == OPROF_PAUSED;
}

/*
 * hotpath.c: for the other writers (guard.h) on the same core, or the ctl thread acting
 * for a stopped core.
 */
void *hot_reserve_slow(struct opcore *c, uint32_t len, uint64_t tsc);
bool hot_push(struct opcore *c);
bool hot_write_marks(struct opcore *c, uint64_t tsc);

/* sched_events.c: the hooks a session with events registers (hooks->sched_events). */
const struct schedev_ops *sched_events_ops(void);
void sched_events_drain(void);
void sched_events_forget(void);

/* budget.c */
void budget_reset(struct opcore *c);
void hot_budget_timed(struct opcore *c, uint64_t start);
/* The end of a tick that began at start (TSC): one in OPROF_BUDGET_EVERY is timed. */
static inline void hot_budget(struct opcore *c, uint64_t start)
{
	if (unlikely(!(++c->bud.n & (OPROF_BUDGET_EVERY - 1))))
		hot_budget_timed(c, start);
}

/* flight.c */
struct block *flight_hot_reuse(struct opcore *c);
void flight_hot_housekeep(struct opcore *c);
void flight_handover_here(void *core);	/* hooks->on_core callback */
int flight_snapshot(void);
void flight_stop(void);

/* opcore.c: ctl side of the per-core state (session lock held). */
int opcore_setup(struct opcore *c);
void opcore_enable(struct opcore *c);
void opcore_disable(struct opcore *c);
void opcore_flush_partial(struct opcore *c);
void opcore_teardown(struct opcore *c);

/*
 * One core's accounting view: every count the closing records (OPF_CORE_END), the stat
 * file (and so `oprofile stat`) report, in the stat file's order. A row: the field, which
 * is also its stat name (cpuN.NAME), and how opcore_account reads it from c. Rows that are
 * counters of a running core are read with relaxed loads: each exact, not one instant.
 * After stop, taken == delivered + lost_* + overwritten. A new counter is one row here.
 */
#define OPCORE_ACCT(X)								\
	X(taken, cnt_get(&c->cnt.taken))					\
	X(delivered, acct_delivered(c))						\
	X(lost_noblock, cnt_get(&c->cnt.lost[OPF_LOST_NO_BLOCK]))		\
	X(lost_outfull, c->w.gone.samples)					\
	X(lost_paused, cnt_get(&c->cnt.lost[OPF_LOST_PAUSED]))			\
	X(lost_other, cnt_get(&c->cnt.lost[OPF_LOST_OTHER]))			\
	X(overwritten, cnt_get(&c->fr.gone.samples))				\
	X(truncated, acct_truncated(c))						\
	X(blocks, cnt_get(&c->cnt.blocks))					\
	X(blocks_dropped, c->w.gone.blocks)					\
	X(emptyq, c->buf.empty.slot ? ring_count(&c->buf.empty) : 0)		\
	X(emptyq_target, c->w.target)						\
	X(window_blocks, c->buf.full.slot && oprof.cfg.snapshot ?		\
	  ring_count(&c->buf.full) : 0)						\
	X(blocks_overwritten, cnt_get(&c->fr.gone.blocks))			\
	X(blocks_unlisted, c->w.unlisted)					\
	X(depth_cut, acct_depth_cut(c))						\
	X(marks_lost, cnt_get(&c->cnt.marks_lost))				\
	X(threads, cnt_get(&c->cnt.threads))					\
	X(threads_lost, cnt_get(&c->cnt.threads_lost))				\
	X(threads_dropped, c->w.gone.threads)					\
	X(threads_overwritten, cnt_get(&c->fr.gone.threads))			\
	X(hz, flag_get(&c->bud.hz))						\
	X(throttles, cnt_get(&c->bud.throttles))				\
	X(raises, cnt_get(&c->bud.raises))					\
	X(load_permille, cnt_get(&c->bud.load_pm))				\
	X(missed, cnt_get(&c->cnt.missed))

struct opcore_acct {
#define OPCORE_ACCT_FIELD(name, expr)	uint64_t name;
	OPCORE_ACCT(OPCORE_ACCT_FIELD)
#undef OPCORE_ACCT_FIELD
};
/* Session lock held: c's accounting view into *a. */
void opcore_account(struct opcore *c, struct opcore_acct *a);

/* pool.c: recycled blocks (any thread). */
void pool_setup(size_t bsize, uint64_t max);
struct block *pool_get(bool force);
void pool_put(struct block *b);
void pool_trim(void);
void pool_stats(uint64_t *allocated, uint64_t *pooled, uint64_t *max);

/* worker.c (session lock held) */
void worker_init(void);
void worker_kick(void);		/* any context, NMI included */
void worker_drain(void);
void worker_drain_rings(bool snap);	/* full rings (snap: the windows), in fair shares */
void worker_refill(void);
uint32_t worker_start_target(void);

/* top.c: the worker shows it each core block it drains (session lock held; b unchanged) */
void top_tap(const struct block *b);

/* ctl.c: a plain "start" with the next session's settings (session lock held) */
int ctl_start_default(char *err, size_t errlen);

/* stream.c (session lock held): the output queue and the kernel's own records on it */
void stream_put(struct block *b);	/* one of the kernel's own blocks, its header filled */
bool stream_session(uint64_t tsc);	/* fill oprof.header, queue it; false: no memory */
void stream_report_drops(void);		/* OPF_DROP, OPF_LOST for what drops took */
void stream_report_drops_to(struct recw *w);	/* the same into w, not finished */
bool stream_session_end(struct recw *w, uint64_t tsc, uint16_t flags);
void stream_close(void);		/* the closing records; the stream's end */

/* session.c: transitions, session lock held (ctl.c checks the state first) */
int session_start(const struct oprof_cfg *cfg, char *err, size_t errlen);
void session_stop(void);
void session_pause(bool pause);
void session_flush(void);
void session_discard(void);
const char *session_state_name(uint32_t state);

/* stat.c: a text of unknown length into a buffer of n bytes. */
struct sbuf {
	char *buf;
	size_t n;	/* size of buf */
	size_t len;	/* length of the whole text so far (may exceed n) */
};
/* Append; past the end of buf only the length grows (buf stays NUL terminated). */
__printf(2, 3) void sbuf_printf(struct sbuf *sb, const char *fmt, ...);

/* clock.c: the machine and its clock, for the stat file (clock_describe: encode.h) */
uint32_t clock_kind(void);			/* enum opf_clock */
const char *clock_machine_name(void);
const char *clock_name(void);

/* reader.c */
bool reader_is_open(void);

#endif
