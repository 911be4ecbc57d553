/*
 * Sessions: the state machine and the session's start and stop (the session lock, oprof.lock,
 * is internal.h's).
 *
 *	IDLE --start--> RUNNING <--pause/resume--> PAUSED
 *	RUNNING, PAUSED --stop--> STOPPING --(closing records queued)--> DRAINING
 *	DRAINING --(reader reads to the end of the stream, or "discard")--> IDLE
 *
 * Every transition but DRAINING -> IDLE is made by oprof_ctl (a thread). All of them run
 * with the session lock held, and so do worker passes and the stat text: the lock is what
 * makes a pass, a start, a stop and a stat snapshot see each other whole. It is a qlock
 * (sleeping) because its holders allocate and wait for cores. The hot path never takes
 * it: it reads the session's cfg (constant while a session runs), oprof.paused and
 * oprof.flushgen only.
 *
 * A start sizes the session to the machine, sets aside the blocks its closing records
 * will need, and writes the stream's header itself (OPF_SESSION, then OPF_THREAD for every
 * live thread) before the cores are told to sample; a stop stops every core, pushes the
 * partial blocks, drains them (flight recorder: dumps the windows as a last snapshot) and
 * appends the closing statistics in a block marked as the end of the stream, which the
 * reader turns into end of file. Snapshots are flight.c's; text parsing of commands lives
 * in ctl.c, the stat file in stat.c.
 */
#include "internal.h"
#include "error.h"
#include "page.h"
#include "tsctime.h"

struct oprof_global oprof;

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

void oprof_init(const struct oprof_hooks *hooks)
{
	qlock_init_named(&oprof.lock, "oprof session");
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
		.source = hooks && hooks->default_source ? hooks->default_source() : OPF_SRC_TIMER,
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
 * Memory, counted as blocks really hold it (BMEM: buffer, header and the allocator's
 * rounding). A session may use at most half the memory free at its start: the output queue
 * (the cap, lowered to a quarter of free memory if set higher) and every core's working
 * set (its empty ring's most, OPROF_MAX_EMPTYDEPTH or OPROF_CORE_MEM bytes, lowered so
 * that all cores together take at most another quarter; flight recorder: its window
 * twice and cur), plus the blocks set aside for the closing records.
 */
#define OPROF_CORE_MEM	(8u << 20)

static uint64_t session_free_bytes(void)
{
	return (uint64_t)pages_free_count() * PGSIZE;
}

static uint32_t session_max_target(const struct oprof_cfg *cfg, int ncores, uint64_t avail)
{
	uint64_t per_core = MIN((uint64_t)OPROF_CORE_MEM, avail / 4 / (uint64_t)ncores);
	uint32_t t = (uint32_t)MIN((uint64_t)OPROF_MAX_EMPTYDEPTH, per_core / oprof.bmem);

	return MAX(t, cfg->emptydepth);
}

/* Closing records of ncores cores: drops, losses and totals of each, the session's end. */
static uint32_t session_reserve_blocks(const struct oprof_cfg *cfg, int ncores)
{
	uint64_t per_core = DROP_RUNS * sizeof(struct opf_drop) + sizeof(struct opf_drop) +
			    OPF_LOST_NREASONS * sizeof(struct opf_lost) +
			    sizeof(struct opf_core_end) +
			    (cfg->events ? sizeof(struct opf_sched_end) : 0);
	uint64_t room = cfg->block_bytes - BLK_HDR;
	/* records never straddle blocks: a block may leave up to one record's room unused */
	uint64_t usable = room - sizeof(struct opf_core_end);

	return (uint32_t)((per_core * (uint64_t)ncores + sizeof(struct opf_session_end) +
			   usable - 1) / usable) + 1;
}

/* Blocks the pool may hold: the cap's worth, every core's working set, the reserve. */
static uint64_t session_max_blocks(const struct oprof_cfg *cfg, int ncores, uint32_t reserve)
{
	uint64_t per_core = cfg->snapshot ? 2ull * cfg->window + 1 : oprof.max_target + 2;

	return oprof.cap / oprof.bmem + (uint64_t)ncores * per_core + reserve + 4;
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

/* Blocks set aside for the closing records go back. */
static void session_free_reserve(void)
{
	struct block *b;

	while ((b = oprof.reserve)) {
		oprof.reserve = b->next;
		pool_put(b);
	}
}

/* Start or stop the session's scheduler events, if it asked for them (sched_events.c). */
static void session_events(bool on)
{
	if (oprof.cfg.events && oprof.hooks && oprof.hooks->sched_events)
		oprof.hooks->sched_events(on ? sched_events_ops() : NULL);
}

bool session_cores_stopped(void)
{
	for (int i = 0; i < oprof.ncores; i++)
		if (__atomic_load_n(&opcores[i].on, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

static void session_quiet_here(void *arg)
{
	(void)arg;
}

/*
 * Close every core's gate and (sampling: the source was started) wait out every writer
 * context: the sampling source (the glue's stop_sampling waits for its interrupts or
 * NMIs), then a thread-context writer (oprof_thread_created, interrupts off) on any core
 * -- hooks->on_core runs on a core only once nothing there has interrupts off. A writer
 * that read the gate open before it closed has finished when this returns; none enters
 * after. From then on the ctl thread may act as the cores, and free their buffers.
 */
static void session_stop_cores(bool sampling)
{
	session_events(false);	/* the hooks off first; a writer inside is waited out below */
	for (int i = 0; i < oprof.ncores; i++)
		opcore_disable(&opcores[i]);
	if (!sampling)
		return;
	if (oprof.hooks && oprof.hooks->stop_sampling)
		oprof.hooks->stop_sampling();
	for (int i = 0; oprof.hooks && oprof.hooks->on_core && i < oprof.ncores; i++)
		oprof.hooks->on_core(i, session_quiet_here, NULL);
}

/*
 * Take back everything a failed start handed out: the cores stopped (sampling: the source
 * was started, so stop it too, and wait out every writer), their blocks, the reserve.
 */
static void session_undo(bool sampling)
{
	struct block *b;

	session_stop_cores(sampling);
	if (oprof.cfg.events)
		sched_events_forget();	/* wake-ups left pending, with the stream */
	for (int i = 0; i < oprof.ncores; i++)
		opcore_teardown(&opcores[i]);
	session_free_reserve();
	while ((b = qget(oprof.outq)))
		pool_put(b);
	pool_trim();
	flag_set(&oprof.wait_ms, oprof.next.period_ms);
	flag_set(&oprof.state, OPROF_IDLE);
}

/* The session's sizes from cfg and the machine; -ENOMEM or -EINVAL with a message if not. */
static int session_size(const struct oprof_cfg *cfg, char *err, size_t errlen)
{
	uint64_t avail = session_free_bytes() / 2;
	uint32_t reserve = session_reserve_blocks(cfg, oprof.ncores);

	oprof.bmem = block_mem_of(cfg->block_bytes);
	oprof.cap = MIN(cfg->cap, avail / 2);
	oprof.max_target = session_max_target(cfg, oprof.ncores, avail);
	if (oprof.cap < (reserve + 2ull) * oprof.bmem && oprof.cap < cfg->cap) {
		/* the cap was lowered to a quarter of the free memory: that is what is short */
		snprintf(err, errlen, "oprofile: out of memory: %lu KiB free, a session of %u-byte "
			 "blocks needs %lu KiB", (unsigned long)(session_free_bytes() >> 10),
			 cfg->block_bytes, (unsigned long)((reserve + 2ull) * oprof.bmem * 4 >> 10));
		return -ENOMEM;
	}
	if (oprof.cap < (reserve + 2ull) * oprof.bmem) {
		snprintf(err, errlen, "oprofile: cap %luK in effect too small for %u-byte blocks "
			 "(need room for %u: two and the closing records)",
			 (unsigned long)(oprof.cap >> 10), cfg->block_bytes, reserve + 2);
		return -EINVAL;
	}
	if ((uint64_t)oprof.ncores * (oprof.max_target + 2) * oprof.bmem > avail) {
		snprintf(err, errlen, "oprofile: not enough memory for %d cores with %u-byte "
			 "blocks (%lu KiB free)", oprof.ncores, cfg->block_bytes,
			 (unsigned long)(session_free_bytes() >> 10));
		return -ENOMEM;
	}
	pool_setup(cfg->block_bytes, session_max_blocks(cfg, oprof.ncores, reserve));
	for (uint32_t i = 0; i < reserve; i++) {
		struct block *b = pool_get(true);

		if (!b) {
			snprintf(err, errlen, "oprofile: no memory for the closing records");
			return -ENOMEM;
		}
		b->next = oprof.reserve;
		oprof.reserve = b;
	}
	/* the closing records keep the reserve's room under the cap; the kernel's capped
	   records may use one block more than the cores' blocks (worker.c) */
	oprof.rec_cap = oprof.cap - reserve * oprof.bmem;
	qsetlimit(oprof.outq, oprof.rec_cap - oprof.bmem);
	return 0;
}

/* A new session's state from cfg, before anything is allocated. */
static void session_reset(const struct oprof_cfg *cfg)
{
	oprof.cfg = *cfg;
	oprof.ncores = MIN(ncpus(), MAX_CPUS);
	oprof.stale_ticks = tsc_of_ms((uint64_t)cfg->stale * cfg->period_ms);
	oprof.session_id++;
	oprof.stream_bytes = 0;
	oprof.stream_seq = 0;
	oprof.blocks_dropped = 0;
	oprof.marks_lost = 0;
	oprof.snapshots = 0;
	oprof.budget_ticks = tsc_of_ms(OPROF_BUDGET_MS);
	oprof.tick_max_ticks = tsc_of_us(OPROF_TICK_MAX_US);
	flag_set(&oprof.paused, 0);
	flag_set(&oprof.wait_ms, cfg->period_ms);
	qreopen(oprof.outq);
}

/* Start the sampling source; 0, or -errno with the message in err. */
static int session_arm(const struct oprof_cfg *cfg, char *err, size_t errlen)
{
	int rc = oprof.hooks && oprof.hooks->start_sampling ?
		oprof.hooks->start_sampling(cfg->hz, cfg->source) : 0;

	if (rc == -ENODEV && cfg->source == OPF_SRC_NMI)
		snprintf(err, errlen, "oprofile: cannot sample by NMI: this machine has no "
			 "NMI timer (HPET); use -m timer");
	else if (rc < 0)
		snprintf(err, errlen, "oprofile: cannot start sampling: %s", strerror(rc));
	return rc;
}

/*
 * Session lock held, state IDLE, cfg checked. The cores are enabled before the live threads
 * are listed, so a thread created meanwhile is named at least once (maybe twice).
 */
int session_start(const struct oprof_cfg *cfg, char *err, size_t errlen)
{
	struct recw w = { .mode = RECW_FORCED };
	struct thread_walk tw = { .w = &w };
	int rc;

	must_hold_session();
	must(flag_get(&oprof.state) == OPROF_IDLE, "no session");
	session_reset(cfg);
	if ((rc = session_size(cfg, err, errlen)) < 0) {
		session_undo(false);
		return rc;
	}
	for (int i = 0; i < oprof.ncores && rc == 0; i++)
		rc = opcore_setup(&opcores[i]);
	tw.tsc = tsc_read();
	if (rc == 0 && !stream_session(tw.tsc))
		rc = -ENOMEM;
	if (rc < 0) {
		session_undo(false);
		snprintf(err, errlen, "oprofile: cannot start: %s", strerror(rc));
		return rc;
	}
	for (int i = 0; i < oprof.ncores; i++)
		opcore_enable(&opcores[i]);
	session_events(true);
	if (oprof.hooks && oprof.hooks->foreach_thread)
		oprof.hooks->foreach_thread(session_thread, &tw);
	recw_finish(&w);
	flag_set(&oprof.state, OPROF_RUNNING);
	if ((rc = session_arm(cfg, err, errlen)) < 0) {
		session_undo(true);
		return rc;
	}
	if (tw.nomem)
		printk("oprofile: out of memory naming threads; some are unnamed\n");
	return 0;
}

/*
 * Session lock held, RUNNING or PAUSED: stop every core, then, acting for them, push their
 * partial blocks, drain (flight recorder: dump the last windows) and close the stream.
 */
void session_stop(void)
{
	must_hold_session();
	must(session_active(), "a session running or paused");
	flag_set(&oprof.state, OPROF_STOPPING);
	session_stop_cores(true);	/* no writer is inside any core after this */
	if (oprof.cfg.events)
		sched_events_drain();	/* the wake-ups no switch wrote */
	for (int i = 0; i < oprof.ncores; i++)
		opcore_flush_partial(&opcores[i]);
	if (oprof.cfg.snapshot)
		flight_stop();	/* nothing recorded is thrown away */
	else
		worker_drain();
	stream_close();
	for (int i = 0; i < oprof.ncores; i++)
		opcore_teardown(&opcores[i]);
	session_free_reserve();
	pool_trim();
	flag_set(&oprof.wait_ms, oprof.next.period_ms);
	flag_set(&oprof.state, OPROF_DRAINING);
}

/*
 * Session lock held: pause or resume. Each core notices at its next tick and marks it in
 * its own stream (hotpath.c), so the marks sit among the core's samples in time order.
 */
void session_pause(bool pause)
{
	must_hold_session();
	flag_set(&oprof.state, pause ? OPROF_PAUSED : OPROF_RUNNING);
	__atomic_store_n(&oprof.paused, pause ? 1 : 0, __ATOMIC_RELEASE);
}

/* Session lock held, RUNNING or PAUSED: every core pushes its partial block at its next tick. */
void session_flush(void)
{
	__atomic_add_fetch(&oprof.flushgen, 1, __ATOMIC_RELAXED);
	worker_kick();
}

/*
 * Session lock held, DRAINING: throw the unread stream away. A reader in the middle of it
 * gets, instead of the rest, an OPF_SESSION_END saying so and then end of file (the block
 * that ended the stream carries it); the next session's records are the next reader's.
 * An open reader is in the middle once the session's header has left the queue (to it,
 * or to an earlier reader: then it gets a resumed copy) -- told by the queue, not by the
 * reader's note of its session, which it makes a moment after taking the header.
 */
void session_discard(void)
{
	struct block *b, *eos = NULL;
	bool header_queued = false;

	must_hold_session();
	must(flag_get(&oprof.state) == OPROF_DRAINING, "a stopped session's stream unread");
	while ((b = qget(oprof.outq))) {
		header_queued |= (b->flags & BLK_SESSION) && b->session == oprof.session_id;
		if ((b->flags & BLK_EOS) && !eos)
			eos = b;
		else
			pool_put(b);
	}
	if (eos && reader_is_open() && !header_queued) {
		struct recw w = { .eos = true };

		blk_frame(eos);
		w.b = eos;
		stream_session_end(&w, tsc_read(), OPF_SE_DISCARDED);
		recw_finish(&w);
	} else {
		pool_put(eos);
	}
	pool_trim();
	qreopen(oprof.outq);
	flag_set(&oprof.state, OPROF_IDLE);
}
