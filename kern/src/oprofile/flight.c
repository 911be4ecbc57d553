/*
 * The flight recorder ("start -s"): each core keeps only its newest blocks, and the stream
 * gets them only when a snapshot asks.
 *
 * A core's fullq is its window and never leaves the core between snapshots. At a block
 * switch with the window full (cur included, cfg.window blocks), the core reuses the
 * oldest block of its own fullq (flight_hot_reuse): that block's samples are counted
 * overwritten, its OPF_LOST records are counted unreported again (so the stream still tells
 * every loss), its OPF_THREAD records counted as overwritten.
 *
 * A snapshot must cut every window consistently without a lock on the hot path, so the ctl
 * thread asks (oprof.snap_req) and each core hands its own window over at its next tick
 * (flight_hot_housekeep): it pushes a non-empty cur, moves fullq's blocks in order to
 * fr.snapq and acknowledges (fr.ack, release). The cut is then exact per core (no sample
 * is in two dumps or in none) and the cores' cuts lie within one tick period of each
 * other. Stopping every core instead would have cost every core a handshake and a gap. A
 * core that does not tick in time (its timer stopped) is handed over by the ctl thread
 * itself after opcore_quiesce (flight_takeover).
 *
 * The dump (flight_dump) is, between OPF_SNAPSHOT begin and end records: the name of every
 * live thread, each core's handed-over window oldest first (under the output cap like any
 * block), and OPF_LOST for what drops took. A snapshot consumes what it dumps: those
 * samples are delivered, each once, and every window starts empty again.
 *
 * Contexts: flight_hot_* on the core, between hot_enter and hot_exit; the rest in the ctl
 * thread with the session lock held.
 */
#include "internal.h"

/*
 * The oldest block of the window, to be reused; its samples are overwritten, the losses
 * it told are told again. NULL if the window is empty.
 */
struct block *flight_hot_reuse(struct opcore *c)
{
	uint64_t lost[OPF_LOST_NREASONS] = { 0 };
	struct block *b = qget(c->buf.fullq);

	if (!b)
		return NULL;
	cnt_add(&c->fr.threads_ow, rec_salvage(b, lost));
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++)
		if (lost[r])
			hot_unreported(c, r, lost[r]);
	cnt_add(&c->fr.overwritten, b->aux);
	cnt_add(&c->fr.ow_truncated, BLK_TRUNC(b));
	return b;
}

/*
 * Hand the whole window (fullq, then a non-empty cur) over to snapq for snapshot seq. The
 * core at its tick, or ctl after opcore_quiesce. snapq is never hung up.
 */
static void flight_handover(struct opcore *c, uint32_t seq)
{
	struct block *b;

	if (c->buf.cur && BLEN(c->buf.cur) > 0)
		hot_push(c);
	while ((b = qget(c->buf.fullq)))
		qiwrite_block(c->fr.snapq, b);
	c->fr.seen = seq;
	__atomic_store_n(&c->fr.ack, seq, __ATOMIC_RELEASE);
}

/* At every tick: hand the window over if a snapshot asked since the last one. */
void flight_hot_housekeep(struct opcore *c)
{
	uint32_t req = __atomic_load_n(&oprof.snap_req, __ATOMIC_ACQUIRE);

	if (req != c->fr.seen) {
		flight_handover(c, req);
		rendez_wakeup(&oprof.snap_r);
	}
}

/* Core quiesced (or stopped for good): hand its window over for seq. */
void flight_takeover(struct opcore *c, uint32_t seq)
{
	flight_handover(c, seq);
}

static bool flight_all_acked(void *arg)
{
	uint32_t seq = (uint32_t)(uintptr_t)arg;

	for (int i = 0; i < oprof.ncores; i++)
		if (__atomic_load_n(&opcores[i].fr.ack, __ATOMIC_ACQUIRE) != seq)
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

/*
 * RUNNING or PAUSED: one snapshot. The empty queues are topped up first, so a core that has
 * just handed its window over fills a new one without waiting for the worker. A core that
 * did not tick in time is quiesced and handed over here; ticks that come while it is
 * quiesced are skipped (not counted), which only happens to a core whose timer was not
 * running anyway.
 */
int flight_snapshot(void)
{
	uint32_t seq = (uint32_t)oprof.snapshots + 1;

	worker_refill();
	__atomic_store_n(&oprof.snap_req, seq, __ATOMIC_RELEASE);
	rendez_sleep_timeout(&oprof.snap_r, flight_all_acked, (void *)(uintptr_t)seq,
			     flight_wait_us());
	for (int i = 0; i < oprof.ncores; i++) {
		struct opcore *c = &opcores[i];

		if (__atomic_load_n(&c->fr.ack, __ATOMIC_ACQUIRE) == seq)
			continue;
		opcore_quiesce(c);
		if (c->fr.ack != seq)
			flight_takeover(c, seq);
		opcore_enable(c);
	}
	flight_dump(seq);
	return 0;
}

static void flight_mark(uint16_t flags, uint64_t seq)
{
	struct recw w = { .force = true };
	void *m = recw_reserve(&w, sizeof(struct opf_snapshot));

	if (m)
		rec_snapshot(m, flags, seq, tsc_read());
	recw_finish(&w);
}

/* foreach_thread callback of a dump: name a live thread (its creation record may be gone). */
static void flight_thread(void *arg, uint32_t tid, int core, const char *name)
{
	struct recw *w = arg;
	void *t = recw_reserve(w, rec_thread_len(name));

	if (t)
		rec_thread(t, tid, core, name, tsc_read());
}

/* Every core's window handed over to its snapq: the dump of snapshot seq. */
void flight_dump(uint64_t seq)
{
	struct recw w = { .force = true };

	flight_mark(OPF_SNAP_BEGIN, seq);
	if (oprof.hooks && oprof.hooks->foreach_thread)
		oprof.hooks->foreach_thread(flight_thread, &w);
	recw_finish(&w);
	for (int i = 0; i < oprof.ncores; i++)
		worker_drain_queue(&opcores[i], opcores[i].fr.snapq);
	worker_report_drops();
	flight_mark(OPF_SNAP_END, seq);
	oprof.snapshots = seq;
}
