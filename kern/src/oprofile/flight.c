/*
 * The flight recorder ("start -s"): each core keeps only its newest blocks, and the stream
 * gets them only when a snapshot asks.
 *
 * A core's full ring is its window: in this mode the core itself is the ring's consumer
 * too, so the window never leaves the core between snapshots. At a block switch with the
 * window full (cur included, cfg.window blocks), the core reuses the oldest block of its
 * window (flight_hot_reuse): the block (whose sequence number then never reaches the
 * stream), its samples and its OPF_THREAD records are counted overwritten (fr.gone), its
 * OPF_LOST records unreported again, so the stream still tells every loss.
 *
 * A snapshot must cut every window consistently without a lock or a fence on the hot
 * path, so the ctl thread asks (oprof.snap_gen, which only grows, across sessions too) and
 * each core hands its own window over at its next tick (flight_hot_housekeep): it pushes
 * a non-empty cur, moves its window in order to its snap ring (produced by the core,
 * consumed by the ctl thread) and acknowledges (fr.ack, release). The cut is then exact
 * per core (no sample is in two dumps or in none) and the cores' cuts lie within one
 * tick period of each other. The ctl thread polls the acknowledgements (a core may hand
 * over from an NMI, where it cannot wake anyone); a core that does not tick in time
 * (interrupts held off in timer mode) is handed over by a thread run on that core
 * (hooks->on_core), which waits for the core's interrupts to come back on -- its tick would
 * have come then too.
 *
 * The dump (flight_dump) is, between OPF_SNAPSHOT begin and end records: the name of every
 * live thread, each core's handed-over window oldest first (under the output cap like any
 * block), and OPF_DROP/OPF_LOST for what drops took. A snapshot consumes what it dumps:
 * those samples are delivered, each once, and every window starts empty again.
 *
 * Contexts: flight_hot_* on the core, inside its writer guard; flight_handover_here on the
 * core in a thread (hooks->on_core); the rest in the ctl thread with the session lock held.
 */
#include "guard.h"
#include "tsctime.h"

/*
 * The oldest block of the window, to be reused; its samples are overwritten, the losses
 * it told are told again. NULL if the window is empty.
 */
struct block *flight_hot_reuse(struct opcore *c)
{
	struct block *b = ring_get(&c->buf.full);

	if (b)
		blk_salvage(b, &c->fr.gone, c->lrep.unreported, &c->lrep.pending);
	return b;
}

/*
 * Hand the whole window (then a non-empty cur) over to the snap ring for request gen. The
 * core inside its writer guard, or the ctl thread once the core is stopped for good. The
 * snap ring holds a whole window and cur (session.c sizes it).
 */
static void flight_handover(struct opcore *c, uint32_t gen)
{
	struct block *b;

	must_own_core(c);
	if (c->buf.cur && !blk_empty(c->buf.cur))
		hot_push(c);
	NMI_POINT();
	while ((b = ring_get(&c->buf.full)))
		ring_put(&c->fr.snap, b);
	c->fr.seen = gen;
	__atomic_store_n(&c->fr.ack, gen, __ATOMIC_RELEASE);
}

/* At every tick: hand the window over if a snapshot asked since the last one. */
void flight_hot_housekeep(struct opcore *c)
{
	uint32_t gen = __atomic_load_n(&oprof.snap_gen, __ATOMIC_ACQUIRE);

	if (gen != c->fr.seen)
		flight_handover(c, gen);
}

/* hooks->on_core: on the core, interrupts off, for a core that did not tick in time. */
void flight_handover_here(void *arg)
{
	struct opcore *c = arg;
	uint32_t gen = __atomic_load_n(&oprof.snap_gen, __ATOMIC_ACQUIRE);

	must(!irq_enabled() && c == &opcores[core_id()], "on the core, interrupts off");
	if (hot_on(c)) {
		hot_enter(c);	/* nest is clear: interrupts are off, and no writer calls us */
		if (__atomic_load_n(&c->fr.ack, __ATOMIC_ACQUIRE) != gen)
			flight_handover(c, gen);
		hot_leave(c);
	}
}

static bool flight_all_acked(void *arg)
{
	uint32_t gen = (uint32_t)(uintptr_t)arg;

	for (int i = 0; i < oprof.ncores; i++)
		if (__atomic_load_n(&opcores[i].fr.ack, __ATOMIC_ACQUIRE) != gen)
			return false;
	return true;
}

/* How long the cores get to hand over: four ticks of the slowest core, and 100 ms. */
static uint64_t flight_wait_us(void)
{
	uint32_t hz = UINT32_MAX;

	for (int i = 0; i < oprof.ncores; i++)
		hz = MIN(hz, MAX(flag_get(&opcores[i].bud.hz), 1u));
	return 100000 + 4000000ull / hz;
}

/* A snapshot mark into w; false (counted in marks_lost) when it found no room. */
static bool flight_mark(struct recw *w, uint16_t flags, uint64_t seq)
{
	void *m = recw_reserve(w, sizeof(struct opf_snapshot));

	if (m)
		rec_snapshot(m, flags, seq, tsc_read());
	else
		oprof.marks_lost++;
	return m != NULL;
}

/* foreach_thread callback of a dump: name a live thread (its creation record may be gone). */
static void flight_thread(void *arg, uint32_t tid, int core, const char *name)
{
	struct recw *w = arg;
	void *t = recw_reserve(w, rec_thread_len(name));

	if (t)
		rec_thread(t, tid, core, name, tsc_read());
	else
		oprof.marks_lost++;
}

/*
 * Every core's window handed over to its snap ring: the dump of snapshot seq. The kernel's
 * records of a dump take two blocks under the cap (its samples only go up to the queue's
 * limit): the begin mark and the names, written only with a block left for the other --
 * the drops the dump made and the end mark -- so a dump that begins also ends, however
 * full the queue. One that cannot begin counts its two marks lost.
 */
static void flight_dump(uint64_t seq)
{
	struct recw w = { .mode = RECW_CAPPED, .spare = 1 };
	bool begun = flight_mark(&w, OPF_SNAP_BEGIN, seq);

	if (oprof.hooks && oprof.hooks->foreach_thread)
		oprof.hooks->foreach_thread(flight_thread, &w);
	recw_finish(&w);
	worker_drain_rings(true);
	w.spare = 0;
	stream_report_drops_to(&w);
	if (begun)
		flight_mark(&w, OPF_SNAP_END, seq);
	else
		oprof.marks_lost++;	/* the end of a dump that could not begin */
	recw_finish(&w);
	oprof.snapshots = seq;
}

/*
 * RUNNING or PAUSED: one snapshot. The empty rings are topped up first, so a core that
 * has just handed its window over fills a new one without waiting for the worker.
 */
int flight_snapshot(void)
{
	uint32_t gen = oprof.snap_gen + 1;
	uint64_t deadline;

	must_hold_session();
	worker_refill();
	__atomic_store_n(&oprof.snap_gen, gen, __ATOMIC_RELEASE);
	deadline = tsc_read() + tsc_of_us(flight_wait_us());
	while (!flight_all_acked((void *)(uintptr_t)gen) &&
	       (tsc_read() < deadline || !(oprof.hooks && oprof.hooks->on_core)))
		rendez_sleep_timeout(&oprof.snap_r, flight_all_acked, (void *)(uintptr_t)gen,
				     1000);
	for (int i = 0; i < oprof.ncores; i++)
		if (__atomic_load_n(&opcores[i].fr.ack, __ATOMIC_ACQUIRE) != gen)
			oprof.hooks->on_core(i, flight_handover_here, &opcores[i]);
	flight_dump(oprof.snapshots + 1);
	return 0;
}

/* Stop, every core stopped for good: the last windows, as a final snapshot. */
void flight_stop(void)
{
	uint32_t gen = oprof.snap_gen + 1;

	must_be_stopped();
	__atomic_store_n(&oprof.snap_gen, gen, __ATOMIC_RELEASE);
	for (int i = 0; i < oprof.ncores; i++)
		flight_handover(&opcores[i], gen);
	flight_dump(oprof.snapshots + 1);
}
