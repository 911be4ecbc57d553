/*
 * The hot path: each core's sampling interrupt records into buffers only that core writes.
 *
 * Each core owns a struct opcore: a current block (buf.cur) it appends records to, and two
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
 * their use of the core's state by hot_enter/hot_exit. The ctl thread, to stop a core,
 * clears on and waits until busy is clear (opcore_quiesce): a Dekker handshake on two
 * SEQ_CST flags, so afterwards the core will not touch its state again and everything it
 * wrote is visible.
 *
 * Lost samples: a sample that finds no room and no empty block, a sample while paused,
 * or one that cannot fit a block is counted in cnt.lost[reason] and lrep.unreported[reason];
 * the next sample first writes OPF_LOST records for the unreported counts, so the stream
 * tells where the gaps are. What is still unreported at stop goes into the closing records.
 *
 * Keeping the worker ahead: the worker sizes each core's empty queue for the core's rate
 * (worker.c) and publishes a low-water mark; a core that pops a block and finds its empty
 * queue at or below the mark kicks the worker once per worker pass (buf.kicked_pass), so
 * a burst is met early without a storm of wake-ups. The first miss of a dry spell kicks too.
 *
 * The flight recorder (flight.c) changes two things here, each behind one test of
 * cfg.snapshot: where a fresh block comes from (the window's oldest when it is full), and
 * what a tick's housekeeping does (hand the window over when a snapshot asks).
 */
#include "internal.h"
#include "error.h"
#include "oprofile_bench.h"

/* Hot path: may this core record? Pairs with opcore_quiesce. */
static bool hot_enter(struct opcore *c)
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
static void hot_exit(struct opcore *c)
{
	__atomic_store_n(&c->busy, 0, __ATOMIC_RELEASE);
}

/* n more lost samples (or records) of reason for the next OPF_LOST records to tell. */
void hot_unreported(struct opcore *c, unsigned reason, uint64_t n)
{
	c->lrep.unreported[reason] += n;
	c->lrep.pending = 1;
}

static void hot_lose(struct opcore *c, unsigned reason)
{
	cnt_add(&c->cnt.lost[reason], 1);
	hot_unreported(c, reason, 1);
}

/* A block's samples and truncated count start again (for a block about to be refilled). */
static void hot_block_reset(struct block *b)
{
	block_reset(b);
	b->aux = 0;
	b->flags &= BLK_TRUNC_ONE - 1;
}

/*
 * Hand cur to the worker. qiwrite_block fails only on a hung-up queue, which a core's
 * queue never is; should it anyway, the samples are counted lost and the block reused.
 */
void hot_push(struct opcore *c)
{
	struct block *b = c->buf.cur;
	uint32_t samples = b->aux, trunc = BLK_TRUNC(b);

	if (qiwrite_block(c->buf.fullq, b) >= 0) {
		c->buf.cur = NULL;
		cnt_add(&c->cnt.blocks, 1);
		return;
	}
	cnt_add(&c->cnt.written, -(uint64_t)samples);
	cnt_add(&c->cnt.truncated, -(uint64_t)trunc);
	cnt_add(&c->cnt.lost[OPF_LOST_OTHER], samples);
	hot_unreported(c, OPF_LOST_OTHER, samples);
	hot_block_reset(b);
}

/* Streaming: at most one kick per worker pass when the empty queue is at its low water. */
static void hot_low_water(struct opcore *c)
{
	uint32_t gen = flag_get(&oprof.pass_gen);

	if (c->buf.kicked_pass != gen && qblocks(c->buf.emptyq) <= flag_get(&c->w.low)) {
		c->buf.kicked_pass = gen;
		worker_kick();
	}
}

/*
 * A fresh block as cur, or false. Streaming: from emptyq; the first miss of a dry spell
 * kicks the worker. Flight recorder: from emptyq while the window has room, else the
 * window's oldest block (flight_hot_reuse).
 */
static bool hot_next_block(struct opcore *c)
{
	bool flight = oprof.cfg.snapshot;
	struct block *b = NULL;

	if (flight && qblocks(c->buf.fullq) >= oprof.cfg.window)
		b = flight_hot_reuse(c);
	if (!b)
		b = qget(c->buf.emptyq);
	if (!b && flight)
		b = flight_hot_reuse(c);
	if (!b) {
		if (!c->buf.starving) {
			c->buf.starving = 1;
			worker_kick();
		}
		return false;
	}
	c->buf.starving = 0;
	if (!flight)
		hot_low_water(c);
	hot_block_reset(b);
	c->buf.cur = b;
	return true;
}

/* hot_reserve when cur is missing, full or empty; also for the rare records. */
__noinline void *hot_reserve_slow(struct opcore *c, uint32_t len, uint64_t tsc)
{
	struct block *b = c->buf.cur;
	void *p;

	if (b && BFREE(b) < len) {
		if (BLEN(b) > 0)
			hot_push(c);
		else
			return NULL;	/* cannot happen: ctl_start checks len against blocks */
	}
	if (!c->buf.cur && !hot_next_block(c))
		return NULL;
	b = c->buf.cur;
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
static inline void *hot_reserve(struct opcore *c, uint32_t len, uint64_t tsc)
{
	struct block *b = c->buf.cur;
	void *p;

	if (unlikely(!b || BFREE(b) < len || b->wp == b->base))
		return hot_reserve_slow(c, len, tsc);
	p = b->wp;
	b->wp += len;
	return p;
}

struct hot_res {
	struct opcore *c;
	uint64_t tsc;
};

static void *hot_reserve_for(void *arg, uint32_t len)
{
	struct hot_res *r = arg;

	return hot_reserve_slow(r->c, len, r->tsc);
}

/* Write OPF_LOST records for whatever is unreported; false if a record found no block. */
static bool hot_report_lost(struct opcore *c, uint64_t tsc)
{
	struct hot_res r = { c, tsc };

	if (!rec_lost_all(c->lrep.unreported, (uint16_t)(c - opcores), tsc, hot_reserve_for, &r))
		return false;
	c->lrep.pending = 0;
	return true;
}

static __force_inline void hot_record(struct opcore *c, uint32_t tid, uint64_t tsc,
				      uint64_t pc, const uint64_t *frames, unsigned nframes,
				      unsigned flags)
{
	uint32_t len;
	struct opf_sample *s;

	nframes = MIN(nframes, oprof.cfg.depth);
	len = opf_sample_len(nframes);
	if (len > oprof.cfg.block_bytes) {
		hot_lose(c, OPF_LOST_OTHER);
		return;
	}
	if ((c->lrep.pending && !hot_report_lost(c, tsc)) || !(s = hot_reserve(c, len, tsc))) {
		hot_lose(c, OPF_LOST_NO_BLOCK);
		return;
	}
	rec_sample(s, len, (uint16_t)(c - opcores), tid, tsc, pc, frames, nframes, flags);
	c->buf.cur->aux++;
	cnt_add(&c->cnt.written, 1);
	if (flags & OPF_F_TRUNCATED) {
		c->buf.cur->flags += BLK_TRUNC_ONE;
		cnt_add(&c->cnt.truncated, 1);
	}
}

/*
 * Streaming: push cur early when "flush" was asked or its first record is older than the
 * bound. Flight recorder: hand the window over when a snapshot asks (partial blocks stay
 * in the window otherwise: pushing them would only shrink it).
 */
static __force_inline void hot_housekeep(struct opcore *c, uint64_t tsc)
{
	uint32_t gen = flag_get(&oprof.flushgen);
	bool flush = gen != c->buf.seen_flush;
	struct block *b = c->buf.cur;

	c->buf.seen_flush = gen;
	if (oprof.cfg.snapshot) {
		flight_hot_housekeep(c);
		return;
	}
	if (!b || BLEN(b) == 0)
		return;
	if (flush || tsc - b->stamp >= oprof.stale_ticks)
		hot_push(c);
}

/* paused: oprof.paused as the caller read it, once (its walk depended on it). */
static __force_inline void hot_tick(struct opcore *c, bool paused, uint32_t tid,
				    uint64_t tsc, uint64_t pc, const uint64_t *frames,
				    unsigned nframes, unsigned flags)
{
	cnt_add(&c->cnt.taken, 1);
	if (paused)
		hot_lose(c, OPF_LOST_PAUSED);
	else
		hot_record(c, tid, tsc, pc, frames, nframes, flags);
	hot_housekeep(c, tsc);
}

void oprof_sample_irq(int core, uint32_t tid, uint64_t tsc, uint64_t pc,
		      const uint64_t *frames, unsigned nframes, unsigned flags)
{
	struct opcore *c = &opcores[core];

	if ((unsigned)core >= MAX_CPUS || !hot_enter(c))
		return;
	hot_tick(c, flag_get(&oprof.paused), tid, tsc, pc, frames, nframes, flags);
	hot_budget(c, tsc);
	hot_exit(c);
}

void oprof_tick_irq(const struct oprof_tick *t)
{
	struct opcore *c = &opcores[t->core];
	unsigned n = 0, flags = t->flags;
	bool trunc = false, paused;

	if (t->core >= MAX_CPUS || !hot_enter(c))
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
	hot_tick(c, paused, t->tid, t->tsc, t->pc, c->frames, n, flags);
	if (t->missed)
		__atomic_store_n(&c->cnt.missed, t->missed, __ATOMIC_RELAXED);
	hot_budget(c, t->tsc);
	hot_exit(c);
}

void oprof_missed(int core, uint64_t missed)
{
	__atomic_store_n(&opcores[core].cnt.missed, missed, __ATOMIC_RELAXED);
}

void oprof_thread_created(uint32_t tid, int core, const char *name)
{
	unsigned long irq = irq_save();
	struct opcore *c = &opcores[core_id()];
	uint64_t tsc = tsc_read();
	void *t;

	if (hot_enter(c)) {
		t = hot_reserve(c, rec_thread_len(name), tsc);
		if (t) {
			rec_thread(t, tid, core, name, tsc);
			cnt_add(&c->cnt.threads, 1);
		} else {
			cnt_add(&c->cnt.threads_lost, 1);
		}
		hot_exit(c);
	}
	irq_restore(irq);
}
