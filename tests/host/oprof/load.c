/*
 * load.c: host tests of the profiler under load: stress with losses, the overhead
 * budget's throttling, NMIs inside the hot path, the output cap and free memory.
 * Run by main.c's table.
 */
#include "oprof_host.h"

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

/* Every thread record a core made is in the stream, unless counted lost or dropped. */
static void stress_threads(const struct stress *s, const struct pstate *ps)
{
	for (int c = 0; c < s->ncores; c++) {
		uint64_t made = stat_cpu(c, "threads") + stat_cpu(c, "threads_lost");

		CHECKF(made == s->n / 5000, "core %d: %lu thread records made", c, (unsigned long)made);
		CHECKF(ps->threads_new[c] == stat_cpu(c, "threads") - stat_cpu(c, "threads_dropped"),
		       "core %d: %lu thread records in the stream, %lu written, %lu dropped", c,
		       (unsigned long)ps->threads_new[c], (unsigned long)stat_cpu(c, "threads"),
		       (unsigned long)stat_cpu(c, "threads_dropped"));
	}
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
	CHECKF(poll_errors == 0, "memory over the cap %d times", poll_errors);
	for (int c = 0; c < s->ncores; c++) {
		full += r.ps.ce[c].lost[OPF_LOST_OUTPUT_FULL];
		noblock += r.ps.ce[c].lost[OPF_LOST_NO_BLOCK];
		delivered += r.ps.ce[c].delivered;
	}
	CHECKF(!s->want_full || full > 0, "no output-full losses");
	CHECKF(!s->want_noblock || noblock > 0, "no no-empty-block losses");
	CHECKF(delivered > 0, "nothing delivered");
	stress_threads(s, &r.ps);
	check_no_leak("stress");
	printf("    %s: %d cores x %lu samples: delivered %lu, lost no-block %lu, "
	       "output-full %lu; %lu bytes read, %lu ms\n", s->name, s->ncores,
	       (unsigned long)s->n, (unsigned long)delivered, (unsigned long)noblock,
	       (unsigned long)full, (unsigned long)r.bytes, (unsigned long)(now_ms() - t0));
}

/* Many cores, tiny blocks, a small cap, a slow reader: losses of both kinds. */
void test_stress_lossy(void)
{
	test_stress(&(struct stress){ "lossy", 8, harness_quick ? 50000 : 200000,
		    "start -d 16 -b 256", "64K", "1", 16, 200, 0, true, true });
}

/* Big blocks, a big cap, a fast reader: nothing lost. */
void test_stress_fast(void)
{
	test_stress(&(struct stress){ "fast", 4, harness_quick ? 30000 : 200000,
		    "start -d 16 -b 8192", "64", "16", 16, 0, 0, false, false });
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

/* Round 0, after the load went: every core climbs back to 1000 Hz and stays there. */
static void throttle_climb(int nc)
{
	__atomic_store_n(&plat.backdate, 0, __ATOMIC_RELAXED);
	for (int waited = 0, c = 0; c < nc; ) {
		if (stat_cpu(c, "hz") == 1000) {
			c++;
		} else if ((waited += 50) > 15000) {
			FAIL("core %d still at %lu Hz 15 s after its load went", c,
			     (unsigned long)stat_cpu(c, "hz"));
			break;
		} else {
			sleep_us(50000);
		}
	}
	sleep_us(300000);	/* and stays there */
}

/* At the end of a round: round 0 went down and back up, round 1 (budget 100) never moved. */
static void throttle_verify(int round, int nc)
{
	for (int c = 0; c < nc; c++) {
		uint64_t th = stat_cpu(c, "throttles"), hz = stat_cpu(c, "hz");

		if (round == 0) {
			uint64_t up = stat_cpu(c, "raises");

			/* down th times, back up as many: at 1000 Hz, set_rate told each */
			CHECKF(th >= 1 && up == th && hz == 1000 && plat.hz[c] == 1000 &&
			       plat.set_rates[c] == th + up, "core %d: %lu throttles, %lu "
			       "raises, rate %lu, set_rate %lu times, to %u", c,
			       (unsigned long)th, (unsigned long)up, (unsigned long)hz,
			       (unsigned long)plat.set_rates[c], plat.hz[c]);
			CHECKF(th <= 3, "core %d throttled too far: %lu times", c,
			       (unsigned long)th);
		} else {
			CHECKF(th == 0 && hz == 1000 && plat.set_rates[c] == 0,
			       "budget 100: core %d throttled %lu times", c, (unsigned long)th);
		}
		CHECKF(round == 0 || stat_cpu(c, "load_permille") > 250,
		       "core %d load %lu permille", c,
		       (unsigned long)stat_cpu(c, "load_permille"));
	}
	CHECKF(plat.bad_rate_calls == 0, "set_rate from another core");
}

void test_throttle(void)
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

			CHECKF(th >= 1 && hz == 1000u >> th && stat_cpu(c, "raises") == 0,
			       "core %d: %lu throttles, rate %lu", c, (unsigned long)th,
			       (unsigned long)hz);
		}
		if (round == 0)
			throttle_climb(nc);
		__atomic_store_n(&thr_stop, 1, __ATOMIC_RELEASE);
		hook_stop();
		throttle_verify(round, nc);
		ctl("stop");
		reader_join(&r, plat.ticks);
		check_no_leak("throttle");
	}
	plat.backdate = 0;
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

void test_nmi(void)
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
		CHECKF(nmis > 1000 && recorded > 0, "%lu NMIs landed, %lu of their samples in the "
		       "stream", (unsigned long)nmis, (unsigned long)recorded);
		printf("    %s: %lu NMIs landed inside writers, %lu recorded on the way out\n",
		       round ? "flight recorder" : "streaming", (unsigned long)nmis,
		       (unsigned long)recorded);
		check_no_leak("nmi");
	}
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

void test_marks_cap(void)
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
	CHECKF(most <= cap, "the output queue held %lu bytes against a cap of %lu",
	       (unsigned long)most, (unsigned long)cap);
	ctl("stop");
	reader_start(&r);
	reader_join(&r, plat.ticks);
	ctl("cap 64");
	check_no_leak("marks");
}

/* A session fits the machine: the cap is lowered to what free memory allows, and a
 * session that cannot fit at all is refused with a message instead of taking all memory
 * (out of memory when hardly any is free). */
void test_cap_memory(void)
{
	setup(8, body_none);
	shim_set_free_memory(16 << 20);
	ctl("start -b 4096");
	CHECKF(stat_value("outq_cap") <= (4 << 20) && stat_value("cap_setting") == (64 << 20),
	       "cap %lu with 16 MiB free", (unsigned long)stat_value("outq_cap"));
	ctl("stop");
	ctl("discard");
	shim_set_free_memory(2 << 20);
	ctl_refused("start -b 65536", -ENOMEM, "not enough memory");
	/* memory exhausted (an app took it all): said as such, not as a cap too small */
	shim_set_free_memory(64 << 10);
	ctl_refused("start", -ENOMEM, "oprofile: out of memory: 64 KiB free");
	shim_set_free_memory(1ul << 30);
	check_no_leak("cap memory");
}
