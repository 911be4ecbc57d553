/*
 * Host tests of the profiler's portable core (kern/src/oprofile), under pthreads:
 * threads stand in for cores (shim_set_core), for the core-0 worker and for the reader of
 * /dev/oprofile. The test implements struct oprof_hooks: start_sampling spawns one thread
 * per core running the subtest's core body, stop_sampling joins them.
 *
 * Everything is checked from the stream alone (parsed with the ABI header): per core,
 * taken == delivered + sum(lost), delivered == its OPF_SAMPLE records, OPF_LOST records
 * add up to OPF_CORE_END's lost[], samples are in order and carry exactly the frames the
 * core built, and taken equals the ticks the core really made. After every subtest the
 * profiler's blocks and allocations are back to the baseline. Prints PASS/FAIL per subtest;
 * the exit status is the verdict.
 */
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

#define MAXC		8
#define TID_START	1	/* threads alive at start: tids 1..NSTART */
#define NSTART		5
#define TID_NEW		100000	/* threads "created" during a session */

static int failures;
static int sub_failed;

static __printf(1, 2) void fail(const char *fmt, ...)
{
	va_list ap;

	if (sub_failed++ < 8) {
		va_start(ap, fmt);
		fprintf(stderr, "    ");
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\n");
		va_end(ap);
	}
}

#define CHECK(c, ...) do { if (!(c)) fail(__VA_ARGS__); } while (0)

static void verdict(const char *name)
{
	printf("%s %s\n", sub_failed ? "FAIL" : "PASS", name);
	fflush(stdout);
	failures += sub_failed != 0;
	sub_failed = 0;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static uint64_t now_ms(void)
{
	return nsec() / 1000000;
}

/* ---- platform hooks ---- */

static struct {
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
} plat;

/*
 * hooks->on_core: a mailbox per core that the core's thread empties between ticks and while
 * it waits (core_poll); once the core's body has ended, the caller acts for it.
 */
static struct {
	void (*fn)(void *);
	void *arg;
	int state;		/* 0 empty, 1 posted, 2 taken, 3 done */
} mail[MAXC];
static int core_live[MAXC];

static void core_poll(int core)
{
	int posted = 1;

	if (__atomic_load_n(&mail[core].state, __ATOMIC_ACQUIRE) == 1 &&
	    __atomic_compare_exchange_n(&mail[core].state, &posted, 2, false, __ATOMIC_ACQ_REL,
					__ATOMIC_RELAXED)) {
		mail[core].fn(mail[core].arg);
		__atomic_store_n(&mail[core].state, 3, __ATOMIC_RELEASE);
	}
}

static void hook_on_core(int core, void (*fn)(void *), void *arg)
{
	mail[core].fn = fn;
	mail[core].arg = arg;
	__atomic_store_n(&mail[core].state, 1, __ATOMIC_RELEASE);
	for (;;) {
		int st = __atomic_load_n(&mail[core].state, __ATOMIC_ACQUIRE), posted = 1;

		if (st == 3)
			break;
		if (st == 1 && !__atomic_load_n(&core_live[core], __ATOMIC_ACQUIRE) &&
		    __atomic_compare_exchange_n(&mail[core].state, &posted, 2, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
			fn(arg);	/* the core's thread is gone: nothing else writes there */
			break;
		}
		sleep_us(100);
	}
	__atomic_store_n(&mail[core].state, 0, __ATOMIC_RELEASE);
}

/* A barrier the cores wait at while still answering their mailbox (main passes core -1). */
static int cb_count, cb_gen;

static void core_barrier(int core, int parties)
{
	int gen = __atomic_load_n(&cb_gen, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&cb_count, 1, __ATOMIC_ACQ_REL) == parties) {
		__atomic_store_n(&cb_count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&cb_gen, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&cb_gen, __ATOMIC_ACQUIRE) == gen) {
		if (core >= 0)
			core_poll(core);
		sched_yield();
	}
}

static void *core_main(void *arg)
{
	int core = (int)(intptr_t)arg;

	shim_set_core(core);
	__atomic_store_n(&core_live[core], 1, __ATOMIC_RELEASE);
	if (plat.body)
		plat.body(core);
	core_poll(core);
	__atomic_store_n(&core_live[core], 0, __ATOMIC_RELEASE);
	return NULL;
}

static int hook_start(uint32_t hz, uint32_t source)
{
	if (source != OPF_SRC_TIMER && source != OPF_SRC_NMI)
		return -ENODEV;
	for (int i = 0; i < MAXC; i++)
		plat.hz[i] = hz;
	if (plat.start_fail) {
		int rc = plat.start_fail;

		plat.start_fail = 0;
		return rc;
	}
	for (int i = 0; i < plat.ncores; i++)
		pthread_create(&plat.th[i], NULL, core_main, (void *)(intptr_t)i);
	plat.running = 1;
	return 0;
}

static void hook_stop(void)
{
	if (!plat.running)
		return;
	for (int i = 0; i < plat.ncores; i++)
		pthread_join(plat.th[i], NULL);
	plat.running = 0;
}

static void hook_threads(oprof_thread_fn fn, void *arg)
{
	static const char *names[NSTART] = {
		"idle", "shell", "worker", "a-thread-with-a-very-long-name-over-32", "x",
	};

	for (int i = 0; i < NSTART; i++)
		fn(arg, TID_START + (uint32_t)i, i % plat.ncores, names[i]);
}

/* On the core's own thread, from inside its tick. */
static void hook_set_rate(int core, uint32_t hz)
{
	if (core != core_id() || core < 0 || core >= MAXC) {
		__atomic_add_fetch(&plat.bad_rate_calls, 1, __ATOMIC_RELAXED);
		return;
	}
	__atomic_store_n(&plat.hz[core], hz, __ATOMIC_RELAXED);
	plat.set_rates[core]++;
}

static const struct oprof_hooks hooks = {
	.start_sampling = hook_start,
	.stop_sampling = hook_stop,
	.foreach_thread = hook_threads,
	.set_rate = hook_set_rate,
	.on_core = hook_on_core,
};

/* ---- the worker thread (lives for the whole program) ---- */

static int worker_exit;

static void *worker_main(void *arg)
{
	(void)arg;
	shim_set_core(0);
	while (!__atomic_load_n(&worker_exit, __ATOMIC_RELAXED)) {
		oprof_worker_wait();
		oprof_worker_pass();
	}
	return NULL;
}

/* ---- ctl helpers ---- */

static int ctl(const char *line)
{
	char err[256];
	int rc = oprof_ctl(line, err, sizeof(err));

	if (rc < 0)
		fail("ctl '%s' failed: %d %s", line, rc, err);
	return rc;
}

/* Expect line to fail with rc and an error containing want. */
static void ctl_refused(const char *line, int rc_want, const char *want)
{
	char err[256];
	int rc = oprof_ctl(line, err, sizeof(err));

	CHECK(rc == rc_want, "ctl '%s': rc %d, want %d (%s)", line, rc, rc_want, err);
	CHECK(strstr(err, want) != NULL, "ctl '%s': error '%s' lacks '%s'", line, err, want);
	CHECK(strncmp(err, "oprofile: ", 10) == 0, "ctl '%s': error '%s' lacks prefix", line, err);
}

/* The value of one stat line, as text ("" if missing). */
static const char *stat_str(const char *name)
{
	static char buf[1 << 16], val[64];
	size_t n = oprof_stat_text(buf, sizeof(buf)), len = strlen(name);

	CHECK(n < sizeof(buf), "stat text too long: %zu", n);
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ') {
			sscanf(p + len + 1, "%63s", val);
			return val;
		}
	fail("stat: no %s", name);
	return "";
}

static uint64_t stat_value(const char *name)
{
	return strtoull(stat_str(name), NULL, 10);
}

static uint64_t stat_cpu(int core, const char *what)
{
	char name[48];

	snprintf(name, sizeof(name), "cpu%d.%s", core, what);
	return stat_value(name);
}

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

static unsigned depth_of(uint64_t seq) { return (unsigned)(seq % 21); }
static unsigned nmi_depth_of(uint64_t seq) { return (unsigned)(seq % 9); }
static bool corrupt_of(uint64_t seq) { return seq % 7 == 3 && depth_of(seq) > 0; }
static bool idle_of(uint64_t seq) { return seq % 11 == 0; }

/* Build seq's frame chain in st and take one tick with it. */
static void tick(int core, uint64_t seq, uintptr_t *st)
{
	unsigned d = depth_of(seq);
	struct oprof_tick t = {
		.tsc = tsc_read() - (uint64_t)__atomic_load_n(&plat.backdate, __ATOMIC_RELAXED),
		.pc = PC(core, seq),
		.fp = d ? (uintptr_t)st : 0,
		.stack_lo = (uintptr_t)st, .stack_hi = (uintptr_t)(st + STACK_WORDS),
		.tid = 1000 + (uint32_t)core, .flags = idle_of(seq) ? OPF_F_IDLE : 0,
		.core = (uint16_t)core,
	};

	for (unsigned i = 0; i < d; i++) {
		st[2 * i] = i + 1 < d ? (uintptr_t)&st[2 * i + 2] : 0;
		st[2 * i + 1] = RET(core, seq, i);
	}
	if (corrupt_of(seq))	/* misaligned, but above: the walk must stop there */
		st[2 * d - 2] = (uintptr_t)&st[2 * d] + 4;
	oprof_tick_irq(&t);
	plat.ticks[core]++;
	core_poll(core);
}

/*
 * Injected NMIs: at the hot path's NMI points (internal.h) on a core thread that enabled
 * them, one point in every nmi_every lands a sampling "NMI" on the same core, with its
 * own stack and pc pattern, exactly as a real NMI would re-enter oprof_tick_irq.
 */
static __thread int nmi_core = -1, nmi_in, nmi_count;
static int nmi_every = 3;
static uint64_t nmi_ticks[MAXC], nmi_seqs[MAXC];

static void nmi_land(void)
{
	uintptr_t st[STACK_WORDS];
	int core = nmi_core;
	uint64_t seq;
	unsigned d;

	if (core < 0 || nmi_in || ++nmi_count % nmi_every)
		return;
	nmi_in = 1;
	seq = ++nmi_seqs[core];
	d = nmi_depth_of(seq);
	for (unsigned i = 0; i < d; i++) {
		st[2 * i] = i + 1 < d ? (uintptr_t)&st[2 * i + 2] : 0;
		st[2 * i + 1] = NRET(core, seq, i);
	}
	struct oprof_tick t = {
		.tsc = tsc_read(), .pc = NPC(core, seq), .fp = d ? (uintptr_t)st : 0,
		.stack_lo = (uintptr_t)st, .stack_hi = (uintptr_t)(st + STACK_WORDS),
		.tid = 2000 + (uint32_t)core, .core = (uint16_t)core,
	};
	oprof_tick_irq(&t);
	nmi_ticks[core]++;
	nmi_in = 0;
}

/* ---- stream parser: incremental, so a long stream needs no big buffer ---- */

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

static void ps_sample(struct pstate *ps, const struct opf_sample *s)
{
	unsigned c = s->core;
	uint64_t seq = SEQ_OF(s->pc);

	if (c >= ps->sess.ncores || c >= MAXC) {
		fail("sample of core %u", c);
		return;
	}
	CHECK(s->h.len == opf_sample_len(s->nframes), "sample len %u for %u frames", s->h.len,
	      s->nframes);
	CHECK(s->nframes <= ps->sess.depth, "sample has %u frames, depth %u", s->nframes,
	      ps->sess.depth);
	ps->samples[c]++;
	ps->trunc[c] += (s->h.flags & OPF_F_TRUNCATED) != 0;
	ps->depth[c] += (s->h.flags & OPF_F_DEPTH) != 0;
	CHECK(ps->in_block && ps->blk_core == c, "core %u sample outside its own block", c);
	ps->blk_samples++;
	CHECK(s->tsc >= ps->last_tsc[c], "core %u tsc went back", c);
	ps->last_tsc[c] = s->tsc;
	if (!ps->checkframes)
		return;
	CHECK(CORE_OF(s->pc) == c, "core %u sample has pc of core %lu", c,
	      (unsigned long)CORE_OF(s->pc));
	if (s->pc & NMI_TAG) {	/* an NMI's: its own order, tid and frames */
		unsigned want = MIN(nmi_depth_of(seq), ps->sess.depth);

		CHECK(seq > ps->last_nseq[c], "core %u: NMI sample %lu after %lu", c,
		      (unsigned long)seq, (unsigned long)ps->last_nseq[c]);
		ps->last_nseq[c] = seq;
		ps->nmi_samples[c]++;
		CHECK(s->tid == 2000 + c && s->nframes == want, "core %u NMI sample %lu: tid %u, "
		      "%u frames", c, (unsigned long)seq, s->tid, s->nframes);
		for (unsigned i = 0; i < s->nframes && i < want; i++)
			CHECK(s->frames[i] == NRET(c, seq, i), "core %u NMI sample %lu frame %u",
			      c, (unsigned long)seq, i);
		return;
	}
	CHECK(seq > ps->last_seq[c], "core %u: seq %lu after %lu", c, (unsigned long)seq,
	      (unsigned long)ps->last_seq[c]);
	CHECK(seq < ps->seq_lo[c] || seq >= ps->seq_hi[c], "core %u: sample %lu while paused", c,
	      (unsigned long)seq);
	if (ps->snapcheck && ps->in_snap) {
		if (!ps->snap_samples[c]) {
			ps->gap[c] += seq - ps->last_seq[c] - 1;
			ps->snap_first[c] = seq;
		} else {
			CHECK(seq == ps->last_seq[c] + 1, "core %u: dump %lu has a hole at %lu", c,
			      (unsigned long)ps->snap_seq, (unsigned long)seq);
		}
		ps->snap_samples[c]++;
		ps->snap_last[c] = seq;
	}
	ps->last_seq[c] = seq;
	CHECK(s->tid == 1000 + c, "tid %u on core %u", s->tid, c);
	CHECK(!!(s->h.flags & OPF_F_IDLE) == idle_of(seq), "idle flag of %lu", (unsigned long)seq);
	unsigned want = MIN(depth_of(seq), ps->sess.depth);
	bool wtrunc = corrupt_of(seq) && depth_of(seq) < ps->sess.depth;
	CHECK(s->nframes == want, "core %u seq %lu: %u frames, want %u", c, (unsigned long)seq,
	      s->nframes, want);
	CHECK(!!(s->h.flags & OPF_F_TRUNCATED) == wtrunc, "core %u seq %lu: truncated flag %d",
	      c, (unsigned long)seq, !!(s->h.flags & OPF_F_TRUNCATED));
	for (unsigned i = 0; i < s->nframes && i < want; i++)
		if (s->frames[i] != RET(c, seq, i)) {
			fail("core %u seq %lu frame %u wrong", c, (unsigned long)seq, i);
			break;
		}
}

/* Mark seq seen in v (n entries, grown as needed); false if it was already. */
static bool seq_mark(uint8_t **v, uint64_t *n, uint64_t seq)
{
	if (seq >= *n) {
		uint64_t m = MAX(seq + 1, *n * 2);

		*v = realloc(*v, m);
		memset(*v + *n, 0, m - *n);
		*n = m;
	}
	if ((*v)[seq])
		return false;
	(*v)[seq] = 1;
	return true;
}

/* The block that ends here (at stream offset ps->off): its header told the truth. */
static void ps_block_end(struct pstate *ps)
{
	if (!ps->in_block)
		return;
	CHECK(ps->off - ps->blk_start == ps->blk_bytes, "block of writer %u at %lu: %lu bytes, "
	      "header says %lu", ps->blk_core, (unsigned long)ps->blk_start,
	      (unsigned long)(ps->off - ps->blk_start), (unsigned long)ps->blk_bytes);
	CHECK(ps->blk_samples == ps->blk_want_samples, "block of writer %u: %lu samples, header "
	      "says %lu", ps->blk_core, (unsigned long)ps->blk_samples,
	      (unsigned long)ps->blk_want_samples);
	ps->in_block = false;
}

static void ps_block(struct pstate *ps, const struct opf_block *b)
{
	unsigned w = b->core == OPF_CORE_STREAM ? MAXC : b->core;

	if ((b->h.flags & OPF_B_PARTIAL) && ps->in_block && ps->blk_core == b->core &&
	    ps->resumed) {
		/* the rest of the block the last reader began: one block with what came before */
		CHECK(b->samples == ps->blk_want_samples - ps->blk_samples &&
		      b->bytes - BLK_HDR_HOST == ps->blk_bytes - (ps->off - ps->blk_start),
		      "the rest of block %lu says %u samples and %u bytes", (unsigned long)b->seq,
		      b->samples, b->bytes);
		ps->blk_start += BLK_HDR_HOST;	/* this header is not part of the original */
		ps->extra += BLK_HDR_HOST;
		return;
	}
	ps_block_end(ps);
	CHECK(b->h.len == sizeof(*b), "block header of %u bytes", b->h.len);
	if (w > MAXC || (w < MAXC && w >= ps->sess.ncores)) {
		fail("block of core %u", b->core);
		return;
	}
	ps->in_block = true;
	ps->blk_core = b->core;
	ps->blk_start = ps->off;
	ps->blk_bytes = b->bytes;
	ps->blk_samples = 0;
	ps->blk_want_samples = b->samples;
	CHECK(w < MAXC || b->samples == 0, "the kernel's own block says %u samples", b->samples);
	CHECK(!(b->h.flags & OPF_B_PARTIAL) || ps->resumed,
	      "a partial block in a stream that did not resume");
	if (!seq_mark(&ps->seqs[w], &ps->nseqs[w], b->seq))
		fail("writer %u: block %lu twice", w, (unsigned long)b->seq);
	ps->max_seq[w] = MAX(ps->max_seq[w], b->seq + 1);
}

static void ps_record(struct pstate *ps, const struct opf_rec *r)
{
	if (ps->continuing) {	/* a resumed reader's repeat of the header */
		const struct opf_session *s = (const void *)r;

		CHECK(r->type == OPF_SESSION && (s->flags & OPF_S_RESUMED) &&
		      s->session_id == ps->sess.session_id, "resumed reader: no repeated header");
		ps->continuing = false;
		ps->resumed = true;
		ps->blk_start += r->len;
		ps->extra += r->len;
		return;
	}
	if (!ps->have_session) {
		const struct opf_session *s = (const void *)r;

		if (r->type != OPF_SESSION || r->len < OPF_SESSION_V1_LEN || s->magic != OPF_MAGIC ||
		    s->version < OPF_VERSION_MIN || s->version > OPF_VERSION) {
			fail("stream does not start with a session header (type %u)", r->type);
			return;
		}
		memset(&ps->sess, 0, sizeof(ps->sess));
		memcpy(&ps->sess, s, MIN((size_t)r->len, sizeof(ps->sess)));
		CHECK(s->version == OPF_VERSION && r->len == sizeof(*s), "session v%u of %u bytes",
		      s->version, r->len);
		ps->have_session = true;
		ps->resumed = s->flags & OPF_S_RESUMED;
		return;
	}
	if (r->type == OPF_BLOCK) {
		ps_block(ps, (const void *)r);
		return;
	}
	CHECK(ps->in_block, "record type %u outside any block", r->type);
	CHECK(!ps->have_end, "record type %u after the session end", r->type);
	switch (r->type) {
	case OPF_SAMPLE:
		ps->samples_outside += !ps->in_snap;
		ps_sample(ps, (const void *)r);
		break;
	case OPF_SNAPSHOT: {
		const struct opf_snapshot *sn = (const void *)r;

		if (sn->h.flags & OPF_SNAP_BEGIN) {
			CHECK(!ps->in_snap && sn->seq == ps->snap_seq + 1, "snapshot begin %lu after %lu",
			      (unsigned long)sn->seq, (unsigned long)ps->snap_seq);
			ps->in_snap = true;
			ps->snap_seq = sn->seq;
			ps->snap_begins++;
			memset(ps->snap_samples, 0, sizeof(ps->snap_samples));
		} else {
			CHECK(ps->in_snap && sn->seq == ps->snap_seq && (sn->h.flags & OPF_SNAP_END),
			      "snapshot end %lu", (unsigned long)sn->seq);
			ps->in_snap = false;
			ps->snap_ends++;
			for (int c = 0; c < MAXC && ps->snap_seq < 64; c++)
				ps->dump_last[ps->snap_seq][c] = ps->snap_samples[c] ?
					ps->snap_last[c] : 0;
		}
		break;
	}
	case OPF_THROTTLE: {
		const struct opf_throttle *t = (const void *)r;

		if (t->core >= MAXC) {
			fail("throttle of core %u", t->core);
			break;
		}
		/* halved, or doubled back up to the session's rate */
		CHECK((t->new_hz == t->old_hz / 2 ||
		       t->new_hz == MIN(t->old_hz * 2, ps->sess.hz)) && t->new_hz != t->old_hz &&
		      t->budget_pct > 0 && t->budget_pct < 100,
		      "throttle %u -> %u Hz, budget %u", t->old_hz, t->new_hz, t->budget_pct);
		CHECK(t->old_hz == (ps->rate_changes[t->core] ? ps->thr_hz[t->core] : ps->sess.hz),
		      "core %u throttled from %u Hz", t->core, t->old_hz);
		if (t->new_hz < t->old_hz)
			ps->throttles[t->core]++;
		ps->rate_changes[t->core]++;
		ps->thr_hz[t->core] = t->new_hz;
		break;
	}
	case OPF_THREAD: {
		const struct opf_thread *t = (const void *)r;

		CHECK(r->len == opf_thread_len(t->namelen) && t->namelen <= OPF_MAX_NAME,
		      "thread record len %u namelen %u", r->len, t->namelen);
		if (t->tid >= TID_NEW && t->core < MAXC)
			ps->threads_new[t->core]++;
		else if (ps->in_snap)
			ps->threads_snap++;
		else
			ps->threads_start++;
		break;
	}
	case OPF_LOST: {
		const struct opf_lost *l = (const void *)r;

		CHECK(l->core < ps->sess.ncores && l->reason < OPF_LOST_NREASONS && l->count &&
		      l->reason != OPF_LOST_OUTPUT_FULL,
		      "bad lost record core %u reason %u", l->core, l->reason);
		if (l->core < MAXC && l->reason < OPF_LOST_NREASONS)
			ps->lostrec[l->core][l->reason] += l->count;
		break;
	}
	case OPF_CORE_END: {
		const struct opf_core_end *e = (const void *)r;

		CHECK(e->core < ps->sess.ncores && !ps->core_end_seen[e->core], "core end %u", e->core);
		if (e->core < MAXC) {
			ps->core_end_seen[e->core] = true;
			memset(&ps->ce[e->core], 0, sizeof(*e));
			memcpy(&ps->ce[e->core], e, MIN((size_t)r->len, sizeof(*e)));
		}
		break;
	}
	case OPF_DROP: {
		const struct opf_drop *d = (const void *)r;

		CHECK(d->core < ps->sess.ncores && d->core < MAXC && d->blocks, "bad drop record");
		if (d->core >= MAXC)
			break;
		ps->drop_samples[d->core] += d->samples;
		if (d->h.flags & OPF_D_UNLISTED) {
			ps->unlisted[d->core] += d->blocks;
			break;
		}
		ps->dropped[d->core] += d->blocks;
		for (uint64_t i = 0; i < d->blocks; i++)
			if (!seq_mark(&ps->drop_seqs[d->core], &ps->ndrop_seqs[d->core], d->seq + i))
				fail("core %u: block %lu dropped twice", d->core,
				     (unsigned long)(d->seq + i));
		break;
	}
	case OPF_SESSION_END:
		memset(&ps->send, 0, sizeof(ps->send));
		memcpy(&ps->send, r, MIN((size_t)r->len, sizeof(ps->send)));
		ps->have_end = true;
		ps->discarded = ps->send.h.flags & OPF_SE_DISCARDED;
		ps->end_off = ps->off;
		break;
	case OPF_PAUSE:
	case OPF_RESUME: {
		const struct opf_mark *m = (const void *)r;

		CHECK(r->len == sizeof(*m) && m->core < ps->sess.ncores && m->core < MAXC &&
		      ps->blk_core == m->core, "mark of core %u in a block of %u", m->core,
		      ps->blk_core);
		if (m->core < MAXC) {
			/* marks alternate, and sit in time order with the core's samples */
			CHECK(r->type == OPF_PAUSE ? ps->pauses[m->core] == ps->resumes[m->core] :
			      ps->pauses[m->core] == ps->resumes[m->core] + 1, "core %u: marks out "
			      "of turn", m->core);
			CHECK(m->tsc >= ps->last_tsc[m->core], "core %u: mark before its sample",
			      m->core);
			ps->last_tsc[m->core] = m->tsc;
			(r->type == OPF_PAUSE ? ps->pauses : ps->resumes)[m->core]++;
		}
		break;
	}
	default:
		fail("unexpected record type %u", r->type);
	}
}

static void ps_feed(struct pstate *ps, const void *data, size_t n)
{
	size_t pos = 0;

	if (ps->len + n > ps->cap) {
		ps->cap = (ps->len + n) * 2;
		ps->buf = realloc(ps->buf, ps->cap);
	}
	memcpy(ps->buf + ps->len, data, n);
	ps->len += n;
	while (ps->len - pos >= sizeof(struct opf_rec)) {
		struct opf_rec r;

		memcpy(&r, ps->buf + pos, sizeof(r));
		if (r.len < sizeof(r) || r.len % 8 || r.len > OPF_MAX_REC) {
			fail("bad record length %u at offset %lu", r.len, (unsigned long)ps->off);
			ps->len = 0;
			return;
		}
		if (ps->len - pos < r.len)
			break;
		/* copy out so the record is aligned for the casts in ps_record */
		uint64_t rec[OPF_MAX_REC / 8 / 64];
		if (r.len > sizeof(rec)) {
			fail("record of %u bytes", r.len);
			ps->len = 0;
			return;
		}
		memcpy(rec, ps->buf + pos, r.len);
		ps_record(ps, (const struct opf_rec *)rec);
		pos += r.len;
		ps->off += r.len;
	}
	memmove(ps->buf, ps->buf + pos, ps->len - pos);
	ps->len -= pos;
}

/*
 * Core c's blocks, from the stream alone against its closing record: every seq below
 * e->blocks is in the stream once, or named by an OPF_DROP, or one of the blocks the core
 * says it could not name (unlisted drops, flight-recorder reuse).
 */
static void ps_blocks_check(struct pstate *ps, unsigned c, const struct opf_core_end *e)
{
	uint64_t seen = 0, named = 0, gaps = 0;

	for (uint64_t s = 0; s < e->blocks; s++) {
		bool in = s < ps->nseqs[c] && ps->seqs[c][s];
		bool dropped = s < ps->ndrop_seqs[c] && ps->drop_seqs[c][s];

		CHECK(!(in && dropped), "core %u: block %lu both in the stream and dropped", c,
		      (unsigned long)s);
		seen += in;
		named += dropped && !in;
		gaps += !in && !dropped;
	}
	CHECK(ps->max_seq[c] <= e->blocks, "core %u: block %lu past the %lu it pushed", c,
	      (unsigned long)ps->max_seq[c], (unsigned long)e->blocks);
	CHECK(named == ps->dropped[c] && named + ps->unlisted[c] == e->blocks_dropped &&
	      ps->unlisted[c] == e->blocks_unlisted, "core %u: %lu + %lu unlisted drops named, "
	      "core end says %lu (%lu unlisted)", c, (unsigned long)named,
	      (unsigned long)ps->unlisted[c], (unsigned long)e->blocks_dropped,
	      (unsigned long)e->blocks_unlisted);
	ps->unexplained += gaps - MIN(gaps, e->blocks_unlisted + e->blocks_overwritten);
	CHECK(ps->expect_gap || gaps == e->blocks_unlisted + e->blocks_overwritten,
	      "core %u: %lu blocks missing with no reason (unlisted %lu, overwritten %lu)", c,
	      (unsigned long)(gaps - MIN(gaps, e->blocks_unlisted + e->blocks_overwritten)),
	      (unsigned long)e->blocks_unlisted, (unsigned long)e->blocks_overwritten);
}

/* The whole stream is in: conservation, totals and the end records. */
static void ps_verify(struct pstate *ps, const uint64_t *ticks)
{
	ps_block_end(ps);
	CHECK(ps->have_session, "no session header");
	CHECK(ps->have_end, "no session end");
	CHECK(ps->len == 0, "%zu trailing bytes", ps->len);
	if (!ps->have_session || !ps->have_end)
		return;
	CHECK(ps->send.bytes == ps->end_off - ps->extra, "session end says %lu bytes, saw %lu",
	      (unsigned long)ps->send.bytes, (unsigned long)(ps->end_off - ps->extra));
	for (uint64_t s = 0; s < ps->max_seq[MAXC]; s++)
		CHECK(ps->seqs[MAXC][s], "the kernel's own block %lu is missing", (unsigned long)s);
	CHECK(ps->threads_start == NSTART, "%lu start threads", (unsigned long)ps->threads_start);
	CHECK(!ps->in_snap && ps->snap_begins == ps->snap_ends, "unfinished snapshot dump");
	CHECK(ps->threads_snap == ps->snap_begins * NSTART, "%lu thread names in %lu dumps",
	      (unsigned long)ps->threads_snap, (unsigned long)ps->snap_begins);
	CHECK(!(ps->sess.flags & OPF_S_SNAPSHOT) || ps->samples_outside == 0,
	      "flight recorder: %lu samples outside dumps", (unsigned long)ps->samples_outside);
	for (unsigned c = 0; c < ps->sess.ncores && c < MAXC; c++) {
		const struct opf_core_end *e = &ps->ce[c];
		uint64_t lost = 0;

		CHECK(ps->core_end_seen[c], "no core end for core %u", c);
		for (int r = 0; r < OPF_LOST_NREASONS; r++) {
			uint64_t told = r == OPF_LOST_OUTPUT_FULL ? ps->drop_samples[c] :
				ps->lostrec[c][r];

			lost += e->lost[r];
			CHECK(told == e->lost[r], "core %u reason %d: records %lu, end %lu",
			      c, r, (unsigned long)told, (unsigned long)e->lost[r]);
		}
		ps_blocks_check(ps, c, e);
		CHECK(ps->expect_gap || e->depth_cut == ps->depth[c], "core %u: depth cut %lu, "
		      "stream has %lu", c, (unsigned long)e->depth_cut, (unsigned long)ps->depth[c]);
		CHECK(e->taken == e->delivered + lost + e->overwritten,
		      "core %u: taken %lu != delivered %lu + lost %lu + overwritten %lu", c,
		      (unsigned long)e->taken, (unsigned long)e->delivered, (unsigned long)lost,
		      (unsigned long)e->overwritten);
		CHECK(e->throttles == ps->throttles[c], "core %u: %lu throttles, stream has %lu", c,
		      (unsigned long)e->throttles, (unsigned long)ps->throttles[c]);
		CHECK(e->final_hz == (ps->rate_changes[c] ? ps->thr_hz[c] : ps->sess.hz),
		      "core %u: final_hz %u", c, e->final_hz);
		if (ps->snapcheck)
			CHECK(ps->gap[c] == e->overwritten + lost,
			      "core %u: %lu samples between dumps, overwritten %lu + lost %lu", c,
			      (unsigned long)ps->gap[c], (unsigned long)e->overwritten,
			      (unsigned long)lost);
		CHECK(ps->expect_gap || e->delivered == ps->samples[c], "core %u: delivered %lu, "
		      "stream has %lu", c, (unsigned long)e->delivered,
		      (unsigned long)ps->samples[c]);
		CHECK(ps->expect_gap || e->truncated == ps->trunc[c], "core %u: truncated %lu, "
		      "stream has %lu", c, (unsigned long)e->truncated, (unsigned long)ps->trunc[c]);
		if (ticks)
			CHECK(e->taken == ticks[c], "core %u: taken %lu, ticked %lu", c,
			      (unsigned long)e->taken, (unsigned long)ticks[c]);
	}
}

static void ps_free(struct pstate *ps)
{
	free(ps->buf);
	for (int w = 0; w <= MAXC; w++)
		free(ps->seqs[w]);
	for (int c = 0; c < MAXC; c++)
		free(ps->drop_seqs[c]);
}

/* ---- reader thread ---- */

struct reader {
	pthread_t th;
	struct pstate ps;
	long delay_us;		/* before the first read */
	bool wait_drop;		/* before the first read, wait until the worker drops a block */
	long pace_us;		/* between reads: a slow reader */
	bool opened;		/* the caller already opened the device */
	uint64_t bytes;
};

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	static __thread char buf[9000];
	unsigned seed = 12345;
	long n;

	if (!r->opened && oprof_open() < 0) {
		fail("reader: open failed");
		return NULL;
	}
	if (r->delay_us)
		sleep_us(r->delay_us);
	for (uint64_t t0 = now_ms(); r->wait_drop && now_ms() - t0 < 10000; sleep_us(1000)) {
		static __thread char st[1 << 16];
		char *p;

		oprof_stat_text(st, sizeof(st));
		if ((p = strstr(st, "\nblocks_dropped ")) && strtoull(p + 16, NULL, 10) > 0)
			break;
	}
	while ((n = oprof_read(buf, 1 + rand_r(&seed) % sizeof(buf))) > 0) {
		ps_feed(&r->ps, buf, (size_t)n);
		r->bytes += (uint64_t)n;
		if (r->pace_us)
			sleep_us(r->pace_us);
	}
	CHECK(n == 0, "read returned %ld", n);
	CHECK(oprof_read(buf, sizeof(buf)) == 0, "read after EOF is not EOF");
	oprof_close();
	return NULL;
}

static void reader_start(struct reader *r)
{
	pthread_create(&r->th, NULL, reader_main, r);
}

static void reader_join(struct reader *r, const uint64_t *ticks)
{
	pthread_join(r->th, NULL);
	ps_verify(&r->ps, ticks);
	ps_free(&r->ps);
}

/* ---- leak baseline ---- */

static uint64_t base_blocks;
static long base_allocs;

static void check_no_leak(const char *when)
{
	CHECK(block_count() == base_blocks, "%s: %lu blocks live, baseline %lu", when,
	      (unsigned long)block_count(), (unsigned long)base_blocks);
	CHECK(shim_live_allocs() == base_allocs, "%s: %ld allocations live, baseline %ld", when,
	      shim_live_allocs(), base_allocs);
}

/* Also: no overhead budget (a host thread's timing is not a test's to rely on). */
static void setup(int ncores, void (*body)(int))
{
	char err[128];

	plat.ncores = ncores;
	plat.body = body;
	plat.backdate = 0;
	memset(plat.ticks, 0, sizeof(plat.ticks));
	memset(plat.set_rates, 0, sizeof(plat.set_rates));
	shim_set_ncpus(ncores);
	if (oprof_ctl("budget 100", err, sizeof(err)) < 0)
		fail("budget 100: %s", err);
}

/* ---- subtests ---- */

/* The walker on chains built in exactly sized heap buffers (ASan sees any stray read). */
static void test_backtrace(void)
{
	enum { W = 32 };
	uintptr_t *st = malloc(W * sizeof(uintptr_t));
	uintptr_t lo = (uintptr_t)st, hi = (uintptr_t)(st + W);
	uint64_t fr[OPF_MAX_DEPTH];
	bool tr, more;
	unsigned n;

	/* a clean chain of 10 frames ending in fp 0 */
	for (int i = 0; i < 10; i++) {
		st[2 * i] = i < 9 ? (uintptr_t)&st[2 * i + 2] : 0;
		st[2 * i + 1] = 0x1000 + (uintptr_t)i;
	}
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECK(n == 10 && !tr && !more, "clean chain: n %u tr %d more %d", n, tr, more);
	for (unsigned i = 0; i < n; i++)
		CHECK(fr[i] == 0x1000 + i, "frame %u", i);
	n = oprof_backtrace(lo, lo, hi, fr, 4, &tr, &more);
	CHECK(n == 4 && !tr && more, "depth limit: n %u tr %d more %d (cut by the depth, not "
	      "truncated)", n, tr, more);
	n = oprof_backtrace(lo, lo, hi, fr, 10, &tr, &more);
	CHECK(n == 10 && !tr && !more, "depth = chain length: n %u more %d", n, more);
	n = oprof_backtrace(lo, lo, hi, fr, 0, &tr, &more);
	CHECK(n == 0 && !tr && more, "depth 0: the whole chain was left out");
	n = oprof_backtrace(0, lo, hi, fr, 64, &tr, &more);
	CHECK(n == 0 && !tr, "fp 0 is a clean end");

	/* bad starting points: nothing may be read */
	const uintptr_t bad[] = { lo + 4, lo - 8, lo - 16, hi - 8, hi, hi + 8, 8, UINTPTR_MAX - 7,
				  UINTPTR_MAX & ~(uintptr_t)7 };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		n = oprof_backtrace(bad[i], lo, hi, fr, 64, &tr, &more);
		CHECK(n == 0 && tr, "bad fp #%zu: n %u tr %d", i, n, tr);
	}
	n = oprof_backtrace(UINTPTR_MAX - 15, UINTPTR_MAX - 15, UINTPTR_MAX, fr, 64, &tr, &more);
	CHECK(n == 0 && tr, "stack at the top of the address space");
	n = oprof_backtrace(lo, hi, lo, fr, 64, &tr, &more);
	CHECK(n == 0 && tr, "inverted bounds");
	n = oprof_backtrace(lo, lo, lo + 8, fr, 64, &tr, &more);
	CHECK(n == 0 && tr, "stack smaller than a frame");

	/* the last frame that fits exactly ends at hi */
	st[W - 2] = 0;
	st[W - 1] = 0x77;
	n = oprof_backtrace(hi - 16, lo, hi, fr, 64, &tr, &more);
	CHECK(n == 1 && !tr && fr[0] == 0x77, "frame ending at hi");

	/* cycle: frame 3 points back to frame 0 */
	st[6] = (uintptr_t)&st[0];
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECK(n == 4 && tr, "cycle: n %u tr %d", n, tr);
	/* self loop */
	st[0] = (uintptr_t)&st[0];
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECK(n == 1 && tr, "self loop: n %u tr %d", n, tr);
	/* next out of the stack, above it */
	st[0] = hi + 64;
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECK(n == 1 && tr, "escape above: n %u tr %d", n, tr);
	/* next straddling hi */
	st[0] = hi - 8;
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECK(n == 1 && tr, "straddle hi: n %u tr %d", n, tr);
	/* misaligned next */
	st[0] = (uintptr_t)&st[2] + 3;
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECK(n == 1 && tr, "misaligned: n %u tr %d", n, tr);
	/* zero return address ends the chain cleanly */
	st[0] = (uintptr_t)&st[2];
	st[3] = 0;
	n = oprof_backtrace(lo, lo, hi, fr, 64, &tr, &more);
	CHECK(n == 1 && !tr, "zero return: n %u tr %d", n, tr);

	/* random garbage, random starts, random bounds inside the buffer */
	unsigned seed = 99;
	for (int it = 0; it < 200000; it++) {
		int a = rand_r(&seed) % W, b = rand_r(&seed) % (W + 1);
		uintptr_t l = (uintptr_t)(st + MIN(a, b)), h = (uintptr_t)(st + MAX(a, b));

		for (int k = 0; k < 4; k++) {
			int w = rand_r(&seed) % W;
			int kind = rand_r(&seed) % 4;

			st[w] = kind == 0 ? (uintptr_t)(st + rand_r(&seed) % (W + 4)) - 16 :
				kind == 1 ? (uintptr_t)st + (uintptr_t)(rand_r(&seed) % (W * 8 + 64)) :
				kind == 2 ? 0 : (uintptr_t)rand_r(&seed) * 0x10001u;
		}
		n = oprof_backtrace((uintptr_t)st + (uintptr_t)(rand_r(&seed) % (W * 8 + 32)) - 16,
				    l, h, fr, 1 + rand_r(&seed) % 64, &tr, &more);
		CHECK(n <= (unsigned)W / 2, "garbage walk returned %u frames", n);
	}
	free(st);
	verdict("backtrace: walker stays in bounds (corrupt chains, cycles, misaligned, fuzz)");
}

static void body_none(int core) { (void)core; }

/* Reads a whole stream on the calling thread (the device must be open). */
static void drain_stream(struct pstate *ps)
{
	static char buf[4096];
	long n;

	while ((n = oprof_read(buf, sizeof(buf))) > 0)
		ps_feed(ps, buf, (size_t)n);
	CHECK(n == 0, "read %ld", n);
}

static void test_ctl(void)
{
	struct pstate ps = { 0 };

	setup(2, body_none);
	ctl_refused("start -f 0", -EINVAL, "bad rate 0: must be 1..20000");
	ctl_refused("start -f 20001", -EINVAL, "bad rate 20001");
	ctl_refused("start -f abc", -EINVAL, "bad rate abc");
	ctl_refused("start -d 65", -EINVAL, "bad depth 65: must be 0..64");
	ctl_refused("start -b 100", -EINVAL, "bad block size 100");
	ctl_refused("start -b 1001", -EINVAL, "multiple of 8");
	ctl_refused("start -b 256 -d 64", -EINVAL, "too small for depth 64");
	ctl_refused("start -x 3", -EINVAL, "unknown option -x");
	ctl_refused("start -f", -EINVAL, "missing value after -f");
	ctl_refused("frob", -EINVAL, "unknown command 'frob'");
	ctl_refused("stop now", -EINVAL, "usage: stop");
	ctl_refused("stop", -EINVAL, "not running");
	ctl_refused("pause", -EINVAL, "not running");
	ctl_refused("flush", -EINVAL, "not running");
	ctl_refused("resume", -EINVAL, "not paused");
	ctl_refused("discard", -EINVAL, "nothing to discard");
	ctl_refused("period 0", -EINVAL, "bad period 0");
	ctl_refused("cap 10K", -EINVAL, "bad cap 10K");
	ctl_refused("cap 1X", -EINVAL, "bad cap 1X");
	ctl_refused("emptydepth", -EINVAL, "usage: emptydepth VALUE");
	ctl_refused("start -f 20001", -EINVAL, "raise the limit with 'maxhz N'");
	ctl_refused("start -w 4", -EINVAL, "needs -s");
	ctl_refused("start -s -w 0", -EINVAL, "bad window 0");
	ctl_refused("snapshot", -EINVAL, "not running");
	ctl_refused("snapshot now", -EINVAL, "usage: snapshot");
	ctl_refused("budget 0", -EINVAL, "bad budget 0: must be 1..100");
	ctl_refused("maxhz 100001", -EINVAL, "bad rate limit 100001: must be 20000..100000");
	ctl("maxhz 100000");
	ctl_refused("start -f 100001", -EINVAL, "bad rate 100001: must be 1..100000");
	ctl("hz 100000");
	ctl_refused("maxhz 20000\nx", -EINVAL, "usage");
	ctl("maxhz 20000");
	ctl_refused("start", -EINVAL, "rate 100000 is over the limit 20000");
	ctl("hz 1000");
	CHECK(oprof_ctl("", NULL, 0) == 0 && oprof_ctl("  \n", NULL, 0) == 0, "blank lines");
	ctl("cap 1");
	ctl("period 7");
	ctl("stale 3");
	CHECK(stat_value("outq_cap") == 1u << 20 && stat_value("period_ms") == 7, "settings");
	ctl("cap 64K");
	ctl_refused("start -b 65536", -EINVAL, "too small for block size");
	ctl("cap 64");
	ctl("period 2");

	/* an odd rate, a session, refusals while it runs */
	ctl("start -f 7777 -d 5 -b 1024\n");
	CHECK(stat_value("cpu1.emptyq") == 4, "empty queue filled at start");
	ctl_refused("start", -EBUSY, "already running (stop it first)");
	ctl_refused("period 5", -EBUSY, "cannot change period while running");
	ctl_refused("cap 5", -EBUSY, "while running");
	ctl("pause");
	ctl_refused("pause", -EINVAL, "already paused");
	ctl_refused("stale 5", -EBUSY, "while running");
	ctl("resume");
	ctl_refused("resume", -EINVAL, "not paused");
	ctl("flush");
	ctl_refused("snapshot", -EINVAL, "not in flight-recorder mode");
	ctl("stop");
	CHECK(!strcmp(stat_str("state"), "draining"), "state %s", stat_str("state"));
	ctl_refused("start", -EBUSY, "not read yet");
	ctl("period 3");	/* settings are fine once stopped */

	/* second open is busy; the stream of the stopped session is intact */
	CHECK(oprof_open() == 0, "open");
	CHECK(oprof_open() == -EBUSY, "second open not busy");
	drain_stream(&ps);
	oprof_close();
	ps_verify(&ps, NULL);
	CHECK(ps.sess.hz == 7777 && ps.sess.depth == 5 && ps.sess.block_bytes == 1024 &&
	      ps.sess.ncores == 2 && ps.sess.period_ms == 2 && ps.sess.build_id_len == 20 &&
	      ps.sess.build_id[0] == 0x5e && ps.sess.tsc_hz == tsc_hz(),
	      "session header fields");
	/* no core ticked while paused, so none marked a pause: marks are the cores' own */
	CHECK(ps.pauses[0] + ps.pauses[1] + ps.resumes[0] + ps.resumes[1] == 0,
	      "pause/resume marks without a tick");
	ps_free(&ps);

	/* drained: a new session may start; stopped and discarded, it leaves nothing */
	ctl("start");
	ctl("stop");
	ctl("discard");
	ctl_refused("discard", -EINVAL, "nothing to discard");

	/* a failing timer start leaves the profiler idle and nothing allocated */
	plat.start_fail = -ENOMEM;
	ctl_refused("start", -ENOMEM, "cannot start sampling");
	ctl("start");
	ctl("stop");
	ctl("discard");
	check_no_leak("ctl");
	verdict("ctl: bad options, start twice, settings while running, pause/resume, busy open");
}

/* Stream subtest: a reader opened before start gets the whole stream, then EOF. */
static uint64_t stream_n;

static void body_stream(int core)
{
	uintptr_t st[STACK_WORDS];

	for (uint64_t seq = 1; seq <= stream_n; seq++) {
		tick(core, seq, st);
		if (seq % 997 == 0)
			oprof_thread_created(TID_NEW + (uint32_t)seq, core, "spawned");
	}
}

static void test_stream_eof(void)
{
	for (int round = 0; round < 2; round++) {
		struct reader r = { .ps.checkframes = true };
		uint64_t sid;

		setup(4, body_stream);
		stream_n = 20000;
		CHECK(oprof_open() == 0, "open before start");
		r.opened = true;
		reader_start(&r);
		sleep_us(2000);	/* the reader blocks: nothing to read, idle */
		ctl("cap 64");
		ctl("emptydepth 8");
		ctl("period 2");
		ctl("start -d 16 -b 4096");
		sid = stat_value("session");
		hook_stop();	/* wait for the cores' quota */
		sleep_us(5000);
		ctl("stop");
		reader_join(&r, plat.ticks);
		for (int c = 0; c < 4; c++) {
			CHECK(r.ps.ce[c].lost[OPF_LOST_OUTPUT_FULL] == 0, "output full with a 64M cap");
			CHECK(r.ps.threads_new[c] == stat_cpu(c, "threads") &&
			      stat_cpu(c, "threads") + stat_cpu(c, "threads_lost") == stream_n / 997,
			      "thread records of core %d: stream %lu, written %lu, lost %lu", c,
			      (unsigned long)r.ps.threads_new[c], (unsigned long)stat_cpu(c, "threads"),
			      (unsigned long)stat_cpu(c, "threads_lost"));
		}
		CHECK(r.ps.sess.session_id == sid, "session id");
		CHECK(!strcmp(stat_str("state"), "idle") && stat_value("blocks_alloc") == 0,
		      "idle after EOF");
		check_no_leak("stream");
	}
	verdict("stream: reader before start gets header, threads, samples, closing records, EOF");
}

/* Pause: phase 1 ticks, pause, phase 2 ticks (all lost PAUSED), resume, phase 3. */
static pthread_barrier_t bar;
#define PHASE	3000

static void body_pause(int core)
{
	uintptr_t st[STACK_WORDS];
	uint64_t seq = 1;

	for (int phase = 0; phase < 3; phase++) {
		for (int i = 0; i < PHASE; i++)
			tick(core, seq++, st);
		pthread_barrier_wait(&bar);	/* main pauses or resumes */
		pthread_barrier_wait(&bar);
	}
}

static void test_pause(void)
{
	struct reader r = { .ps.checkframes = true };
	int nc = 3;

	setup(nc, body_pause);
	pthread_barrier_init(&bar, NULL, (unsigned)nc + 1);
	for (int c = 0; c < nc; c++) {
		r.ps.seq_lo[c] = PHASE + 1;
		r.ps.seq_hi[c] = 2 * PHASE + 1;
	}
	reader_start(&r);
	ctl("start -b 2048");
	pthread_barrier_wait(&bar);
	ctl("pause");
	CHECK(!strcmp(stat_str("state"), "paused"), "state %s", stat_str("state"));
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	ctl("resume");
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	ctl("stop");
	reader_join(&r, plat.ticks);
	for (int c = 0; c < nc; c++)
		CHECK(r.ps.ce[c].lost[OPF_LOST_PAUSED] == PHASE, "core %d lost %lu paused", c,
		      (unsigned long)r.ps.ce[c].lost[OPF_LOST_PAUSED]);
	for (int c = 0; c < nc; c++)
		CHECK(r.ps.pauses[c] == 1 && r.ps.resumes[c] == 1, "core %d: %lu pause and %lu "
		      "resume marks (%lu lost, %lu samples found no block)", c,
		      (unsigned long)r.ps.pauses[c], (unsigned long)r.ps.resumes[c],
		      (unsigned long)stat_cpu(c, "marks_lost"),
		      (unsigned long)r.ps.ce[c].lost[OPF_LOST_NO_BLOCK]);
	pthread_barrier_destroy(&bar);
	check_no_leak("pause");
	verdict("pause: no samples while paused, each counted lost PAUSED; resume continues");
}

/* Flush and staleness push partial blocks while the session runs; one tick per step. */
static int fs_go, fs_done[MAXC];

static void body_flush(int core)
{
	uintptr_t st[STACK_WORDS];

	for (int step = 1; step <= 4; step++) {
		while (__atomic_load_n(&fs_go, __ATOMIC_ACQUIRE) < step)
			sleep_us(100);
		tick(core, (uint64_t)step, st);
		__atomic_store_n(&fs_done[core], step, __ATOMIC_RELEASE);
	}
}

static void fs_step(int nc, int step)
{
	__atomic_store_n(&fs_go, step, __ATOMIC_RELEASE);
	for (int c = 0; c < nc; c++)
		while (__atomic_load_n(&fs_done[c], __ATOMIC_ACQUIRE) < step)
			sleep_us(100);
}

static void fs_blocks(int nc, uint64_t want, const char *why)
{
	for (int c = 0; c < nc; c++)
		CHECK(stat_cpu(c, "blocks") == want, "core %d: %lu blocks pushed, want %lu (%s)", c,
		      (unsigned long)stat_cpu(c, "blocks"), (unsigned long)want, why);
}

static void test_flush_stale(void)
{
	struct reader r = { .ps.checkframes = true };
	int nc = 2;
	uint64_t bytes0, t0;

	setup(nc, body_flush);
	fs_go = 0;
	memset(fs_done, 0, sizeof(fs_done));
	reader_start(&r);
	ctl("period 5");
	ctl("stale 4");
	ctl("start -b 65536");
	bytes0 = stat_value("stream_bytes");
	fs_step(nc, 1);
	fs_blocks(nc, 0, "before flush");
	ctl("flush");
	fs_step(nc, 2);
	fs_blocks(nc, 1, "flush honoured at the next tick");
	fs_step(nc, 3);
	fs_blocks(nc, 1, "fresh block");
	sleep_us(30000);	/* past the bound: 4 periods of 5 ms */
	fs_step(nc, 4);
	fs_blocks(nc, 2, "stale block pushed");
	/* the worker forwards them without being asked */
	t0 = now_ms();
	while (stat_value("stream_bytes") - bytes0 < (uint64_t)nc * 4 * opf_sample_len(0) &&
	       now_ms() - t0 < 2000)
		sleep_us(1000);
	CHECK(stat_value("stream_bytes") - bytes0 >= (uint64_t)nc * 4 * opf_sample_len(0),
	      "flushed blocks not forwarded while running");
	ctl("stop");
	reader_join(&r, plat.ticks);
	check_no_leak("flush");
	verdict("flush and staleness push partial blocks while running");
}

/* Stress: many cores, tiny blocks, small cap, shallow empty queues, slow reader. */
struct stress {
	const char *name;
	int ncores;
	uint64_t n;
	const char *start;
	const char *cap, *emptydepth;
	int burst;		/* cores sleep a little every burst ticks (0: never) */
	long pace_us, delay_us;
	bool want_full, want_noblock;
};

static int poll_exit;
static int poll_errors;

static void *stat_poller(void *arg)
{
	static char buf[1 << 16];

	(void)arg;
	while (!__atomic_load_n(&poll_exit, __ATOMIC_RELAXED)) {
		uint64_t alloc = 0, max = 0, outq = 0, cap = 0;
		char state[32] = "";

		oprof_stat_text(buf, sizeof(buf));
		for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			sscanf(p, "blocks_alloc %lu", &alloc);
			sscanf(p, "blocks_max %lu", &max);
			sscanf(p, "outq_bytes %lu", &outq);
			sscanf(p, "outq_cap %lu", &cap);
			sscanf(p, "state %31s", state);
		}
		if (!strcmp(state, "running") && (alloc > max || outq > cap))
			__atomic_add_fetch(&poll_errors, 1, __ATOMIC_RELAXED);
		sleep_us(500);
	}
	return NULL;
}

static uint64_t stress_n;
static int stress_burst;

static void body_stress(int core)
{
	uintptr_t *st = malloc(STACK_WORDS * sizeof(uintptr_t));

	for (uint64_t seq = 1; seq <= stress_n; seq++) {
		tick(core, seq, st);
		if (seq % 5000 == 0)
			oprof_thread_created(TID_NEW + (uint32_t)seq, core, "stress");
		if (stress_burst && seq % (uint64_t)stress_burst == 0)
			sleep_us(50);
	}
	free(st);
}

static void test_stress(const struct stress *s)
{
	struct reader r = { .ps.checkframes = true, .pace_us = s->pace_us, .delay_us = s->delay_us,
			    .wait_drop = s->want_full };
	pthread_t poller;
	char line[64];
	uint64_t full = 0, noblock = 0, delivered = 0, t0 = now_ms();

	setup(s->ncores, body_stress);
	stress_n = s->n;
	stress_burst = s->burst;
	snprintf(line, sizeof(line), "cap %s", s->cap);
	ctl(line);
	snprintf(line, sizeof(line), "emptydepth %s", s->emptydepth);
	ctl(line);
	ctl("period 2");
	ctl("stale 2");
	poll_exit = 0;
	poll_errors = 0;
	pthread_create(&poller, NULL, stat_poller, NULL);
	reader_start(&r);
	ctl(s->start);
	hook_stop();
	ctl("stop");
	reader_join(&r, plat.ticks);
	__atomic_store_n(&poll_exit, 1, __ATOMIC_RELAXED);
	pthread_join(poller, NULL);
	CHECK(poll_errors == 0, "memory over the cap %d times", poll_errors);
	for (int c = 0; c < s->ncores; c++) {
		full += r.ps.ce[c].lost[OPF_LOST_OUTPUT_FULL];
		noblock += r.ps.ce[c].lost[OPF_LOST_NO_BLOCK];
		delivered += r.ps.ce[c].delivered;
	}
	CHECK(!s->want_full || full > 0, "no output-full losses");
	CHECK(!s->want_noblock || noblock > 0, "no no-empty-block losses");
	CHECK(delivered > 0, "nothing delivered");
	for (int c = 0; c < s->ncores; c++) {
		uint64_t made = stat_cpu(c, "threads") + stat_cpu(c, "threads_lost");

		CHECK(made == s->n / 5000, "core %d: %lu thread records made", c, (unsigned long)made);
		CHECK(r.ps.threads_new[c] == stat_cpu(c, "threads") - stat_cpu(c, "threads_dropped"),
		      "core %d: %lu thread records in the stream, %lu written, %lu dropped", c,
		      (unsigned long)r.ps.threads_new[c], (unsigned long)stat_cpu(c, "threads"),
		      (unsigned long)stat_cpu(c, "threads_dropped"));
	}
	check_no_leak("stress");
	printf("    %s: %d cores x %lu samples: delivered %lu, lost no-block %lu, "
	       "output-full %lu; %lu bytes read, %lu ms\n", s->name, s->ncores,
	       (unsigned long)s->n, (unsigned long)delivered, (unsigned long)noblock,
	       (unsigned long)full, (unsigned long)r.bytes, (unsigned long)(now_ms() - t0));
	snprintf(line, sizeof(line), "stress %s: every sample conserved and in order", s->name);
	verdict(line);
}

/*
 * Flight recorder. Phase 1: every core ticks SN1 times and waits (no tick: the snapshot
 * hands the windows over itself, after quiescing); the dump must hold exactly each core's
 * newest samples, SN1 included, contiguous, and everything before them counts overwritten.
 * Phase 2: the cores tick on while the main thread takes snapshots (the cores hand over at
 * their next tick), pauses and resumes; stop dumps the last windows. Every dump is
 * contiguous per core, whatever is between dumps is overwritten or lost (paused), and
 * nothing reaches the stream outside dumps.
 */
#define SN1	5000
#define SNAP_CORES	3
static int snap_go;

static void body_snapshot(int core)
{
	uintptr_t st[STACK_WORDS];
	uint64_t seq = 1;

	for (; seq <= SN1; seq++)
		tick(core, seq, st);
	core_barrier(core, SNAP_CORES + 1);	/* main takes snapshot 1 */
	core_barrier(core, SNAP_CORES + 1);
	while (!__atomic_load_n(&snap_go, __ATOMIC_ACQUIRE)) {
		tick(core, seq++, st);
		if (seq % 64 == 0)
			sleep_us(20);
	}
}

static void test_snapshot(void)
{
	struct reader r = { .ps.checkframes = true, .ps.snapcheck = true };
	uint64_t hdr_bytes, dumped = 0, ow = 0;
	int nc = SNAP_CORES;

	setup(nc, body_snapshot);
	snap_go = 0;
	ctl("period 5");
	reader_start(&r);
	ctl("start -s -w 3 -b 2048 -d 16");
	CHECK(!strcmp(stat_str("mode"), "snapshot") && stat_value("window") == 3, "mode");
	hdr_bytes = stat_value("stream_bytes");
	core_barrier(-1, nc + 1);
	sleep_us(20000);	/* a few worker passes: they must not drain a window */
	CHECK(stat_value("stream_bytes") == hdr_bytes, "the flight recorder wrote %lu bytes "
	      "before any snapshot", (unsigned long)(stat_value("stream_bytes") - hdr_bytes));
	for (int c = 0; c < nc; c++) {
		ow += stat_cpu(c, "overwritten");
		CHECK(stat_cpu(c, "window_blocks") <= 3, "core %d window %lu blocks", c,
		      (unsigned long)stat_cpu(c, "window_blocks"));
	}
	CHECK(ow > 0, "nothing overwritten with a window of 3 blocks");
	ctl("snapshot");
	for (int c = 0; c < nc; c++) {
		uint64_t d = stat_cpu(c, "delivered"), o = stat_cpu(c, "overwritten");

		CHECK(d + o == SN1 && d > 0 && d < SN1, "core %d: delivered %lu + overwritten %lu",
		      c, (unsigned long)d, (unsigned long)o);
		dumped += d;
	}
	CHECK(stat_value("snapshots") == 1, "snapshots %lu", (unsigned long)stat_value("snapshots"));
	core_barrier(-1, nc + 1);
	for (int i = 0; i < 6; i++) {
		sleep_us(3000);
		if (i == 2)
			ctl("pause");
		if (i == 3)
			ctl("resume");
		ctl("snapshot");
	}
	ctl_refused("flush", -EINVAL, "use 'snapshot'");
	__atomic_store_n(&snap_go, 1, __ATOMIC_RELEASE);
	hook_stop();
	ctl("stop");
	reader_join(&r, plat.ticks);
	CHECK(r.ps.snap_begins == 8, "%lu dumps, want 6 + 1 + the last at stop",
	      (unsigned long)r.ps.snap_begins);
	CHECK(r.ps.sess.flags & OPF_S_SNAPSHOT, "session flags");
	for (int c = 0; c < nc; c++) {
		CHECK(r.ps.dump_last[1][c] == SN1, "core %d: dump 1 ends at %lu, want the newest %d",
		      c, (unsigned long)r.ps.dump_last[1][c], SN1);
		CHECK(r.ps.ce[c].lost[OPF_LOST_PAUSED] > 0, "core %d: no paused ticks", c);
		CHECK(r.ps.ce[c].overwritten > 0, "core %d: nothing overwritten", c);
	}
	check_no_leak("snapshot");
	verdict("snapshot: dumps hold the newest window per core, overwritten counted, repeatable");
}

/*
 * Overhead budget: every tick claims to have begun 600 us before it ended (a slow hot
 * path) and the cores tick at the rate set_rate gives them. At 1 kHz that is over half
 * of a core's time, so each core halves its rate (after five 100 ms windows over budget)
 * until it is under 25%; with budget 100 the same load is never throttled. Then the ticks
 * become cheap (no backdating): each throttled core doubles its rate back, a second of calm
 * at a time, to the session's 1000 Hz and no further.
 */
static int thr_stop;

static void body_throttle(int core)
{
	uintptr_t st[STACK_WORDS];

	uint64_t next = nsec();

	/* ticks on absolute deadlines, so the average rate is the rate however sleeps overshoot */
	for (uint64_t seq = 1; !__atomic_load_n(&thr_stop, __ATOMIC_ACQUIRE); seq++) {
		uint32_t hz = __atomic_load_n(&plat.hz[core], __ATOMIC_RELAXED);
		uint64_t now;

		tick(core, seq, st);
		next += 1000000000ull / (hz ? hz : 1);
		while ((now = nsec()) < next) {
			if (next - now > 300000)
				sleep_us((long)(next - now - 200000) / 1000);
			else
				sched_yield();
		}
	}
}

static void test_throttle(void)
{
	for (int round = 0; round < 2; round++) {
		struct reader r = { .ps.checkframes = true };
		int nc = 2;

		setup(nc, body_throttle);
		plat.backdate = (int64_t)(tsc_hz() * 600 / 1000000);	/* 600 us */
		thr_stop = 0;
		if (round == 0)
			ctl("budget 25");
		reader_start(&r);
		ctl("start -f 1000 -d 4");
		sleep_us(1400000);
		for (int c = 0; c < nc && round == 0; c++) {
			uint64_t th = stat_cpu(c, "throttles"), hz = stat_cpu(c, "hz");

			CHECK(th >= 1 && hz == 1000u >> th && stat_cpu(c, "raises") == 0,
			      "core %d: %lu throttles, rate %lu", c, (unsigned long)th,
			      (unsigned long)hz);
		}
		if (round == 0) {
			/* cheap ticks from now on: every core climbs back to 1000 Hz */
			__atomic_store_n(&plat.backdate, 0, __ATOMIC_RELAXED);
			for (int waited = 0, c = 0; c < nc; ) {
				if (stat_cpu(c, "hz") == 1000) {
					c++;
				} else if ((waited += 50) > 15000) {
					fail("core %d still at %lu Hz 15 s after its load went", c,
					     (unsigned long)stat_cpu(c, "hz"));
					break;
				} else {
					sleep_us(50000);
				}
			}
			sleep_us(300000);	/* and stays there */
		}
		__atomic_store_n(&thr_stop, 1, __ATOMIC_RELEASE);
		hook_stop();
		for (int c = 0; c < nc; c++) {
			uint64_t th = stat_cpu(c, "throttles"), hz = stat_cpu(c, "hz");

			if (round == 0) {
				uint64_t up = stat_cpu(c, "raises");

				/* down th times, back up as many: at 1000 Hz, set_rate told each */
				CHECK(th >= 1 && up == th && hz == 1000 && plat.hz[c] == 1000 &&
				      plat.set_rates[c] == th + up, "core %d: %lu throttles, %lu "
				      "raises, rate %lu, set_rate %lu times, to %u", c,
				      (unsigned long)th, (unsigned long)up, (unsigned long)hz,
				      (unsigned long)plat.set_rates[c], plat.hz[c]);
				CHECK(th <= 3, "core %d throttled too far: %lu times", c,
				      (unsigned long)th);
			} else {
				CHECK(th == 0 && hz == 1000 && plat.set_rates[c] == 0,
				      "budget 100: core %d throttled %lu times", c, (unsigned long)th);
			}
			CHECK(round == 0 || stat_cpu(c, "load_permille") > 250,
			      "core %d load %lu permille", c,
			      (unsigned long)stat_cpu(c, "load_permille"));
		}
		CHECK(plat.bad_rate_calls == 0, "set_rate from another core");
		ctl("stop");
		reader_join(&r, plat.ticks);
		check_no_leak("throttle");
	}
	plat.backdate = 0;
	verdict("throttle: a core over its budget halves its rate and doubles it back when calm, "
		"told in the stream and stat");
}

/*
 * NMIs landing inside the hot path: at every third NMI point a core thread passes (inside
 * its ticks, block switches, thread names, flight-recorder hand-overs) an "NMI" re-enters
 * oprof_tick_irq on the same core. Each must be recorded once the interrupted writer is
 * done (or, when a second NMI finds the slot taken, counted lost), the interrupted writer
 * must carry on undisturbed, and every count still add up: taken == ticks + NMIs.
 */
static int nmi_snap;

static void body_nmi(int core)
{
	uintptr_t st[STACK_WORDS];

	nmi_core = core;
	nmi_count = core;
	for (uint64_t seq = 1; seq <= stream_n; seq++) {
		tick(core, seq, st);
		if (seq % 50 == 0)
			oprof_thread_created(TID_NEW + (uint32_t)seq, core, "spawned");
		if (nmi_snap && seq % 256 == 0)
			sleep_us(100);	/* let the snapshots come in between */
	}
	nmi_core = -1;
}

static void test_nmi(void)
{
	for (int round = 0; round < 2; round++) {
		struct reader r = { .ps.checkframes = true };
		uint64_t want[MAXC], nmis = 0, recorded = 0;
		int nc = 4;

		setup(nc, body_nmi);
		stream_n = 20000;
		nmi_snap = round;
		memset(nmi_ticks, 0, sizeof(nmi_ticks));
		memset(nmi_seqs, 0, sizeof(nmi_seqs));
		ctl("period 2");
		shim_set_nmi_hook(nmi_land);
		reader_start(&r);
		ctl(round ? "start -s -w 4 -b 2048 -d 16" : "start -b 2048 -d 16");
		for (int i = 0; round && i < 5; i++) {
			sleep_us(2000);
			ctl("snapshot");
		}
		hook_stop();
		ctl("stop");
		for (int c = 0; c < nc; c++) {
			want[c] = plat.ticks[c] + nmi_ticks[c];
			nmis += nmi_ticks[c];
		}
		reader_join(&r, want);
		shim_set_nmi_hook(NULL);
		for (int c = 0; c < nc; c++)
			recorded += r.ps.nmi_samples[c];
		CHECK(nmis > 1000 && recorded > 0, "%lu NMIs landed, %lu of their samples in the "
		      "stream", (unsigned long)nmis, (unsigned long)recorded);
		printf("    %s: %lu NMIs landed inside writers, %lu recorded on the way out\n",
		       round ? "flight recorder" : "streaming", (unsigned long)nmis,
		       (unsigned long)recorded);
		check_no_leak("nmi");
	}
	verdict("nmi: samples of NMIs inside the hot path are recorded after it, all counted");
}

/*
 * "inject drop" makes the worker free one full block and count nothing: the kernel's own
 * counters then still add up, and only the stream's block numbers can tell. The parser
 * must find exactly that one block missing with no reason.
 */
static void test_silent_drop(void)
{
	struct reader r = { .ps.checkframes = true, .ps.expect_gap = true };
	uint64_t delivered = 0, in_stream = 0;

	setup(2, body_stream);
	stream_n = 5000;
	reader_start(&r);
	ctl("inject drop");
	ctl("start -b 1024 -d 4");
	hook_stop();
	ctl("stop");
	reader_join(&r, plat.ticks);
	for (int c = 0; c < 2; c++) {
		delivered += r.ps.ce[c].delivered;
		in_stream += r.ps.samples[c];
	}
	CHECK(r.ps.unexplained == 1, "%lu blocks missing with no reason, want the one dropped",
	      (unsigned long)r.ps.unexplained);
	CHECK(delivered > in_stream, "the kernel says %lu delivered, the stream has %lu: the "
	      "dropped block's samples", (unsigned long)delivered, (unsigned long)in_stream);
	check_no_leak("silent drop");
	verdict("silent drop: a block freed uncounted shows as a gap in its core's sequence");
}

/*
 * A reader that closes part-way through the stream (Ctrl-C on cat) loses nothing: the
 * next reader starts with a repeat of the session header and the rest of the block the
 * first one began, and the two files together are the whole stream.
 */
static void test_resume(void)
{
	struct pstate ps = { .checkframes = true };
	static char buf[3000];
	long n;

	setup(2, body_stream);
	stream_n = 20000;
	ctl("start -b 8192 -d 8");
	hook_stop();
	CHECK(oprof_open() == 0, "open");
	for (int i = 0; i < 30 && (n = oprof_read(buf, 1000 + (size_t)i * 37)) > 0; i++) {
		CHECK(n % 8 == 0, "a read of %ld bytes: not whole records", n);
		ps_feed(&ps, buf, (size_t)n);
	}
	oprof_close();		/* in the middle of a block */
	CHECK(ps.len == 0, "the first reader's file ends inside a record");
	ctl("stop");
	CHECK(oprof_open() == 0, "open again");
	ps.continuing = true;
	drain_stream(&ps);
	oprof_close();
	ps_verify(&ps, plat.ticks);
	CHECK(ps.resumed, "the second reader got no repeated header");
	ps_free(&ps);
	check_no_leak("resume");
	verdict("resume: a reader closed mid-block leaves the rest to the next, whole");
}

/*
 * "discard" with a reader in the middle of the stream ends that reader's stream: it gets
 * an OPF_SESSION_END saying so, then end of file -- not the next session's records.
 */
static void test_discard_reader(void)
{
	struct pstate ps = { .checkframes = true };
	struct reader r2 = { .ps.checkframes = true };
	static char buf[512];
	long n;

	setup(2, body_stream);
	stream_n = 5000;
	ctl("start -b 4096 -d 8");
	hook_stop();
	ctl("stop");
	CHECK(oprof_open() == 0, "open");
	for (int i = 0; i < 4 && (n = oprof_read(buf, sizeof(buf))) > 0; i++)
		ps_feed(&ps, buf, (size_t)n);
	ctl("discard");
	memset(plat.ticks, 0, sizeof(plat.ticks));
	ctl("start -b 4096 -d 8");	/* the next session queues up behind */
	hook_stop();
	ctl("stop");
	drain_stream(&ps);
	oprof_close();
	CHECK(ps.have_end && ps.discarded, "the reader's stream does not end as discarded");
	CHECK(ps.len == 0, "trailing bytes");
	ps_free(&ps);
	reader_start(&r2);	/* the next reader gets the next session, whole */
	reader_join(&r2, plat.ticks);
	CHECK(r2.ps.sess.session_id == ps.sess.session_id + 1, "next session id %lu after %lu",
	      (unsigned long)r2.ps.sess.session_id, (unsigned long)ps.sess.session_id);
	check_no_leak("discard");
	verdict("discard: a reader mid-stream gets a closing record and EOF, not the next session");
}

/*
 * Two flight-recorder sessions in a row, the first with one snapshot: the second's first
 * snapshot must dump its windows (snapshot requests used to be numbered per session while
 * the cores remembered the last one across sessions).
 */
static void test_flight_twice(void)
{
	for (int round = 0; round < 2; round++) {
		struct reader r = { .ps.checkframes = true };
		uint64_t dumped = 0;

		setup(2, body_stream);
		stream_n = 3000;
		reader_start(&r);
		ctl("start -s -w 4 -b 2048 -d 4");
		hook_stop();
		ctl("snapshot");
		for (int c = 0; c < 2; c++)
			dumped += stat_cpu(c, "delivered");
		CHECK(dumped > 0, "session %d: the first snapshot dumped nothing", round + 1);
		ctl("stop");
		reader_join(&r, plat.ticks);
	}
	check_no_leak("flight twice");
	verdict("flight recorder: the first snapshot of a second session dumps its windows");
}

/*
 * Pause and resume marks count against the cap like samples: 500 cycles with no reader
 * keep the queue within its cap (they used to be forced past it: 32.8 MB for a 64 KiB cap).
 */
static int marks_stop;

static void body_marks(int core)
{
	uintptr_t st[STACK_WORDS];

	for (uint64_t seq = 1; !__atomic_load_n(&marks_stop, __ATOMIC_ACQUIRE); seq++)
		tick(core, seq, st);
}

static void test_marks_cap(void)
{
	struct reader r = { .ps.checkframes = true };
	uint64_t most = 0, cap;

	setup(2, body_marks);
	marks_stop = 0;
	ctl("cap 64K");
	ctl("start -b 4096 -d 4");
	cap = stat_value("outq_cap");
	for (int i = 0; i < 500; i++) {
		ctl("pause");
		ctl("resume");
		most = MAX(most, stat_value("outq_mem"));
	}
	__atomic_store_n(&marks_stop, 1, __ATOMIC_RELEASE);
	hook_stop();
	CHECK(most <= cap, "the output queue held %lu bytes against a cap of %lu",
	      (unsigned long)most, (unsigned long)cap);
	ctl("stop");
	reader_start(&r);
	reader_join(&r, plat.ticks);
	ctl("cap 64");
	check_no_leak("marks");
	verdict("markers: 500 pause/resume cycles stay under the output cap");
}

/* A session fits the machine: the cap is lowered to what free memory allows, and a
 * session that cannot fit at all is refused with a message instead of taking all memory. */
static void test_cap_memory(void)
{
	setup(8, body_none);
	shim_set_free_memory(16 << 20);
	ctl("start -b 4096");
	CHECK(stat_value("outq_cap") <= (4 << 20) && stat_value("cap_setting") == (64 << 20),
	      "cap %lu with 16 MiB free", (unsigned long)stat_value("outq_cap"));
	ctl("stop");
	ctl("discard");
	shim_set_free_memory(2 << 20);
	ctl_refused("start -b 65536", -ENOMEM, "not enough memory");
	shim_set_free_memory(1ul << 30);
	check_no_leak("cap memory");
	verdict("cap: lowered to fit free memory; a session that cannot fit is refused");
}

/* Start/stop cycles leave no block and no allocation behind. */
static void test_cycles(void)
{
	setup(3, body_stream);
	stream_n = 50;
	ctl("cap 1");
	ctl("emptydepth 2");
	for (int i = 0; i < 20; i++) {
		struct reader r = { .ps.checkframes = true };
		char line[64];

		memset(plat.ticks, 0, sizeof(plat.ticks));
		reader_start(&r);
		snprintf(line, sizeof(line), "start -b %d -d %d", 512 + 64 * (i % 5), i % 17);
		ctl(line);
		if (i % 3 == 0) {
			ctl("pause");
			ctl("resume");
		}
		hook_stop();
		ctl("stop");
		reader_join(&r, plat.ticks);
		check_no_leak("cycle");
	}
	verdict("start/stop cycles leave block_count and allocations unchanged");
}

int main(int argc, char **argv)
{
	pthread_t worker;
	bool quick = argc > 1 && !strcmp(argv[1], "-q");

	setvbuf(stdout, NULL, _IOLBF, 0);
	base_blocks = block_count();
	oprof_init(&hooks);
	base_allocs = shim_live_allocs();
	pthread_create(&worker, NULL, worker_main, NULL);

	test_backtrace();
	test_ctl();
	test_stream_eof();
	test_pause();
	test_snapshot();
	test_throttle();
	test_flush_stale();
	test_nmi();
	test_silent_drop();
	test_resume();
	test_discard_reader();
	test_flight_twice();
	test_marks_cap();
	test_cap_memory();
	test_stress(&(struct stress){ "lossy", 8, quick ? 50000 : 200000, "start -d 16 -b 256",
		    "64K", "1", 16, 200, 0, true, true });
	test_stress(&(struct stress){ "fast", 4, quick ? 30000 : 200000, "start -d 16 -b 8192",
		    "64", "16", 16, 0, 0, false, false });
	test_cycles();

	__atomic_store_n(&worker_exit, 1, __ATOMIC_RELAXED);
	pthread_join(worker, NULL);
	oprof_fini();
	CHECK(block_count() == base_blocks, "blocks live at exit");
	verdict("teardown");
	printf("%s: %d failed\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
