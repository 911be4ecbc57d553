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
 *	refill	top up every core's empty queue to the target depth from the pool, which
 *		allocates only below its max (see pool.c).
 * The cap counts the queue's blocks at their full size (the memory they hold), not just
 * their data; with the pool's max that keeps memory under cap + per-core blocks while
 * leaving every core its working set, so "no empty block" means the worker was late and
 * "output full" means the reader was.
 * At stop, ctl runs the drain one last time and worker_close_stream appends the closing
 * statistics.
 *
 * Counting: a core counts samples written into blocks; the worker counts what it dropped.
 * delivered = written - dropped is then exactly the number of the core's OPF_SAMPLE
 * records in the stream, and taken == delivered + sum(lost) holds per core.
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
		worker_drain();
		worker_refill();
	}
	ctl_unlock();
}

uint64_t cpu_delivered(struct oprof_cpu *c)
{
	return cnt_get(&c->written) - c->dropped_samples;
}

/*
 * The records of a block about to be dropped that the stream must not lose the sense of:
 * its OPF_LOST counts are told again later, its OPF_THREAD records are counted as dropped.
 * The block was written by our own hot path, so its records are well formed.
 */
static void worker_salvage(struct oprof_cpu *c, struct block *b)
{
	for (uint8_t *p = b->rp; p + sizeof(struct opf_rec) <= b->wp;) {
		const struct opf_rec *r = (const void *)p;

		if (r->len < sizeof(*r) || r->len > (size_t)(b->wp - p))
			break;
		if (r->type == OPF_LOST) {
			const struct opf_lost *l = (const void *)r;

			if (l->reason < OPF_LOST_NREASONS)
				c->w_unreported[l->reason] += l->count;
		} else if (r->type == OPF_THREAD) {
			c->threads_dropped++;
		}
		p += r->len;
	}
}

/* b leaves the profiler's stream: its samples are lost OUTPUT_FULL. */
static void worker_drop(struct oprof_cpu *c, struct block *b)
{
	worker_salvage(c, b);
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

/* Every full block of c, oldest first, to the output queue or (over the cap) dropped. */
static void worker_drain_core(struct oprof_cpu *c)
{
	struct block *b;

	while ((b = qget(c->fullq))) {
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
		worker_drain_core(&oprof_cpus[i]);
	worker_report_drops();
}

void worker_refill(void)
{
	for (int i = 0; i < oprof.ncores; i++) {
		struct oprof_cpu *c = &oprof_cpus[i];

		while (qblocks(c->emptyq) < oprof.cfg.emptydepth) {
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
	if (!(e = recw_reserve(w, sizeof(*e))))
		return false;
	e->h.type = OPF_CORE_END;
	e->h.len = sizeof(*e);
	e->core = (uint32_t)core;
	e->taken = c->taken;
	e->delivered = cpu_delivered(c);
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++)
		e->lost[r] = c->lost[r];
	e->lost[OPF_LOST_OUTPUT_FULL] = c->dropped_samples;
	e->truncated = c->truncated - c->dropped_truncated;
	e->blocks = c->blocks;
	e->final_hz = oprof.cfg.hz;
	return true;
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
	if (!(e = recw_reserve(&w, sizeof(*e))))
		goto out;
	e->h.type = OPF_SESSION_END;
	e->h.len = sizeof(*e);
	e->end_tsc = tsc;
	e->end_ns = nsec();
	e->blocks_dropped = oprof.blocks_dropped;
	e->bytes = oprof.stream_bytes + BLEN(w.b) - sizeof(*e);
out:
	recw_finish(&w);
}
