/*
 * pprof.c: writes the profile as a gzipped profile.proto (perftools.profiles.Profile) with a
 * hand-rolled protobuf encoder. One Sample per (unique stack, core) with values
 * [samples/count, cpu/nanoseconds], the second the periods the samples stand for (each
 * sample weighs the time since its core's previous one) times the session's period, and
 * labels thread, tid and core; one Location per distinct
 * lookup address with one Line per frame there (inlined functions first, as pprof wants),
 * plus a "[truncated]" Location at the root of cut stacks; one Mapping for the kernel, with
 * the stream's build-id when the ELF is missing. Called by
 * opreport.c for --pprof. With --offcpu or --locks (o->delay) the stacks are waits, each
 * weighing its microseconds (sched_offcpu.c): the values are then contentions/count and
 * delay/nanoseconds, the sample types of Go's block and mutex profiles.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export/export.h"
#include "model/clockdesc.h"
#include "util/strhash.h"
#include "util/textenc.h"
#include "util/u64map.h"

/* Profile field numbers (profile.proto). */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
	P_STRING_TABLE = 6, P_TIME_NANOS = 9, P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11,
	P_PERIOD = 12, P_COMMENT = 13,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
	L_KEY = 1, L_STR = 2, L_NUM = 3, L_NUM_UNIT = 4,
	M_ID = 1, M_START = 2, M_LIMIT = 3, M_OFFSET = 4, M_FILENAME = 5, M_BUILD_ID = 6,
	M_HAS_FUNCTIONS = 7, M_HAS_FILENAMES = 8, M_HAS_LINES = 9,
	LOC_ID = 1, LOC_MAPPING = 2, LOC_ADDRESS = 3, LOC_LINE = 4,
	LN_FUNCTION = 1, LN_LINE = 2,
	F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4, F_START_LINE = 5,
};

struct pb {
	uint8_t *b;
	size_t n, cap;
	int oom;
};

static void put(struct pb *p, const void *d, size_t n)
{
	if (p->oom)
		return;
	if (p->n + n > p->cap) {
		size_t cap = p->cap ? p->cap : 256;

		while (cap < p->n + n)
			cap *= 2;
		uint8_t *b = realloc(p->b, cap);
		if (!b) {
			p->oom = 1;
			return;
		}
		p->b = b;
		p->cap = cap;
	}
	memcpy(p->b + p->n, d, n);
	p->n += n;
}

static void varint(struct pb *p, uint64_t v)
{
	uint8_t b[10];
	size_t n = 0;

	do {
		b[n++] = (uint8_t)(v & 0x7f) | (v > 0x7f ? 0x80 : 0);
		v >>= 7;
	} while (v);
	put(p, b, n);
}

/* Wire type 0 (varint) field; zero values are omitted as proto3 does. */
static void f_int(struct pb *p, int field, uint64_t v)
{
	if (!v)
		return;
	varint(p, (uint64_t)field << 3);
	varint(p, v);
}

/* Wire type 2 (length-delimited) field. */
static void f_bytes(struct pb *p, int field, const void *d, size_t n)
{
	varint(p, (uint64_t)field << 3 | 2);
	varint(p, n);
	put(p, d, n);
}

static void f_msg(struct pb *p, int field, struct pb *m)
{
	f_bytes(p, field, m->b, m->n);
	p->oom |= m->oom;
	m->n = 0;
}

/* The string table: index by content. */
struct strtab {
	struct pb out;		/* encoded string_table fields, in index order */
	struct u64map idx;	/* FNV-1a hash -> index + 1 */
	char **str;
	uint64_t n;
};

static uint64_t intern(struct strtab *t, const char *s)
{
	/* Probe successive hashes until the string or a free entry turns up. */
	for (uint64_t h = str_hash(s);; h++) {
		uint64_t *v = u64map_get(&t->idx, h);

		if (!v) {
			t->out.oom = 1;
			return 0;
		}
		if (*v) {
			if (!strcmp(t->str[*v - 1], s))
				return *v - 1;
			continue;
		}
		char **ns = realloc(t->str, (t->n + 1) * sizeof(*ns)), *shown = shown_dup(s);
		if (!ns || !shown || !(ns[t->n] = strdup(s))) {
			t->str = ns ? ns : t->str;
			t->out.oom = 1;
			free(shown);
			return 0;
		}
		t->str = ns;
		*v = ++t->n;
		/* protobuf strings are UTF-8: the name as every output shows it */
		f_bytes(&t->out, P_STRING_TABLE, shown, strlen(shown));
		free(shown);
		return t->n - 1;
	}
}

static void value_type(struct pb *p, int field, struct strtab *t, const char *type,
		       const char *unit)
{
	struct pb m = { 0 };

	f_int(&m, VT_TYPE, intern(t, type));
	f_int(&m, VT_UNIT, intern(t, unit));
	f_msg(p, field, &m);
	free(m.b);
}

/* The profile being encoded: the body, the string table, and scratch messages. */
struct pp {
	const struct ctx *c;
	struct strtab t;
	struct pb body, m, sub, packed;
	struct u64map locs;		/* lookup address -> location id */
	uint8_t *funcs_used;		/* functions some location names */
	uint64_t period;		/* ns per sample at the session's rate */
	uint64_t lo, hi;		/* addresses seen */
	uint64_t k_thread, k_tid, k_core;	/* label keys */
	uint64_t k_unit;		/* the unit of the numeric labels */
	uint64_t trunc_loc;		/* location id of [truncated], 0 until needed */
	struct u64map roots;		/* delay: root function -> its location id */
	uint64_t extra_locs;
};

/*
 * A numeric label. num 0 is meaningful (core 0, tid 0) but proto3 cannot tell it from absent,
 * and pprof drops a label whose num and num_unit are both 0: so every numeric label names a
 * unit, and core 0 and tid 0 stay visible in -tags and match -tagfocus=core=0.
 */
static void num_label(struct pp *w, uint64_t key, uint64_t num)
{
	f_int(&w->sub, L_KEY, key);
	varint(&w->sub, (uint64_t)L_NUM << 3);
	varint(&w->sub, num);
	f_int(&w->sub, L_NUM_UNIT, w->k_unit);
	f_msg(&w->m, S_LABEL, &w->sub);
}

/* One Line per frame at the address, innermost first, as pprof wants inlined calls. */
static int location_lines(struct pp *w, uint64_t la, uint64_t raw)
{
	const struct frame *f;
	uint32_t n = sym_frames(w->c->sym, la, raw, &f);

	for (uint32_t i = 0; i < n; i++) {
		w->funcs_used[f[i].fid] = 1;
		f_int(&w->sub, LN_FUNCTION, f[i].fid + 1);
		f_int(&w->sub, LN_LINE, (uint64_t)(f[i].line > 0 ? f[i].line : 0));
		f_msg(&w->m, LOC_LINE, &w->sub);
	}
	return n ? 0 : -1;
}

/* The location id of stack address j, writing the Location when it is new; 0: no memory. */
static uint64_t location(struct pp *w, const struct stack *s, uint16_t j)
{
	uint64_t a = s->addr[j], la = j && a ? a - 1 : a;
	uint64_t *id = u64map_get(&w->locs, la);

	if (!id || *id)
		return id ? *id : 0;
	*id = w->locs.n;
	w->lo = a < w->lo ? a : w->lo;
	w->hi = a > w->hi ? a : w->hi;
	f_int(&w->m, LOC_ID, *id);
	f_int(&w->m, LOC_MAPPING, 1);
	f_int(&w->m, LOC_ADDRESS, a);
	if (location_lines(w, la, a))
		return 0;
	f_msg(&w->body, P_LOCATION, &w->m);
	return *id;
}

/* The synthetic root of cut stacks: a Location with no address, whose Line is [truncated]. */
static uint64_t truncated_location(struct pp *w)
{
	uint32_t fid = sym_truncated(w->c->sym);

	if (fid == UINT32_MAX)
		return 0;
	if (!w->trunc_loc) {
		w->trunc_loc = ++w->extra_locs + UINT32_MAX;	/* above every address's id */
		w->funcs_used[fid] = 1;
		f_int(&w->m, LOC_ID, w->trunc_loc);
		f_int(&w->sub, LN_FUNCTION, fid + 1);
		f_msg(&w->m, LOC_LINE, &w->sub);
		f_msg(&w->body, P_LOCATION, &w->m);
	}
	return w->trunc_loc;
}

/*
 * Delay profiles: the root of a wait's stack is a marker address, not code; its function
 * (sched_offcpu_roots named it: "[sleep]", "[qlock lockpair]") gets a Location of its own,
 * one per reason, as [truncated] does. 0: no memory.
 */
static uint64_t root_location(struct pp *w, uint32_t fid)
{
	uint64_t *id = u64map_get(&w->roots, fid);

	if (!id || *id)
		return id ? *id : 0;
	*id = ++w->extra_locs + UINT32_MAX;	/* above every address's id */
	w->funcs_used[fid] = 1;
	f_int(&w->m, LOC_ID, *id);
	f_int(&w->sub, LN_FUNCTION, fid + 1);
	f_msg(&w->m, LOC_LINE, &w->sub);
	f_msg(&w->body, P_LOCATION, &w->m);
	return *id;
}

/* The location id of stack address j; the reason's at a delay stack's root. 0: no memory. */
static uint64_t stack_location(struct pp *w, const struct stack *s, uint16_t j)
{
	if (w->c->o->delay && j == s->naddr - 1 && s->nfids)
		return root_location(w, s->fids[s->nfids - 1]);
	return location(w, s, j);
}

/* One Sample of stack s on core k: its locations (in w->packed), values and labels. */
static void sample(struct pp *w, const struct stack *s, const char *tname, uint32_t k)
{
	uint64_t cnt = stack_cores((struct stack *)s)[k];
	uint64_t periods = stack_cores((struct stack *)s)[w->c->ncores + k];
	struct pb vals = { 0 };

	f_bytes(&w->m, S_LOCATION_ID, w->packed.b, w->packed.n);
	varint(&vals, cnt);
	varint(&vals, periods * w->period);	/* the time they stand for; delay: us -> ns */
	f_bytes(&w->m, S_VALUE, vals.b, vals.n);
	w->m.oom |= vals.oom;
	free(vals.b);
	f_int(&w->sub, L_KEY, w->k_thread);
	f_int(&w->sub, L_STR, intern(&w->t, tname));
	f_msg(&w->m, S_LABEL, &w->sub);
	num_label(w, w->k_tid, s->tid);
	num_label(w, w->k_core, k);
	f_msg(&w->body, P_SAMPLE, &w->m);
}

static int samples(struct pp *w)
{
	struct stacks *st = &w->c->p->stacks;

	for (size_t i = 0; i < st->n; i++) {
		struct stack *s = st->list[i];
		const char *tname = profile_thread_name(w->c->p, s->tid);
		char tbuf[32];

		if (!tname) {
			snprintf(tbuf, sizeof(tbuf), "tid %u", s->tid);
			tname = tbuf;
		}
		for (uint16_t j = 0; j < s->naddr; j++) {
			uint64_t id = stack_location(w, s, j);

			if (!id)
				return -1;
			varint(&w->packed, id);
		}
		if (s->cut) {
			uint64_t id = truncated_location(w);

			if (!id)
				return -1;
			varint(&w->packed, id);
		}
		for (uint32_t k = 0; k < w->c->ncores; k++)
			if (stack_cores(s)[k])
				sample(w, s, tname, k);
		w->packed.n = 0;
	}
	return 0;
}

/* The kernel mapping: it covers its module range and every address seen. */
static void mapping(struct pp *w)
{
	struct symbols *sym = w->c->sym;
	const struct opf_session *h0 = &w->c->p->sess[0].hdr;
	uint64_t lo = w->lo, hi = w->hi;
	const uint8_t *id = h0->build_id;	/* the kernel that made the stream, always: an ELF
						   forced on it (--force-kernel) is not that one */
	size_t n = h0->build_id_len;
	char hex[2 * OPF_MAX_BUILD_ID + 1] = "";

	if (sym->mod) {
		lo = sym->low < lo ? sym->low : lo;
		hi = sym->high > hi ? sym->high : hi + 1;
	} else {
		hi++;
	}
	if (lo > hi)
		lo = hi = 0;
	f_int(&w->m, M_ID, 1);
	f_int(&w->m, M_START, lo);
	f_int(&w->m, M_LIMIT, hi);
	f_int(&w->m, M_FILENAME, intern(&w->t, sym->path ? sym->path : "kernel"));
	for (size_t i = 0; i < n && i < OPF_MAX_BUILD_ID; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (n)
		f_int(&w->m, M_BUILD_ID, intern(&w->t, hex));
	f_int(&w->m, M_HAS_FUNCTIONS, sym->mod ? 1 : 0);
	f_int(&w->m, M_HAS_FILENAMES, sym->mod ? 1 : 0);
	f_int(&w->m, M_HAS_LINES, sym->mod ? 1 : 0);
	f_msg(&w->body, P_MAPPING, &w->m);
}

static void functions(struct pp *w)
{
	struct symbols *sym = w->c->sym;

	for (uint32_t f = 0; f < sym->nfuncs; f++) {
		const struct func *fn = &sym->funcs[f];
		const char *file = NULL;
		int line = 0, r = 0;

		if (!w->funcs_used[f])
			continue;
		f_int(&w->m, F_ID, f + 1);
		f_int(&w->m, F_NAME, intern(&w->t, fn->name));
		f_int(&w->m, F_SYSTEM_NAME, intern(&w->t, fn->name));
		if (fn->decl_line && fn->decl_file) {	/* where DWARF says it is declared */
			f_int(&w->m, F_FILENAME, intern(&w->t, fn->decl_file));
			f_int(&w->m, F_START_LINE, (uint64_t)fn->decl_line);
		} else if (fn->resolved && !(r = sym_line(sym, fn->start, &file, &line))) {
			f_int(&w->m, F_FILENAME, intern(&w->t, file));
			f_int(&w->m, F_START_LINE, (uint64_t)line);
		}
		w->m.oom |= r < 0;
		f_msg(&w->body, P_FUNCTION, &w->m);
	}
}

/* "clock: ..." for the comments: what the samples weigh (clockdesc.c). */
static const char *clock_comment(const struct ctx *c, char *buf, size_t n)
{
	char t[128];

	snprintf(buf, n, "clock: %s", clock_text(&c->p->sess[0].hdr, t, sizeof(t)));
	return buf;
}

/* Duration, period and comments; then the gzipped body followed by the string table. */
static int finish(struct pp *w, const char *path)
{
	char clk[600];
	double sec = 0;

	for (uint32_t i = 0; i < w->c->p->nsess; i++)
		if (session_seconds(&w->c->p->sess[i]) > 0)
			sec += session_seconds(&w->c->p->sess[i]);
	f_int(&w->body, P_DURATION_NANOS, (uint64_t)(sec * 1e9));
	if (w->c->o->delay) {	/* as Go's block and mutex profiles: every wait recorded */
		value_type(&w->body, P_PERIOD_TYPE, &w->t, "contentions", "count");
		f_int(&w->body, P_PERIOD, 1);
	} else {
		value_type(&w->body, P_PERIOD_TYPE, &w->t, "cpu", "nanoseconds");
		f_int(&w->body, P_PERIOD, w->period);
	}
	f_int(&w->body, P_COMMENT, intern(&w->t, "generated by opreport"));
	f_int(&w->body, P_COMMENT, intern(&w->t, clock_comment(w->c, clk, sizeof(clk))));
	if (clock_advice(&w->c->p->sess[0].hdr))
		f_int(&w->body, P_COMMENT, intern(&w->t, clock_advice(&w->c->p->sess[0].hdr)));
	if (w->c->fu.f && w->c->fu.f->on) {	/* which filters shaped it */
		snprintf(clk, sizeof(clk), "filters: %s", w->c->fu.f->desc);
		f_int(&w->body, P_COMMENT, intern(&w->t, clk));
	}
	if (w->body.oom || w->t.out.oom || w->m.oom || w->sub.oom || w->packed.oom)
		return -1;
	gzFile gz = gzopen(path, "wb6");
	if (!gz)
		return -1;
	int ok = (w->body.n == 0 || gzwrite(gz, w->body.b, (unsigned)w->body.n) == (int)w->body.n) &&
		 gzwrite(gz, w->t.out.b, (unsigned)w->t.out.n) == (int)w->t.out.n;
	if (gzclose(gz) != Z_OK)
		ok = 0;
	return ok ? 0 : -1;
}

static void pp_free(struct pp *w)
{
	for (uint64_t i = 0; i < w->t.n; i++)
		free(w->t.str[i]);
	free(w->t.str);
	free(w->t.out.b);
	u64map_free(&w->t.idx);
	u64map_free(&w->locs);
	u64map_free(&w->roots);
	free(w->body.b);
	free(w->m.b);
	free(w->sub.b);
	free(w->packed.b);
	free(w->funcs_used);
}

int report_pprof(const struct ctx *c, const char *path)
{
	const struct session *s0 = &c->p->sess[0];
	struct pp w = { .c = c, .lo = UINT64_MAX };
	int rc = -1;

	w.period = c->o->delay ? 1000 : s0->hdr.hz ? 1000000000ULL / s0->hdr.hz : 0;
	w.funcs_used = calloc(c->sym->nfuncs + 1, 1);
	if (!w.funcs_used || u64map_init(&w.t.idx, 1024) || u64map_init(&w.locs, 1024) ||
	    u64map_init(&w.roots, 64))
		goto out;
	intern(&w.t, "");		/* string_table[0] must be "" */
	value_type(&w.body, P_SAMPLE_TYPE, &w.t, c->o->delay ? "contentions" : "samples", "count");
	value_type(&w.body, P_SAMPLE_TYPE, &w.t, c->o->delay ? "delay" : "cpu", "nanoseconds");
	w.k_thread = intern(&w.t, "thread");
	w.k_tid = intern(&w.t, "tid");
	w.k_core = intern(&w.t, "core");
	w.k_unit = intern(&w.t, "id");
	if (samples(&w))
		goto out;
	mapping(&w);
	functions(&w);
	rc = finish(&w, path);
out:
	pp_free(&w);
	return rc;
}
