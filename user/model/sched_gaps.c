/*
 * sched_gaps.c: where a session's scheduler events are not complete, per core, so that the
 * replay (sched_acct.c) counts that time as unknown instead of crediting it to the state
 * before it. Called by sched_analyze on events sorted by time, before the replay.
 *
 * A core writes its events into its own blocks, in its order of time, beside its samples.
 * Its events are complete over a stretch of time exactly when every one it took there is in
 * the stream. A gap is time where they may not be:
 *	a block missing	between two blocks of the core whose seqs are not consecutive (the
 *			worker dropped it: output full; the flight recorder reused it;
 *			an earlier reader has it), from the last record of the block before
 *			to the first of the block after; before the first block when that is
 *			not seq 0, or is the rest of a block (OPF_B_PARTIAL); after the last
 *			when OPF_CORE_END counts more blocks, or there is no OPF_CORE_END
 *			(the stream was copied while the session ran: not yet read).
 *	a pause		from one period before the core's pause mark (written at its first
 *			tick after the pause) to its resume mark: events are not written while
 *			paused (lost PAUSED).
 *	a switch missing a switch whose prev is not the thread the core's last switch put
 *			there, on a core that lost events no gap above places (no block,
 *			other, or an incomplete stream): from that last switch to this one.
 *			On a core that lost none it is a wrong stream, which --stats reports.
 * Where the events are complete again (and at the session's start), what runs on the core
 * is the prev of its next switch there, or the thread of its next sample (a core that never
 * switches ran one thread, or idled, all along), or nothing known.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/grow.h"
#include "model/sched_gaps.h"

struct ival {
	uint64_t t0, t1;
};

struct ivals {
	struct ival *v;
	uint32_t n, cap;
};

static int by_time(const void *a, const void *b)
{
	const struct sev *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void sched_sort_events(struct sched_sess *s)
{
	if (s->nev)	/* qsort of no array: undefined with a null pointer */
		qsort(s->ev, s->nev, sizeof(*s->ev), by_time);
}

/* [t0, t1) clipped to the session, kept when not empty. 0 or -1 (memory). */
static int add(struct ivals *iv, const struct sched_sess *s, uint64_t t0, uint64_t t1)
{
	t0 = t0 > s->start ? t0 : s->start;
	t1 = t1 < s->end ? t1 : s->end;
	if (t1 <= t0)
		return 0;
	if (grow_room((void **)&iv->v, &iv->cap, iv->n, sizeof(*iv->v), 16))
		return -1;
	iv->v[iv->n++] = (struct ival){ t0, t1 };
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;

	return x->t0 < y->t0 ? -1 : x->t0 > y->t0;
}

/* Sorted, overlapping and touching ones made one. */
static void merge(struct ivals *iv)
{
	uint32_t n = 0;

	if (!iv->n)
		return;
	qsort(iv->v, iv->n, sizeof(*iv->v), by_start);
	for (uint32_t i = 1; i < iv->n; i++) {
		if (iv->v[i].t0 <= iv->v[n].t1) {
			if (iv->v[i].t1 > iv->v[n].t1)
				iv->v[n].t1 = iv->v[i].t1;
		} else {
			iv->v[++n] = iv->v[i];
		}
	}
	iv->n = n + 1;
}

/* The blocks core k is missing, by their seqs (the file's header comment). */
static int block_gaps(const struct session *ps, const struct sched_sess *s, uint32_t k,
		      struct ivals *iv)
{
	const struct writer_blocks *w = &ps->writers[k];
	const struct core_acct *ca = &ps->cores[k];
	uint64_t expect = 0, last = s->start, from = 0;
	int open = 0;

	if (ps->hdr.version < 2)
		return 0;
	if (!w->n)	/* none in the stream: all unknown, unless it wrote none */
		return ca->have_end && !ca->end.blocks ? 0 : add(iv, s, s->start, s->end);
	for (uint32_t i = 0; i < w->n; i++) {
		const struct blk *b = &w->b[i];

		if ((b->seq != expect || (b->flags & OPF_B_PARTIAL)) && !open) {
			open = 1;
			from = last;
		}
		expect = b->seq + 1;
		if (!b->t0)	/* nothing timed in it: the gap, if any, goes on */
			continue;
		if (open && add(iv, s, from, b->t0))
			return -1;
		open = 0;
		last = b->t1;
	}
	if (open || !ca->have_end || ca->end.blocks > expect)
		return add(iv, s, open ? from : last, s->end);
	return 0;
}

/* Core k's pauses (format 1's marks pause every core): one period before the mark on. */
static int pause_gaps(const struct sched_sess *s, uint32_t k, struct ivals *iv)
{
	uint64_t at = 0;
	int paused = 0;

	for (uint32_t i = 0; i < s->nmarks; i++) {
		const struct smark *m = &s->marks[i];

		if (m->core != k && m->core != SMARK_ALL)
			continue;
		if (m->type == OPF_PAUSE && !paused) {
			paused = 1;
			at = m->tsc > s->start + s->period ? m->tsc - s->period : s->start;
		} else if (m->type == OPF_RESUME && paused) {
			paused = 0;
			if (add(iv, s, at, m->tsc))
				return -1;
		}
	}
	return paused ? add(iv, s, at, s->end) : 0;
}

/* The gap of iv holding tsc (t0 <= tsc < t1), or NULL. */
static const struct ival *gap_at(const struct ivals *iv, uint64_t tsc)
{
	for (uint32_t i = 0; i < iv->n; i++)
		if (iv->v[i].t0 <= tsc && tsc < iv->v[i].t1)
			return &iv->v[i];
	return NULL;
}

/*
 * Switches of core k that do not continue its last one, where lost events no other gap
 * places may explain them (lossy): the time between is a gap. iv is merged.
 */
static int switch_gaps(struct sched_sess *s, uint32_t k, int lossy, struct ivals *iv)
{
	uint32_t running = SEV_NOBODY, n0 = iv->n;
	uint64_t last = s->start;

	for (uint32_t i = 0; i < s->nev && lossy; i++) {
		const struct sev *e = &s->ev[i];

		if (e->kind != SEV_SWITCH || e->core != k)
			continue;
		for (uint32_t g = 0; g < n0; g++)	/* a gap since the last: anything ran */
			if (iv->v[g].t1 > last && iv->v[g].t0 <= e->tsc)
				running = SEV_NOBODY;
		if (running != SEV_NOBODY && running != e->a) {
			if (add(iv, s, last, e->tsc))
				return -1;
			s->cores[k].missing++;
		}
		running = gap_at(iv, e->tsc) ? SEV_NOBODY : e->b;
		last = e->tsc;
	}
	merge(iv);
	return 0;
}

/* First sample of core k at or after t0 and before t1 (s->smp sorted by core, time). */
static const struct ssample *sample_from(const struct sched_sess *s, uint32_t k, uint64_t t0,
					 uint64_t t1)
{
	uint32_t lo = 0, hi = s->nsmp;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct ssample *m = &s->smp[mid];

		if (m->core < k || (m->core == k && m->tsc < t0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nsmp && s->smp[lo].core == k && s->smp[lo].tsc < t1 ? &s->smp[lo] : NULL;
}

/* What core k runs from t0 (where its events become complete) until t1 (its next gap): the
 * prev of its next switch, or its next sample's thread. Only the first nev events are read. */
static uint32_t running_from(const struct sched_sess *s, uint32_t nev, uint32_t k, uint64_t t0,
			     uint64_t t1)
{
	const struct ssample *m = sample_from(s, k, t0, t1);

	for (uint32_t i = 0; i < nev; i++) {
		const struct sev *e = &s->ev[i];

		if (e->kind == SEV_SWITCH && e->core == k && e->tsc >= t0)
			return e->tsc < t1 ? e->a : m ? m->tid : SEV_NOBODY;
	}
	return m ? m->tid : SEV_NOBODY;
}

/* A SEV_GAP event: core k's events stop (begins) or are complete again at tsc. */
static int push_gap(struct sched_sess *s, uint32_t k, uint64_t tsc, int begins, uint32_t runs)
{
	if (s->nev == s->evcap) {
		uint32_t nc = s->evcap ? 2 * s->evcap : 256;
		struct sev *ne = realloc(s->ev, (size_t)nc * sizeof(*ne));

		if (!ne)
			return -1;
		s->ev = ne;
		s->evcap = nc;
	}
	s->ev[s->nev++] = (struct sev){ .tsc = tsc, .seq = begins ? UINT64_MAX : 0,
					.a = (uint32_t)begins, .b = runs, .core = (uint16_t)k,
					.kind = SEV_GAP };
	return 0;
}

/* Core k's gaps iv (merged) as SEV_GAP events; the session's start counts as a gap's end.
 * The stream's events are the first nev. */
static int emit(struct sched_sess *s, uint32_t k, const struct ivals *iv, uint32_t nev)
{
	uint64_t from = s->start;	/* the events are complete from here */

	for (uint32_t g = 0; g < iv->n; g++) {
		const struct ival *v = &iv->v[g];

		if (v->t0 > from &&
		    push_gap(s, k, from, 0, running_from(s, nev, k, from, v->t0)))
			return -1;
		if (push_gap(s, k, v->t0, 1, SEV_NOBODY))
			return -1;
		from = v->t1;
	}
	return from < s->end ? push_gap(s, k, from, 0, running_from(s, nev, k, from, s->end)) : 0;
}

/* Core k's lost events, and those no gap of its own places. */
static void lost_of(struct sched_sess *s, uint32_t k, int paused)
{
	struct sched_core *c = &s->cores[k];
	const struct opf_sched_end *e = &c->end;

	if (!c->have_end)
		return;
	s->ev_taken += e->taken;
	for (unsigned r = 0; r < OPF_LOST_NREASONS; r++) {
		s->ev_lost += e->lost[r];
		s->ev_lost_by[r] += e->lost[r];
	}
	s->ev_lost += e->overwritten;
	s->ev_lost_by[OPF_LOST_NREASONS] += e->overwritten;
	c->unplaced = e->lost[OPF_LOST_NO_BLOCK] + e->lost[OPF_LOST_OTHER] +
		      (paused ? 0 : e->lost[OPF_LOST_PAUSED]);
	c->lost_placed = e->lost[OPF_LOST_OUTPUT_FULL] + e->overwritten +
			 (paused ? e->lost[OPF_LOST_PAUSED] : 0);
}

int sched_gaps(const struct session *ps, struct sched_sess *s)
{
	struct ivals iv = { 0 };
	uint32_t nev = s->nev;
	int rc = 0;

	s->unknown = s->ev_taken = s->ev_lost = 0;
	memset(s->ev_lost_by, 0, sizeof(s->ev_lost_by));
	for (uint32_t k = 0; k < s->ncores && !rc; k++) {
		struct sched_core *c = &s->cores[k];
		uint32_t npause;

		iv.n = 0;
		rc = block_gaps(ps, s, k, &iv);
		npause = iv.n;
		rc = rc || pause_gaps(s, k, &iv);
		lost_of(s, k, iv.n > npause);
		merge(&iv);
		rc = rc || switch_gaps(s, k, !c->have_end || c->unplaced, &iv);
		if (rc)
			break;
		c->ngaps = iv.n;
		c->unknown = 0;
		for (uint32_t g = 0; g < iv.n; g++)
			c->unknown += iv.v[g].t1 - iv.v[g].t0;
		s->unknown += c->unknown;
		rc = emit(s, k, &iv, nev);
	}
	free(iv.v);
	if (!rc)
		sched_sort_events(s);
	return rc;
}

int sched_unknown_text(const struct sched_sess *s, uint32_t si, char *buf, size_t n)
{
	uint64_t all = (s->end > s->start ? s->end - s->start : 0) * s->ncores;
	uint32_t missing = 0, paused = 0;
	int incomplete = 0;
	const char *sep = "";
	size_t at;

	*buf = 0;
	if (!s->unknown)
		return 0;
	for (uint32_t k = 0; k < s->ncores; k++) {
		incomplete |= !s->cores[k].have_end;
		missing += s->cores[k].missing;
	}
	for (uint32_t i = 0; i < s->nmarks; i++)
		paused += s->marks[i].type == OPF_PAUSE;
	at = (size_t)snprintf(buf, n, "session %" PRIu32 ": %.3f of %.3f ms of core time unknown "
			      "(%.2f%%): no event covers it (", si + 1, sched_ms(s, s->unknown),
			      sched_ms(s, all), all ? 100.0 * (double)s->unknown / (double)all : 0);
#define SAY(...) do { if (at < n) at += (size_t)snprintf(buf + at, n - at, __VA_ARGS__); } while (0)
	if (s->ev_lost) {
		SAY("%" PRIu64 " of %" PRIu64 " scheduler events lost", s->ev_lost, s->ev_taken);
		for (unsigned r = 0; r <= OPF_LOST_NREASONS; r++)
			if (s->ev_lost_by[r]) {
				SAY("%s%" PRIu64 " %s", *sep ? ", " : ": ", s->ev_lost_by[r],
				    r < OPF_LOST_NREASONS ? lost_reason_name[r] : "overwritten");
				sep = "; ";
			}
		sep = "; ";
	}
	if (paused) {
		SAY("%ssampling paused", sep);
		sep = "; ";
	}
	if (missing) {
		SAY("%s%" PRIu32 " switch(es) missing", sep, missing);
		sep = "; ";
	}
	if (s->resumed) {
		SAY("%sits beginning went to an earlier reader", sep);
		sep = "; ";
	}
	if (incomplete) {
		SAY("%sthe stream ends before the session did", sep);
		sep = "; ";
	}
	SAY("%s)", *sep ? "" : "nothing tells what ran");
#undef SAY
	return 1;
}
