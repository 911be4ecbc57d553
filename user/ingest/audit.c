/*
 * audit.c: the conservation check behind --stats, called by stats.c (which prints its findings)
 * and by opreport.c and header.c (which ask only for the verdict). It checks the stream against
 * the kernel's counters without trusting either: in format 2, per writer, every block's header
 * against what followed it, no block repeated, every missing block explained (an OPF_DROP lists
 * it, or the core's unlisted or overwritten counts cover it; otherwise it is silent loss, named
 * by core, seq range and the stream offsets around it), then per core the totals of
 * OPF_CORE_END against the records counted. Format 1 has no blocks: the per-core totals only.
 * A crash dump has no OPF_CORE_END: its windows' blocks are checked against its own records
 * (crash_audit).
 *
 * A stream without its closing records (reader closed, discarded, crash) or whose beginning
 * went to another reader (resumed) is incomplete: what it holds is still checked, and the
 * verdict says what could not be; incomplete_status says what is missing, for the header.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/audit.h"

#define MAX_RUNS	8	/* unexplained gaps named per core; the rest are counted */

struct audit {
	const struct session *s;
	FILE *out;		/* findings go here; NULL: the verdict only */
	uint8_t *core_fail;	/* per core: a check about it failed (may be NULL) */
	int64_t core;		/* the core being checked, -1: the session */
	int fail;
	int incomplete;
	int nomem;		/* a check ran out of memory: no verdict */
};

static void say(struct audit *a, int is_fail, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* One finding line: "  FAIL: ..." (the check failed) or "  note: ...". */
static void say(struct audit *a, int is_fail, const char *fmt, ...)
{
	va_list ap;

	a->fail |= is_fail;
	if (is_fail && a->core_fail && a->core >= 0 && a->core < a->s->hdr.ncores)
		a->core_fail[a->core] = 1;
	if (!a->out)
		return;
	fprintf(a->out, "  %s: ", is_fail ? "FAIL" : "note");
	va_start(ap, fmt);
	vfprintf(a->out, fmt, ap);
	va_end(ap);
	fputc('\n', a->out);
}

static uint64_t lost_sum(const struct opf_core_end *e)
{
	uint64_t n = 0;

	for (int r = 0; r < OPF_LOST_NREASONS; r++)
		n += e->lost[r];
	return n;
}

static const char *writer_name(const struct session *s, uint32_t w, char *buf, size_t n)
{
	if (w == s->hdr.ncores)
		return "the stream's own blocks";
	snprintf(buf, n, "core %u", w);
	return buf;
}

/* --- format 1 and every version: the kernel's arithmetic ------------------------------- */

/* taken == delivered + lost + overwritten: the kernel's own sum, checkable whenever its
 * OPF_CORE_END is there. */
static void check_taken(struct audit *a, uint32_t k, const struct opf_core_end *e)
{
	uint64_t lost = lost_sum(e);

	if (e->taken != e->delivered + lost + e->overwritten)
		say(a, 1, "core %u: taken %" PRIu64 " != delivered %" PRIu64 " + lost %" PRIu64
		    " + overwritten %" PRIu64 " = %" PRIu64, k, e->taken, e->delivered, lost,
		    e->overwritten, e->delivered + lost + e->overwritten);
}

static void check_core_v1(struct audit *a, uint32_t k, const struct core_acct *c)
{
	const struct opf_core_end *e = &c->end;

	for (int r = 0; r < OPF_LOST_NREASONS; r++)
		if (c->lost_rec[r] != e->lost[r])
			say(a, 0, "core %u: OPF_LOST records count %" PRIu64 " %s, OPF_CORE_END "
			    "says %" PRIu64, k, c->lost_rec[r], lost_reason_name[r], e->lost[r]);
	if (c->samples != e->delivered)
		say(a, 1, "core %u: %" PRIu64 " samples in the stream but delivered is %" PRIu64, k,
		    c->samples, e->delivered);
	check_taken(a, k, e);
	if (c->truncated != e->truncated)
		say(a, 0, "core %u: %" PRIu64 " samples flagged truncated in the stream, "
		    "OPF_CORE_END says %" PRIu64, k, c->truncated, e->truncated);
}

/* --- format 2: blocks ------------------------------------------------------------------ */

static int by_seq(const void *x, const void *y)
{
	const struct blk *a = x, *b = y;

	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

/* Each block's header against what followed it. */
static void check_blocks(struct audit *a, uint32_t w, const struct writer_blocks *wb)
{
	char nb[32];
	const char *who = writer_name(a->s, w, nb, sizeof(nb));

	for (uint32_t i = 0; i < wb->n; i++) {
		const struct blk *b = &wb->b[i];

		if (!a->s->have_end && (int32_t)w == a->s->open_writer && i + 1 == wb->n &&
		    b->bytes < b->hdr_bytes && b->samples <= b->hdr_samples) {
			say(a, 0, "%s: block seq %" PRIu64 " at offset %" PRIu64 ": the stream ends "
			    "inside it (%u of its %u bytes)", who, b->seq, b->off, b->bytes,
			    b->hdr_bytes);
			continue;
		}
		if (b->hdr_samples != b->samples)
			say(a, 1, "%s: block seq %" PRIu64 " at offset %" PRIu64 ": its header says %u "
			    "samples, the block holds %u", who, b->seq, b->off, b->hdr_samples,
			    b->samples);
		if (b->hdr_bytes != b->bytes)
			say(a, 1, "%s: block seq %" PRIu64 " at offset %" PRIu64 ": its header says %u "
			    "bytes, the block has %u", who, b->seq, b->off, b->hdr_bytes, b->bytes);
		if (b->foreign)
			say(a, 1, "%s: block seq %" PRIu64 " at offset %" PRIu64 " holds %u sample(s) "
			    "of another core", who, b->seq, b->off, b->foreign);
		if ((b->flags & OPF_B_PARTIAL) && (i || !session_resumed(a->s)))
			say(a, 1, "%s: block seq %" PRIu64 " at offset %" PRIu64 " is partial but is "
			    "not the first block of a resumed stream", who, b->seq, b->off);
	}
}

/* Sorted copy of a writer's blocks, repeats reported and removed. NULL on no memory. */
static struct blk *unique_seqs(struct audit *a, uint32_t w, const struct writer_blocks *wb,
			       uint32_t *n)
{
	struct blk *u = malloc((wb->n + 1) * sizeof(*u));
	char nb[32];
	uint32_t m = 0;

	if (!u)
		return NULL;
	if (wb->n)
		memcpy(u, wb->b, wb->n * sizeof(*u));
	qsort(u, wb->n, sizeof(*u), by_seq);
	for (uint32_t i = 0; i < wb->n; i++) {
		if (m && u[m - 1].seq == u[i].seq) {
			say(a, 1, "%s: block seq %" PRIu64 " appears twice (offsets %" PRIu64 " and %"
			    PRIu64 ")", writer_name(a->s, w, nb, sizeof(nb)), u[i].seq, u[m - 1].off,
			    u[i].off);
			continue;
		}
		u[m++] = u[i];
	}
	*n = m;
	return u;
}

/* Missing seq ranges that no OPF_DROP lists: the first MAX_RUNS, and how many blocks in all. */
struct gaps {
	uint64_t lo[MAX_RUNS], hi[MAX_RUNS];	/* inclusive */
	uint64_t before[MAX_RUNS], after[MAX_RUNS];	/* offsets of the blocks around; ~0: none */
	uint32_t nruns;
	uint64_t blocks;
};

/* The seq ranges a core's OPF_DROP records list, sorted: [lo, hi] each. */
struct ranges {
	uint64_t (*r)[2];
	uint32_t n;
};

static int by_lo(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y;

	return a[0] < b[0] ? -1 : a[0] > b[0];
}

static int listed_drops(const struct session *s, uint32_t core, struct ranges *d)
{
	d->n = 0;
	d->r = malloc((s->ndrops + 1) * sizeof(*d->r));
	if (!d->r)
		return -1;
	for (uint32_t i = 0; i < s->ndrops; i++)
		if (s->drops[i].core == core && s->drops[i].blocks) {
			d->r[d->n][0] = s->drops[i].seq;
			d->r[d->n++][1] = s->drops[i].seq + s->drops[i].blocks - 1;
		}
	qsort(d->r, d->n, sizeof(*d->r), by_lo);
	return 0;
}

static void add_run(uint64_t lo, uint64_t hi, uint64_t before, uint64_t after, struct gaps *g)
{
	if (g->nruns < MAX_RUNS) {
		g->lo[g->nruns] = lo;
		g->hi[g->nruns] = hi;
		g->before[g->nruns] = before;
		g->after[g->nruns++] = after;
	}
	g->blocks += hi - lo + 1;
}

/* Record the missing seqs [lo, hi] less the listed drops. */
static void add_gap(const struct ranges *d, uint64_t lo, uint64_t hi, uint64_t before,
		    uint64_t after, struct gaps *g)
{
	for (uint32_t i = 0; i < d->n && lo <= hi; i++) {
		if (d->r[i][1] < lo || d->r[i][0] > hi)
			continue;
		if (d->r[i][0] > lo)
			add_run(lo, d->r[i][0] - 1, before, after, g);
		if (d->r[i][1] >= hi)
			return;
		lo = d->r[i][1] + 1;
	}
	if (lo <= hi)
		add_run(lo, hi, before, after, g);
}

/* The gaps of a writer's seqs u[0..n) between first and end (exclusive). */
static void find_gaps(const struct ranges *d, const struct blk *u, uint32_t n, uint64_t first,
		      uint64_t end, struct gaps *g)
{
	uint64_t next = first, before = UINT64_MAX;

	memset(g, 0, sizeof(*g));
	for (uint32_t i = 0; i < n && u[i].seq < end; i++) {
		if (u[i].seq > next)
			add_gap(d, next, u[i].seq - 1, before, u[i].off, g);
		if (u[i].seq >= next)
			next = u[i].seq + 1;
		before = u[i].off;
	}
	if (end > next)
		add_gap(d, next, end - 1, before, UINT64_MAX, g);
}

static void print_runs(struct audit *a, const char *who, const struct gaps *g, const char *why,
		       int is_fail)
{
	for (uint32_t i = 0; i < g->nruns; i++) {
		char where[96] = "";

		if (g->before[i] != UINT64_MAX && g->after[i] != UINT64_MAX)
			snprintf(where, sizeof(where), "between offsets %" PRIu64 " and %" PRIu64,
				 g->before[i], g->after[i]);
		else if (g->before[i] != UINT64_MAX)
			snprintf(where, sizeof(where), "after offset %" PRIu64, g->before[i]);
		else if (g->after[i] != UINT64_MAX)
			snprintf(where, sizeof(where), "before offset %" PRIu64, g->after[i]);
		else
			snprintf(where, sizeof(where), "(the stream has none of them)");
		char seqs[48];

		if (g->lo[i] == g->hi[i])
			snprintf(seqs, sizeof(seqs), "block %" PRIu64, g->lo[i]);
		else
			snprintf(seqs, sizeof(seqs), "blocks %" PRIu64 "..%" PRIu64, g->lo[i], g->hi[i]);
		say(a, is_fail, "%s: %s missing %s: %s", who, seqs, where, why);
	}
	if (g->blocks && g->nruns == MAX_RUNS)
		say(a, is_fail, "%s: %" PRIu64 " blocks missing in all", who, g->blocks);
}

/* A listed drop of a block the stream has, or of a block the core never pushed. */
static void check_drops(struct audit *a, uint32_t k, const struct blk *u, uint32_t n)
{
	const struct session *s = a->s;
	const struct core_acct *c = &s->cores[k];

	for (uint32_t i = 0; i < s->ndrops; i++) {
		const struct drop_ev *d = &s->drops[i];

		if (d->core != k)
			continue;
		for (uint32_t j = 0; j < n; j++)
			if (u[j].seq >= d->seq && u[j].seq - d->seq < d->blocks)
				say(a, 1, "core %u: block seq %" PRIu64 " is listed as dropped (OPF_DROP "
				    "at offset %" PRIu64 ") but is in the stream at offset %" PRIu64,
				    k, u[j].seq, d->off, u[j].off);
		if (c->have_end && d->seq + d->blocks > c->end.blocks)
			say(a, 1, "core %u: OPF_DROP at offset %" PRIu64 " lists blocks %" PRIu64
			    "..%" PRIu64 " but the core pushed %" PRIu64, k, d->off, d->seq,
			    d->seq + d->blocks - 1, c->end.blocks);
	}
}

/* The sums a format-2 core's OPF_CORE_END must match: samples, losses told, flags. */
static void check_totals_v2(struct audit *a, uint32_t k, const struct core_acct *c)
{
	const struct opf_core_end *e = &c->end;

	if (c->samples != e->delivered)
		say(a, 1, "core %u: %" PRIu64 " samples in the stream but delivered is %" PRIu64, k,
		    c->samples, e->delivered);
	for (int r = 0; r < OPF_LOST_NREASONS; r++)
		if (r != OPF_LOST_OUTPUT_FULL && c->lost_rec[r] != e->lost[r])
			say(a, 1, "core %u: OPF_LOST records add up to %" PRIu64 " %s, OPF_CORE_END "
			    "says %" PRIu64, k, c->lost_rec[r], lost_reason_name[r], e->lost[r]);
	if (c->drop_samples != e->lost[OPF_LOST_OUTPUT_FULL])
		say(a, 1, "core %u: OPF_DROP records list %" PRIu64 " samples, OPF_CORE_END says %"
		    PRIu64 " %s", k, c->drop_samples, e->lost[OPF_LOST_OUTPUT_FULL],
		    lost_reason_name[OPF_LOST_OUTPUT_FULL]);
	if (c->unlisted != e->blocks_unlisted)
		say(a, 1, "core %u: OPF_D_UNLISTED drops count %" PRIu64 " blocks, OPF_CORE_END "
		    "says %" PRIu64 " unlisted", k, c->unlisted, e->blocks_unlisted);
	if (c->depth_cut != e->depth_cut)
		say(a, 1, "core %u: %" PRIu64 " samples flagged depth-cut in the stream, OPF_CORE_END "
		    "says %" PRIu64, k, c->depth_cut, e->depth_cut);
	if (c->truncated != e->truncated)
		say(a, 1, "core %u: %" PRIu64 " samples flagged truncated in the stream, OPF_CORE_END "
		    "says %" PRIu64, k, c->truncated, e->truncated);
}

/* Block counts of a closed core: every pushed block is seen, dropped or overwritten. */
static void check_counts_v2(struct audit *a, uint32_t k, const struct core_acct *c, uint32_t seen)
{
	const struct opf_core_end *e = &c->end;

	if (seen + e->blocks_dropped + e->blocks_overwritten != e->blocks)
		say(a, 1, "core %u: %u blocks in the stream + %" PRIu64 " dropped + %" PRIu64
		    " overwritten != %" PRIu64 " pushed", k, seen, e->blocks_dropped,
		    e->blocks_overwritten, e->blocks);
	if (c->drop_blocks + e->blocks_unlisted != e->blocks_dropped)
		say(a, 1, "core %u: OPF_DROP lists %" PRIu64 " blocks + %" PRIu64 " unlisted != %"
		    PRIu64 " dropped", k, c->drop_blocks, e->blocks_unlisted, e->blocks_dropped);
}

/* Missing blocks of core k: explained by drops or the unlisted/overwritten counts, or not. */
static void check_gaps_v2(struct audit *a, uint32_t k, const struct blk *u, uint32_t n,
			  const struct ranges *d)
{
	const struct core_acct *c = &a->s->cores[k];
	/* a crash dump holds each core's window: its newest blocks, gapless */
	int crash = session_is_crash(a->s);
	uint64_t first = (session_resumed(a->s) || crash) && n ? u[0].seq : 0;
	/* a discarded session's last blocks were thrown away: its end is its last block seen */
	int closed = c->have_end && !session_discarded(a->s);
	uint64_t end = closed ? c->end.blocks : n ? u[n - 1].seq + 1 : 0;
	char who[32];
	struct gaps g;

	snprintf(who, sizeof(who), "core %u", k);
	if (closed && n && u[n - 1].seq >= end)
		say(a, 1, "core %u: block seq %" PRIu64 " at offset %" PRIu64 " but OPF_CORE_END says "
		    "the core pushed %" PRIu64 " blocks", k, u[n - 1].seq, u[n - 1].off, end);
	find_gaps(d, u, n, first, end, &g);
	if (!g.blocks)
		return;
	if (crash) {
		print_runs(a, who, &g, "missing inside the core's crash window", 1);
		return;
	}
	if (!closed) {
		print_runs(a, who, &g, "in no OPF_DROP; without OPF_CORE_END it cannot be told "
			   "whether they were dropped unlisted", 0);
		return;
	}
	uint64_t budget = c->end.blocks_unlisted + c->end.blocks_overwritten;
	if (g.blocks <= budget) {
		print_runs(a, who, &g, "in no OPF_DROP, covered by the core's unlisted and "
			   "overwritten counts", 0);
		return;
	}
	char why[160];
	snprintf(why, sizeof(why), "in no OPF_DROP, and the core's unlisted + overwritten "
		 "blocks (%" PRIu64 ") cannot cover %" PRIu64 " missing: silent loss", budget,
		 g.blocks);
	print_runs(a, who, &g, why, 1);
}

static int check_core_v2(struct audit *a, uint32_t k)
{
	const struct session *s = a->s;
	const struct core_acct *c = &s->cores[k];
	/* resumed: its beginning is elsewhere; discarded: its end is: totals cannot match */
	int partial = session_resumed(s) || session_discarded(s);
	struct ranges d;
	uint32_t n;
	struct blk *u = unique_seqs(a, k, &s->writers[k], &n);

	if (!u || listed_drops(s, k, &d)) {
		free(u);
		return -1;
	}
	check_drops(a, k, u, n);
	check_gaps_v2(a, k, u, n, &d);
	if (c->have_end) {
		check_taken(a, k, &c->end);
		if (!partial) {
			check_counts_v2(a, k, c, n);
			check_totals_v2(a, k, c);
		}
	}
	free(u);
	free(d.r);
	return 0;
}

/* The stream's own blocks carry no closing count: they must be gapless from their first. */
static int check_stream_writer(struct audit *a)
{
	const struct session *s = a->s;
	uint32_t w = s->hdr.ncores, n;
	struct blk *u = unique_seqs(a, w, &s->writers[w], &n);
	struct ranges none = { NULL, 0 };
	struct gaps g;

	if (!u)
		return -1;
	/* discarded: the blocks between the last one read and the end record were thrown away */
	if (session_discarded(s) && n)
		n--;
	find_gaps(&none, u, n, session_resumed(s) && n ? u[0].seq : 0, n ? u[n - 1].seq + 1 : 0,
		  &g);
	print_runs(a, "the stream's own blocks", &g, "the kernel's records there are lost", 1);
	free(u);
	return 0;
}

static void check_session_v2(struct audit *a)
{
	const struct session *s = a->s;

	if (s->outside)
		say(a, 1, "%" PRIu64 " record(s) in no block, the first at offset %" PRIu64,
		    s->outside, s->outside_off);
	if (s->lost_full_recs)
		say(a, 1, "%" PRIu64 " OPF_LOST record(s) with reason %s: format 2 tells those in "
		    "OPF_DROP", s->lost_full_recs, lost_reason_name[OPF_LOST_OUTPUT_FULL]);
	for (uint32_t w = 0; w <= s->hdr.ncores; w++) {
		a->core = w;
		check_blocks(a, w, &s->writers[w]);
	}
	for (uint32_t k = 0; k < s->hdr.ncores; k++) {
		a->core = k;
		a->nomem |= check_core_v2(a, k) != 0;
	}
	a->core = -1;
	a->nomem |= check_stream_writer(a) != 0;
	if (s->have_end && !session_resumed(s) && !session_discarded(s) &&
	    s->end.bytes != s->end_off - s->off - s->join_bytes)
		say(a, 1, "OPF_SESSION_END says %" PRIu64 " bytes came before it, the stream has %"
		    PRIu64, s->end.bytes, s->end_off - s->off - s->join_bytes);
}

static void append(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Add to the string in buf[0..cap), cutting what does not fit. */
static void append(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

/* A complete dump: each core's OPF_CRASH_CORE against the blocks that followed. */
static void audit_blocks(const struct session *s, FILE *out, int *fail)
{
	const struct crash_info *ci = s->crash;

	for (uint32_t k = 0; k < ci->ncores; k++) {
		const struct crash_core *cc = &ci->cores[k];

		if (!cc->seen) {
			*fail = 1;
			if (out)
				fprintf(out, "  FAIL crash dump: no OPF_CRASH_CORE for core %u\n", k);
		} else if (cc->r.blocks != s->writers[k].n) {
			*fail = 1;
			if (out)
				fprintf(out, "  FAIL crash dump: core %u: OPF_CRASH_CORE says %u blocks, "
					"the dump holds %u\n", k, cc->r.blocks, s->writers[k].n);
		}
	}
	if (ci->end.bytes != ci->end_off - sizeof(struct opf_block)) {
		*fail = 1;
		if (out)
			fprintf(out, "  FAIL crash dump: OPF_CRASH_END says %" PRIu64 " bytes came "
				"before it, the dump has %" PRIu64 "\n", ci->end.bytes,
				ci->end_off - (uint64_t)sizeof(struct opf_block));
	}
}

/* What --stats can check in a crash dump, and what not; sets *fail, *incomplete. */
static void crash_audit(const struct session *s, FILE *out, int *fail, int *incomplete)
{
	const struct crash_info *ci = s->crash;
	int whole = ci && ci->seen && ci->have_end && !ci->cut_at;

	if (whole)
		audit_blocks(s, out, fail);
	else
		*incomplete = 1;
	if (!out)
		return;
	fprintf(out, "  crash dump: checked: per core, the blocks of its window are consecutive "
		"(no gap, no repeat) and each holds what its header says%s\n", whole ?
		"; each core's block count and the dump's length match its records" : "");
	fprintf(out, "  crash dump: cannot check: the cores' totals (a dump has no OPF_CORE_END: "
		"what was taken, lost or overwritten before each window is the kernel's word "
		"only)%s\n", whole ? "" : "; the dump was CUT SHORT: what came after the cut");
}

/* What could not be checked, on one line; sets a->incomplete. */
static void unchecked(struct audit *a)
{
	const struct session *s = a->s;
	uint32_t open = 0;
	char buf[512] = "";

	if (session_is_crash(s)) {
		crash_audit(s, a->out, &a->fail, &a->incomplete);
		return;
	}
	for (uint32_t k = 0; k < s->hdr.ncores; k++)
		open += !s->cores[k].have_end;
	if (session_resumed(s))
		append(buf, sizeof(buf), "; resumed: the session's beginning went to an earlier "
		       "reader, so its totals, losses and bytes cannot be matched");
	if (session_discarded(s))
		append(buf, sizeof(buf), "; discarded: the rest of the session was thrown away");
	if (!s->have_end)
		append(buf, sizeof(buf), "; no OPF_SESSION_END: the session's bytes");
	if (open)
		append(buf, sizeof(buf), "; %u core(s) without OPF_CORE_END: their totals and "
		       "trailing blocks", open);
	if (!buf[0])
		return;
	a->incomplete = 1;
	if (a->out)
		fprintf(a->out, "  incomplete: cannot check%s\n", buf + 1);
}

int audit_session(const struct profile *p, uint32_t si, FILE *out, uint8_t *core_fail)
{
	struct audit a = { &p->sess[si], out, core_fail, -1, 0, 0, 0 };
	const struct session *s = a.s;

	if (s->hdr.version >= 2) {
		check_session_v2(&a);
	} else {
		for (uint32_t k = 0; k < s->hdr.ncores; k++) {
			a.core = k;
			if (s->cores[k].have_end)
				check_core_v1(&a, k, &s->cores[k]);
		}
		a.core = -1;
		if (out)
			fprintf(out, "  block framing: unavailable (format 1): per-core totals only\n");
	}
	unchecked(&a);
	if (a.nomem)
		return AUDIT_NOMEM;
	return (a.fail ? AUDIT_FAIL : 0) | (a.incomplete ? AUDIT_INCOMPLETE : 0);
}

int audit_profile(const struct profile *p)
{
	int v = 0;

	for (uint32_t i = 0; i < p->nsess; i++)
		v |= audit_session(p, i, NULL, NULL);
	return v;
}

int conservation_failed(const struct profile *p)
{
	int v = audit_profile(p);

	return v & AUDIT_NOMEM ? -1 : (v & AUDIT_FAIL) != 0;
}

void incomplete_status(const struct profile *p, FILE *out)
{
	for (uint32_t i = 0; i < p->nsess; i++) {
		const struct session *s = &p->sess[i];
		int first = 1;

		if (p->nsess > 1)
			fprintf(out, " session %u:", i + 1);
		if (session_resumed(s))
			fprintf(out, " resumed (its beginning went to another reader);");
		if (session_discarded(s))
			fprintf(out, " discarded;");
		if (!s->have_end)
			fprintf(out, " no OPF_SESSION_END;");
		for (uint32_t k = 0; k < s->hdr.ncores; k++) {
			if (s->cores[k].have_end)
				continue;
			fprintf(out, first ? " no OPF_CORE_END for core %u" : ",%u", k);
			first = 0;
		}
		if (!first)
			fputc(';', out);
	}
}
