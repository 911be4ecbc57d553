/*
 * session.c: host tests of the profiler's control path and session life cycle: bad
 * options, start/stop/pause/resume/flush, readers before, during and after, discard.
 * Run by main.c's table.
 */
#include "oprof_host.h"

/* Refused while idle: the command, its error number, and what the message must say. */
static const struct {
	const char *line;
	int rc;
	const char *want;
} idle_refusals[] = {
	{ "start -f 0", -EINVAL, "bad rate 0: must be 1..20000" },
	{ "start -f 20001", -EINVAL, "bad rate 20001" },
	{ "start -f abc", -EINVAL, "bad rate abc" },
	{ "start -d 65", -EINVAL, "bad depth 65: must be 0..64" },
	{ "start -b 100", -EINVAL, "bad block size 100" },
	{ "start -b 1001", -EINVAL, "multiple of 8" },
	{ "start -b 256 -d 64", -EINVAL, "too small for depth 64" },
	{ "start -x 3", -EINVAL, "unknown option -x" },
	{ "start -f", -EINVAL, "missing value after -f" },
	{ "frob", -EINVAL, "unknown command 'frob'" },
	{ "stop now", -EINVAL, "usage: stop" },
	{ "stop", -EINVAL, "not running" },
	{ "pause", -EINVAL, "not running" },
	{ "flush", -EINVAL, "not running" },
	{ "resume", -EINVAL, "not paused" },
	{ "discard", -EINVAL, "nothing to discard" },
	{ "period 0", -EINVAL, "bad period 0" },
	{ "cap 10K", -EINVAL, "bad cap 10K" },
	{ "cap 1X", -EINVAL, "bad cap 1X" },
	{ "emptydepth", -EINVAL, "usage: emptydepth VALUE" },
	{ "start -f 20001", -EINVAL, "raise the limit with 'maxhz N'" },
	{ "start -w 4", -EINVAL, "needs -s" },
	{ "start -s -w 0", -EINVAL, "bad window 0" },
	{ "snapshot", -EINVAL, "not running" },
	{ "snapshot now", -EINVAL, "usage: snapshot" },
	{ "budget 0", -EINVAL, "bad budget 0: must be 1..100" },
	{ "maxhz 100001", -EINVAL, "bad rate limit 100001: must be 20000..100000" },
};

/* The rate limit, blank lines and settings while idle. */
static void ctl_settings(void)
{
	ctl("maxhz 100000");
	ctl_refused("start -f 100001", -EINVAL, "bad rate 100001: must be 1..100000");
	ctl("hz 100000");
	ctl_refused("maxhz 20000\nx", -EINVAL, "usage");
	ctl("maxhz 20000");
	ctl_refused("start", -EINVAL, "rate 100000 is over the limit 20000");
	ctl("hz 1000");
	CHECKF(oprof_ctl("", NULL, 0) == 0 && oprof_ctl("  \n", NULL, 0) == 0, "blank lines");
	ctl("cap 1");
	ctl("period 7");
	ctl("stale 3");
	CHECKF(stat_value("outq_cap") == 1u << 20 && stat_value("period_ms") == 7, "settings");
	ctl("cap 64K");
	ctl_refused("start -b 65536", -EINVAL, "too small for block size");
	ctl("cap 64");
	ctl("period 2");
}

/* An odd rate, a session, refusals while it runs, then stopped but not read. */
static void ctl_running(void)
{
	ctl("start -f 7777 -d 5 -b 1024\n");
	/* what the rate fills in 8 periods: 124 samples of 72 bytes, 13 to a block, +1 */
	CHECKF(stat_value("cpu1.emptyq") == 11, "empty queue filled at start for the rate: %lu",
	       (unsigned long)stat_value("cpu1.emptyq"));
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
	CHECKF(!strcmp(stat_str("state"), "draining"), "state %s", stat_str("state"));
	ctl_refused("start", -EBUSY, "not read yet");
	ctl("period 3");	/* settings are fine once stopped */
}

/* Second open is busy; the stream of the stopped session is intact. */
static void ctl_stream(void)
{
	struct pstate ps = { 0 };

	CHECKF(oprof_open() == 0, "open");
	CHECKF(oprof_open() == -EBUSY, "second open not busy");
	drain_stream(&ps);
	oprof_close();
	ps_verify(&ps, NULL);
	CHECKF(ps.sess.hz == 7777 && ps.sess.depth == 5 && ps.sess.block_bytes == 1024 &&
	       ps.sess.ncores == 2 && ps.sess.period_ms == 2 && ps.sess.build_id_len == 20 &&
	       ps.sess.build_id[0] == 0x5e && ps.sess.tsc_hz == tsc_hz(),
	       "session header fields");
	/* no core ticked while paused, so none marked a pause: marks are the cores' own */
	CHECKF(ps.pauses[0] + ps.pauses[1] + ps.resumes[0] + ps.resumes[1] == 0,
	       "pause/resume marks without a tick");
	ps_free(&ps);
}

void test_ctl(void)
{
	setup(2, body_none);
	for (size_t i = 0; i < ARRAY_SIZE(idle_refusals); i++)
		ctl_refused(idle_refusals[i].line, idle_refusals[i].rc, idle_refusals[i].want);
	ctl_settings();
	ctl_running();
	ctl_stream();

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
}

/* Stream subtest: a reader opened before start gets the whole stream, then EOF. */
void test_stream_eof(void)
{
	for (int round = 0; round < 2; round++) {
		struct reader r = { .ps.checkframes = true };
		uint64_t sid;

		setup(4, body_stream);
		stream_n = 20000;
		CHECKF(oprof_open() == 0, "open before start");
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
			CHECKF(r.ps.ce[c].lost[OPF_LOST_OUTPUT_FULL] == 0, "output full with a 64M cap");
			CHECKF(r.ps.threads_new[c] == stat_cpu(c, "threads") &&
			       stat_cpu(c, "threads") + stat_cpu(c, "threads_lost") == stream_n / 997,
			       "thread records of core %d: stream %lu, written %lu, lost %lu", c,
			       (unsigned long)r.ps.threads_new[c], (unsigned long)stat_cpu(c, "threads"),
			       (unsigned long)stat_cpu(c, "threads_lost"));
		}
		CHECKF(r.ps.sess.session_id == sid, "session id");
		CHECKF(!strcmp(stat_str("state"), "idle") && stat_value("blocks_alloc") == 0,
		       "idle after EOF");
		check_no_leak("stream");
	}
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

void test_pause(void)
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
	CHECKF(!strcmp(stat_str("state"), "paused"), "state %s", stat_str("state"));
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	ctl("resume");
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	ctl("stop");
	reader_join(&r, plat.ticks);
	for (int c = 0; c < nc; c++)
		CHECKF(r.ps.ce[c].lost[OPF_LOST_PAUSED] == PHASE, "core %d lost %lu paused", c,
		       (unsigned long)r.ps.ce[c].lost[OPF_LOST_PAUSED]);
	for (int c = 0; c < nc; c++)
		CHECKF(r.ps.pauses[c] == 1 && r.ps.resumes[c] == 1, "core %d: %lu pause and %lu "
		       "resume marks (%lu lost, %lu samples found no block)", c,
		       (unsigned long)r.ps.pauses[c], (unsigned long)r.ps.resumes[c],
		       (unsigned long)stat_cpu(c, "marks_lost"),
		       (unsigned long)r.ps.ce[c].lost[OPF_LOST_NO_BLOCK]);
	pthread_barrier_destroy(&bar);
	check_no_leak("pause");
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
		CHECKF(stat_cpu(c, "blocks") == want, "core %d: %lu blocks pushed, want %lu (%s)", c,
		       (unsigned long)stat_cpu(c, "blocks"), (unsigned long)want, why);
}

void test_flush_stale(void)
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
	CHECKF(stat_value("stream_bytes") - bytes0 >= (uint64_t)nc * 4 * opf_sample_len(0),
	       "flushed blocks not forwarded while running");
	ctl("stop");
	reader_join(&r, plat.ticks);
	check_no_leak("flush");
}

/*
 * "inject drop" makes the worker free one full block and count nothing: the kernel's own
 * counters then still add up, and only the stream's block numbers can tell. The parser
 * must find exactly that one block missing with no reason.
 */
void test_silent_drop(void)
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
	CHECKF(r.ps.unexplained == 1, "%lu blocks missing with no reason, want the one dropped",
	       (unsigned long)r.ps.unexplained);
	CHECKF(delivered > in_stream, "the kernel says %lu delivered, the stream has %lu: the "
	       "dropped block's samples", (unsigned long)delivered, (unsigned long)in_stream);
	check_no_leak("silent drop");
}

/*
 * A reader that closes part-way through the stream (Ctrl-C on cat) loses nothing: the
 * next reader starts with a repeat of the session header and the rest of the block the
 * first one began, and the two files together are the whole stream.
 */
void test_resume(void)
{
	struct pstate ps = { .checkframes = true };
	static char buf[3000];
	long n;

	setup(2, body_stream);
	stream_n = 20000;
	ctl("start -b 8192 -d 8");
	hook_stop();
	CHECKF(oprof_open() == 0, "open");
	for (int i = 0; i < 30 && (n = oprof_read(buf, 1000 + (size_t)i * 37)) > 0; i++) {
		CHECKF(n % 8 == 0, "a read of %ld bytes: not whole records", n);
		ps_feed(&ps, buf, (size_t)n);
	}
	oprof_close();		/* in the middle of a block */
	CHECKF(ps.len == 0, "the first reader's file ends inside a record");
	ctl("stop");
	CHECKF(oprof_open() == 0, "open again");
	ps.continuing = true;
	drain_stream(&ps);
	oprof_close();
	ps_verify(&ps, plat.ticks);
	CHECKF(ps.resumed, "the second reader got no repeated header");
	ps_free(&ps);
	check_no_leak("resume");
}

/*
 * A worker late for its first passes (a start under load: core 0 busy, the worker's thread
 * not scheduled for a while) must not starve the cores: each starts with the empty blocks
 * its rate fills over the refill horizon at full depth, not the emptydepth floor. Here
 * four worker periods' worth of ticks at 1 kHz go by with no pass at all.
 */
void test_late_worker(void)
{
	struct reader r = { .ps.checkframes = true };
	uint64_t period = stat_value("period_ms");
	char line[32];

	setup(2, body_stream);
	stream_n = 400;		/* 1000 Hz x 100 ms x 4 periods */
	reader_start(&r);
	ctl("period 100");
	ctl("emptydepth 4");
	__atomic_store_n(&worker_held, 1, __ATOMIC_RELEASE);
	ctl("start -f 1000 -d 20 -b 4096");
	hook_stop();
	__atomic_store_n(&worker_held, 0, __ATOMIC_RELEASE);
	ctl("stop");
	reader_join(&r, plat.ticks);
	for (int c = 0; c < 2; c++)
		CHECKF(r.ps.ce[c].lost[OPF_LOST_NO_BLOCK] == 0 && r.ps.samples[c] == stream_n,
		       "core %d: %lu of %lu samples in the stream, %lu lost for want of a block "
		       "before the worker's first pass", c, (unsigned long)r.ps.samples[c],
		       (unsigned long)stream_n, (unsigned long)r.ps.ce[c].lost[OPF_LOST_NO_BLOCK]);
	snprintf(line, sizeof(line), "period %lu", (unsigned long)period);
	ctl(line);
	check_no_leak("late worker");
}

/*
 * "discard" with a reader in the middle of the stream ends that reader's stream: it gets
 * an OPF_SESSION_END saying so, then end of file -- not the next session's records.
 */
void test_discard_reader(void)
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
	CHECKF(oprof_open() == 0, "open");
	for (int i = 0; i < 4 && (n = oprof_read(buf, sizeof(buf))) > 0; i++)
		ps_feed(&ps, buf, (size_t)n);
	ctl("discard");
	memset(plat.ticks, 0, sizeof(plat.ticks));
	ctl("start -b 4096 -d 8");	/* the next session queues up behind */
	hook_stop();
	ctl("stop");
	drain_stream(&ps);
	oprof_close();
	CHECKF(ps.have_end && ps.discarded, "the reader's stream does not end as discarded");
	CHECKF(ps.len == 0, "trailing bytes");
	ps_free(&ps);
	reader_start(&r2);	/* the next reader gets the next session, whole */
	reader_join(&r2, plat.ticks);
	CHECKF(r2.ps.sess.session_id == ps.sess.session_id + 1, "next session id %lu after %lu",
	       (unsigned long)r2.ps.sess.session_id, (unsigned long)ps.sess.session_id);
	check_no_leak("discard");
}

/* Start/stop cycles leave no block and no allocation behind. */
void test_cycles(void)
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
}

