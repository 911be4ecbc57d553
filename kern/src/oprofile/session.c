/*
 * Sessions: the state machine, the ctl mutex and the session's start and stop.
 *
 *	IDLE --start--> RUNNING <--pause/resume--> PAUSED
 *	RUNNING, PAUSED --stop--> STOPPING --(closing records queued, outq hung up)--> DRAINING
 *	DRAINING --(reader reads to EOF, or "discard")--> IDLE
 *
 * Every transition but DRAINING -> IDLE is made by oprof_ctl (a thread). All of them run
 * with the ctl mutex held, and so do worker passes and the stat text: the mutex is what
 * makes a pass, a start, a stop and a stat snapshot see each other whole. It is a sleeping
 * mutex (built here from a spinlock and a rendez, as the host shim has no qlock) because
 * its holders allocate and wait for cores. The hot path never takes it: it reads the
 * session's cfg (constant while a session runs), oprof.paused and oprof.flushgen only.
 *
 * A start writes the stream's header itself (OPF_SESSION, then OPF_THREAD for every live
 * thread) before the cores are told to sample; a stop stops every core, pushes the partial
 * blocks, drains them (flight recorder: dumps the windows as a last snapshot), appends the
 * closing statistics and hangs the output queue up. A snapshot (flight recorder) asks
 * every core to hand its window over at its next tick and dumps what they handed over.
 * Text parsing of commands lives in ctl.c, the stat file in stat.c.
 */
#include "internal.h"
#include "error.h"

struct oprof_global oprof;

static struct {
	struct spinlock lk;
	uint32_t held;		/* LOADed by the rendez condition */
	struct rendez r;	/* waiters for held == 0 */
} ctl_mu = { .lk = SPINLOCK_INIT("oprof ctl") };

static bool ctl_free(void *arg)
{
	(void)arg;
	return flag_get(&ctl_mu.held) == 0;
}

void ctl_lock(void)
{
	for (;;) {
		spin_lock(&ctl_mu.lk);
		if (!ctl_mu.held) {
			flag_set(&ctl_mu.held, 1);
			spin_unlock(&ctl_mu.lk);
			return;
		}
		spin_unlock(&ctl_mu.lk);
		rendez_sleep(&ctl_mu.r, ctl_free, NULL);
	}
}

void ctl_unlock(void)
{
	spin_lock(&ctl_mu.lk);
	flag_set(&ctl_mu.held, 0);
	spin_unlock(&ctl_mu.lk);
	rendez_wakeup(&ctl_mu.r);
}

bool ctl_held(void)
{
	return flag_get(&ctl_mu.held) != 0;
}

const char *session_state_name(uint32_t state)
{
	static const char *const names[] = {
		[OPROF_IDLE] = "idle",
		[OPROF_RUNNING] = "running",
		[OPROF_PAUSED] = "paused",
		[OPROF_STOPPING] = "stopping",
		[OPROF_DRAINING] = "draining",
	};

	return state < ARRAY_SIZE(names) ? names[state] : "?";
}

bool session_active(void)
{
	uint32_t s = flag_get(&oprof.state);

	return s == OPROF_RUNNING || s == OPROF_PAUSED;
}

void oprof_init(const struct oprof_hooks *hooks)
{
	rendez_init(&ctl_mu.r);
	rendez_init(&oprof.readers);
	rendez_init(&oprof.snap_r);
	worker_init();
	oprof.hooks = hooks;
	oprof.next = (struct oprof_cfg){
		.hz = OPROF_DEF_HZ,
		.depth = OPROF_DEF_DEPTH,
		.block_bytes = OPROF_DEF_BLOCK,
		.period_ms = OPROF_DEF_PERIOD_MS,
		.stale = OPROF_DEF_STALE,
		.emptydepth = OPROF_DEF_EMPTYDEPTH,
		.cap = OPROF_DEF_CAP,
		.window = OPROF_DEF_WINDOW,
		.budget = OPROF_DEF_BUDGET,
		.maxhz = OPROF_MAX_HZ,
	};
	oprof.state = OPROF_IDLE;
	oprof.wait_ms = OPROF_DEF_PERIOD_MS;
	oprof.outq = qopen(SIZE_MAX, 0);
	if (!oprof.outq)
		panic("oprofile: no memory for the output queue");
}

void oprof_fini(void)
{
	struct block *b;

	ctl_lock();
	while ((b = qget(oprof.outq)))
		pool_put(b);
	pool_trim();
	qfree(oprof.outq);
	oprof.outq = NULL;
	ctl_unlock();
}

/*
 * Most blocks the worker keeps on one core's empty queue as the core's rate asks for more:
 * OPROF_MAX_EMPTYDEPTH, or fewer when that would be over OPROF_CORE_MEM bytes.
 */
#define OPROF_CORE_MEM	(8u << 20)

static uint32_t session_max_target(const struct oprof_cfg *cfg)
{
	uint32_t t = MIN((uint32_t)OPROF_MAX_EMPTYDEPTH, OPROF_CORE_MEM / cfg->block_bytes);

	return MAX(t, cfg->emptydepth);
}

/*
 * Blocks the pool may hold: what fits under the cap plus every core's working set (its
 * largest empty queue, cur and one in flight; flight recorder: its window, a window's
 * worth of empty blocks and cur).
 */
static uint64_t session_max_blocks(const struct oprof_cfg *cfg, int ncores)
{
	uint64_t per_core = cfg->snapshot ? 2ull * cfg->window + 1 : session_max_target(cfg) + 2;

	return cfg->cap / cfg->block_bytes + (uint64_t)ncores * per_core + 4;
}

static void *session_header(struct recw *w, uint64_t tsc)
{
	struct opf_session *s = recw_reserve(w, OPF_SESSION_V1_LEN);
	const uint8_t *id;
	size_t idlen = 0;

	if (!s)
		return NULL;
	s->h.type = OPF_SESSION;
	s->h.len = OPF_SESSION_V1_LEN;
	s->magic = OPF_MAGIC;
	s->version = 1;	/* v2 framing is not written yet */
	s->ncores = (uint32_t)oprof.ncores;
	s->hz = oprof.cfg.hz;
	s->depth = oprof.cfg.depth;
	s->tsc_hz = tsc_hz();
	s->start_tsc = tsc;
	s->start_ns = nsec();
	s->block_bytes = oprof.cfg.block_bytes;
	s->period_ms = oprof.cfg.period_ms;
	s->flags = oprof.cfg.snapshot ? OPF_S_SNAPSHOT : 0;
	id = kernel_build_id(&idlen);
	idlen = id ? MIN(idlen, (size_t)OPF_MAX_BUILD_ID) : 0;
	s->build_id_len = (uint32_t)idlen;
	if (idlen)
		memcpy(s->build_id, id, idlen);
	s->session_id = oprof.session_id;
	return s;
}

struct thread_walk {
	struct recw *w;
	uint64_t tsc;
	bool nomem;
};

/* foreach_thread callback: one OPF_THREAD for a thread alive at start. */
static void session_thread(void *arg, uint32_t tid, int core, const char *name)
{
	struct thread_walk *tw = arg;
	void *t = recw_reserve(tw->w, rec_thread_len(name));

	if (!t) {
		tw->nomem = true;
		return;
	}
	rec_thread(t, tid, core, name, tw->tsc);
}

/* Take back everything a failed start handed out. Cores are not enabled. */
static void session_undo(void)
{
	struct block *b;

	for (int i = 0; i < oprof.ncores; i++)
		cpu_teardown(&oprof_cpus[i]);
	while ((b = qget(oprof.outq)))
		pool_put(b);
	pool_trim();
	flag_set(&oprof.wait_ms, oprof.next.period_ms);
	flag_set(&oprof.state, OPROF_IDLE);
}

/*
 * Ctl mutex held, state IDLE, cfg checked. The cores are enabled before the live threads
 * are listed, so a thread created meanwhile is named at least once (maybe twice).
 */
int session_start(const struct oprof_cfg *cfg, char *err, size_t errlen)
{
	struct recw w = { .force = true };
	struct thread_walk tw = { .w = &w };
	int rc;

	oprof.cfg = *cfg;
	oprof.ncores = MIN(ncpus(), MAX_CPUS);
	oprof.stale_ticks = (uint64_t)cfg->stale * cfg->period_ms * (tsc_hz() / 1000);
	oprof.session_id++;
	oprof.stream_bytes = 0;
	oprof.blocks_dropped = 0;
	oprof.snapshots = 0;
	oprof.max_target = session_max_target(cfg);
	oprof.budget_ticks = tsc_hz() / 1000 * OPROF_BUDGET_MS;
	oprof.tick_max_ticks = tsc_hz() / 1000000 * OPROF_TICK_MAX_US;
	flag_set(&oprof.paused, 0);
	flag_set(&oprof.wait_ms, cfg->period_ms);
	pool_setup(cfg->block_bytes, session_max_blocks(cfg, oprof.ncores));
	qreopen(oprof.outq);
	for (int i = 0; i < oprof.ncores; i++) {
		if ((rc = cpu_setup(&oprof_cpus[i])) < 0)
			goto fail;
	}
	tw.tsc = tsc_read();
	rc = -ENOMEM;
	if (!session_header(&w, tw.tsc))
		goto fail;
	for (int i = 0; i < oprof.ncores; i++)
		cpu_enable(&oprof_cpus[i]);
	if (oprof.hooks && oprof.hooks->foreach_thread)
		oprof.hooks->foreach_thread(session_thread, &tw);
	recw_finish(&w);
	flag_set(&oprof.state, OPROF_RUNNING);
	rc = oprof.hooks && oprof.hooks->start_sampling ?
		oprof.hooks->start_sampling(cfg->hz) : 0;
	if (rc < 0) {
		snprintf(err, errlen, "oprofile: cannot start the sampling timers: %s",
			 strerror(rc));
		for (int i = 0; i < oprof.ncores; i++)
			cpu_quiesce(&oprof_cpus[i]);
		session_undo();
		return rc;
	}
	if (tw.nomem)
		printk("oprofile: out of memory naming threads; some are unnamed\n");
	return 0;
fail:
	recw_finish(&w);
	session_undo();
	snprintf(err, errlen, "oprofile: cannot start: %s", strerror(rc));
	return rc;
}

/* Ctl mutex held, RUNNING or PAUSED: close the stream; the reader gets it and EOF. */
void session_stop(void)
{
	flag_set(&oprof.state, OPROF_STOPPING);
	if (oprof.hooks && oprof.hooks->stop_sampling)
		oprof.hooks->stop_sampling();
	for (int i = 0; i < oprof.ncores; i++) {
		cpu_quiesce(&oprof_cpus[i]);
		cpu_flush_partial(&oprof_cpus[i]);
	}
	if (oprof.cfg.snapshot) {
		/* the last windows, as a final snapshot: nothing recorded is thrown away */
		uint32_t seq = (uint32_t)oprof.snapshots + 1;

		for (int i = 0; i < oprof.ncores; i++)
			cpu_snap_takeover(&oprof_cpus[i], seq);
		worker_dump_snapshot(seq);
	} else {
		worker_drain();
	}
	for (int i = 0; i < oprof.ncores; i++)
		cpu_teardown(&oprof_cpus[i]);
	worker_close_stream();
	pool_trim();
	flag_set(&oprof.wait_ms, oprof.next.period_ms);
	flag_set(&oprof.state, OPROF_DRAINING);
	qhangup(oprof.outq);
	reader_wake();
}

/* Ctl mutex held: pause or resume every core; returns once no core is mid-tick. */
void session_pause(bool pause)
{
	struct recw w = { .force = true };
	struct opf_mark *m = recw_reserve(&w, OPF_MARK_V1_LEN);

	flag_set(&oprof.state, pause ? OPROF_PAUSED : OPROF_RUNNING);
	__atomic_store_n(&oprof.paused, pause ? 1 : 0, __ATOMIC_SEQ_CST);
	for (int i = 0; i < oprof.ncores; i++)
		cpu_wait_idle(&oprof_cpus[i]);
	if (m) {
		m->h.type = pause ? OPF_PAUSE : OPF_RESUME;
		m->h.len = OPF_MARK_V1_LEN;
		m->tsc = tsc_read();
	}
	recw_finish(&w);
}

/* Ctl mutex held, RUNNING or PAUSED: every core pushes its partial block at its next tick. */
void session_flush(void)
{
	__atomic_add_fetch(&oprof.flushgen, 1, __ATOMIC_RELAXED);
	worker_kick();
}

static bool snap_all_acked(void *arg)
{
	uint32_t seq = (uint32_t)(uintptr_t)arg;

	for (int i = 0; i < oprof.ncores; i++)
		if (__atomic_load_n(&oprof_cpus[i].snap_ack, __ATOMIC_ACQUIRE) != seq)
			return false;
	return true;
}

/* How long the cores get to hand over: four ticks of the slowest core, and 100 ms. */
static uint64_t snap_wait_us(void)
{
	uint32_t hz = UINT32_MAX;

	for (int i = 0; i < oprof.ncores; i++)
		hz = MIN(hz, MAX(flag_get(&oprof_cpus[i].hz), 1u));
	return 100000 + 4000000ull / hz;
}

/*
 * Ctl mutex held, flight recorder RUNNING or PAUSED: one snapshot (see percpu.c for the
 * cut). The empty queues are topped up first, so a core that has just handed its window
 * over fills a new one without waiting for the worker. A core that did not tick in time
 * is quiesced and handed over here; ticks that come while it is quiesced are skipped (not
 * counted), which only happens to a core whose timer was not running anyway.
 */
int session_snapshot(char *err, size_t errlen)
{
	uint32_t seq = (uint32_t)oprof.snapshots + 1;

	(void)err, (void)errlen;
	worker_refill();
	__atomic_store_n(&oprof.snap_req, seq, __ATOMIC_RELEASE);
	rendez_sleep_timeout(&oprof.snap_r, snap_all_acked, (void *)(uintptr_t)seq,
			     snap_wait_us());
	for (int i = 0; i < oprof.ncores; i++) {
		struct oprof_cpu *c = &oprof_cpus[i];

		if (__atomic_load_n(&c->snap_ack, __ATOMIC_ACQUIRE) == seq)
			continue;
		cpu_quiesce(c);
		if (c->snap_ack != seq)
			cpu_snap_takeover(c, seq);
		cpu_enable(c);
	}
	worker_dump_snapshot(seq);
	return 0;
}

/* Ctl mutex held, DRAINING: throw the unread stream away. */
void session_discard(void)
{
	struct block *b;

	while ((b = qget(oprof.outq)))
		pool_put(b);
	pool_trim();
	qreopen(oprof.outq);
	flag_set(&oprof.state, OPROF_IDLE);
}
