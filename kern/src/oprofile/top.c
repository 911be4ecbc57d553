/*
 * oprofile top: the running session's hottest functions, live (the shell's `oprofile top`).
 *
 * A tap, not a reader. The worker drains every core's full blocks to the output queue
 * (worker.c); while a viewer is attached it first shows each block to top_tap, which reads
 * the block's OPF_SAMPLE records and counts each by the function its pc is in, then leaves
 * the block exactly as it was: it goes on to the queue (or is dropped over the cap) as if
 * nobody had looked. So a reader of /dev/oprofile attached before, during or after gets
 * every sample it would have got without top; top never consumes, delays or copies a block.
 * It sees what the worker drains: blocks reach it when full or stale (a few worker
 * periods), so an interval's table counts the blocks drained in it. A flight recorder's
 * blocks are not drained until a snapshot: top refuses to watch one, with a message.
 *
 * Symbolized in the kernel, by its own symbol table (ksym_lookup, the one crash stacks and
 * backtraces use): a sample counts for the function containing its pc (the function's first
 * byte is the key), idle included; pcs outside every symbol count as "[unknown]".
 *
 * The table is small and fixed: TOP_SLOTS functions an interval, each with a count per
 * core, open addressing on the function's address; a function that finds the table full
 * counts as "[other functions]". No allocation, no lock of its own: everything here runs
 * with the session lock held -- top_tap in the worker's pass (which holds it), the viewer's
 * oprof_top_* calls take it -- so the table needs nothing more. The sampling cores do no
 * work for top at all: its cost is the worker's, on core 0 (docs/RESULTS.md measures it).
 *
 * One viewer at a time. With no session running, oprof_top_begin starts one (the next
 * session's settings, as a plain "start" would) and oprof_top_end stops it, throwing its
 * stream away unless a reader has opened /dev/oprofile meanwhile (that reader gets it).
 *
 * Contexts: top_tap, the worker (session lock held); oprof_top_*, a thread (the shell's),
 * taking the session lock.
 */
#include "internal.h"
#include "error.h"
#include "tsctime.h"

#define TOP_SLOTS	256	/* functions counted in one interval; the rest: "other" */

struct top_fn {
	const char *name;	/* the symbol table's own string; NULL: the slot is free */
	uintptr_t start;	/* the function's first byte (0 for "[unknown]") */
	uint32_t n[MAX_CPUS];	/* samples of this interval, by core */
};

static struct {
	bool on;			/* a viewer is attached: the worker taps its blocks */
	bool started;			/* the viewer started the session, and stops it */
	uint64_t session;		/* oprof.session_id of the session watched */
	uint64_t since;			/* TSC of the interval's start */
	uint32_t total[MAX_CPUS];	/* samples of this interval, by core */
	uint32_t other[MAX_CPUS];	/* of those, in functions the table had no room for */
	struct top_fn fn[TOP_SLOTS];
} top;

static void top_reset(void)
{
	memset(top.total, 0, sizeof(top.total));
	memset(top.other, 0, sizeof(top.other));
	memset(top.fn, 0, sizeof(top.fn));
	top.since = tsc_read();
}

/* The slot of the function at start (name: its symbol), or NULL when the table is full. */
static struct top_fn *top_slot(uintptr_t start, const char *name)
{
	uint32_t h = (uint32_t)(((uint64_t)start * 0x9e3779b97f4a7c15ull) >> 56);

	for (uint32_t k = 0; k < TOP_SLOTS; k++) {
		struct top_fn *f = &top.fn[(h + k) % TOP_SLOTS];

		if (!f->name) {
			f->name = name;
			f->start = start;
			return f;
		}
		if (f->start == start)
			return f;
	}
	return NULL;
}

static void top_count(uint64_t pc, uint16_t core)
{
	const char *name = "[unknown]";
	uintptr_t off = 0;
	struct top_fn *f;

	if (!ksym_lookup((uintptr_t)pc, &name, &off))
		pc = off = 0;
	f = top_slot((uintptr_t)pc - off, name);
	top.total[core]++;
	if (f)
		f->n[core]++;
	else
		top.other[core]++;
}

/* Worker, session lock held: count b's samples if a viewer is attached; b is not changed. */
void top_tap(const struct block *b)
{
	must_hold_session();
	if (!top.on)
		return;
	for (const struct opf_rec *r = rec_first(b); r; r = rec_next(b, r)) {
		const struct opf_sample *s = (const void *)r;

		if (r->type == OPF_SAMPLE && s->core < oprof.ncores)
			top_count(s->pc, s->core);
	}
}

int oprof_top_begin(char *err, size_t errlen)
{
	int rc = 0;

	session_lock();
	if (top.on) {
		snprintf(err, errlen, "oprofile top: already running (one viewer at a time)");
		rc = -EBUSY;
	} else if (flag_get(&oprof.state) == OPROF_IDLE) {
		rc = ctl_start_default(err, errlen);
		top.started = rc == 0;
	} else if (!session_active()) {
		snprintf(err, errlen, "oprofile top: the last session's stream is not read yet "
			 "(read /dev/oprofile to its end, or 'oprofile discard' it)");
		rc = -EBUSY;
	} else if (oprof.cfg.snapshot) {
		snprintf(err, errlen, "oprofile top: the session is a flight recorder (start -s): "
			 "its blocks stay in each core's window until a snapshot, so there is "
			 "nothing to watch without taking them from the stream");
		rc = -EBUSY;
	} else {
		top.started = false;
	}
	if (rc == 0) {
		top.session = oprof.session_id;
		top_reset();
		top.on = true;
	}
	session_unlock();
	return rc;
}

/* The header of an interval's table: its length, every core's samples. */
static void top_header(struct sbuf *sb, uint64_t sum, uint64_t ms)
{
	sbuf_printf(sb, "session %lu, %lu Hz: %lu samples in %lu.%03lu s (", (unsigned long)
		    oprof.session_id, (unsigned long)oprof.cfg.hz, (unsigned long)sum,
		    (unsigned long)(ms / 1000), (unsigned long)(ms % 1000));
	for (int i = 0; i < oprof.ncores; i++)
		sbuf_printf(sb, "%scpu%d %lu", i ? ", " : "", i, (unsigned long)top.total[i]);
	sbuf_printf(sb, ")%s\n", flag_get(&oprof.state) == OPROF_PAUSED ? ", paused" : "");
}

/* "  12.34%" of part in whole (whole 0: 0.00%). */
static void top_pct(struct sbuf *sb, uint64_t part, uint64_t whole)
{
	uint64_t bp = whole ? (part * 10000 + whole / 2) / whole : 0;

	sbuf_printf(sb, " %3lu.%02lu%%", (unsigned long)(bp / 100), (unsigned long)(bp % 100));
}

/* One row: the share of all samples, the count, per core its share of the core's. */
static void top_row(struct sbuf *sb, const uint32_t *n, uint64_t sum, bool percore,
		    const char *name)
{
	uint64_t all = 0;

	for (int i = 0; i < oprof.ncores; i++)
		all += n[i];
	top_pct(sb, all, sum);
	sbuf_printf(sb, " %8lu", (unsigned long)all);
	for (int i = 0; percore && i < oprof.ncores; i++)
		top_pct(sb, n[i], top.total[i]);
	sbuf_printf(sb, "  %s\n", name);
}

long oprof_top_take(char *buf, size_t n, unsigned rows, bool percore)
{
	struct sbuf sb = { .buf = buf, .n = n, .len = 0 };
	uint64_t all[TOP_SLOTS], sum = 0, other = 0;

	if (n)
		buf[0] = '\0';
	session_lock();
	must(top.on, "a viewer attached (oprof_top_begin succeeded)");
	if (top.session != oprof.session_id || !session_active()) {
		session_unlock();
		return -EPIPE;
	}
	for (int i = 0; i < oprof.ncores; i++) {
		sum += top.total[i];
		other += top.other[i];
	}
	top_header(&sb, sum, ms_of_tsc(tsc_read() - top.since));
	sbuf_printf(&sb, "  self%%  samples");
	for (int i = 0; percore && i < oprof.ncores; i++)
		sbuf_printf(&sb, "   cpu%-2d", i);
	sbuf_printf(&sb, "  function\n");
	for (uint32_t k = 0; k < TOP_SLOTS; k++) {
		all[k] = 0;
		for (int i = 0; top.fn[k].name && i < oprof.ncores; i++)
			all[k] += top.fn[k].n[i];
	}
	for (unsigned r = 0; r < rows; r++) {
		uint32_t best = 0;

		for (uint32_t k = 1; k < TOP_SLOTS; k++)
			if (all[k] > all[best])
				best = k;
		if (!all[best])
			break;
		top_row(&sb, top.fn[best].n, sum, percore, top.fn[best].name);
		all[best] = 0;
	}
	if (other)
		top_row(&sb, top.other, sum, percore, "[other functions: the table was full]");
	if (!sum)
		sbuf_printf(&sb, "  (no samples drained in this interval)\n");
	top_reset();
	session_unlock();
	return (long)sb.len;
}

void oprof_top_end(void)
{
	session_lock();
	must(top.on, "a viewer attached (oprof_top_begin succeeded)");
	top.on = false;
	if (top.started && top.session == oprof.session_id && session_active()) {
		session_stop();
		if (!reader_is_open())
			session_discard();	/* nobody asked for the stream: top's alone */
	}
	top.started = false;
	session_unlock();
}
