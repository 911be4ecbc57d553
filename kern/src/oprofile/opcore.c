/*
 * The ctl side of each core's profiler state (struct opcore): set-up before a session,
 * the gate, tear-down after, and the totals the closing records and the stat file report.
 *
 * Contexts: everything here runs in a thread with the session lock held while the core
 * is not recording: before opcore_enable, or after session.c's stop of every core
 * (opcore_disable, hooks->stop_sampling, a thread on every core), which guarantees that
 * no writer is inside the core's hot path or will enter it. From then on the ctl thread
 * may act as the core (push its cur, hand its window over). opcore_account alone also
 * runs while the core records: it only reads.
 */
#include "guard.h"
#include "error.h"

struct opcore opcores[MAX_CPUS];

/* Zero what a session counts. The core is not enabled: nothing else touches it. */
static void opcore_reset(struct opcore *c)
{
	c->nest = 0;
	memset(&c->pend, 0, sizeof(c->pend));
	hot_set_cur(c, NULL);
	c->buf.seen_flush = flag_get(&oprof.flushgen);
	c->buf.seen_pause = 0;
	c->buf.nmarks = 0;
	c->buf.starving = 0;
	c->buf.kicked_pass = flag_get(&oprof.pass_gen) - 1;
	memset(&c->cnt, 0, sizeof(c->cnt));
	memset(&c->ev, 0, sizeof(c->ev));
	memset(&c->lrep, 0, sizeof(c->lrep));
	c->fr.seen = c->fr.ack = flag_get(&oprof.snap_gen);
	memset(&c->fr.gone, 0, sizeof(c->fr.gone));
	budget_reset(c);
	memset(&c->w, 0, sizeof(c->w));
	c->w.tsc = tsc_read();
	c->w.target = oprof.cfg.snapshot ? oprof.cfg.window : worker_start_target();
	c->w.low = oprof.cfg.snapshot ? 0 : c->w.target / 2;
}

/* Ring capacity: the smallest power of two holding n blocks. */
static uint32_t ring_slots_for(uint32_t n)
{
	uint32_t cap = 4;

	while (cap < n)
		cap *= 2;
	return cap;
}

/*
 * Fresh counters, rings and a full empty ring (flight recorder: a window's worth, so that
 * a window emptied by a snapshot fills again without the worker). The full ring must hold
 * every block the core can push between two drains: what its empty ring held when the
 * worker drained, what the refill right after gave it, and cur -- twice the empty ring's
 * most, and one (flight recorder: its window, and cur). 0 or -ENOMEM.
 */
int opcore_setup(struct opcore *c)
{
	uint32_t most = oprof.cfg.snapshot ? oprof.cfg.window : 2 * oprof.max_target;
	uint32_t slots = ring_slots_for(MAX(most, oprof.max_target) + 2);

	must_hold_session();
	must(!hot_on(c), "core not enabled");
	opcore_reset(c);
	if (ring_init(&c->buf.full, slots) < 0 || ring_init(&c->buf.empty, slots) < 0)
		return -ENOMEM;
	if (oprof.cfg.snapshot && ring_init(&c->fr.snap, slots) < 0)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->w.target; i++) {
		struct block *b = pool_get(false);

		if (!b)
			return -ENOMEM;
		ring_put(&c->buf.empty, b);	/* the worker's side: nobody else runs yet */
	}
	return 0;
}

/* Let the core record: everything set up before is visible to it (release). */
void opcore_enable(struct opcore *c)
{
	__atomic_store_n(&c->on, 1, __ATOMIC_RELEASE);
}

/*
 * The core records no more once the glue has stopped sampling and a thread ran on it
 * (session.c): a writer that read on before this store finishes first.
 */
void opcore_disable(struct opcore *c)
{
	__atomic_store_n(&c->on, 0, __ATOMIC_RELEASE);
}

/* Stopped: write the marks the core could not, push a non-empty cur (an empty one goes back). */
void opcore_flush_partial(struct opcore *c)
{
	struct block *b;

	must(!hot_on(c), "core stopped");
	/* a core starved of blocks to the end still gets its marks out: the worker is not
	   running (session lock), so the ctl thread may feed the core's empty ring */
	if (c->buf.nmarks && !c->buf.cur && ring_empty(&c->buf.empty) && (b = pool_get(true)))
		ring_put(&c->buf.empty, b);
	if (c->buf.nmarks && !hot_write_marks(c, tsc_read())) {
		cnt_add(&c->cnt.marks_lost, c->buf.nmarks);
		c->buf.nmarks = 0;
	}
	if (!c->buf.cur)
		return;
	if (!blk_empty(c->buf.cur) && hot_push(c))
		return;
	pool_put(c->buf.cur);
	hot_set_cur(c, NULL);
}

/* Every block of r to the pool, then its slots freed. */
static void opcore_free_ring(struct ring *r)
{
	struct block *b;

	if (!r->slot)
		return;
	while ((b = ring_get(r)))
		pool_put(b);
	ring_fini(r);
}

/* After the worker drained the full ring (or a failed setup): blocks to the pool. */
void opcore_teardown(struct opcore *c)
{
	must(!hot_on(c), "core stopped");
	if (c->buf.cur) {
		pool_put(c->buf.cur);
		hot_set_cur(c, NULL);
	}
	opcore_free_ring(&c->buf.full);
	opcore_free_ring(&c->buf.empty);
	opcore_free_ring(&c->fr.snap);
}

/* Samples of c in the stream, or on their way there: neither overwritten nor dropped. */
static uint64_t acct_delivered(struct opcore *c)
{
	uint64_t ow = cnt_get(&c->fr.gone.samples);	/* first: never more than written */

	return cnt_get(&c->cnt.written) - ow - c->w.gone.samples;
}

static uint64_t acct_truncated(struct opcore *c)
{
	uint64_t ow = cnt_get(&c->fr.gone.truncated);

	return cnt_get(&c->cnt.truncated) - ow - c->w.gone.truncated;
}

static uint64_t acct_depth_cut(struct opcore *c)
{
	uint64_t ow = cnt_get(&c->fr.gone.depth_cut);

	return cnt_get(&c->cnt.depth_cut) - ow - c->w.gone.depth_cut;
}

void opcore_account(struct opcore *c, struct opcore_acct *a)
{
	must_hold_session();
#define OPCORE_ACCT_READ(name, expr)	a->name = (expr);
	OPCORE_ACCT(OPCORE_ACCT_READ)
#undef OPCORE_ACCT_READ
}
