/*
 * The ctl side of each core's profiler state (struct opcore): set-up before a session,
 * the stop handshake, tear-down after, and the totals the closing records and the stat
 * file report.
 *
 * Contexts: everything here runs in a thread with the session lock held, while the core is
 * not enabled -- except opcore_quiesce and opcore_wait_idle, which are how the ctl thread
 * gets a running core out of the way (the Dekker handshake with hot_enter, hotpath.c).
 */
#include "internal.h"
#include "error.h"

struct opcore opcores[MAX_CPUS];

/*
 * Zero what a session counts. Not a memset: a thread on this core may be running
 * hot_enter (on is clear, so it touches nothing but busy) while the next session starts.
 */
static void opcore_reset(struct opcore *c)
{
	c->buf.cur = NULL;
	c->buf.fullq = c->buf.emptyq = NULL;
	c->buf.seen_flush = flag_get(&oprof.flushgen);
	c->buf.starving = 0;
	c->buf.kicked_pass = flag_get(&oprof.pass_gen) - 1;
	memset(&c->cnt, 0, sizeof(c->cnt));
	memset(&c->lrep, 0, sizeof(c->lrep));
	c->fr.snapq = NULL;
	c->fr.seen = c->fr.ack = flag_get(&oprof.snap_req);
	c->fr.overwritten = c->fr.ow_truncated = c->fr.threads_ow = 0;
	budget_reset(c);
	memset(&c->w, 0, sizeof(c->w));
	c->w.tsc = tsc_read();
	c->w.target = oprof.cfg.snapshot ? oprof.cfg.window : oprof.cfg.emptydepth;
	c->w.low = oprof.cfg.snapshot ? 0 : c->w.target / 2;
}

/*
 * Fresh counters, queues, a current block and a full empty queue (flight recorder: a
 * window's worth, so that a window emptied by a snapshot fills again without the worker).
 * 0 or -ENOMEM.
 */
int opcore_setup(struct opcore *c)
{
	opcore_reset(c);
	c->buf.fullq = qopen(SIZE_MAX);
	c->buf.emptyq = qopen(SIZE_MAX);
	c->fr.snapq = qopen(SIZE_MAX);
	if (!c->buf.fullq || !c->buf.emptyq || !c->fr.snapq)
		return -ENOMEM;
	c->buf.cur = pool_get(false);
	if (!c->buf.cur)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->w.target; i++) {
		struct block *b = pool_get(false);

		if (!b)
			return -ENOMEM;
		qiwrite_block(c->buf.emptyq, b);
	}
	return 0;
}

/* Publish the session's settings and let the core record (release via SEQ_CST). */
void opcore_enable(struct opcore *c)
{
	__atomic_store_n(&c->on, 1, __ATOMIC_SEQ_CST);
}

/* Stop the core recording; on return it is outside the hot path for good. */
void opcore_quiesce(struct opcore *c)
{
	__atomic_store_n(&c->on, 0, __ATOMIC_SEQ_CST);
	opcore_wait_idle(c);
}

/* Wait until the core is between ticks: a tick after this sees stores made before it. */
void opcore_wait_idle(struct opcore *c)
{
	while (__atomic_load_n(&c->busy, __ATOMIC_SEQ_CST))
		cpu_relax();
}

/* After opcore_quiesce: push a partial cur (an empty one goes back to the pool). */
void opcore_flush_partial(struct opcore *c)
{
	if (!c->buf.cur)
		return;
	if (BLEN(c->buf.cur) > 0) {
		hot_push(c);
		if (!c->buf.cur)
			return;
	}
	pool_put(c->buf.cur);
	c->buf.cur = NULL;
}

/* Every block of q to the pool, then q itself freed. */
static void opcore_free_queue(struct queue *q)
{
	struct block *b;

	if (!q)
		return;
	while ((b = qget(q)))
		pool_put(b);
	qfree(q);
}

/* After the worker drained fullq (or a failed setup): blocks to the pool, queues freed. */
void opcore_teardown(struct opcore *c)
{
	if (c->buf.cur) {
		pool_put(c->buf.cur);
		c->buf.cur = NULL;
	}
	opcore_free_queue(c->buf.fullq);
	opcore_free_queue(c->buf.emptyq);
	opcore_free_queue(c->fr.snapq);
	c->buf.fullq = c->buf.emptyq = c->fr.snapq = NULL;
}

/* Samples of c in the stream, or on their way there. */
uint64_t opcore_delivered(struct opcore *c)
{
	uint64_t ow = cnt_get(&c->fr.overwritten);	/* first: never more than written */

	return cnt_get(&c->cnt.written) - ow - c->w.dropped_samples;
}

uint64_t opcore_truncated(struct opcore *c)
{
	uint64_t ow = cnt_get(&c->fr.ow_truncated);

	return cnt_get(&c->cnt.truncated) - ow - c->w.dropped_truncated;
}
