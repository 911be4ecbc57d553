/*
 * What the profiler's files share; nothing outside kern/src/oprofile includes this.
 *
 * Ownership of the shared state (see each file's opening comment for the why):
 *	struct oprof_cpu, hot half	written only by its core (interrupt context, or a thread
 *					on that core with interrupts off) between cpu_enter
 *					and cpu_exit; read by the ctl thread after cpu_quiesce,
 *					counters by anyone with cnt_get.
 *	struct oprof_cpu, worker half	written only with the ctl mutex held (worker, ctl).
 *	struct oprof_global		written with the ctl mutex held; the hot path reads
 *					cfg (constant while a session runs, published by
 *					cpu_enable), paused, flushgen, snap_req and pass_gen
 *					(atomics).
 *	struct oprof_cpu, snapq		the core (or ctl, after cpu_quiesce) writes the
 *					window it hands over; ctl takes it after snap_ack.
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
#include "rendez.h"

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

/* block->flags above bit 16: truncated samples in the block (a block holds < 2^16 samples). */
#define BLK_TRUNC_SHIFT	16
#define BLK_TRUNC_ONE	(1u << BLK_TRUNC_SHIFT)
#define BLK_TRUNC(b)	((b)->flags >> BLK_TRUNC_SHIFT)

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
};

enum oprof_state {
	OPROF_IDLE,		/* no session; a reader waits for the next one */
	OPROF_RUNNING,		/* cores sample */
	OPROF_PAUSED,		/* cores count ticks as lost (PAUSED) */
	OPROF_STOPPING,		/* ctl is stopping the cores and closing the stream */
	OPROF_DRAINING,		/* stream closed and hung up; the reader has not reached EOF */
};

struct oprof_cpu {
	/* Hot half: the core's own (see the top). */
	uint32_t on;			/* ctl: core may record; SEQ_CST with busy */
	uint32_t busy;			/* core: inside cpu_enter/cpu_exit */
	struct block *cur;		/* block being filled, or NULL */
	struct queue *fullq;		/* blocks pushed by the core, oldest first */
	struct queue *emptyq;		/* blocks the worker gave the core */
	uint32_t seen_flush;		/* last oprof.flushgen this core honoured */
	uint32_t starving;		/* emptyq ran dry; the worker was kicked */
	uint32_t kicked_pass;		/* oprof.pass_gen when this core last kicked at low water */
	uint32_t snap_seen;		/* last oprof.snap_req this core handed its window for */
	uint32_t snap_ack;		/* = snap_seen once the window is on snapq; release */
	uint32_t hz;			/* current rate (below cfg.hz once throttled) */
	struct queue *snapq;		/* flight recorder: the window handed to a snapshot */
	uint64_t win_start;		/* TSC at the start of the budget window */
	uint64_t win_cost;		/* TSC spent in the hot path in this window */
	uint64_t load_pm;		/* hot-path share of the last window, per mille */
	uint32_t strikes;		/* budget windows over budget in a row */
	uint32_t calm;			/* throttled, windows under a quarter of budget in a row */
	uint32_t budget_n;		/* ticks, for timing one in OPROF_BUDGET_EVERY */
	uint32_t lost_pending;		/* some unreported[] is not 0 */
	uint64_t tick_max;		/* most TSC ticks one tick is charged: a period, capped */
	uint64_t throttles;		/* times this core halved its rate */
	uint64_t raises;		/* times it doubled it back (never above cfg.hz) */
	uint64_t missed;		/* timer expiries the core was too late for (glue) */
	uint64_t taken;			/* ticks while on */
	uint64_t written;		/* sample records written into blocks */
	uint64_t truncated;		/* of those, with OPF_F_TRUNCATED */
	uint64_t blocks;		/* blocks pushed to fullq */
	uint64_t threads;		/* OPF_THREAD records written */
	uint64_t threads_lost;		/* OPF_THREAD records that found no block */
	uint64_t overwritten;		/* flight recorder: samples in blocks reused for newer */
	uint64_t ow_truncated;		/* truncated samples among them */
	uint64_t threads_ow;		/* OPF_THREAD records in reused blocks */
	uint64_t lost[OPF_LOST_NREASONS];	/* all but OUTPUT_FULL */
	uint64_t unreported[OPF_LOST_NREASONS];	/* lost not yet told in an OPF_LOST record */
	uint64_t frames[OPF_MAX_DEPTH];	/* oprof_tick_irq's walk scratch */

	/* Worker half: ctl mutex held. */
	uint64_t dropped_samples __aligned(CACHELINE);	/* lost OUTPUT_FULL */
	uint64_t dropped_truncated;	/* truncated samples among them */
	uint64_t dropped_blocks;
	uint64_t threads_dropped;	/* OPF_THREAD records in dropped blocks */
	/* lost the stream does not tell: OUTPUT_FULL, and OPF_LOST records of dropped blocks */
	uint64_t w_unreported[OPF_LOST_NREASONS];
	uint64_t w_blocks;		/* blocks at the last pass, for the rate of use */
	uint64_t w_noblock;		/* lost NO_BLOCK at the last pass */
	uint64_t w_tsc;			/* TSC of the last pass */
	uint32_t target;		/* emptyq depth the worker keeps (adapts to the rate) */
	uint32_t low;			/* hot path kicks the worker at or below this; relaxed */
} __aligned(CACHELINE);

struct oprof_global {
	const struct oprof_hooks *hooks;
	struct oprof_cfg cfg;		/* the session's settings; constant while it runs */
	struct oprof_cfg next;		/* settings for the next session */
	uint32_t state;			/* enum oprof_state; flag_get anywhere */
	uint32_t paused;		/* hot path: count ticks as lost PAUSED */
	uint32_t flushgen;		/* bumped by "flush"; cores push on change */
	uint32_t wait_ms;		/* worker period in effect; flag_get anywhere */
	uint32_t snap_req;		/* flight recorder: snapshot asked for; cores hand over */
	uint32_t pass_gen;		/* worker passes this session; low-water kicks key on it */
	uint64_t snapshots;		/* dumps this session (snap seq of the last) */
	uint64_t budget_ticks;		/* length of a budget window in TSC ticks */
	uint64_t tick_max_ticks;	/* most TSC ticks one tick is charged to the budget */
	uint32_t max_target;		/* most blocks the worker puts on one empty queue */
	int ncores;			/* cores of the session */
	uint64_t stale_ticks;		/* cfg.stale periods in TSC ticks */
	uint64_t session_id;		/* sessions since boot */
	struct queue *outq;		/* the stream, read by /dev/oprofile */
	struct rendez readers;		/* the reader waits here for outq */
	uint64_t stream_bytes;		/* bytes queued on outq this session */
	uint64_t blocks_dropped;	/* this session */
	struct rendez snap_r;		/* ctl waits here for the cores' snap_ack */
};

extern struct oprof_global oprof;
extern struct oprof_cpu oprof_cpus[MAX_CPUS];

/* session.c: the ctl mutex (sleeping; thread context) serializes ctl, worker and stat. */
void ctl_lock(void);
void ctl_unlock(void);
bool ctl_held(void);
bool session_active(void);	/* RUNNING or PAUSED */

/* percpu.c: ctl side of the per-core state (ctl mutex held). */
int cpu_setup(struct oprof_cpu *c);
void cpu_enable(struct oprof_cpu *c);
void cpu_quiesce(struct oprof_cpu *c);
void cpu_wait_idle(struct oprof_cpu *c);
void cpu_flush_partial(struct oprof_cpu *c);
void cpu_teardown(struct oprof_cpu *c);
void cpu_snap_takeover(struct oprof_cpu *c, uint32_t seq);
uint64_t cpu_delivered(struct oprof_cpu *c);
uint64_t cpu_truncated(struct oprof_cpu *c);

/* pool.c: recycled blocks (thread context) and the output queue's writers (ctl mutex). */
void pool_setup(size_t bsize, uint64_t max);
struct block *pool_get(bool force);
void pool_put(struct block *b);
void pool_trim(void);
void pool_stats(uint64_t *allocated, uint64_t *pooled, uint64_t *max);
void outq_put(struct block *b);
struct recw {
	struct block *b;	/* block being filled, not yet on outq */
	bool force;		/* may allocate past the pool's cap */
};
void *recw_reserve(struct recw *w, uint32_t len);
void recw_finish(struct recw *w);
void rec_lost(void *p, uint16_t core, uint16_t reason, uint64_t count, uint64_t tsc);
/* OPF_THREAD naming a thread: its length, and filling one at p (that many bytes). */
uint32_t rec_thread_len(const char *name);
void rec_thread(void *p, uint32_t tid, int core, const char *name, uint64_t tsc);
uint64_t rec_salvage(const struct block *b, uint64_t *lost);

/* worker.c (ctl mutex held) */
void worker_init(void);
void worker_kick(void);
void worker_drain(void);
void worker_refill(void);
void worker_close_stream(void);
void worker_dump_snapshot(uint64_t seq);

/* session.c: transitions, ctl mutex held (ctl.c checks the state first) */
int session_start(const struct oprof_cfg *cfg, char *err, size_t errlen);
void session_stop(void);
void session_pause(bool pause);
void session_flush(void);
void session_discard(void);
int session_snapshot(char *err, size_t errlen);
const char *session_state_name(uint32_t state);

/* reader.c */
void reader_wake(void);
bool reader_is_open(void);

#endif
