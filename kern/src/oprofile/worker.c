/*
 * The worker: moves blocks from the cores to the stream and back.
 *
 * A kernel thread on core 0 wakes every period (oprof_worker_wait; a core whose empty
 * queue ran dry kicks it early) and runs one pass with the session lock held, so a pass
 * never overlaps a start, stop or another pass. A pass:
 *	drain	for every core, take its full blocks in order (qget on its fullq) and queue
 *		them on the output queue -- unless that would put the queue over its cap (the
 *		queue's limit: qbwrite_drop refuses the block): then
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
 * empty queue at a window's worth. flight_dump drains a snapshot's windows the same way.
 * The cap counts the queue's blocks at their full size (the memory they hold), not just
 * their data; with the pool's max that keeps memory under cap + per-core blocks while
 * leaving every core its working set, so "no empty block" means the worker was late and
 * "output full" means the reader was.
 * At stop, ctl runs the drain one last time and worker_close_stream appends the closing
 * statistics. outq_put queues the kernel's own blocks (encode.c's record writer).
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
	session_lock();
	if (session_active()) {
		if (!oprof.cfg.snapshot)
			worker_drain();
		worker_refill();
		__atomic_add_fetch(&oprof.pass_gen, 1, __ATOMIC_RELAXED);
	}
	session_unlock();
}

/*
 * Queue one of the kernel's own blocks on the stream, whatever the cap (they are few:
 * the header, losses told, marks, the closing records). outq is never hung up while a
 * session writes it, so qiwrite_block cannot fail.
 */
void outq_put(struct block *b)
{
	size_t len = BLEN(b);

	if (len == 0 || qiwrite_block(oprof.outq, b) < 0) {
		pool_put(b);
		return;
	}
	oprof.stream_bytes += len;
}

/*
 * b leaves the profiler's stream: its samples are lost OUTPUT_FULL; its OPF_LOST counts
 * are told again later, its OPF_THREAD records are counted as dropped.
 */
static void worker_drop(struct opcore *c, struct block *b)
{
	c->w.threads_dropped += rec_salvage(b, c->w.unreported);
	c->w.dropped_samples += b->aux;
	c->w.dropped_truncated += BLK_TRUNC(b);
	c->w.unreported[OPF_LOST_OUTPUT_FULL] += b->aux;
	c->w.dropped_blocks++;
	oprof.blocks_dropped++;
	pool_put(b);
}

/* Every block of q (c's), oldest first, to the output queue or (over the cap) dropped. */
void worker_drain_queue(struct opcore *c, struct queue *q)
{
	struct block *b;

	/* qblocks is a plain load: an empty queue costs no lock the core takes */
	while (qblocks(q) && (b = qget(q))) {
		size_t len = BLEN(b);

		if (len == 0)
			pool_put(b);
		else if (qbwrite_drop(oprof.outq, b) >= 0)
			oprof.stream_bytes += len;
		else
			worker_drop(c, b);
	}
}

/*
 * recw_reserve, but a record that needs a new block gets one only if that block and the
 * writer's current one (both to be queued) fit under the cap.
 */
static void *worker_reserve_capped(void *arg, uint32_t len)
{
	struct recw *w = arg;

	if ((!w->b || BFREE(w->b) < len) &&
	    qroom(oprof.outq) < (w->b ? 2u : 1u) * oprof.cfg.block_bytes)
		return NULL;
	return recw_reserve(w, len);
}

/* OPF_LOST records for what drops took from the stream, while they fit under the cap. */
void worker_report_drops(void)
{
	struct recw w = { 0 };

	for (int i = 0; i < oprof.ncores; i++)
		if (!rec_lost_all(opcores[i].w.unreported, (uint16_t)i, tsc_read(),
				  worker_reserve_capped, &w))
			break;
	recw_finish(&w);
}

void worker_drain(void)
{
	for (int i = 0; i < oprof.ncores; i++)
		worker_drain_queue(&opcores[i], opcores[i].buf.fullq);
	worker_report_drops();
}

/*
 * Streaming: the empty-queue depth c needs. Enough for the blocks it used per second,
 * over OPROF_REFILL_HORIZON worker periods (a late worker, a burst), never below the
 * setting; doubled when the core ran dry since the last pass; and decaying by one block
 * a pass, so a core that slows down gives memory back gradually.
 */
#define OPROF_REFILL_HORIZON	8

static uint32_t worker_target(struct opcore *c, uint64_t now)
{
	uint64_t used = cnt_get(&c->cnt.blocks) - c->w.blocks, dt = now - c->w.tsc;
	uint64_t noblock = cnt_get(&c->cnt.lost[OPF_LOST_NO_BLOCK]);
	uint64_t period = tsc_hz() / 1000 * oprof.cfg.period_ms, want;
	uint32_t t = c->w.target;

	want = dt ? (used * period * OPROF_REFILL_HORIZON + dt - 1) / dt + 1 : 0;
	t = t > oprof.cfg.emptydepth ? t - 1 : t;
	if (noblock != c->w.noblock)
		t *= 2;
	t = (uint32_t)MAX((uint64_t)t, want);
	c->w.blocks += used;
	c->w.noblock = noblock;
	c->w.tsc = now;
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
		struct opcore *c = &opcores[i];

		if (!oprof.cfg.snapshot) {
			c->w.target = worker_target(c, now);
			flag_set(&c->w.low, c->w.target / 2);
		}
		while (qblocks(c->buf.emptyq) < c->w.target) {
			struct block *b = pool_get(false);

			if (!b)
				return;
			if (qiwrite_block(c->buf.emptyq, b) < 0) {
				pool_put(b);
				return;
			}
		}
	}
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
	int i;

	for (i = 0; i < oprof.ncores; i++)
		if (!rec_core_end(&w, i, tsc))
			break;
	if (i == oprof.ncores)
		rec_session_end(&w, tsc);
	recw_finish(&w);
}
