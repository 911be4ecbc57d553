/*
 * Scheduler and lock events into the per-core blocks: the schedev.h hooks of a session
 * started with "-e sched".
 *
 * Contexts: every hook runs on the core the event happens on, interrupts off -- the thread
 * the core switched to (on_switch, on_block), the thread or core that took a contended lock
 * (on_lock) -- never in an NMI; and the stop's drain (sched_events_drain), in the ctl thread
 * acting for the stopped cores. Each writes its records into that core's current block
 * inside the writer guard every writer uses (guard.h: ev_enter's hot_enter, hot_leave): no
 * lock, no allocation, no sleeping, and an NMI that lands inside leaves its sample in pend
 * for us to record on the way out, as it does for any writer.
 *
 * What a switch costs matters most (the budget: 150 instructions with -e sched):
 * a switch whose prev stays runnable or exits is OPF_SWITCH_SHORT, 40 bytes and no stack,
 * written on the inline guard and reserve; a blocking switch walks prev's stack, unless the
 * stack cache below proves the walk would write what its last walk in the block wrote
 * (then the 40-byte OPF_SWITCH_SAME refers to that record).
 *
 * Wake-ups are folded into the switch that resumes the woken thread: the waker only leaves
 * who, where and when in it (sched.c, schedev.h), and the switch event writes the
 * OPF_WAKEUP (flagged OPF_W_RESUMED: in the woken thread's core's block, its time earlier
 * than the records before it) just before the switch record, in the same guard and the
 * same reservation. Counted where it is written: taken, written or lost with its switch.
 * A wake-up no switch wrote when the session stops (the thread not yet resumed, or resumed
 * once the hooks were off, even if it exited since) is written by the stop
 * (sched_events_drain); one the thread layer had no room to keep is counted lost OTHER.
 *
 * Two hazards the guard alone does not cover:
 *  - Re-entry from inside the profiler: the hot path may kick the worker, whose wake-up is
 *    itself an event (and takes spinlocks that may be contended). An event that finds its
 *    core already inside a writer (nest) is not written: it is counted lost OTHER.
 *  - Locks held by our caller: a switch event runs after the run-queue lock is released,
 *    but a spin event runs under the spinlock it reports. So inside a writer the worker is
 *    kicked by irq work (hooks->kick_later: worker_kick sees nest set), never by a direct
 *    wake-up that could want them.
 *
 * Stop: session_stop_cores unregisters the hooks, closes every core's gate (on) and then
 * runs a thread on every core (hooks->on_core), which cannot happen while a hook is inside
 * (interrupts are off there): a hook that read the gate open has finished by then, in timer
 * and NMI mode alike.
 *
 * Accounting, per core, like samples: taken = written (by kind) + lost[NO_BLOCK, PAUSED,
 * OTHER]; of the written, lost[OUTPUT_FULL] were in blocks the worker dropped (w.gone.ev)
 * and fr.gone.ev in blocks the flight recorder reused. OPF_SCHED_END carries them.
 */
#include "guard.h"
#include "backtrace.h"
#include "tsctime.h"

#define SPIN_REPORT_US	10	/* a spinlock held us this long or longer: an event */

static struct schedev_ops ops;	/* the hooks (the table at the end); ops.gen: this session */

static void ev_lose(struct opcore *c, unsigned reason)
{
	cnt_add(&c->ev.lost[reason], 1);
}

/*
 * An event on core c -- a lock wait, or the switch sw and (woke) the wake-up of its next
 * thread, which it takes: no longer pending, written or lost -- inside the writer guard
 * (guard.h): counted taken and the guard entered. False when it is not written now: the
 * gate closed (the stop: not taken either), inside another writer on this core (lost
 * OTHER: an event the profiler itself caused), or paused (lost PAUSED).
 */
static __force_inline bool ev_enter(struct opcore *c, const struct schedev_switch *sw,
				    unsigned woke)
{
	if (!hot_on(c))
		return false;	/* a wake-up left pending is the stop's drain's */
	if (woke)
		sw->wk->gen = 0;
	cnt_add(&c->ev.taken, 1 + woke);
	if (unlikely(c->nest | flag_get(&oprof.paused))) {	/* one test for both */
		cnt_add(&c->ev.lost[c->nest ? OPF_LOST_OTHER : OPF_LOST_PAUSED], 1 + woke);
		return false;
	}
	hot_enter(c);
	return true;
}

/* tid's wake-up w, written on core (tid's: threads are pinned) at r, and counted. */
static __force_inline void ev_put_wake_at(struct opcore *c, void *r, const struct schedev_wake *w,
					  uint32_t tid, uint16_t core)
{
	rec_wakeup(r, w, tid, core);
	cnt_add(&c->ev.written[OPF_EV_WAKEUP], 1);
}

/* A wake-up (taken) on its own, in cur or a block the slow reserve finds (now: its time). */
static __noinline void ev_put_wake(struct opcore *c, const struct schedev_wake *w, uint32_t tid,
				   uint16_t core, uint64_t now)
{
	struct opf_wakeup *r = hot_reserve_slow(c, sizeof(*r), now);

	NMI_POINT();
	if (r)
		ev_put_wake_at(c, r, w, tid, core);
	else
		ev_lose(c, OPF_LOST_NO_BLOCK);
}

/*
 * Room for a record of head bytes and up to the session's depth of frames (fewer if the
 * block could not hold them); *max: the frames it has room for. NULL: counted lost.
 */
static void *ev_reserve(struct opcore *c, uint32_t head, uint64_t tsc, unsigned *max)
{
	uint32_t room = oprof.cfg.block_bytes - BLK_HDR, len;
	struct block *b = c->buf.cur;
	void *p;

	*max = oprof.cfg.depth;
	if (head + 8 * *max > room)
		*max = room > head ? (room - head) / 8 : 0;
	if (head > room) {
		ev_lose(c, OPF_LOST_OTHER);
		return NULL;
	}
	len = head + 8 * *max;
	if (likely(b && BFREE(b) >= len)) {	/* room in cur: no call */
		p = b->wp;
		b->wp += len;
		return p;
	}
	p = hot_reserve_slow(c, len, tsc);
	NMI_POINT();
	if (!p)
		ev_lose(c, OPF_LOST_NO_BLOCK);
	return p;
}

/* The frames walked into a record reserved for max: give back the room not used. */
static unsigned ev_walk(struct opcore *c, uint64_t *frames, unsigned max, uintptr_t fp,
			uintptr_t lo, uintptr_t hi)
{
	unsigned why = 0, n = bt_walk(fp, lo, hi, frames, max, &why);	/* the hot path's */

	c->buf.cur->wp -= 8 * (max - n);	/* only an NMI can run meanwhile: it defers */
	return n;
}

/*
 * The stack cache: per core, per thread (by tid, a few ways), the last OPF_SWITCH written for
 * a blocking switch of that thread in the core's current block, and the chain of frame
 * pointers its walk followed. A thread that blocks again where it blocked before (most do:
 * a server loop, a lock, a pipe) is written as a 40-byte OPF_SWITCH_SAME instead of a walk
 * and a stack -- but only when that is provably what a walk would write:
 *  - same block: the way is keyed by cur's generation (buf.cur_gen), which changes
 *    whenever cur does -- pushed, taken, or framed again in place (hot_set_cur) -- so the
 *    same generation means the record is still in cur, its thread's last OPF_SWITCH;
 *  - same wait: set, why, holder, obj, site and the name's address (the names handed to
 *    schedev_wait are constants: a lock's, given where it is created);
 *  - same stack: the same bounds and saved frame pointer, and every word the walk read
 *    reads the same now -- each frame's caller link and return address (the record's
 *    frames[i], as written), and the zero return address it stopped at (tail). Each frame
 *    read lies where the walk found it inside the same bounds (the links are the same), so
 *    reading it again is safe; bt_walk's output is a function of those words and the bounds
 *    alone (the depth is the session's).
 * The core's own table, touched only inside its writer guard; emptied at session start.
 */
#define EV_WAYS		8	/* entries per core, by tid */
#define EV_CACHE_FRAMES	16	/* a deeper stack is never cached (always walked) */

struct ev_stack {
	uint64_t cur_gen;		/* the core's buf.cur_gen when its record was written */
	uint32_t tid, n;		/* its thread (0: nothing cached in this way); its frames */
	uint64_t key;			/* the wait it was written for: schedev_why's set, why and
					   holder (ev_key), and its obj, site and name */
	const void *obj, *site;
	const char *name;
	uintptr_t fp, lo, hi;		/* the saved frame pointer, the stack's bounds */
	uintptr_t tail;			/* the walk stopped at this frame's zero return address */
	uintptr_t fw[2 * EV_CACHE_FRAMES];	/* frame i's words: caller link, return address */
} __aligned(512);	/* a power of two: a way's address is a shift, not a multiply */

static struct ev_stack ev_stacks[MAX_CPUS][EV_WAYS];

/* schedev_why's set, why and holder as one word (its first 8 bytes) */
static inline uint64_t ev_key(const struct schedev_why *w)
{
	uint64_t v;

	__builtin_memcpy(&v, w, sizeof(v));
	return v;
}
_Static_assert(__builtin_offsetof(struct schedev_why, holder) == 4 &&
	       __builtin_offsetof(struct schedev_why, obj) == 8, "ev_key: set, why, holder");

/*
 * Would a walk of sw's stack, and its wait, write exactly e's record? (the cache above)
 * The fixed part in one test: the thread (0, an empty way, is never a blocking thread's:
 * idle threads do not block), the block (the generation of cur e's record was written
 * into: the same cur, not NULL, the record still in it), the stack's frame pointer and
 * bounds, the whole wait (compared whether set or not: stricter, never looser). Then the
 * frames: from the saved frame pointer, each frame's two words against the cache's, the
 * caller link that matched being the next frame -- one load and one compare a word.
 */
static inline bool ev_same(const struct opcore *c, const struct ev_stack *e,
			   const struct schedev_switch *sw)
{
	const struct schedev_why *w = sw->w;
	const uintptr_t *fw = e->fw;
	uintptr_t fp = sw->fp;

	if (((e->tid ^ sw->prev_tid) | (e->cur_gen ^ c->buf.cur_gen) | (e->fp ^ fp) |
	     (e->lo ^ sw->lo) | (e->hi ^ sw->hi) | (e->key ^ ev_key(w)) |
	     ((uintptr_t)e->obj ^ (uintptr_t)w->obj) | ((uintptr_t)e->site ^ (uintptr_t)w->site) |
	     ((uintptr_t)e->name ^ (uintptr_t)w->name)) != 0)
		return false;
	/*
	 * The frames, two a round (the loop's own count and branch once for both), then the
	 * odd one. A round reads what two rounds of the plain loop read, in their order, and
	 * leaves fp where they leave it: the plain loop is
	 *	f = fp; if (f[1] != fw[1] || f[0] != fw[0]) fail; fp = fw[0]; fw += 2;
	 * and g is its second round's f, fw[0]; g's words are read only once f[0] == fw[0]
	 * held (|| evaluates in order), so g is the frame f links to, inside the bounds.
	 */
	for (const uintptr_t *end = fw + 4 * (e->n / 2); fw != end; fw += 4) {
		const uintptr_t *f = (const uintptr_t *)fp, *g = (const uintptr_t *)fw[0];

		if (f[1] != fw[1] || f[0] != fw[0] || g[1] != fw[3] || g[0] != fw[2])
			return false;
		fp = fw[2];
	}
	if ((e->n & 1) && (((const uintptr_t *)fp)[1] != fw[1] ||
			   ((const uintptr_t *)fp)[0] != fw[0]))
		return false;
	return !e->tail || ((const uintptr_t *)e->tail)[1] == 0;
}

/*
 * Remember r, just written with n frames walked from sw's stack (max the most it could
 * take), as its thread's: the words the walk read, read again (prev's stack is frozen while
 * it is off). A stack deeper than the cache empties the way instead: the way must never
 * hold an older record of this thread than its last one in the block.
 */
static void ev_remember(struct opcore *c, struct ev_stack *e, const struct opf_switch *r,
			const struct schedev_switch *sw, unsigned max)
{
	const struct schedev_why *w = sw->w;
	uint32_t n = r->nframes;
	uintptr_t fp = sw->fp, prev = 0;

	e->tid = 0;
	if (n > EV_CACHE_FRAMES)
		return;
	for (uint32_t i = 0; i < n; i++) {
		prev = fp;
		e->fw[2 * i] = fp = ((const uintptr_t *)prev)[0];
		e->fw[2 * i + 1] = r->frames[i];
	}
	/* short of the depth, at a frame inside the bounds: the walk read its return address */
	e->tail = n < max && fp && !(fp & 7) && sw->hi >= sw->lo &&
		  sw->hi - sw->lo >= BT_FRAME_BYTES && fp >= sw->lo &&
		  fp <= sw->hi - BT_FRAME_BYTES && (n == 0 || fp > prev) ? fp : 0;
	e->cur_gen = c->buf.cur_gen;	/* r is in cur: not NULL */
	e->tid = sw->prev_tid;
	e->n = n;
	e->key = ev_key(w);
	e->obj = w->obj;
	e->site = w->site;
	e->name = w->name;
	e->fp = sw->fp;
	e->lo = sw->lo;
	e->hi = sw->hi;
}

/* A blocking switch that is not the same as before: OPF_SWITCH with the wait and the stack. */
static __noinline void ev_block_full(struct opcore *c, const struct schedev_switch *sw,
				     struct ev_stack *e, unsigned woke)
{
	struct opf_switch *r;
	unsigned max;

	must(!irq_enabled() && c == &opcores[core_id()], "on the core, interrupts off");
	if (woke)
		ev_put_wake(c, sw->wk, sw->next_tid, sw->core, sw->tsc);
	if ((r = ev_reserve(c, sizeof(*r), sw->tsc, &max))) {
		rec_switch(r, sw, ev_walk(c, r->frames, max, sw->fp, sw->lo, sw->hi));
		cnt_add(&c->ev.written[OPF_EV_SWITCH], 1);
		ev_remember(c, e, r, sw, max);
	}
	hot_leave(c);
}

/* The short record of type for sw at r, and counted. */
static __force_inline void ev_put_short_at(struct opcore *c, void *r,
					   const struct schedev_switch *sw, uint16_t type)
{
	rec_switch_short(r, type, sw);
	cnt_add(&c->ev.written[OPF_EV_SWITCH], 1);
}

/* A short switch (and woke: next's wake-up) that found no room in cur: the slow reserve. */
static __noinline void ev_switch_short_slow(struct opcore *c, const struct schedev_switch *sw,
					    unsigned woke)
{
	struct opf_switch_short *r;

	if (woke)
		ev_put_wake(c, sw->wk, sw->next_tid, sw->core, sw->tsc);
	r = hot_reserve_slow(c, sizeof(*r), sw->tsc);
	NMI_POINT();
	if (r)
		ev_put_short_at(c, r, sw, OPF_SWITCH_SHORT);
	else
		ev_lose(c, OPF_LOST_NO_BLOCK);
	hot_leave(c);
}

/* A short switch's room: its record and (woke) next's wake-up before it. */
static inline uint32_t ev_short_len(unsigned woke)
{
	return sizeof(struct opf_switch_short) + woke * sizeof(struct opf_wakeup);
}

/*
 * The end both switch templates share: into b (cur, with room for ev_short_len(woke)),
 * next's wake-up (woke) and then the short record of type, in one reservation; then out
 * of the guard.
 */
static __force_inline void ev_put_short(struct opcore *c, struct block *b,
					const struct schedev_switch *sw, unsigned woke,
					uint16_t type)
{
	uint8_t *p = b->wp;

	b->wp += ev_short_len(woke);
	NMI_POINT();
	if (woke) {
		ev_put_wake_at(c, p, sw->wk, sw->next_tid, sw->core);
		p += sizeof(struct opf_wakeup);
	}
	ev_put_short_at(c, p, sw, type);
	hot_leave(c);
}

/*
 * A switch whose prev waits for nothing -- preempted or yield (runnable), exit (gone):
 * OPF_SWITCH_SHORT, no stack, on the leanest path the contract allows: the room in cur
 * taken inline, and every call (slow reserve, what NMIs left) in tail position, so the
 * common case saves no register. sw->core is this core (threads are pinned; on_switch runs
 * on the thread switched to). woke: next's pending wake-up goes just before the switch, in
 * the same reservation (a constant: ev_switch_short has a copy for each case).
 */
static __force_inline void ev_switch_short_as(const struct schedev_switch *sw, unsigned woke)
{
	struct opcore *c = &opcores[sw->core];
	struct block *b;

	hide_value(c);	/* c from here on, not its address computed again at each use */
	if (!ev_enter(c, sw, woke))
		return;
	b = c->buf.cur;
	if (unlikely(!b || BFREE(b) < ev_short_len(woke))) {
		ev_switch_short_slow(c, sw, woke);
		return;
	}
	ev_put_short(c, b, sw, woke, OPF_SWITCH_SHORT);
}

static void ev_switch_short(const struct schedev_switch *sw)
{
	ev_switch_short_as(sw, 0);
}

static void ev_switch_short_woke(const struct schedev_switch *sw)
{
	ev_switch_short_as(sw, 1);
}

/*
 * on_block: prev waits. The same wait at the same stack as its last blocking switch in this
 * block is the 40-byte OPF_SWITCH_SAME, on the inline guard and reserve like a short switch;
 * anything else (or no room for the short record in cur: the reference must stay in the
 * block) an OPF_SWITCH with a walk of the stack. sw->core is this core. woke: next's
 * pending wake-up goes just before the switch, in the same reservation (a constant, as in
 * ev_switch_short).
 */
static __force_inline void ev_block_as(const struct schedev_switch *sw, unsigned woke)
{
	struct opcore *c = &opcores[sw->core];
	struct ev_stack *e = &ev_stacks[sw->core][sw->prev_tid % EV_WAYS];
	struct block *b;

	hide_value(c);	/* as in ev_switch_short_as */
	if (!ev_enter(c, sw, woke))
		return;
	b = c->buf.cur;
	/* a hit means e's record is in cur, of the generation it was written in: b is that
	   block, not NULL (ev_same) */
	if (unlikely(!ev_same(c, e, sw) || BFREE(b) < ev_short_len(woke))) {
		ev_block_full(c, sw, e, woke);
		return;
	}
	ev_put_short(c, b, sw, woke, OPF_SWITCH_SAME);
}

static void ev_block(const struct schedev_switch *sw)
{
	ev_block_as(sw, 0);
}

static void ev_block_woke(const struct schedev_switch *sw)
{
	ev_block_as(sw, 1);
}

static void ev_lock(const struct schedev_lock *lk)
{
	struct opcore *c = &opcores[core_id()];
	struct opf_lockwait *r;
	unsigned max;

	if (!ev_enter(c, NULL, 0))
		return;
	must(!irq_enabled(), "interrupts off");
	if ((r = ev_reserve(c, sizeof(*r), lk->tsc, &max))) {
		rec_lockwait(r, (uint16_t)(c - opcores), lk,
			     ev_walk(c, r->frames, max, lk->fp, lk->lo, lk->hi));
		cnt_add(&c->ev.written[OPF_EV_LOCK], 1);
	}
	hot_leave(c);
}

static struct schedev_ops ops = {
	.on_switch = { ev_switch_short, ev_switch_short_woke },
	.on_block = { ev_block, ev_block_woke },
	.on_lock = ev_lock,
};

/* Session start, session lock held: the hooks, with this machine's spin threshold. */
const struct schedev_ops *sched_events_ops(void)
{
	must_hold_session();
	must(!schedev(), "the last session's hooks unregistered");
	ops.spin_min = tsc_of_us(SPIN_REPORT_US);
	if (++ops.gen == 0)	/* a new stamp for this session's wake-ups; never 0 */
		ops.gen = 1;
	memset(ev_stacks, 0, sizeof(ev_stacks));	/* no hook runs: the last session's stopped */
	return &ops;
}

/* One wake-up no switch wrote (w NULL: n the thread layer could not keep), as core writes. */
static void ev_drain_one(const struct schedev_wake *w, uint32_t tid, unsigned core, uint32_t n,
			 void *arg)
{
	struct opcore *c;

	(void)arg;
	if (core >= (unsigned)oprof.ncores)	/* cannot happen: threads live on the cores */
		return;
	c = &opcores[core];
	must(!hot_on(c), "core stopped: the drain writes for it");
	cnt_add(&c->ev.taken, n);
	if (!w || flag_get(&oprof.paused)) {
		cnt_add(&c->ev.lost[w ? OPF_LOST_PAUSED : OPF_LOST_OTHER], n);
		return;
	}
	ev_put_wake(c, w, tid, (uint16_t)core, tsc_read());
}

/*
 * Stop, session lock held, after every core is stopped (session_stop_cores: no hook or
 * waker is inside, none enters) and before their partial blocks are pushed: acting for the
 * cores, the wake-ups no switch wrote, into their threads' cores' blocks.
 */
void sched_events_drain(void)
{
	must_hold_session();
	must(!schedev(), "the hooks unregistered");
	schedev_drain(ops.gen, ev_drain_one, NULL);
}

static void ev_forget_one(const struct schedev_wake *w, uint32_t tid, unsigned core,
			  uint32_t n, void *arg)
{
	(void)w, (void)tid, (void)core, (void)n, (void)arg;
}

/* A start that failed after the hooks went on (session_undo): its stream is thrown away,
   and so are the wake-ups left pending for it (none stays behind for a later drain). */
void sched_events_forget(void)
{
	schedev_drain(ops.gen, ev_forget_one, NULL);
}
