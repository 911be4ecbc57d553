/*
 * oprof_host.h: what the profiler's host tests (tests/host/oprof/) share: the platform
 * (plat.c), the stream checker (stream.c), the reader (reader.c) and the subtests.
 *
 * Threads stand in for cores (shim_set_core), for the core-0 worker and for the reader of
 * /dev/oprofile. The test implements struct oprof_hooks: start_sampling spawns one thread
 * per core running the subtest's core body, stop_sampling joins them.
 *
 * Everything is checked from the stream alone (parsed with the ABI header): per core,
 * taken == delivered + sum(lost), delivered == its OPF_SAMPLE records, OPF_LOST records
 * add up to OPF_CORE_END's lost[], samples are in order and carry exactly the frames the
 * core built, and taken equals the ticks the core really made. After every subtest the
 * profiler's blocks and allocations are back to the baseline.
 */
#ifndef OPROF_HOST_H
#define OPROF_HOST_H

#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#define strerror libc_strerror	/* error.h declares the kernel's own */
#include <string.h>
#undef strerror
#include <time.h>
#include <unistd.h>

#include "kernel.h"
#include "abi/oprofile.h"
#include "arch.h"
#include "block.h"
#include "error.h"
#include "oprofile.h"
#include "oprofile_bench.h"
#include "shim.h"
#include "harness.h"

#define MAXC		8
#define TID_START	1	/* threads alive at start: tids 1..NSTART */
#define NSTART		5
#define TID_NEW		100000	/* threads "created" during a session */

/* the platform: what the hooks were told and did (plat.c) */
struct plat {
	int ncores;
	void (*body)(int core);
	pthread_t th[MAXC];
	int running;
	uint64_t ticks[MAXC];	/* ticks each core made while sampling */
	int start_fail;		/* start_sampling returns this once */
	uint32_t hz[MAXC];	/* each core's rate, as set_rate last told it */
	uint64_t set_rates[MAXC];	/* set_rate calls per core */
	int bad_rate_calls;	/* set_rate called from another core */
	int64_t backdate;	/* tick(): t.tsc this many TSC ticks before the tick (slow hot path) */
};
extern struct plat plat;

/* ---- what the cores record: every sample is checkable on its own ---- */

#define PC(core, seq)		((1ull << 63) | ((uint64_t)(core) << 40) | (seq))
#define NMI_TAG			(1ull << 61)	/* a sample an injected "NMI" took */
#define NPC(core, seq)		(PC(core, seq) | NMI_TAG)
#define NRET(core, seq, i)	(RET(core, seq, i) | NMI_TAG)
#define RET(core, seq, i) \
	((1ull << 62) | ((uint64_t)(core) << 40) | (((seq) & 0xffffffffull) << 6) | (i))
#define SEQ_OF(pc)		((pc) & ((1ull << 40) - 1))
#define CORE_OF(pc)		(((pc) >> 40) & 0xff)
#define STACK_WORDS		(2 * 24)
#define BLK_HDR_HOST		((uint32_t)sizeof(struct opf_block))

static inline unsigned depth_of(uint64_t seq) { return (unsigned)(seq % 21); }
static inline unsigned nmi_depth_of(uint64_t seq) { return (unsigned)(seq % 9); }
static inline bool corrupt_of(uint64_t seq) { return seq % 7 == 3 && depth_of(seq) > 0; }
static inline bool idle_of(uint64_t seq) { return seq % 11 == 0; }

/* ---- the stream checker (stream.c): incremental, so a long stream needs no big buffer ---- */

struct pstate {
	uint8_t *buf;
	size_t len, cap;
	uint64_t off;			/* stream offset of buf[0] */
	bool checkframes;		/* samples follow tick()'s pattern */
	bool have_session, have_end;
	struct opf_session sess;
	struct opf_session_end send;
	uint64_t end_off;
	uint64_t samples[MAXC], trunc[MAXC], lostrec[MAXC][OPF_LOST_NREASONS];
	uint64_t last_seq[MAXC], last_tsc[MAXC];
	uint64_t seq_lo[MAXC], seq_hi[MAXC];	/* samples with seq in [lo, hi) are refused */
	bool core_end_seen[MAXC];
	struct opf_core_end ce[MAXC];
	uint64_t threads_start, threads_new[MAXC], pauses[MAXC], resumes[MAXC];
	uint64_t eofs;
	/* v2 framing: the block being parsed, and what each writer's blocks were */
	bool in_block;
	uint32_t blk_core;		/* writer of the current block (OPF_CORE_STREAM: kernel) */
	uint64_t blk_start, blk_bytes, blk_samples, blk_want_samples;
	uint8_t *seqs[MAXC + 1];	/* per writer (MAXC: the stream's own): seq seen */
	uint64_t nseqs[MAXC + 1], max_seq[MAXC + 1];
	uint64_t dropped[MAXC], drop_samples[MAXC], unlisted[MAXC];
	uint8_t *drop_seqs[MAXC];	/* seqs OPF_DROP named */
	uint64_t ndrop_seqs[MAXC];
	bool resumed;			/* the stream began with OPF_S_RESUMED */
	bool continuing;		/* the next bytes are a resumed reader's: skip its header */
	uint64_t unexplained;		/* blocks missing with no reason (expected: a test's) */
	bool expect_gap;		/* a test lost a block on purpose: count, do not fail */
	uint64_t extra;			/* bytes a resumed reader got that the stream had not */
	bool discarded;			/* its end says OPF_SE_DISCARDED */
	uint64_t depth[MAXC];		/* samples flagged OPF_F_DEPTH */
	uint64_t last_nseq[MAXC], nmi_samples[MAXC];	/* samples injected NMIs took */
	/* flight recorder */
	bool snapcheck;			/* samples in dumps: contiguous per core and dump */
	bool in_snap;
	uint64_t snap_begins, snap_ends, snap_seq, threads_snap;
	uint64_t snap_samples[MAXC];	/* of the current dump */
	uint64_t snap_first[MAXC], snap_last[MAXC];	/* seqs of the current dump */
	uint64_t gap[MAXC];		/* samples between dumps: overwritten or lost */
	uint64_t samples_outside;	/* samples not inside a dump */
	uint64_t dump_last[64][MAXC];	/* last seq of each core in dump k (1..63) */
	/* throttling */
	uint64_t throttles[MAXC];
	uint64_t rate_changes[MAXC];	/* OPF_THROTTLE records: down and back up */
	uint32_t thr_hz[MAXC];		/* new_hz of the last OPF_THROTTLE */
};

/* ---- the reader thread (reader.c) ---- */

struct reader {
	pthread_t th;
	struct pstate ps;
	long delay_us;		/* before the first read */
	bool wait_drop;		/* before the first read, wait until the worker drops a block */
	long pace_us;		/* between reads: a slow reader */
	bool opened;		/* the caller already opened the device */
	uint64_t bytes;
};

/* plat.c */
extern const struct oprof_hooks hooks;
extern int worker_exit, worker_held;
extern uint64_t base_blocks, stream_n;
extern long base_allocs;
extern __thread int nmi_core, nmi_count;
extern uint64_t nmi_ticks[MAXC], nmi_seqs[MAXC];
void sleep_us(long us);
uint64_t now_ms(void);
void core_barrier(int core, int parties);
void hook_stop(void);
void *worker_main(void *arg);
int ctl(const char *line);
void ctl_refused(const char *line, int rc_want, const char *want);
const char *stat_str(const char *name);
uint64_t stat_value(const char *name);
uint64_t stat_cpu(int core, const char *what);
void tick(int core, uint64_t seq, uintptr_t *st);
void nmi_land(void);
void check_no_leak(const char *when);
void setup(int ncores, void (*body)(int));
void body_none(int core);
void body_stream(int core);

/* stream.c */
void ps_feed(struct pstate *ps, const void *data, size_t n);
void ps_verify(struct pstate *ps, const uint64_t *ticks);
void ps_free(struct pstate *ps);

/* reader.c */
void reader_start(struct reader *r);
void reader_join(struct reader *r, const uint64_t *ticks);
void drain_stream(struct pstate *ps);

/* the subtests, run by main.c's table */
void test_backtrace(void);
void test_ctl(void);
void test_stream_eof(void);
void test_pause(void);
void test_flush_stale(void);
void test_silent_drop(void);
void test_resume(void);
void test_late_worker(void);
void test_discard_reader(void);
void test_cycles(void);
void test_snapshot(void);
void test_flight_twice(void);
void test_stress_lossy(void);
void test_stress_fast(void);
void test_throttle(void);
void test_nmi(void);
void test_marks_cap(void);
void test_cap_memory(void);

#endif
