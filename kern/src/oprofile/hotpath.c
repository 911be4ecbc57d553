/*
 * The hot path: each core's sampling interrupt records into buffers only that core writes.
 *
 * Each core owns a struct opcore: a current block (buf.cur) it appends records to, and two
 * single-producer single-consumer rings it shares with the worker only (ring.h):
 *	full	the core puts blocks it is done with, oldest first; the worker takes them
 *		and forwards them, in order, to the output queue.
 *	empty	the worker puts recycled blocks; the core takes one when cur is full.
 * No lock, no atomic read-modify-write, no fence, no allocation, no sleeping, no waiting:
 * the hot path may run in an NMI.
 *
 * Blocks: a block is the core's from ring_get(empty) until ring_put(full). Its first
 * record is an OPF_BLOCK header, reserved when the core takes the block and filled when it
 * pushes it: the core, the block's sequence number (cnt.blocks, so a reader can tell a
 * missing block), its samples (block->aux) and its length. A record never straddles
 * blocks; buf.born is the TSC of the tick that took cur, for the staleness bound.
 *
 * Contexts: whoever writes into a core's buffers -- its sampling interrupt (timer or NMI),
 * or a thread on that core with interrupts off (thread names, events, a flight-recorder
 * hand-over) -- does so inside the writer guard (guard.h: hot_enter, hot_leave). An NMI
 * that lands inside a writer leaves its sample in pend (hot_defer, here), and the writer
 * records it on its way out (hot_leave_slow, here).
 *
 * One sample writer (hot_sample): the common tick takes it inline (hot_fast: not paused,
 * nothing to tell first, room in cur); every other tick, and an NMI's deferred sample,
 * goes the general way (hot_tick), which writes marks and losses first and finds a block,
 * then calls the same writer. Both end with the same housekeeping (hot_housekeep).
 *
 * Lost samples: a sample that finds no room and no empty block, or a sample while paused,
 * is counted in cnt.lost[reason] and lrep.unreported[reason]; the next sample first writes
 * OPF_LOST records for the unreported counts, so the stream tells where the gaps are. What
 * is still unreported at stop goes into the closing records. Pause and resume: the first
 * tick that sees the session paused (resumed) writes an OPF_PAUSE (OPF_RESUME) mark into
 * the core's own buffer, so marks and samples are in the order of time per core.
 *
 * Keeping the worker ahead: the worker sizes each core's empty ring for the core's rate
 * (worker.c) and publishes a low-water mark; a core that takes a block and finds its empty
 * ring at or below the mark kicks the worker once per worker pass (buf.kicked_pass), so a
 * burst is met early without a storm of wake-ups. The first miss of a dry spell kicks too.
 * worker_kick only sets a flag and asks the glue to wake the worker (NMI-safe).
 *
 * The flight recorder (flight.c) changes two things here, each behind one test of
 * cfg.snapshot: where a fresh block comes from (the window's oldest when it is full), and
 * what a tick's housekeeping does (hand the window over when a snapshot asks).
 */
#include "guard.h"
#include "backtrace.h"
#include "error.h"

/* n more lost samples (or records) of reason for the next OPF_LOST records to tell. */
static void hot_unreported(struct opcore *c, unsigned reason, uint64_t n)
{
	c->lrep.unreported[reason] += n;
	c->lrep.pending = 1;
}

static void hot_lose(struct opcore *c, unsigned reason, uint64_t n)
{
	cnt_add(&c->cnt.lost[reason], n);
	hot_unreported(c, reason, n);
}

static inline uint16_t hot_core(const struct opcore *c)
{
	return (uint16_t)(c - opcores);
}

/* b becomes cur: empty but for its header, taken at tsc. */
static void hot_block_begin(struct opcore *c, struct block *b, uint64_t tsc)
{
	blk_frame(b);		/* the header is filled by hot_push */
	c->buf.born = tsc;
	hot_set_cur(c, b);
}

/*
 * A block the core could not push took what it held with it: none of its records was
 * written after all, and its samples and events are lost (OTHER).
 */
static void hot_unwrite(struct opcore *c, const struct blk_gone *g)
{
	cnt_add(&c->cnt.written, -g->samples);
	cnt_add(&c->cnt.truncated, -g->truncated);
	cnt_add(&c->cnt.depth_cut, -g->depth_cut);
	cnt_add(&c->cnt.threads, -g->threads);
	cnt_add(&c->cnt.threads_lost, g->threads);
	cnt_add(&c->cnt.marks_lost, g->marks);
	hot_lose(c, OPF_LOST_OTHER, g->samples);
	for (unsigned k = 0; k < OPF_EV_N; k++) {
		cnt_add(&c->ev.written[k], -g->ev[k]);
		cnt_add(&c->ev.lost[OPF_LOST_OTHER], g->ev[k]);
	}
}

/*
 * Hand cur to the worker (flight recorder: to the window). The full ring has room for
 * every block a core can hold (session.c sizes it), so ring_put cannot fail; should it
 * anyway, the block's records are counted lost and the block is framed again as cur.
 * True: pushed.
 */
bool hot_push(struct opcore *c)
{
	struct block *b = c->buf.cur;
	struct opf_block *h = (struct opf_block *)b->base;
	struct blk_gone g = { 0 };

	must_own_core(c);
	rec_block(h, hot_core(c), b->aux, cnt_get(&c->cnt.blocks), (uint32_t)BLEN(b));
	NMI_POINT();
	if (ring_put(&c->buf.full, b)) {
		hot_set_cur(c, NULL);
		cnt_add(&c->cnt.blocks, 1);
		return true;
	}
	/* never pushed: what it held was never written */
	blk_salvage(b, &g, c->lrep.unreported, &c->lrep.pending);
	hot_unwrite(c, &g);
	hot_block_begin(c, b, c->buf.born);
	return false;
}

/* Push cur unless there is none or nothing in it (the age bound, a "flush"). */
static __noinline void hot_push_partial(struct opcore *c)
{
	if (c->buf.cur && !blk_empty(c->buf.cur))
		hot_push(c);
}

/* Streaming: at most one kick per worker pass when the empty ring is at its low water. */
static void hot_low_water(struct opcore *c)
{
	uint32_t gen = flag_get(&oprof.pass_gen);

	if (c->buf.kicked_pass != gen && ring_count(&c->buf.empty) <= flag_get(&c->w.low)) {
		c->buf.kicked_pass = gen;
		worker_kick();
	}
}

/*
 * A fresh block as cur, or false. Streaming: from the empty ring; the first miss of a dry
 * spell kicks the worker. Flight recorder: from the empty ring while the window has room,
 * else the window's oldest block (flight_hot_reuse).
 */
static bool hot_next_block(struct opcore *c, uint64_t tsc)
{
	bool flight = oprof.cfg.snapshot;
	struct block *b = NULL;

	if (flight && ring_count(&c->buf.full) >= oprof.cfg.window)
		b = flight_hot_reuse(c);
	if (!b)
		b = ring_get(&c->buf.empty);
	if (!b && flight)
		b = flight_hot_reuse(c);
	NMI_POINT();
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
	hot_block_begin(c, b, tsc);
	return true;
}

/*
 * cur with room for a record of len bytes, pushing a full one and taking a fresh one as
 * needed; NULL: no block to be had. len fits a block: ctl's cfg_check makes a sample at
 * the session's depth fit, and every other record is smaller or fitted by its writer.
 */
static __noinline struct block *hot_room(struct opcore *c, uint32_t len, uint64_t tsc)
{
	struct block *b = c->buf.cur;

	must_own_core(c);
	if (b && BFREE(b) < len) {
		if (blk_empty(b))
			return NULL;	/* cannot happen: a record fits an empty block */
		hot_push(c);
	}
	if (!c->buf.cur && !hot_next_block(c, tsc))
		return NULL;
	b = c->buf.cur;
	return BFREE(b) >= len ? b : NULL;
}

/* len bytes for one record in cur, switching blocks when it is full; NULL: no block. */
void *hot_reserve_slow(struct opcore *c, uint32_t len, uint64_t tsc)
{
	struct block *b = hot_room(c, len, tsc);
	void *p;

	if (!b)
		return NULL;
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

	if (unlikely(!b || BFREE(b) < len))
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

	if (!rec_lost_all(c->lrep.unreported, hot_core(c), tsc, hot_reserve_for, &r))
		return false;
	c->lrep.pending = 0;
	return true;
}

/*
 * Walk t's stack (up to depth frames) into frames: the leaf's caller when the arch found
 * it unlinked, then the frame chain. Returns the frames written; adds the walk's flags to
 * *flags.
 */
static __force_inline unsigned hot_walk(const struct oprof_tick *t, uint64_t *frames,
					unsigned depth, unsigned *flags)
{
	uint64_t *out = frames;

	if (depth == 0)
		return 0;
	/* a frameless or half-built frame: its caller comes from the stack, then the chain */
	if (t->leaf_ret)
		*out++ = t->leaf_ret;
	return (unsigned)(bt_walk_to(t->fp, t->stack_lo, t->stack_hi, out, frames + depth,
				     flags) - frames);
}

/* A sample's walk stopped early (a bad frame) or cut at the depth: each counted. */
static __force_inline void hot_count_cut(struct opcore *c, unsigned flags)
{
	if (unlikely(flags & (OPF_F_TRUNCATED | OPF_F_DEPTH))) {
		if (flags & OPF_F_TRUNCATED)
			cnt_add(&c->cnt.truncated, 1);
		if (flags & OPF_F_DEPTH)
			cnt_add(&c->cnt.depth_cut, 1);
	}
}

/*
 * The one sample writer. t's sample goes at b's wp (b is cur, with room for a sample of
 * depth frames): its frames walked from t straight into the record, or (walked, an NMI's
 * deferred sample) copied from there; then the record is made cur's -- wp moved past it
 * once it is whole (an NMI meanwhile defers: nest is set) -- and counted.
 */
static __force_inline void hot_sample(struct opcore *c, struct block *b,
				      const struct oprof_tick *t, unsigned depth,
				      const uint64_t *walked)
{
	struct opf_sample *s = (struct opf_sample *)b->wp;
	unsigned n = depth, flags = t->flags;
	uint32_t len;

	if (walked)
		memcpy(s->frames, walked, 8 * (size_t)n);
	else
		n = hot_walk(t, s->frames, depth, &flags);
	len = opf_sample_len(n);
	rec_sample(s, len, t->core, t->tid, t->tsc, t->pc, s->frames, n, flags);
	NMI_POINT();
	b->wp += len;
	b->aux++;
	cnt_add(&c->cnt.written, 1);
	hot_count_cut(c, flags);
}

/*
 * Write the pause and resume marks this core noticed, in order, each with the time of the
 * tick that noticed it; false if one found no block (it stays pending, and so does the
 * record that wanted to follow it). Marks alternate, and the newest pending one is what
 * the core saw last (seen_pause): of a pending pair the first is the other kind -- a
 * resume, when a resume found no block and the next pause came before one did.
 */
bool hot_write_marks(struct opcore *c, uint64_t tsc)
{
	must_own_core(c);
	while (c->buf.nmarks) {
		/* the oldest is mark_tsc[0] */
		bool pause = (c->buf.nmarks == 2) != (c->buf.seen_pause != 0);
		void *m = hot_reserve_slow(c, sizeof(struct opf_mark), tsc);

		if (!m)
			return false;
		rec_mark(m, pause ? OPF_PAUSE : OPF_RESUME, hot_core(c), c->buf.mark_tsc[0]);
		if (--c->buf.nmarks)
			c->buf.mark_tsc[0] = c->buf.mark_tsc[1];	/* the resume is next */
	}
	return true;
}

/* The session was paused or resumed since this core last looked: a mark to write. */
static __noinline void hot_notice_pause(struct opcore *c, uint32_t paused, uint64_t tsc)
{
	c->buf.seen_pause = paused;
	if (c->buf.nmarks == 2) {
		/* two marks still unwritten, and now a third that undoes them: give up the pair */
		cnt_add(&c->cnt.marks_lost, 2);
		c->buf.nmarks = 0;
	}
	c->buf.mark_tsc[c->buf.nmarks++] = tsc;
	hot_write_marks(c, tsc);
}

/*
 * Streaming: push cur early when "flush" was asked or its first record is older than the
 * bound. Flight recorder: hand the window over when a snapshot asks (partial blocks stay
 * in the window otherwise: pushing them would only shrink it). The common case is two
 * tests and the age compare, inline; the rest is hot_housekeep_rare.
 */
static __noinline void hot_housekeep_rare(struct opcore *c)
{
	uint32_t gen = flag_get(&oprof.flushgen);
	bool flush = gen != c->buf.seen_flush;

	c->buf.seen_flush = gen;
	if (oprof.cfg.snapshot)
		flight_hot_housekeep(c);
	else if (flush)
		hot_push_partial(c);
}

static __force_inline void hot_housekeep(struct opcore *c, uint64_t tsc)
{
	if (unlikely(flag_get(&oprof.flushgen) != c->buf.seen_flush || oprof.cfg.snapshot))
		hot_housekeep_rare(c);
	else if (unlikely(tsc - c->buf.born >= oprof.stale_ticks))
		hot_push_partial(c);
}

/* The glue's running count of missed periods, as the tick t brought it (0: none new). */
static __force_inline void hot_missed(struct opcore *c, const struct oprof_tick *t)
{
	if (t->missed)
		__atomic_store_n(&c->cnt.missed, t->missed, __ATOMIC_RELAXED);
}

/*
 * The general way, for any tick the common one (hot_fast) is not: a loss while paused,
 * marks and losses told first, a block to take. t's sample has depth frames walked already
 * (walked: an NMI's deferred sample) or walks up to depth. paused: oprof.paused as the
 * tick read it, once (the NMI's walk depended on it).
 */
static void hot_tick(struct opcore *c, uint32_t paused, const struct oprof_tick *t,
		     unsigned depth, const uint64_t *walked)
{
	struct block *b;

	cnt_add(&c->cnt.taken, 1);
	if (unlikely(paused != c->buf.seen_pause))
		hot_notice_pause(c, paused, t->tsc);
	if (paused)
		hot_lose(c, OPF_LOST_PAUSED, 1);
	else if ((c->buf.nmarks && !hot_write_marks(c, t->tsc)) ||
		 (c->lrep.pending && !hot_report_lost(c, t->tsc)) ||
		 !(b = hot_room(c, opf_sample_len(depth), t->tsc)))
		hot_lose(c, OPF_LOST_NO_BLOCK, 1);	/* no room for it, or for what goes first */
	else
		hot_sample(c, b, t, depth, walked);
	NMI_POINT();
	hot_housekeep(c, t->tsc);
	hot_missed(c, t);
}

/* What NMIs left while this writer was active: record it (the guard's nest still set). */
static void hot_take_pending(struct opcore *c)
{
	uint32_t over;

	while (__atomic_load_n(&c->pend.full, __ATOMIC_RELAXED)) {
		struct pend_sample *p = &c->pend.s;

		signal_fence();
		hot_tick(c, p->paused, &p->t, p->nframes, p->frames);
		signal_fence();
		__atomic_store_n(&c->pend.full, 0, __ATOMIC_RELAXED);
	}
	/* periods sampled while the slot was taken: taken, and lost (paused, or no room) */
	over = __atomic_load_n(&c->pend.overflow, __ATOMIC_RELAXED);
	if (over != c->pend.folded) {
		cnt_add(&c->cnt.taken, over - c->pend.folded);
		hot_lose(c, OPF_LOST_OTHER, over - c->pend.folded);
		c->pend.folded = over;
	}
	over = __atomic_load_n(&c->pend.ovf_paused, __ATOMIC_RELAXED);
	if (over != c->pend.folded_paused) {
		cnt_add(&c->cnt.taken, over - c->pend.folded_paused);
		hot_lose(c, OPF_LOST_PAUSED, over - c->pend.folded_paused);
		c->pend.folded_paused = over;
	}
}

/*
 * guard.h: the writer found that NMIs left something (pend.any): clear the flag before
 * looking (an NMI after the clear sets it again, and the next look takes what it left),
 * record it, and leave -- or, another NMI having deferred meanwhile, go round again.
 */
__noinline void hot_leave_slow(struct opcore *c)
{
	must(c->nest && c == &opcores[core_id()], "on the core, inside its writer guard");
	do {
		__atomic_store_n(&c->pend.any, 0, __ATOMIC_RELAXED);
		signal_fence();
		hot_take_pending(c);
	} while (!hot_try_out(c));
}

/*
 * An NMI found a writer active on this core: walk with the NMI's own scratch and leave
 * the sample in pend. Touches nothing the writer touches.
 */
static __noinline void hot_defer(struct opcore *c, const struct oprof_tick *t, uint32_t paused)
{
	struct pend_sample *p = &c->pend.s;
	unsigned flags = t->flags, n;

	must(arch_in_nmi(), "only an NMI lands inside a writer");
	if (__atomic_load_n(&c->pend.full, __ATOMIC_RELAXED)) {
		if (paused)
			__atomic_store_n(&c->pend.ovf_paused, c->pend.ovf_paused + 1,
					 __ATOMIC_RELAXED);
		else
			__atomic_store_n(&c->pend.overflow, c->pend.overflow + 1,
					 __ATOMIC_RELAXED);
		signal_fence();
		__atomic_store_n(&c->pend.any, 1, __ATOMIC_RELAXED);
		return;
	}
	n = hot_walk(t, c->nmi_frames, paused ? 0 : oprof.cfg.depth, &flags);
	p->t = *t;
	p->t.flags = (uint16_t)flags;
	p->paused = (uint16_t)paused;
	p->nframes = (uint16_t)n;
	memcpy(p->frames, c->nmi_frames, 8 * (size_t)n);
	signal_fence();
	__atomic_store_n(&c->pend.full, 1, __ATOMIC_RELAXED);
	signal_fence();
	__atomic_store_n(&c->pend.any, 1, __ATOMIC_RELAXED);
}

/*
 * The common tick, in one pass: not paused (nor a mark or a loss still to tell), and room
 * in cur for a sample at the session's depth -- which the session's settings guarantee
 * fits a block (cfg_check). The sample writer walks straight into the record. False:
 * nothing was done; the general way (hot_tick) takes it.
 */
static __force_inline bool hot_fast(struct opcore *c, const struct oprof_tick *t,
				    uint32_t paused)
{
	struct block *b = c->buf.cur;
	unsigned depth = oprof.cfg.depth;

	if (unlikely((paused | c->buf.seen_pause | c->buf.nmarks | c->lrep.pending) != 0 ||
		     !b || BFREE(b) < opf_sample_len(depth)))
		return false;
	cnt_add(&c->cnt.taken, 1);
	hot_sample(c, b, t, depth, NULL);
	NMI_POINT();
	hot_housekeep(c, t->tsc);
	hot_missed(c, t);
	return true;
}

/* Any tick hot_fast does not take: paused, marks or losses to write, a block to take. */
static __noinline void hot_tick_slow(struct opcore *c, const struct oprof_tick *t,
				     uint32_t paused)
{
	hot_tick(c, paused, t, oprof.cfg.depth, NULL);
}

void oprof_tick_irq(const struct oprof_tick *t)
{
	struct opcore *c;
	uint32_t paused;

	if (t->core >= MAX_CPUS)
		return;
	c = &opcores[t->core];
	hide_value(c);	/* c from here on, not its address computed again at each use */
	if (!hot_on(c)) {
		/* the gate closed at stop, the glue's source not yet: a period not sampled */
		cnt_add(&c->cnt.refused, 1);
		return;
	}
	paused = flag_get(&oprof.paused);
	if (unlikely(c->nest)) {
		hot_defer(c, t, paused);
		return;
	}
	hot_enter(c);
	if (!hot_fast(c, t, paused))
		hot_tick_slow(c, t, paused);
	hot_budget(c, t->tsc);
	hot_leave(c);
}

/* The glue's count leaves out the ticks it delivered after the gate closed: they are missed. */
void oprof_missed(int core, uint64_t missed)
{
	struct opcore *c = &opcores[core];

	__atomic_store_n(&c->cnt.missed, missed + cnt_get(&c->cnt.refused), __ATOMIC_RELAXED);
}

void oprof_thread_created(uint32_t tid, int core, const char *name)
{
	unsigned long irq = irq_save();
	struct opcore *c = &opcores[core_id()];
	uint64_t tsc = tsc_read();
	void *t;

	if (hot_on(c)) {
		hot_enter(c);	/* nest is clear: interrupts are off, and no writer calls us */
		t = hot_reserve(c, rec_thread_len(name), tsc);
		NMI_POINT();
		if (t) {
			rec_thread(t, tid, core, name, tsc);
			cnt_add(&c->cnt.threads, 1);
		} else {
			cnt_add(&c->cnt.threads_lost, 1);
		}
		hot_leave(c);
	}
	irq_restore(irq);
}
