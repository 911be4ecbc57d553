/*
 * Per-core sample buffers and the interrupt-context hot path.
 *
 * Each core owns a struct oprof_cpu: a current block (cur) it appends records to, and two
 * queues it shares with the worker only:
 *	fullq	the core pushes (qiwrite_block) blocks it is done with, oldest first;
 *		the worker takes them (qget) and forwards them, in order, to the output queue.
 *	emptyq	the worker refills it from the pool of recycled blocks; the core pops (qget)
 *		a block when cur is full.
 * Each queue's spinlock is taken by this core and, briefly, by the worker: that is the
 * only lock of the hot path, and it is contended only while the worker is on that queue.
 * The hot path never allocates, never sleeps and never waits.
 *
 * Block ownership: cur belongs to the core alone. A block is the core's from qget(emptyq)
 * until qiwrite_block(fullq) succeeds, then the worker's. A record never straddles blocks;
 * block->aux counts the block's samples and the flags above bit 16 its truncated samples,
 * so the worker can account for a block it drops; block->stamp is the TSC of its first
 * record, for the staleness bound.
 *
 * Contexts: oprof_tick_irq/oprof_sample_irq run in the timer interrupt on their core;
 * oprof_thread_created runs in a thread on its core with interrupts off. Both bracket
 * their use of the core's state by cpu_enter/cpu_exit. The ctl thread, to stop a core,
 * clears on and waits until busy is clear (cpu_quiesce): a Dekker handshake on two
 * SEQ_CST flags, so afterwards the core will not touch its state again and everything it
 * wrote is visible. The cpu_* functions below the hot path run with the ctl mutex held.
 *
 * Lost samples: a sample that finds no room and no empty block, a sample while paused,
 * or one that cannot fit a block is counted in lost[reason] and unreported[reason]; the
 * next sample first writes OPF_LOST records for the unreported counts, so the stream
 * tells where the gaps are. What is still unreported at stop goes into the closing records.
 *
 * Keeping the worker ahead: the worker sizes each core's empty queue for the core's rate
 * (worker.c) and publishes a low-water mark; a core that pops a block and finds its empty
 * queue at or below the mark kicks the worker once per worker pass (kicked_pass), so a
 * burst is met early without a storm of wake-ups. The first miss of a dry spell kicks too.
 *
 * Flight recorder (cfg.snapshot): fullq is the core's window and never leaves the core
 * between snapshots. At a block switch with the window full (cur included, cfg.window
 * blocks), the core reuses the oldest block of its own fullq: that block's samples are
 * counted overwritten, its OPF_LOST records are counted unreported again (so the stream
 * still tells every loss), its OPF_THREAD records counted as overwritten. A snapshot must
 * cut every window consistently without a lock on the hot path, so the ctl thread asks
 * (oprof.snap_req) and each core hands its own window over at its next tick: it pushes
 * a non-empty cur, moves fullq's blocks in order to snapq and acknowledges (snap_ack,
 * release). The cut is then exact per core (no sample is in two dumps or in none) and the
 * cores' cuts lie within one tick period of each other. Stopping every core instead would
 * have cost every core a Dekker handshake and a gap. A core that does not tick in time
 * (its timer stopped) is handed over by the ctl thread itself after cpu_quiesce.
 *
 * Overhead budget: one tick in OPROF_BUDGET_EVERY adds its hot-path time (from the
 * interrupt's TSC to the end), times OPROF_BUDGET_EVERY, to win_cost -- reading the TSC
 * costs as much as a third of a record, and ticks cost alike; every OPROF_BUDGET_MS the
 * core compares it with cfg.budget percent of the
 * window and, if over a few times in a row, halves its own rate through hooks->set_rate (from
 * inside its own timer callback) and writes an OPF_THROTTLE record. A throttled core that
 * stays under a quarter of the budget for OPROF_RAISE_WINDOWS windows doubles its rate
 * back (never above the session's), with an OPF_THROTTLE record too: doubled, it is still
 * under half the budget, so the two never chase each other.
 */
#include "internal.h"
#include "error.h"

struct oprof_cpu oprof_cpus[MAX_CPUS];

/* Hot path: may this core record? Pairs with cpu_quiesce. */
static bool cpu_enter(struct oprof_cpu *c)
{
	__atomic_store_n(&c->busy, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->on, __ATOMIC_SEQ_CST))
		return true;
	__atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
	return false;
}

/*
 * Release is enough on the way out: the quiescing side only needs to see busy == 0 after
 * every write of the tick (it reads busy with acquire). Only the entry needs the full
 * store-load fence of the handshake.
 */
static void cpu_exit(struct oprof_cpu *c)
{
	__atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
}

/* n more lost samples (or records) of reason for the next OPF_LOST records to tell. */
static void cpu_unreported(struct oprof_cpu *c, unsigned reason, uint64_t n)
{
	c->unreported[reason] += n;
	c->lost_pending = 1;
}

static void cpu_lose(struct oprof_cpu *c, unsigned reason)
{
	cnt_add(&c->lost[reason], 1);
	cpu_unreported(c, reason, 1);
}

/*
 * Hand cur to the worker. qiwrite_block fails only on a hung-up queue, which a core's
 * queue never is; should it anyway, the samples are counted lost and the block reused.
 */
static void cpu_push(struct oprof_cpu *c)
{
	struct block *b = c->cur;
	uint32_t samples = b->aux, trunc = BLK_TRUNC(b);

	if (qiwrite_block(c->fullq, b) >= 0) {
		c->cur = NULL;
		cnt_add(&c->blocks, 1);
		return;
	}
	cnt_add(&c->written, -(uint64_t)samples);
	cnt_add(&c->truncated, -(uint64_t)trunc);
	cnt_add(&c->lost[OPF_LOST_OTHER], samples);
	cpu_unreported(c, OPF_LOST_OTHER, samples);
	block_reset(b);
	b->aux = 0;
	b->flags &= BLK_TRUNC_ONE - 1;
}

/*
 * Flight recorder: the oldest block of the window, to be reused; its samples are
 * overwritten, the losses it told are told again. NULL if the window is empty.
 */
static struct block *cpu_reuse_oldest(struct oprof_cpu *c)
{
	uint64_t lost[OPF_LOST_NREASONS] = { 0 };
	struct block *b = qget(c->fullq);

	if (!b)
		return NULL;
	cnt_add(&c->threads_ow, rec_salvage(b, lost));
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++)
		if (lost[r])
			cpu_unreported(c, r, lost[r]);
	cnt_add(&c->overwritten, b->aux);
	cnt_add(&c->ow_truncated, BLK_TRUNC(b));
	return b;
}

/* Streaming: at most one kick per worker pass when the empty queue is at its low water. */
static void cpu_low_water(struct oprof_cpu *c)
{
	uint32_t gen = flag_get(&oprof.pass_gen);

	if (c->kicked_pass != gen && qblocks(c->emptyq) <= flag_get(&c->low)) {
		c->kicked_pass = gen;
		worker_kick();
	}
}

/*
 * A fresh block as cur, or false. Streaming: from emptyq; the first miss of a dry spell
 * kicks the worker. Flight recorder: from emptyq while the window has room, else the
 * window's oldest block.
 */
static bool cpu_next_block(struct oprof_cpu *c)
{
	bool snap = oprof.cfg.snapshot;
	struct block *b = NULL;

	if (snap && qblocks(c->fullq) >= oprof.cfg.window)
		b = cpu_reuse_oldest(c);
	if (!b)
		b = qget(c->emptyq);
	if (!b && snap)
		b = cpu_reuse_oldest(c);
	if (!b) {
		if (!c->starving) {
			c->starving = 1;
			worker_kick();
		}
		return false;
	}
	c->starving = 0;
	if (!snap)
		cpu_low_water(c);
	block_reset(b);
	b->aux = 0;
	b->flags &= BLK_TRUNC_ONE - 1;
	c->cur = b;
	return true;
}

/* cpu_reserve when cur is missing, full or empty. */
static __noinline void *cpu_reserve_slow(struct oprof_cpu *c, uint32_t len, uint64_t tsc)
{
	struct block *b = c->cur;
	void *p;

	if (b && BFREE(b) < len) {
		if (BLEN(b) > 0)
			cpu_push(c);
		else
			return NULL;	/* cannot happen: ctl_start checks len against blocks */
	}
	if (!c->cur && !cpu_next_block(c))
		return NULL;
	b = c->cur;
	if (BFREE(b) < len)
		return NULL;
	if (b->wp == b->base)
		b->stamp = tsc;
	p = b->wp;
	b->wp += len;
	return p;
}

/*
 * len bytes for one record in cur, switching blocks when it is full; NULL: no block. The
 * caller fills every byte of the record.
 */
static inline void *cpu_reserve(struct oprof_cpu *c, uint32_t len, uint64_t tsc)
{
	struct block *b = c->cur;
	void *p;

	if (unlikely(!b || BFREE(b) < len || b->wp == b->base))
		return cpu_reserve_slow(c, len, tsc);
	p = b->wp;
	b->wp += len;
	return p;
}

/* Write OPF_LOST records for whatever is unreported; false if a record found no block. */
static bool cpu_report_lost(struct oprof_cpu *c, uint64_t tsc)
{
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		void *p;

		if (!c->unreported[r])
			continue;
		p = cpu_reserve(c, sizeof(struct opf_lost), tsc);
		if (!p)
			return false;
		rec_lost(p, (uint16_t)(c - oprof_cpus), (uint16_t)r, c->unreported[r], tsc);
		c->unreported[r] = 0;
	}
	c->lost_pending = 0;
	return true;
}

static __force_inline void cpu_record(struct oprof_cpu *c, uint32_t tid, uint64_t tsc,
				      uint64_t pc, const uint64_t *frames, unsigned nframes,
				      unsigned flags)
{
	uint32_t len;
	struct opf_sample *s;

	nframes = MIN(nframes, oprof.cfg.depth);
	len = opf_sample_len(nframes);
	if (len > oprof.cfg.block_bytes) {
		cpu_lose(c, OPF_LOST_OTHER);
		return;
	}
	if ((c->lost_pending && !cpu_report_lost(c, tsc)) || !(s = cpu_reserve(c, len, tsc))) {
		cpu_lose(c, OPF_LOST_NO_BLOCK);
		return;
	}
	s->h.type = OPF_SAMPLE;
	s->h.flags = (uint16_t)flags;
	s->h.len = len;
	s->core = (uint16_t)(c - oprof_cpus);
	s->nframes = (uint16_t)nframes;
	s->tid = tid;
	s->tsc = tsc;
	s->pc = pc;
	if (nframes)
		memcpy(s->frames, frames, 8 * (size_t)nframes);
	c->cur->aux++;
	cnt_add(&c->written, 1);
	if (flags & OPF_F_TRUNCATED) {
		c->cur->flags += BLK_TRUNC_ONE;
		cnt_add(&c->truncated, 1);
	}
}

/*
 * Flight recorder: hand the whole window (fullq, then a non-empty cur) over to snapq for
 * snapshot seq. The core at its tick, or ctl after cpu_quiesce. snapq is never hung up.
 */
static void cpu_give_window(struct oprof_cpu *c, uint32_t seq)
{
	struct block *b;

	if (c->cur && BLEN(c->cur) > 0)
		cpu_push(c);
	while ((b = qget(c->fullq)))
		qiwrite_block(c->snapq, b);
	c->snap_seen = seq;
	__atomic_store_n(&c->snap_ack, seq, __ATOMIC_RELEASE);
}

/*
 * Streaming: push cur early when "flush" was asked or its first record is older than the
 * bound. Flight recorder: hand the window over when a snapshot asks (partial blocks stay
 * in the window otherwise: pushing them would only shrink it).
 */
static __force_inline void cpu_housekeep(struct oprof_cpu *c, uint64_t tsc)
{
	uint32_t gen = flag_get(&oprof.flushgen), req;
	bool flush = gen != c->seen_flush;
	struct block *b = c->cur;

	c->seen_flush = gen;
	if (oprof.cfg.snapshot) {
		req = __atomic_load_n(&oprof.snap_req, __ATOMIC_ACQUIRE);
		if (req != c->snap_seen) {
			cpu_give_window(c, req);
			rendez_wakeup(&oprof.snap_r);
		}
		return;
	}
	if (!b || BLEN(b) == 0)
		return;
	if (flush || tsc - b->stamp >= oprof.stale_ticks)
		cpu_push(c);
}

/* Change this core's rate (the budget's verdict); tell the timer and the stream. */
static void cpu_set_hz(struct oprof_cpu *c, uint32_t hz, uint64_t tsc)
{
	uint32_t old = c->hz;
	int core = (int)(c - oprof_cpus);
	struct opf_throttle *t;

	__atomic_store_n(&c->hz, hz, __ATOMIC_RELAXED);
	c->tick_max = MIN(oprof.tick_max_ticks, OPROF_TICK_MAX_PERIODS * (tsc_hz() / hz));
	cnt_add(hz < old ? &c->throttles : &c->raises, 1);
	if (oprof.hooks && oprof.hooks->set_rate)
		oprof.hooks->set_rate(core, hz);
	if (!(t = cpu_reserve(c, sizeof(*t), tsc)))
		return;		/* the count in OPF_CORE_END is what counts */
	t->h.type = OPF_THROTTLE;
	t->h.flags = 0;
	t->h.len = sizeof(*t);
	t->core = (uint32_t)core;
	t->new_hz = hz;
	t->tsc = tsc;
	t->old_hz = old;
	t->budget_pct = oprof.cfg.budget;
}

/*
 * The tick that began at start (TSC) is done: charge it to the budget window, and at the
 * end of a window throttle if the hot path took more than its share for a while. Two
 * things keep a core that is not overloaded from throttling: a tick is charged at most
 * OPROF_TICK_MAX_PERIODS periods of the core's rate and never more than OPROF_TICK_MAX_US
 * (a longer one was descheduled -- by the emulator or a hypervisor -- or spun on a lock
 * whose holder was: the hot path itself takes microseconds; a core overloaded for real
 * still shows most of its time, as glue.c leaves only a period between ticks), and it takes
 * OPROF_BUDGET_STRIKES windows
 * over budget in a row (a real overload lasts; a burst of lock contention does not).
 * Not while paused: no record may be written then, and a paused tick costs next to
 * nothing.
 */
static void cpu_budget(struct oprof_cpu *c, uint64_t start)
{
	uint64_t now, span, cost;
	bool over, calm, judged;

	if (++c->budget_n & (OPROF_BUDGET_EVERY - 1))
		return;
	now = tsc_read();
	cost = now > start ? now - start : 0;
	c->win_cost += MIN(cost, c->tick_max) * OPROF_BUDGET_EVERY;
	span = now - c->win_start;
	if (span < oprof.budget_ticks || !span)
		return;
	__atomic_store_n(&c->load_pm, c->win_cost * 1000 / span, __ATOMIC_RELAXED);
	judged = oprof.cfg.budget < 100 && !flag_get(&oprof.paused);
	over = judged && c->win_cost * 100 > span * oprof.cfg.budget;
	calm = judged && c->win_cost * 400 < span * oprof.cfg.budget;
	c->strikes = over ? c->strikes + 1 : 0;
	c->calm = calm && c->hz < oprof.cfg.hz ? c->calm + 1 : 0;
	if (c->strikes >= OPROF_BUDGET_STRIKES && c->hz > 1) {
		cpu_set_hz(c, c->hz / 2, now);
		c->strikes = c->calm = 0;	/* the next windows judge the new rate afresh */
	} else if (c->calm >= OPROF_RAISE_WINDOWS) {
		cpu_set_hz(c, MIN(c->hz * 2, oprof.cfg.hz), now);
		c->strikes = c->calm = 0;
	}
	c->win_cost = 0;
	c->win_start = now;
}

/* paused: oprof.paused as the caller read it, once (its walk depended on it). */
static __force_inline void cpu_tick(struct oprof_cpu *c, bool paused, uint32_t tid,
				    uint64_t tsc, uint64_t pc, const uint64_t *frames,
				    unsigned nframes, unsigned flags)
{
	cnt_add(&c->taken, 1);
	if (paused)
		cpu_lose(c, OPF_LOST_PAUSED);
	else
		cpu_record(c, tid, tsc, pc, frames, nframes, flags);
	cpu_housekeep(c, tsc);
}

void oprof_sample_irq(int core, uint32_t tid, uint64_t tsc, uint64_t pc,
		      const uint64_t *frames, unsigned nframes, unsigned flags)
{
	struct oprof_cpu *c = &oprof_cpus[core];

	if ((unsigned)core >= MAX_CPUS || !cpu_enter(c))
		return;
	cpu_tick(c, flag_get(&oprof.paused), tid, tsc, pc, frames, nframes, flags);
	cpu_budget(c, tsc);
	cpu_exit(c);
}

void oprof_tick_irq(const struct oprof_tick *t)
{
	struct oprof_cpu *c = &oprof_cpus[t->core];
	unsigned n = 0, flags = t->flags;
	bool trunc = false, paused;

	if (t->core >= MAX_CPUS || !cpu_enter(c))
		return;
	paused = flag_get(&oprof.paused);
	if (!paused && oprof.cfg.depth > 0) {
		/* a frameless or half-built frame: its caller comes from the stack, then the chain */
		if (t->leaf_ret)
			c->frames[n++] = t->leaf_ret;
		n += oprof_backtrace(t->fp, t->stack_lo, t->stack_hi, c->frames + n,
				     oprof.cfg.depth - n, &trunc);
		if (trunc)
			flags |= OPF_F_TRUNCATED;
	}
	cpu_tick(c, paused, t->tid, t->tsc, t->pc, c->frames, n, flags);
	if (t->missed)
		__atomic_store_n(&c->missed, t->missed, __ATOMIC_RELAXED);
	cpu_budget(c, t->tsc);
	cpu_exit(c);
}

void oprof_missed(int core, uint64_t missed)
{
	__atomic_store_n(&oprof_cpus[core].missed, missed, __ATOMIC_RELAXED);
}

void oprof_thread_created(uint32_t tid, int core, const char *name)
{
	unsigned long irq = irq_save();
	struct oprof_cpu *c = &oprof_cpus[core_id()];
	uint64_t tsc = tsc_read();
	void *t;

	if (cpu_enter(c)) {
		t = cpu_reserve(c, rec_thread_len(name), tsc);
		if (t) {
			rec_thread(t, tid, core, name, tsc);
			cnt_add(&c->threads, 1);
		} else {
			cnt_add(&c->threads_lost, 1);
		}
		cpu_exit(c);
	}
	irq_restore(irq);
}

/* --- ctl side: ctl mutex held, core not enabled (except cpu_quiesce, cpu_wait_idle) --- */

/*
 * Zero what a session counts. Not a memset: a thread on this core may be running
 * cpu_enter (on is clear, so it touches nothing but busy) while the next session starts.
 */
static void cpu_reset(struct oprof_cpu *c)
{
	c->cur = NULL;
	c->fullq = c->emptyq = NULL;
	c->snapq = NULL;
	c->seen_flush = flag_get(&oprof.flushgen);
	c->starving = 0;
	c->kicked_pass = flag_get(&oprof.pass_gen) - 1;
	c->snap_seen = c->snap_ack = flag_get(&oprof.snap_req);
	c->hz = oprof.cfg.hz;
	c->tick_max = MIN(oprof.tick_max_ticks, OPROF_TICK_MAX_PERIODS * (tsc_hz() / c->hz));
	c->win_start = tsc_read();
	c->win_cost = c->load_pm = c->throttles = c->raises = c->missed = 0;
	c->calm = 0;
	c->strikes = 0;
	c->taken = c->written = c->truncated = c->blocks = 0;
	c->threads = c->threads_lost = 0;
	c->overwritten = c->ow_truncated = c->threads_ow = 0;
	c->w_blocks = c->w_noblock = 0;
	c->w_tsc = tsc_read();
	c->target = oprof.cfg.snapshot ? oprof.cfg.window : oprof.cfg.emptydepth;
	c->low = oprof.cfg.snapshot ? 0 : c->target / 2;
	memset(c->lost, 0, sizeof(c->lost));
	memset(c->unreported, 0, sizeof(c->unreported));
	c->lost_pending = 0;
	c->budget_n = 0;
	c->dropped_samples = c->dropped_truncated = c->dropped_blocks = 0;
	c->threads_dropped = 0;
	memset(c->w_unreported, 0, sizeof(c->w_unreported));
}

/*
 * Fresh counters, queues, a current block and a full empty queue (flight recorder: a
 * window's worth, so that a window emptied by a snapshot fills again without the worker).
 * 0 or -ENOMEM.
 */
int cpu_setup(struct oprof_cpu *c)
{
	cpu_reset(c);
	c->fullq = qopen(SIZE_MAX, 0);
	c->emptyq = qopen(SIZE_MAX, 0);
	c->snapq = qopen(SIZE_MAX, 0);
	if (!c->fullq || !c->emptyq || !c->snapq)
		return -ENOMEM;
	c->cur = pool_get(false);
	if (!c->cur)
		return -ENOMEM;
	for (uint32_t i = 0; i < c->target; i++) {
		struct block *b = pool_get(false);

		if (!b)
			return -ENOMEM;
		qiwrite_block(c->emptyq, b);
	}
	return 0;
}

/* Publish the session's settings and let the core record (release via SEQ_CST). */
void cpu_enable(struct oprof_cpu *c)
{
	__atomic_store_n(&c->on, 1, __ATOMIC_SEQ_CST);
}

/* Stop the core recording; on return it is outside the hot path for good. */
void cpu_quiesce(struct oprof_cpu *c)
{
	__atomic_store_n(&c->on, 0, __ATOMIC_SEQ_CST);
	cpu_wait_idle(c);
}

/* Wait until the core is between ticks: a tick after this sees stores made before it. */
void cpu_wait_idle(struct oprof_cpu *c)
{
	while (__atomic_load_n(&c->busy, __ATOMIC_SEQ_CST))
		cpu_relax();
}

/* After cpu_quiesce: push a partial cur (an empty one goes back to the pool). */
void cpu_flush_partial(struct oprof_cpu *c)
{
	if (!c->cur)
		return;
	if (BLEN(c->cur) > 0) {
		cpu_push(c);
		if (!c->cur)
			return;
	}
	pool_put(c->cur);
	c->cur = NULL;
}

/* Every block of q to the pool, then q itself freed. */
static void cpu_free_queue(struct queue *q)
{
	struct block *b;

	if (!q)
		return;
	while ((b = qget(q)))
		pool_put(b);
	qfree(q);
}

/* After the worker drained fullq (or a failed setup): blocks to the pool, queues freed. */
void cpu_teardown(struct oprof_cpu *c)
{
	if (c->cur) {
		pool_put(c->cur);
		c->cur = NULL;
	}
	cpu_free_queue(c->fullq);
	cpu_free_queue(c->emptyq);
	cpu_free_queue(c->snapq);
	c->fullq = c->emptyq = c->snapq = NULL;
}

/* Flight recorder, core quiesced (or stopped for good): hand its window over for seq. */
void cpu_snap_takeover(struct oprof_cpu *c, uint32_t seq)
{
	cpu_give_window(c, seq);
}

/* Samples of c in the stream, or on their way there (ctl mutex held). */
uint64_t cpu_delivered(struct oprof_cpu *c)
{
	uint64_t ow = cnt_get(&c->overwritten);	/* first: never more than written */

	return cnt_get(&c->written) - ow - c->dropped_samples;
}

uint64_t cpu_truncated(struct oprof_cpu *c)
{
	uint64_t ow = cnt_get(&c->ow_truncated);

	return cnt_get(&c->truncated) - ow - c->dropped_truncated;
}
