/*
 * The stream encoder's interface (encode.c): every record the profiler writes -- a core's,
 * the stream writer's, a scheduler event's, a crash dump's -- is built by a rec_* function
 * here, the kernel's counterpart of user/ingest/parser.c, which decodes them. The layout
 * of a record (abi/oprofile.h) is written nowhere else in the kernel.
 *
 * rec_* fill a record of the given type at p, which the caller reserved (exactly the
 * record's length) in memory it owns; they run in any context and read no session state:
 * what a record says comes in its arguments. The few a hot path writes are inline here;
 * the rest are encode.c's. The record writer (recw, stream.c) packs the kernel's own
 * records into pool blocks and queues each on the stream when it is full or finished:
 * session lock held.
 */
#ifndef OPROF_ENCODE_H
#define OPROF_ENCODE_H

#include "kernel.h"
#include "abi/oprofile.h"
#include "block.h"
#include "schedev.h"

/* Every record's header. */
static __force_inline void rec_hdr(struct opf_rec *h, uint16_t type, uint16_t flags,
				   uint32_t len)
{
	h->type = type;
	h->flags = flags;
	h->len = len;
}

/* One sample of len = opf_sample_len(nframes) bytes. Inline: the hot path's only record. */
static __force_inline void rec_sample(void *p, uint32_t len, uint16_t core, uint32_t tid,
				      uint64_t tsc, uint64_t pc, const uint64_t *frames,
				      unsigned nframes, unsigned flags)
{
	struct opf_sample *s = p;

	rec_hdr(&s->h, OPF_SAMPLE, (uint16_t)flags, len);
	s->core = core;
	s->nframes = (uint16_t)nframes;
	s->tid = tid;
	s->tsc = tsc;
	s->pc = pc;
	if (nframes && frames != s->frames)	/* the hot path walks into the record itself */
		memcpy(s->frames, frames, 8 * (size_t)nframes);
}

/* The OPF_BLOCK header at the start of every framed block, filled when it is queued. */
static inline void rec_block(struct opf_block *h, uint16_t core, uint32_t samples, uint64_t seq,
			     uint32_t bytes)
{
	rec_hdr(&h->h, OPF_BLOCK, 0, sizeof(*h));
	h->core = core;
	h->pad = 0;
	h->samples = samples;
	h->seq = seq;
	h->bytes = bytes;
	h->pad2 = 0;
}

void rec_lost(void *p, uint16_t core, uint16_t reason, uint64_t count, uint64_t tsc);
/* Space for one record of len bytes from whoever is writing, or NULL: none left. */
typedef void *(*rec_reserve_fn)(void *arg, uint32_t len);
/*
 * An OPF_LOST record for every reason whose count[] is not 0, each count zeroed once its
 * record is written. False when reserve found no room: the rest stay in count[].
 */
bool rec_lost_all(uint64_t count[OPF_LOST_NREASONS], uint16_t core, uint64_t tsc,
		  rec_reserve_fn reserve, void *arg);
uint32_t rec_thread_len(const char *name);	/* OPF_THREAD naming a thread: its length */
void rec_thread(void *p, uint32_t tid, int core, const char *name, uint64_t tsc);
void rec_throttle(void *p, int core, uint32_t old_hz, uint32_t new_hz, uint64_t tsc,
		  uint32_t budget);
void rec_mark(void *p, uint16_t type, uint16_t core, uint64_t tsc);	/* OPF_PAUSE/RESUME */
void rec_snapshot(void *p, uint16_t flags, uint64_t seq, uint64_t tsc);
/* clock.c: the machine and its clock into a session header (rec_session's); any context,
 * it reads only what boot measured */
void clock_describe(struct opf_session *s);

/* What an OPF_SESSION header says of its session (a profiling session's, a crash dump's). */
struct rec_session_desc {
	uint32_t ncores, hz, depth, block_bytes, period_ms;
	uint32_t flags;		/* OPF_S_* */
	uint32_t source;	/* enum opf_source */
	uint64_t start_tsc, start_ns;
	uint64_t session_id;	/* 0: none (a crash dump) */
	uint64_t cap;		/* the output cap in effect (0: none) */
	uint32_t jitter;	/* percent of a period the samples spread over (0: fixed) */
	uint64_t jitter_seed;	/* its seed (jitter.h) */
};
/* The header at s, whole: d, and what the kernel knows itself (format, build-id, clock). */
void rec_session(struct opf_session *s, const struct rec_session_desc *d);
struct opcore_acct;
/* A core's closing totals (OPF_CORE_END), from its accounting view (internal.h). */
void rec_core_end(void *p, uint32_t core, const struct opcore_acct *a);
/* A core's events' closing totals (OPF_SCHED_END). */
void rec_sched_end(void *p, uint32_t core, uint64_t taken, const uint64_t written[OPF_EV_N],
		   const uint64_t lost[OPF_LOST_NREASONS], uint64_t overwritten);
/* The last record of a stream (OPF_SESSION_END): bytes, every byte queued before it. */
void rec_session_end(void *p, uint16_t flags, uint64_t end_tsc, uint64_t end_ns,
		     uint64_t blocks_dropped, uint64_t bytes, uint64_t marks_lost);
/* blocks dropped blocks of core from seq on (OPF_D_UNLISTED: which ones is not known) */
void rec_drop(void *p, uint16_t flags, uint16_t core, uint64_t seq, uint32_t blocks,
	      uint64_t samples);

/*
 * Scheduler events (sched_events.c). Inline, the two a switch's fast path writes: tid's
 * wake-up w, written on core (tid's) as an OPF_W_RESUMED record; a switch's short record
 * (OPF_SWITCH_SHORT, or OPF_SWITCH_SAME when its wait and stack are its thread's last).
 */
static __force_inline void rec_wakeup(void *p, const struct schedev_wake *w, uint32_t tid,
				      uint16_t core)
{
	*(struct opf_wakeup *)p = (struct opf_wakeup){
		.h = { OPF_WAKEUP, OPF_W_RESUMED, sizeof(struct opf_wakeup) }, .core = core,
		.target_core = core, .tid = tid, .waker = w->waker, .waker_core = w->core,
		.tsc = w->tsc,
	};
}

static __force_inline void rec_switch_short(void *p, uint16_t type,
					    const struct schedev_switch *sw)
{
	*(struct opf_switch_short *)p = (struct opf_switch_short){
		.h = { type, 0, sizeof(struct opf_switch_short) }, .core = sw->core,
		.why = sw->why, .prev_tid = sw->prev_tid, .next_tid = sw->next_tid,
		.tsc = sw->tsc, .prev_cpu = sw->prev_cpu,
	};
}

/* A blocking switch with its wait (OPF_SWITCH), its nframes frames walked into r already. */
void rec_switch(struct opf_switch *r, const struct schedev_switch *sw, unsigned nframes);
/* A contended lock's wait (OPF_LOCKWAIT) on core, its nframes frames in r already. */
void rec_lockwait(struct opf_lockwait *r, uint16_t core, const struct schedev_lock *lk,
		  unsigned nframes);

/*
 * A crash dump (crashdump.c): the cause and the panicking core's stack (OPF_CRASH), a
 * core's state (OPF_CRASH_CORE), each of rec_*_len bytes; its end (OPF_CRASH_END).
 */
uint32_t rec_crash_len(unsigned nframes);
void rec_crash(void *p, uint16_t flags, uint16_t core, uint32_t cause, uint64_t tsc,
	       uint64_t ns, uint64_t pc, const char *msg, const uint64_t *frames,
	       uint16_t nframes);
uint32_t rec_crash_core_len(unsigned nframes);
void rec_crash_core(void *p, uint16_t flags, uint16_t core, uint16_t state, uint32_t tid,
		    uint32_t blocks, uint64_t tsc, uint64_t pc, uint64_t taken,
		    uint64_t overwritten, const uint64_t *frames, uint16_t nframes);
void rec_crash_end(void *p, uint64_t bytes, uint64_t tsc);

/*
 * Walking a framed block's records, any context, the block the caller's to read:
 *	for (const struct opf_rec *r = rec_first(b); r; r = rec_next(b, r))
 * Only whole records: the walk stops at one whose length is short or runs past b->wp
 * (our own hot path wrote the block, so that is never more than its end).
 */
static inline const struct opf_rec *rec_at(const struct block *b, const uint8_t *p)
{
	const struct opf_rec *r = (const void *)p;

	if (p + sizeof(*r) > b->wp || r->len < sizeof(*r) || r->len > (size_t)(b->wp - p))
		return NULL;
	return r;
}

static inline const struct opf_rec *rec_first(const struct block *b)
{
	return rec_at(b, b->rp);
}

static inline const struct opf_rec *rec_next(const struct block *b, const struct opf_rec *r)
{
	return rec_at(b, (const uint8_t *)r + r->len);
}

/* What a framed block holds, counted from its records (rec_salvage). */
struct salvage {
	uint64_t samples, truncated, depth_cut;	/* OPF_SAMPLE records, and flagged ones */
	uint64_t threads;			/* OPF_THREAD records */
	uint64_t marks;				/* OPF_PAUSE, OPF_RESUME, OPF_THROTTLE */
	uint64_t lost[OPF_LOST_NREASONS];	/* what its OPF_LOST records told */
	uint64_t ev[OPF_EV_N];			/* scheduler events, by kind */
};
/* Any context: count what a block about to leave the stream unread held (see encode.c). */
void rec_salvage(const struct block *b, struct salvage *sv);

/* Blocks that left the stream unread, for one reason (overwritten, dropped). */
struct blk_gone {
	uint64_t blocks;
	uint64_t samples;	/* their OPF_SAMPLE records */
	uint64_t truncated;	/* of those, with OPF_F_TRUNCATED */
	uint64_t depth_cut;	/* of those, with OPF_F_DEPTH */
	uint64_t threads;	/* their OPF_THREAD records */
	uint64_t marks;		/* their OPF_PAUSE, OPF_RESUME, OPF_THROTTLE records */
	uint64_t ev[OPF_EV_N];	/* their scheduler events, by kind */
};
/*
 * The salvaged-block bookkeeping: b will never be read. Adds it to *gone, and the losses
 * its OPF_LOST records told to unreported[] (to be told again), setting *pending (if not
 * NULL) when there were any. The caller is the only writer of all three. Returns b's
 * samples.
 */
uint64_t blk_salvage(const struct block *b, struct blk_gone *gone,
		     uint64_t unreported[OPF_LOST_NREASONS], uint32_t *pending);

/*
 * The writer of the kernel's own blocks (core OPF_CORE_STREAM, stream.c): session lock
 * held. A block is framed like a core's, its header filled when it is queued (stream_put).
 */
enum recw_mode {
	RECW_CAPPED,	/* a new block only under the output cap (else the record is lost) */
	RECW_FORCED,	/* past the cap and the pool's max: the stream's header at start */
	RECW_RESERVED,	/* from the blocks set aside at start: the closing records */
};
struct recw {
	struct block *b;	/* block being filled, not yet on outq */
	enum recw_mode mode;
	bool eos;		/* the last block ends the stream (BLK_EOS) */
	uint32_t spare;		/* RECW_CAPPED: blocks of the cap to leave for what follows */
};
/* len bytes (zeroed) for one record, or NULL when no block is to be had. */
void *recw_reserve(struct recw *w, uint32_t len);
/* Queue the last block on the stream. */
void recw_finish(struct recw *w);
void *recw_reserve_for(void *w, uint32_t len);	/* rec_reserve_fn over a recw */

#endif
