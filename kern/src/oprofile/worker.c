/*
 * The worker: moves blocks from the cores to the stream and back.
 *
 * A kernel thread on core 0 wakes every period (oprof_worker_wait; a core whose empty
 * queue ran dry kicks it early) and runs one pass with the ctl mutex held, so a pass never
 * overlaps a start, stop or another pass. A pass:
 *	drain	for every core, take its full blocks in order (qget on its fullq) and queue
 *		them on the output queue -- unless that would put the queue over its cap: then
 *		the block (the newest data there is) is dropped to the pool and its samples,
 *		known from block->aux, are counted lost OUTPUT_FULL for that core. A block
 *		already queued is never dropped, so neither is one a reader has begun (the
 *		reader takes whole blocks off the queue anyway).
 *	report	what drops took from the stream -- their samples (OUTPUT_FULL) and the
 *		OPF_LOST records inside dropped blocks -- is told again in OPF_LOST records
 *		the worker writes, when they fit.
 *	refill	top up every core's empty queue to its target depth from the pool, which
 *		allocates only below its max (see pool.c). The target adapts to the core's
 *		rate: what it used per period, times a few periods of slack, never below the
 *		emptydepth setting (worker_target). A core whose queue falls to half its
 *		target kicks the worker early (percpu.c), at most once per pass.
 * Flight recorder: a pass does not drain (fullq is the core's window); it only keeps each
 * empty queue at a window's worth. worker_dump_snapshot writes a snapshot's dump.
 * The cap counts the queue's blocks at their full size (the memory they hold), not just
 * their data; with the pool's max that keeps memory under cap + per-core blocks while
 * leaving every core its working set, so "no empty block" means the worker was late and
 * "output full" means the reader was.
 * At stop, ctl runs the drain one last time and worker_close_stream appends the closing
 * statistics.
 *
 * Counting: a core counts samples written into blocks and (flight recorder) overwritten;
 * the worker counts what it dropped. delivered = written - overwritten - dropped is then
 * exactly the number of the core's OPF_SAMPLE records in the stream, and
 * taken == delivered + sum(lost) + overwritten holds per core.
 */
#include "internal.h"

static struct rendez worker_r;	/* the worker sleeps here between passes */
static uint32_t worker_kicked;	/* a core asked for an early pass */

void worker_init(void)
{
	rendez_init(&worker_r);
}

static bool worker_should_run(void *arg)
{
	(void)arg;
	return flag_get(&worker_kicked) != 0;
}

void oprof_worker_wait(void)
{
	uint32_t ms = flag_get(&oprof.wait_ms);

	rendez_sleep_timeout(&worker_r, worker_should_run, NULL, (uint64_t)ms * 1000);
	flag_set(&worker_kicked, 0);
}

/* Any context (the hot path calls it on the first miss of a dry spell). */
void worker_kick(void)
{
	flag_set(&worker_kicked, 1);
	rendez_wakeup(&worker_r);
}

void oprof_worker_pass(void)
{
	ctl_lock();
	if (session_active()) {
		if (!oprof.cfg.snapshot)
			worker_drain();
		worker_refill();
		__atomic_add_fetch(&oprof.pass_gen, 1, __ATOMIC_RELAXED);
	}
	ctl_unlock();
}

/*
 * b leaves the profiler's stream: its samples are lost OUTPUT_FULL; its OPF_LOST counts
 * are told again later, its OPF_THREAD records are counted as dropped.
 */
static void worker_drop(struct oprof_cpu *c, struct block *b)
{
	c->threads_dropped += rec_salvage(b, c->w_unreported);
	c->dropped_samples += b->aux;
	c->dropped_truncated += BLK_TRUNC(b);
	c->w_unreported[OPF_LOST_OUTPUT_FULL] += b->aux;
	c->dropped_blocks++;
	oprof.blocks_dropped++;
	pool_put(b);
}

/*
 * The cap bounds the memory the queue holds, so it counts whole blocks (all are the
 * session's size): data bytes alone would let partly filled blocks pile up past it.
 */
static bool outq_room_for(uint64_t nblocks)
{
	return (qblocks(oprof.outq) + nblocks) * oprof.cfg.block_bytes <= oprof.cfg.cap;
}

static bool outq_room(void)
{
	return outq_room_for(1);
}

/* Every block of q (c's), oldest first, to the output queue or (over the cap) dropped. */
static void worker_drain_queue(struct oprof_cpu *c, struct queue *q)
{
	struct block *b;

	/* qblocks is a plain load: an empty queue costs no lock the core takes */
	while (qblocks(q) && (b = qget(q))) {
		if (outq_room())
			outq_put(b);
		else
			worker_drop(c, b);
	}
}

/* OPF_LOST records for what drops took from the stream, while they fit under the cap. */
static void worker_report_drops(void)
{
	struct recw w = { 0 };

	for (int i = 0; i < oprof.ncores; i++) {
		struct oprof_cpu *c = &oprof_cpus[i];

		for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
			void *p;

			if (!c->w_unreported[r])
				continue;
			/* a new block for the record: it and the writer's current one must fit */
			if ((!w.b || BFREE(w.b) < sizeof(struct opf_lost)) &&
			    !outq_room_for(w.b ? 2 : 1))
				goto out;
			if (!(p = recw_reserve(&w, sizeof(struct opf_lost))))
				goto out;
			rec_lost(p, (uint16_t)i, (uint16_t)r, c->w_unreported[r], tsc_read());
			c->w_unreported[r] = 0;
		}
	}
out:
	recw_finish(&w);
}

void worker_drain(void)
{
	for (int i = 0; i < oprof.ncores; i++)
		worker_drain_queue(&oprof_cpus[i], oprof_cpus[i].fullq);
	worker_report_drops();	/* its recw_finish wakes the reader, once a pass */
}

/*
 * Streaming: the empty-queue depth c needs. Enough for the blocks it used per second,
 * over OPROF_REFILL_HORIZON worker periods (a late worker, a burst), never below the
 * setting; doubled when the core ran dry since the last pass; and decaying by one block
 * a pass, so a core that slows down gives memory back gradually.
 */
#define OPROF_REFILL_HORIZON	8

static uint32_t worker_target(struct oprof_cpu *c, uint64_t now)
{
	uint64_t used = cnt_get(&c->blocks) - c->w_blocks, dt = now - c->w_tsc;
	uint64_t noblock = cnt_get(&c->lost[OPF_LOST_NO_BLOCK]);
	uint64_t period = tsc_hz() / 1000 * oprof.cfg.period_ms, want;
	uint32_t t = c->target;

	want = dt ? (used * period * OPROF_REFILL_HORIZON + dt - 1) / dt + 1 : 0;
	t = t > oprof.cfg.emptydepth ? t - 1 : t;
	if (noblock != c->w_noblock)
		t *= 2;
	t = (uint32_t)MAX((uint64_t)t, want);
	c->w_blocks += used;
	c->w_noblock = noblock;
	c->w_tsc = now;
	return MIN(MAX(t, oprof.cfg.emptydepth), oprof.max_target);
}

/*
 * Top up every core's empty queue to its target (flight recorder: a window's worth) and
 * publish its low-water mark. Stops at the first block the pool refuses.
 */
void worker_refill(void)
{
	uint64_t now = tsc_read();

	for (int i = 0; i < oprof.ncores; i++) {
		struct oprof_cpu *c = &oprof_cpus[i];

		if (!oprof.cfg.snapshot) {
			c->target = worker_target(c, now);
			flag_set(&c->low, c->target / 2);
		}
		while (qblocks(c->emptyq) < c->target) {
			struct block *b = pool_get(false);

			if (!b)
				return;
			if (qiwrite_block(c->emptyq, b) < 0) {
				pool_put(b);
				return;
			}
		}
	}
}

/* OPF_LOST for everything c has not told yet, then its OPF_CORE_END. False: no memory. */
static bool worker_close_core(struct recw *w, int core, uint64_t tsc)
{
	struct oprof_cpu *c = &oprof_cpus[core];
	struct opf_core_end *e;

	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		c->unreported[r] += c->w_unreported[r];
		c->w_unreported[r] = 0;
	}
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		void *p;

		if (!c->unreported[r])
			continue;
		if (!(p = recw_reserve(w, sizeof(struct opf_lost))))
			return false;
		rec_lost(p, (uint16_t)core, (uint16_t)r, c->unreported[r], tsc);
		c->unreported[r] = 0;
	}
	if (!(e = recw_reserve(w, OPF_CORE_END_V1_LEN)))
		return false;
	e->h.type = OPF_CORE_END;
	e->h.len = OPF_CORE_END_V1_LEN;
	e->core = (uint32_t)core;
	e->taken = c->taken;
	e->delivered = cpu_delivered(c);
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++)
		e->lost[r] = c->lost[r];
	e->lost[OPF_LOST_OUTPUT_FULL] = c->dropped_samples;
	e->overwritten = c->overwritten;
	e->truncated = cpu_truncated(c);
	e->blocks = c->blocks;
	e->throttles = c->throttles;
	e->final_hz = c->hz;
	e->missed = __atomic_load_n(&c->missed, __ATOMIC_RELAXED);
	return true;
}

static void worker_snap_mark(uint16_t flags, uint64_t seq)
{
	struct recw w = { .force = true };
	struct opf_snapshot *m = recw_reserve(&w, sizeof(*m));

	if (m) {
		m->h.type = OPF_SNAPSHOT;
		m->h.flags = flags;
		m->h.len = sizeof(*m);
		m->seq = seq;
		m->tsc = tsc_read();
	}
	recw_finish(&w);
}

/* foreach_thread callback of a dump: name a live thread (its creation record may be gone). */
static void worker_snap_thread(void *arg, uint32_t tid, int core, const char *name)
{
	struct recw *w = arg;
	void *t = recw_reserve(w, rec_thread_len(name));

	if (t)
		rec_thread(t, tid, core, name, tsc_read());
}

/*
 * Flight recorder, ctl mutex held, every core's window handed over to its snapq: the
 * dump of snapshot seq. OPF_SNAPSHOT begin, the name of every live thread, each core's
 * window oldest first (under the output cap like any block: over it, a block is dropped
 * and counted lost OUTPUT_FULL), OPF_LOST for what drops took, OPF_SNAPSHOT end. The
 * dumped samples are delivered: the snapshot consumes them.
 */
void worker_dump_snapshot(uint64_t seq)
{
	struct recw w = { .force = true };

	worker_snap_mark(OPF_SNAP_BEGIN, seq);
	if (oprof.hooks && oprof.hooks->foreach_thread)
		oprof.hooks->foreach_thread(worker_snap_thread, &w);
	recw_finish(&w);
	for (int i = 0; i < oprof.ncores; i++)
		worker_drain_queue(&oprof_cpus[i], oprof_cpus[i].snapq);
	worker_report_drops();
	worker_snap_mark(OPF_SNAP_END, seq);
	oprof.snapshots = seq;
}

/*
 * Stop, after every core is quiesced and drained: the closing records, past the cap and
 * the pool's max (pool_get(true)), so a session's stream always ends properly. Should
 * memory be out even so, the reader still gets EOF, with the closing records missing.
 */
void worker_close_stream(void)
{
	struct recw w = { .force = true };
	uint64_t tsc = tsc_read();
	struct opf_session_end *e;

	for (int i = 0; i < oprof.ncores; i++)
		if (!worker_close_core(&w, i, tsc))
			goto out;
	if (!(e = recw_reserve(&w, OPF_SESSION_END_V1_LEN)))
		goto out;
	e->h.type = OPF_SESSION_END;
	e->h.len = OPF_SESSION_END_V1_LEN;
	e->end_tsc = tsc;
	e->end_ns = nsec();
	e->blocks_dropped = oprof.blocks_dropped;
	e->bytes = oprof.stream_bytes + BLEN(w.b) - OPF_SESSION_END_V1_LEN;
out:
	recw_finish(&w);
}
