/*
 * The worker: moves blocks from the cores to the stream and back.
 *
 * A kernel thread on core 0 wakes every period (oprof_worker_wait; a core whose empty
 * ring ran dry kicks it early) and runs one pass with the session lock held, so a pass
 * never overlaps a start, stop or another pass. A pass:
 *	drain	take the cores' full blocks, each core's in order and the cores in fair
 *		shares (ring_get on each full ring: the worker is its consumer), and queue
 *		them on the output queue --
 *		unless that would put the queue over its limit (qbwrite_drop refuses the
 *		block): then the block (the newest data there is) is dropped to the pool, its
 *		samples counted lost OUTPUT_FULL, and its sequence number kept in a run of
 *		drops (struct drop_run) for an OPF_DROP record. A block already queued is never
 *		dropped, so neither is one a reader has begun.
 *	report	OPF_DROP for the runs of dropped blocks, and OPF_LOST for the losses the
 *		dropped blocks had told, while they fit under the cap (skipped when no core
 *		has any: most passes).
 *	refill	top up every core's empty ring (the worker is its producer) to its target
 *		depth from the pool, which allocates only below its max (see pool.c). The
 *		target adapts to the core's rate: what it used per period, times a few periods
 *		of slack, never below the emptydepth setting (worker_target). A core
 *		starts with what its configured rate would use (worker_start_target), so a
 *		first pass that comes late -- core 0 busy at start -- finds no core dry. A
 *		core whose ring falls to half its target kicks the worker early (hotpath.c),
 *		at most once a pass.
 * A viewer (top.c) is shown each block the drain takes, before it is queued or dropped;
 * it only reads it.
 * Flight recorder: a pass does not drain (the full ring is the core's window); it only
 * keeps each empty ring at a window's worth. flight.c drains a snapshot's windows the same
 * way (worker_drain_rings).
 *
 * The cap: the queue never passes it. The closing records come from blocks set aside at
 * start (the reserve), and the cap keeps their room: the kernel's other blocks (snapshot
 * marks, names in a dump, losses told) are checked against the cap less the reserve
 * (oprof.rec_cap, stream.c), and the output queue's limit is one block below that, a
 * block those may still use, so that a queue full of samples still has room to say so.
 * The limit counts the queued blocks' memory, not just their data.
 *
 * At stop, ctl runs the drain one last time and the stream writer (stream.c) appends the
 * closing records. The worker calls the stream writer (the drops it reports); nothing there
 * calls back.
 */
#include "internal.h"
#include "tsctime.h"

static struct rendez worker_r;	/* the worker sleeps here between passes */

void worker_init(void)
{
	rendez_init(&worker_r);
}

static bool worker_should_run(void *arg)
{
	(void)arg;
	return flag_get(&oprof.kick) != 0;
}

void oprof_worker_wait(void)
{
	uint32_t ms = flag_get(&oprof.wait_ms);

	rendez_sleep_timeout(&worker_r, worker_should_run, NULL, (uint64_t)ms * 1000);
	flag_set(&oprof.kick, 0);
}

/* Ordinary interrupt or thread context: wake the worker if a core asked. */
void oprof_worker_wake(void)
{
	if (flag_get(&oprof.kick))
		rendez_wakeup(&worker_r);
}

/*
 * Any context, NMI included: ask for an early pass. Only a flag and the glue's kick, which
 * gets oprof_worker_wake called in ordinary context. From inside a writer (guard.h: nest
 * set on this core) always by irq work (kick_later): the writer may be an NMI, or an event
 * whose caller holds the locks a wake-up takes. Elsewhere (the ctl thread) hooks->kick,
 * which wakes the worker directly unless the source is NMIs.
 */
void worker_kick(void)
{
	flag_set(&oprof.kick, 1);
	if (oprof.hooks && oprof.hooks->kick_later && opcores[core_id()].nest)
		oprof.hooks->kick_later();
	else if (oprof.hooks && oprof.hooks->kick)
		oprof.hooks->kick();
	else
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

/* Note the drop of block seq (samples) of c in its runs, or count it unlisted. */
static void worker_note_drop(struct opcore *c, uint64_t seq, uint64_t samples)
{
	struct drop_run *r = c->w.nruns ? &c->w.runs[c->w.nruns - 1] : NULL;

	if (r && r->seq + r->blocks == seq) {
		r->blocks++;
		r->samples += samples;
	} else if (c->w.nruns < DROP_RUNS) {
		c->w.runs[c->w.nruns++] = (struct drop_run){ seq, 1, samples };
	} else {
		c->w.unlisted++;
		c->w.unlisted_samples += samples;
	}
}

/*
 * b leaves the profiler's stream: its samples are lost OUTPUT_FULL (told by OPF_DROP),
 * the losses it told are told again, its OPF_THREAD records are counted as dropped.
 */
static void worker_drop(struct opcore *c, struct block *b)
{
	const struct opf_block *h = (const void *)b->base;
	uint64_t samples = blk_salvage(b, &c->w.gone, c->w.unreported, NULL);

	worker_note_drop(c, h->seq, samples);
	oprof.blocks_dropped++;
	pool_put(b);
}

static struct ring *worker_ring(struct opcore *c, bool snap)
{
	return snap ? &c->fr.snap : &c->buf.full;
}

/*
 * The fair share of the room: a pass takes the blocks each core has waiting (n[i]) in an
 * order that interleaves the cores in proportion to n[i] -- next is the core with the
 * least (2 k + 1) / n of its blocks taken (k), the smallest divisor rule -- so when the
 * queue is full part way through the pass, the blocks dropped are each core's newest, in
 * proportion to what it wrote. Ties go to the first core from a start that turns every
 * pass, so equal cores take turns at the room a slow reader frees. (Oldest-first by the
 * blocks' times is not enough: cores sampling in step always fill in the same order.)
 */
struct drain_share {
	uint32_t n[MAX_CPUS], k[MAX_CPUS];
	int first;
};

static int worker_next_core(struct drain_share *d)
{
	int best = -1;

	for (int j = 0; j < oprof.ncores; j++) {
		int i = (d->first + j) % oprof.ncores;

		if (d->k[i] < d->n[i] && (best < 0 || (2ull * d->k[i] + 1) * d->n[best] <
						  (2ull * d->k[best] + 1) * d->n[i]))
			best = i;
	}
	return best;
}

/*
 * Every core's full ring (snap: its handed-over window), as it stood at the call, to the
 * output queue or (over the cap) dropped, each core's blocks in order, the cores in fair
 * shares (above): no core's number decides its part of the room.
 */
void worker_drain_rings(bool snap)
{
	static int turn;
	struct drain_share d;
	int i;

	must_hold_session();
	d.first = turn = (turn + 1) % MAX(oprof.ncores, 1);
	for (i = 0; i < oprof.ncores; i++) {
		d.n[i] = ring_count(worker_ring(&opcores[i], snap));
		d.k[i] = 0;
	}
	while ((i = worker_next_core(&d)) >= 0) {
		struct opcore *c = &opcores[i];
		struct block *b = ring_get(worker_ring(c, snap));
		size_t len = BLEN(b);

		d.k[i]++;
		top_tap(b);	/* a look at its samples, while a viewer is attached */
		if (oprof_fault_take(OPROF_FAULT_DROP_BLOCK)) {
			/* "inject drop": the silent loss the stream must reveal on its own */
			pool_put(b);
		} else if (qbwrite_drop(oprof.outq, b) >= 0) {
			oprof.stream_bytes += len;
		} else {
			worker_drop(c, b);
		}
	}
}

/*
 * Whether stream_report_drops has anything to tell: a core's runs of dropped blocks, or the
 * losses its dropped blocks had told. Most passes drop nothing, and the report's writer
 * (a look at every core's runs and loss reasons, a TSC read each) then writes nothing.
 */
static bool worker_owes_report(void)
{
	for (int i = 0; i < oprof.ncores; i++) {
		const struct opcore *c = &opcores[i];

		if (c->w.nruns)
			return true;
		for (unsigned r = 0; r < OPF_LOST_NREASONS; r++)
			if (c->w.unreported[r])
				return true;
	}
	return false;
}

void worker_drain(void)
{
	worker_drain_rings(false);
	if (worker_owes_report())
		stream_report_drops();
}

/*
 * Streaming: the empty-ring depth c needs. Enough for the blocks it used per second,
 * over OPROF_REFILL_HORIZON worker periods (a late worker, a burst), never below the
 * setting; doubled when the core ran dry since the last pass; and decaying by one block
 * a pass, so a core that slows down gives memory back gradually.
 */
#define OPROF_REFILL_HORIZON	8

static uint32_t worker_target(struct opcore *c, uint64_t now)
{
	uint64_t used = cnt_get(&c->cnt.blocks) - c->w.blocks, dt = now - c->w.tsc;
	uint64_t noblock = cnt_get(&c->cnt.lost[OPF_LOST_NO_BLOCK]);
	uint64_t period = tsc_of_ms(oprof.cfg.period_ms), want;
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
 * Streaming: the empty-ring depth a core starts with, before the worker has seen it use
 * any. What the configured rate fills over the same horizon with every sample at full
 * depth: the first passes may come late (a start under load), and an estimate too high
 * only costs memory until the decay in worker_target gives it back.
 */
uint32_t worker_start_target(void)
{
	uint64_t per_block = (oprof.cfg.block_bytes - BLK_HDR) / opf_sample_len(oprof.cfg.depth);
	uint64_t samples = (uint64_t)oprof.cfg.hz * oprof.cfg.period_ms * OPROF_REFILL_HORIZON /
			   1000;
	uint64_t t = per_block ? (samples + per_block - 1) / per_block + 1 : 0;

	return (uint32_t)MIN(MAX(t, (uint64_t)oprof.cfg.emptydepth), (uint64_t)oprof.max_target);
}

/*
 * Top up every core's empty ring to its target (flight recorder: a window's worth) and
 * publish its low-water mark. Every core's target and mark first, so all follow their use
 * even when the pool runs short; then a block to each core short of its target in turn,
 * from a core that turns every pass, so a pool that refuses part way (the fill stops at
 * its first refusal) has shared what it gave.
 */
void worker_refill(void)
{
	static int turn;
	uint64_t now = tsc_read();
	bool more = true;

	must_hold_session();	int n = MAX(oprof.ncores, 1);

	for (int i = 0; i < oprof.ncores && !oprof.cfg.snapshot; i++) {
		struct opcore *c = &opcores[i];

		c->w.target = worker_target(c, now);
		flag_set(&c->w.low, c->w.target / 2);
	}
	turn = (turn + 1) % n;
	while (more) {
		more = false;
		for (int j = 0; j < oprof.ncores; j++) {
			struct opcore *c = &opcores[(turn + j) % n];
			struct block *b;

			if (ring_count(&c->buf.empty) >= c->w.target)
				continue;
			if (!(b = pool_get(false)))
				return;
			if (ring_put(&c->buf.empty, b))
				more = true;
			else
				pool_put(b);
		}
	}
}
