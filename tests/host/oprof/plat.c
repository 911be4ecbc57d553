/*
 * plat.c: the platform the profiler runs on in the host tests: threads for cores
 * (struct oprof_hooks), the core-0 worker, ticks with checkable frame chains, injected NMIs,
 * control and stat helpers, the leak baseline and the shared core bodies.
 * Called by the subtests in tests/host/oprof/ and, through the hooks, by the profiler.
 */
#include "oprof_host.h"

struct plat plat;

void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

uint64_t now_ms(void)
{
	return nsec() / 1000000;
}

/* ---- platform hooks ---- */

/*
 * hooks->on_core: a mailbox per core that the core's thread empties between ticks and while
 * it waits (core_poll); once the core's body has ended, the caller acts for it, as that
 * core. Either way fn runs with interrupts off, as the hook's contract says (oprofile.h).
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
		unsigned long f = irq_save();

		mail[core].fn(mail[core].arg);
		irq_restore(f);
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
			/* the core's thread is gone: nothing else writes there */
			shim_on_core(core, fn, arg);
			break;
		}
		sleep_us(100);
	}
	__atomic_store_n(&mail[core].state, 0, __ATOMIC_RELEASE);
}

/* A barrier the cores wait at while still answering their mailbox (main passes core -1). */
static int cb_count, cb_gen;

void core_barrier(int core, int parties)
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

void hook_stop(void)
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

const struct oprof_hooks hooks = {
	.start_sampling = hook_start,
	.stop_sampling = hook_stop,
	.foreach_thread = hook_threads,
	.set_rate = hook_set_rate,
	.on_core = hook_on_core,
};

/* ---- the worker thread (lives for the whole program) ---- */

int worker_exit;

int worker_held;		/* 1: the worker is "not scheduled", no passes */

void *worker_main(void *arg)
{
	(void)arg;
	shim_set_core(0);
	while (!__atomic_load_n(&worker_exit, __ATOMIC_RELAXED)) {
		oprof_worker_wait();
		if (__atomic_load_n(&worker_held, __ATOMIC_ACQUIRE)) {
			sleep_us(500);
			continue;
		}
		oprof_worker_pass();
	}
	return NULL;
}

/* ---- ctl helpers ---- */

int ctl(const char *line)
{
	char err[256];
	int rc = oprof_ctl(line, err, sizeof(err));

	if (rc < 0)
		FAIL("ctl '%s' failed: %d %s", line, rc, err);
	return rc;
}

/* Expect line to fail with rc and an error containing want. */
void ctl_refused(const char *line, int rc_want, const char *want)
{
	char err[256];
	int rc = oprof_ctl(line, err, sizeof(err));

	CHECKF(rc == rc_want, "ctl '%s': rc %d, want %d (%s)", line, rc, rc_want, err);
	CHECKF(strstr(err, want) != NULL, "ctl '%s': error '%s' lacks '%s'", line, err, want);
	CHECKF(strncmp(err, "oprofile: ", 10) == 0, "ctl '%s': error '%s' lacks prefix", line, err);
}

/* The value of one stat line, as text ("" if missing). */
const char *stat_str(const char *name)
{
	static char buf[1 << 16], val[64];
	size_t n = oprof_stat_text(buf, sizeof(buf)), len = strlen(name);

	CHECKF(n < sizeof(buf), "stat text too long: %zu", n);
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, name, len) && p[len] == ' ') {
			sscanf(p + len + 1, "%63s", val);
			return val;
		}
	FAIL("stat: no %s", name);
	return "";
}

uint64_t stat_value(const char *name)
{
	return strtoull(stat_str(name), NULL, 10);
}

uint64_t stat_cpu(int core, const char *what)
{
	char name[48];

	snprintf(name, sizeof(name), "cpu%d.%s", core, what);
	return stat_value(name);
}

/* ---- what the cores record: every sample is checkable on its own (oprof_host.h) ---- */

/* Build seq's frame chain in st and take one tick with it. */
void tick(int core, uint64_t seq, uintptr_t *st)
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
__thread int nmi_core = -1, nmi_count;
static __thread int nmi_in;
static int nmi_every = 3;
uint64_t nmi_ticks[MAXC], nmi_seqs[MAXC];

void nmi_land(void)
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
/* ---- leak baseline ---- */

uint64_t base_blocks;
long base_allocs;

void check_no_leak(const char *when)
{
	CHECKF(block_count() == base_blocks, "%s: %lu blocks live, baseline %lu", when,
	       (unsigned long)block_count(), (unsigned long)base_blocks);
	CHECKF(shim_live_allocs() == base_allocs, "%s: %ld allocations live, baseline %ld", when,
	       shim_live_allocs(), base_allocs);
}

/* Also: no overhead budget (a host thread's timing is not a test's to rely on). */
void setup(int ncores, void (*body)(int))
{
	char err[128];

	plat.ncores = ncores;
	plat.body = body;
	plat.backdate = 0;
	memset(plat.ticks, 0, sizeof(plat.ticks));
	memset(plat.set_rates, 0, sizeof(plat.set_rates));
	shim_set_ncpus(ncores);
	if (oprof_ctl("budget 100", err, sizeof(err)) < 0)
		FAIL("budget 100: %s", err);
}

/* A core body that does nothing: the subtest acts through ctl alone. */
void body_none(int core) { (void)core; }

/* The core body most subtests use: stream_n ticks, and a thread created every 997. */
uint64_t stream_n;

void body_stream(int core)
{
	uintptr_t st[STACK_WORDS];

	for (uint64_t seq = 1; seq <= stream_n; seq++) {
		tick(core, seq, st);
		if (seq % 997 == 0)
			oprof_thread_created(TID_NEW + (uint32_t)seq, core, "spawned");
	}
}
