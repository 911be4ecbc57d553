/*
 * pprof.c: writes the profile as a gzipped profile.proto (perftools.profiles.Profile) with a
 * hand-rolled protobuf encoder. One Sample per (unique stack, core) with values
 * [samples/count, cpu/nanoseconds] and labels thread, tid and core; one Location per distinct
 * lookup address with its function and DWARF line; one Mapping for the kernel.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "report.h"

/* Profile field numbers (profile.proto). */
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
	P_STRING_TABLE = 6, P_TIME_NANOS = 9, P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11,
	P_PERIOD = 12, P_COMMENT = 13,
	VT_TYPE = 1, VT_UNIT = 2,
	S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,
	L_KEY = 1, L_STR = 2, L_NUM = 3,
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

static uint64_t fnv(const char *s)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static uint64_t intern(struct strtab *t, const char *s)
{
	/* Probe successive hashes until the string or a free entry turns up. */
	for (uint64_t h = fnv(s);; h++) {
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
		char **ns = realloc(t->str, (t->n + 1) * sizeof(*ns));
		if (!ns || !(ns[t->n] = strdup(s))) {
			t->str = ns ? ns : t->str;
			t->out.oom = 1;
			return 0;
		}
		t->str = ns;
		*v = ++t->n;
		f_bytes(&t->out, P_STRING_TABLE, s, strlen(s));
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

int report_pprof(const struct ctx *c, const char *path)
{
	struct stacks *st = &c->p->stacks;
	struct symbols *sym = c->sym;
	const struct session *s0 = &c->p->sess[0];
	struct strtab t = { 0 };
	struct pb body = { 0 }, m = { 0 }, sub = { 0 }, packed = { 0 };
	struct u64map locs = { 0 };
	uint8_t *funcs_used = calloc(sym->nfuncs + 1, 1);
	uint64_t period = s0->hdr.hz ? 1000000000ULL / s0->hdr.hz : 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	int rc = -1;

	if (!funcs_used || u64map_init(&t.idx, 1024) || u64map_init(&locs, 1024))
		goto out;
	intern(&t, "");		/* string_table[0] must be "" */
	value_type(&body, P_SAMPLE_TYPE, &t, "samples", "count");
	value_type(&body, P_SAMPLE_TYPE, &t, "cpu", "nanoseconds");

	uint64_t k_thread = intern(&t, "thread"), k_tid = intern(&t, "tid");
	uint64_t k_core = intern(&t, "core");
	for (size_t i = 0; i < st->n; i++) {
		struct stack *s = st->list[i];
		const char *tname = profile_thread_name(c->p, s->tid);
		char tbuf[32];

		if (!tname) {
			snprintf(tbuf, sizeof(tbuf), "tid %u", s->tid);
			tname = tbuf;
		}
		/* Location ids: one per lookup address (pc, or return address - 1). */
		for (uint16_t j = 0; j < s->naddr; j++) {
			uint64_t a = s->addr[j], la = j && a ? a - 1 : a;
			uint64_t *id = u64map_get(&locs, la);

			if (!id)
				goto out;
			if (!*id) {
				const char *file = NULL;
				int line = 0;

				*id = locs.n;
				funcs_used[s->fids[j]] = 1;
				lo = a < lo ? a : lo;
				hi = a > hi ? a : hi;
				if (sym_line(sym, la, &file, &line))
					line = 0;
				f_int(&sub, LN_FUNCTION, s->fids[j] + 1);
				f_int(&sub, LN_LINE, (uint64_t)line);
				f_int(&m, LOC_ID, *id);
				f_int(&m, LOC_MAPPING, 1);
				f_int(&m, LOC_ADDRESS, a);
				f_msg(&m, LOC_LINE, &sub);
				f_msg(&body, P_LOCATION, &m);
			}
			varint(&packed, *id);
		}
		for (uint32_t k = 0; k < c->ncores; k++) {
			uint64_t cnt = stack_cores(s)[k];

			if (!cnt)
				continue;
			f_bytes(&m, S_LOCATION_ID, packed.b, packed.n);
			struct pb vals = { 0 };
			varint(&vals, cnt);
			varint(&vals, cnt * period);
			f_bytes(&m, S_VALUE, vals.b, vals.n);
			m.oom |= vals.oom;
			free(vals.b);
			f_int(&sub, L_KEY, k_thread);
			f_int(&sub, L_STR, intern(&t, tname));
			f_msg(&m, S_LABEL, &sub);
			f_int(&sub, L_KEY, k_tid);
			varint(&sub, (uint64_t)L_NUM << 3);	/* num 0 is meaningful: keep it */
			varint(&sub, s->tid);
			f_msg(&m, S_LABEL, &sub);
			f_int(&sub, L_KEY, k_core);
			varint(&sub, (uint64_t)L_NUM << 3);
			varint(&sub, k);
			f_msg(&m, S_LABEL, &sub);
			f_msg(&body, P_SAMPLE, &m);
		}
		packed.n = 0;
	}
	/* The kernel mapping covers its module range and every address seen. */
	if (sym->mod) {
		lo = sym->low < lo ? sym->low : lo;
		hi = sym->high > hi ? sym->high : hi + 1;
	} else {
		hi++;
	}
	if (lo > hi)
		lo = hi = 0;
	f_int(&m, M_ID, 1);
	f_int(&m, M_START, lo);
	f_int(&m, M_LIMIT, hi);
	f_int(&m, M_FILENAME, intern(&t, sym->path ? sym->path : "kernel"));
	{
		const uint8_t *id;
		size_t n = sym_build_id(sym, &id);
		char hex[2 * OPF_MAX_BUILD_ID + 1] = "";

		for (size_t i = 0; i < n && i < OPF_MAX_BUILD_ID; i++)
			snprintf(hex + 2 * i, 3, "%02x", id[i]);
		if (n)
			f_int(&m, M_BUILD_ID, intern(&t, hex));
	}
	f_int(&m, M_HAS_FUNCTIONS, sym->mod ? 1 : 0);
	f_int(&m, M_HAS_FILENAMES, sym->mod ? 1 : 0);
	f_int(&m, M_HAS_LINES, sym->mod ? 1 : 0);
	f_msg(&body, P_MAPPING, &m);
	for (uint32_t f = 0; f < sym->nfuncs; f++) {
		const struct func *fn = &sym->funcs[f];
		const char *file = NULL;
		int line = 0;

		if (!funcs_used[f])
			continue;
		f_int(&m, F_ID, f + 1);
		f_int(&m, F_NAME, intern(&t, fn->name));
		f_int(&m, F_SYSTEM_NAME, intern(&t, fn->name));
		if (fn->resolved && !sym_line(sym, fn->start, &file, &line)) {
			f_int(&m, F_FILENAME, intern(&t, file));
			f_int(&m, F_START_LINE, (uint64_t)line);
		}
		f_msg(&body, P_FUNCTION, &m);
	}
	double sec = 0;
	for (uint32_t i = 0; i < c->p->nsess; i++)
		if (session_seconds(&c->p->sess[i]) > 0)
			sec += session_seconds(&c->p->sess[i]);
	f_int(&body, P_DURATION_NANOS, (uint64_t)(sec * 1e9));
	value_type(&body, P_PERIOD_TYPE, &t, "cpu", "nanoseconds");
	f_int(&body, P_PERIOD, period);
	f_int(&body, P_COMMENT, intern(&t, "generated by opreport"));
	if (body.oom || t.out.oom || m.oom || sub.oom || packed.oom)
		goto out;

	gzFile gz = gzopen(path, "wb6");
	if (!gz)
		goto out;
	int ok = (body.n == 0 || gzwrite(gz, body.b, (unsigned)body.n) == (int)body.n) &&
		 gzwrite(gz, t.out.b, (unsigned)t.out.n) == (int)t.out.n;
	if (gzclose(gz) != Z_OK)
		ok = 0;
	rc = ok ? 0 : -1;
out:
	for (uint64_t i = 0; i < t.n; i++)
		free(t.str[i]);
	free(t.str);
	free(t.out.b);
	u64map_free(&t.idx);
	u64map_free(&locs);
	free(body.b);
	free(m.b);
	free(sub.b);
	free(packed.b);
	free(funcs_used);
	return rc;
}
