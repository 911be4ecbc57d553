/*
 * Sessions: the state machine, the session lock and the session's start and stop.
 *
 *	IDLE --start--> RUNNING <--pause/resume--> PAUSED
 *	RUNNING, PAUSED --stop--> STOPPING --(closing records queued, outq hung up)--> DRAINING
 *	DRAINING --(reader reads to EOF, or "discard")--> IDLE
 *
 * Every transition but DRAINING -> IDLE is made by oprof_ctl (a thread). All of them run
 * with the session lock held, and so do worker passes and the stat text: the lock is what
 * makes a pass, a start, a stop and a stat snapshot see each other whole. It is a qlock
 * (sleeping) because its holders allocate and wait for cores. The hot path never takes
 * it: it reads the session's cfg (constant while a session runs), oprof.paused and
 * oprof.flushgen only.
 *
 * A start writes the stream's header itself (OPF_SESSION, then OPF_THREAD for every live
 * thread) before the cores are told to sample; a stop stops every core, pushes the partial
 * blocks, drains them (flight recorder: dumps the windows as a last snapshot), appends the
 * closing statistics and hangs the output queue up. Snapshots are flight.c's; text parsing
 * of commands lives in ctl.c, the stat file in stat.c.
 */
#include "internal.h"
#include "error.h"

struct oprof_global oprof;

static struct qlock session_qlock;

void session_lock(void)
{
	qlock(&session_qlock);
}

void session_unlock(void)
{
	qunlock(&session_qlock);
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
	qlock_init(&session_qlock);
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
	oprof.outq = qopen(OPROF_DEF_CAP);
	if (!oprof.outq)
		panic("oprofile: no memory for the output queue");
}

void oprof_fini(void)
{
	struct block *b;

	session_lock();
	while ((b = qget(oprof.outq)))
		pool_put(b);
	pool_trim();
	qfree(oprof.outq);
	oprof.outq = NULL;
	session_unlock();
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
		opcore_teardown(&opcores[i]);
	while ((b = qget(oprof.outq)))
		pool_put(b);
	pool_trim();
	flag_set(&oprof.wait_ms, oprof.next.period_ms);
	flag_set(&oprof.state, OPROF_IDLE);
}

/*
 * Session lock held, state IDLE, cfg checked. The cores are enabled before the live threads
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
	qsetlimit(oprof.outq, cfg->cap);
	qreopen(oprof.outq);
	for (int i = 0; i < oprof.ncores; i++) {
		if ((rc = opcore_setup(&opcores[i])) < 0)
			goto fail;
	}
	tw.tsc = tsc_read();
	rc = -ENOMEM;
	if (!rec_session(&w, tw.tsc))
		goto fail;
	for (int i = 0; i < oprof.ncores; i++)
		opcore_enable(&opcores[i]);
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
			opcore_quiesce(&opcores[i]);
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

/* Session lock held, RUNNING or PAUSED: close the stream; the reader gets it and EOF. */
void session_stop(void)
{
	flag_set(&oprof.state, OPROF_STOPPING);
	if (oprof.hooks && oprof.hooks->stop_sampling)
		oprof.hooks->stop_sampling();
	for (int i = 0; i < oprof.ncores; i++) {
		opcore_quiesce(&opcores[i]);
		opcore_flush_partial(&opcores[i]);
	}
	if (oprof.cfg.snapshot) {
		/* the last windows, as a final snapshot: nothing recorded is thrown away */
		uint32_t seq = (uint32_t)oprof.snapshots + 1;

		for (int i = 0; i < oprof.ncores; i++)
			flight_takeover(&opcores[i], seq);
		flight_dump(seq);
	} else {
		worker_drain();
	}
	for (int i = 0; i < oprof.ncores; i++)
		opcore_teardown(&opcores[i]);
	worker_close_stream();
	pool_trim();
	flag_set(&oprof.wait_ms, oprof.next.period_ms);
	flag_set(&oprof.state, OPROF_DRAINING);
	qhangup(oprof.outq);
}

/* Session lock held: pause or resume every core; returns once no core is mid-tick. */
void session_pause(bool pause)
{
	struct recw w = { .force = true };
	void *m = recw_reserve(&w, OPF_MARK_V1_LEN);

	flag_set(&oprof.state, pause ? OPROF_PAUSED : OPROF_RUNNING);
	__atomic_store_n(&oprof.paused, pause ? 1 : 0, __ATOMIC_SEQ_CST);
	for (int i = 0; i < oprof.ncores; i++)
		opcore_wait_idle(&opcores[i]);
	if (m)
		rec_mark(m, pause ? OPF_PAUSE : OPF_RESUME, tsc_read());
	recw_finish(&w);
}

/* Session lock held, RUNNING or PAUSED: every core pushes its partial block at its next tick. */
void session_flush(void)
{
	__atomic_add_fetch(&oprof.flushgen, 1, __ATOMIC_RELAXED);
	worker_kick();
}

/* Session lock held, DRAINING: throw the unread stream away. */
void session_discard(void)
{
	struct block *b;

	while ((b = qget(oprof.outq)))
		pool_put(b);
	pool_trim();
	qreopen(oprof.outq);
	flag_set(&oprof.state, OPROF_IDLE);
}
