/*
 * annotate.c: --annotate FUNC, called by opreport.c's sections[] table: the function's
 * source lines and its instructions, each with the samples taken there, as perf annotate
 * shows them. The function is the ELF's symbol of that name (symbols.c, sym_named); its
 * instructions come from binutils' objdump (model/disasm.c), its lines from DWARF (the same
 * lookups as --lines). Every sample whose pc lies in the symbol counts at its instruction,
 * so the function's own instructions add up to its self samples in the flat report and each
 * of its source lines to the row --lines gives it; an instruction of a function inlined
 * into it is marked with that function's name, and its lines are listed under the
 * function's own, marked "inlined".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/disasm.h"
#include "text/text.h"
#include "util/textfmt.h"
#include "util/u64map.h"

/* One instruction as annotated: its samples, innermost function and source line. */
struct ainsn {
	uint64_t n;
	uint32_t fid;		/* the innermost function there (FUNC, or one inlined into it) */
	const char *file;	/* NULL: no line information */
	int line;
};

/* What is known of the function being annotated. */
struct annot {
	const struct ctx *c;
	uint32_t fid;		/* its function id */
	uint64_t lo, hi;	/* its symbol's addresses */
	const char *file;	/* its own source file (that of its first instruction) */
	struct insn *in;	/* its instructions (objdump) */
	struct ainsn *a;	/* and what each got */
	uint32_t n;
	uint64_t total;		/* samples at its pcs */
	uint64_t own;		/* of those, in its own code (not inlined) */
};

/* Samples per pc in [lo, hi), into pcs. 0 or -1 (memory). */
static int pc_counts(struct annot *t, struct u64map *pcs)
{
	const struct stacks *st = &t->c->p->stacks;

	for (size_t i = 0; i < st->n; i++) {
		struct stack *s = st->list[i];
		uint64_t *v;

		if (s->addr[0] < t->lo || s->addr[0] >= t->hi)
			continue;
		if (!(v = u64map_get(pcs, s->addr[0])))
			return -1;
		*v += stack_value(t->c, s);
	}
	return 0;
}

/* Each instruction's samples, function and line. 0 or -1 (memory). */
static int annotate_insns(struct annot *t)
{
	struct u64map pcs;
	int rc = -1;

	if (u64map_init(&pcs, 256) || pc_counts(t, &pcs) || !(t->a = calloc(t->n + 1, sizeof(*t->a))))
		goto out;
	for (uint32_t i = 0; i < t->n; i++) {
		struct ainsn *a = &t->a[i];
		const uint64_t *v = u64map_find(&pcs, t->in[i].addr);
		const struct frame *f;

		if (!sym_frames(t->c->sym, t->in[i].addr, t->in[i].addr, &f))
			goto out;
		a->fid = f[0].fid;
		a->n = v ? *v : 0;
		if (sym_line(t->c->sym, t->in[i].addr, &a->file, &a->line))
			a->file = NULL;
		t->total += a->n;
		t->own += a->fid == t->fid ? a->n : 0;
	}
	rc = 0;
out:
	u64map_free(&pcs);
	return rc;
}

/* The text of file, each of its lines first..last (1-based) pointed to from lines[k - first]
 * (NULL past its end); NULL when it cannot be read. */
static char *read_lines(const char *file, int first, int last, char **lines)
{
	FILE *f = fopen(file, "r");
	char *text = NULL, *p;
	size_t len = 0;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && ftell(f) >= 0 && (len = (size_t)ftell(f), !fseek(f, 0, SEEK_SET)) &&
	    (text = malloc(len + 1)) && fread(text, 1, len, f) == len) {
		text[len] = 0;
		p = text;
		for (int k = 1; k <= last && *p; k++) {
			char *nl = strchr(p, '\n');

			if (nl)
				*nl = 0;
			if (k >= first)
				lines[k - first] = p;
			p = nl ? nl + 1 : p + strlen(p);
		}
	} else {
		free(text);
		text = NULL;
	}
	fclose(f);
	return text;
}

/* Samples of the function's own code on line, and whether any instruction is there. */
static uint64_t line_count(const struct annot *t, int line, int *seen)
{
	uint64_t n = 0;

	*seen = 0;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->a[i].fid == t->fid && t->a[i].file == t->file && t->a[i].line == line) {
			n += t->a[i].n;
			*seen = 1;
		}
	return n;
}

/* The function's own lines, first to last of its instructions', with their source text. */
static int print_source(const struct annot *t, FILE *out)
{
	const struct func *f = &t->c->sym->funcs[t->fid];
	int first = 0, last = 0, seen;
	char **lines, *text;

	for (uint32_t i = 0; i < t->n; i++)
		if (t->a[i].fid == t->fid && t->a[i].file == t->file && t->a[i].line > 0) {
			first = !first || t->a[i].line < first ? t->a[i].line : first;
			last = t->a[i].line > last ? t->a[i].line : last;
		}
	if (first && f->decl_file == t->file && f->decl_line > 0 && f->decl_line < first)
		first = f->decl_line;	/* from its declaration */
	fprintf(out, " %s       %%   line  source (%% of the %s in %s)\n", ctx_unit(t->c),
		ctx_unit(t->c), t->c->sym->funcs[t->fid].name);
	if (!first) {
		fprintf(out, "%27s[no line information]\n", "");
		return 0;
	}
	if (!(lines = calloc((size_t)(last - first + 1), sizeof(*lines))))
		return -1;
	text = read_lines(t->file, first, last, lines);
	for (int k = first; k <= last; k++) {
		uint64_t n = line_count(t, k, &seen);
		const char *src = lines[k - first] ? lines[k - first] : "";

		if (seen)
			fprintf(out, "%8" PRIu64 " %6.2f%% %6d  %s\n", n, pct(n, t->total), k, src);
		else
			fprintf(out, "%16s %6d  %s\n", "", k, src);
	}
	if (!text)
		fprintf(out, "%27s[%s: source not found]\n", "", t->file);
	free(text);
	free(lines);
	return 0;
}

/* The lines of the functions inlined into it, each once with its samples. */
static void print_inlined(const struct annot *t, FILE *out)
{
	for (uint32_t i = 0; i < t->n; i++) {
		const struct ainsn *a = &t->a[i];
		uint64_t n = 0;
		int first = 1;

		if (a->fid == t->fid)
			continue;
		for (uint32_t j = 0; j < t->n && first; j++)	/* printed at its first insn */
			first = !(j < i && t->a[j].fid == a->fid && t->a[j].file == a->file &&
				  t->a[j].line == a->line);
		if (!first)
			continue;
		for (uint32_t j = i; j < t->n; j++)
			if (t->a[j].fid == a->fid && t->a[j].file == a->file && t->a[j].line == a->line)
				n += t->a[j].n;
		fprintf(out, "%8" PRIu64 " %6.2f%% %6s  [inlined %s] %s:%d\n", n, pct(n, t->total), "",
			t->c->sym->funcs[a->fid].name, a->file ? a->file : "?", a->line);
	}
}

static void print_insns(const struct annot *t, FILE *out)
{
	fprintf(out, "\n %s       %%  address  instruction%29s  source\n", ctx_unit(t->c), "");
	for (uint32_t i = 0; i < t->n; i++) {
		const struct ainsn *a = &t->a[i];
		const char *base = a->file ? strrchr(a->file, '/') : NULL;

		if (a->n)
			fprintf(out, "%8" PRIu64 " %6.2f%%", a->n, pct(a->n, t->total));
		else
			fprintf(out, "%16s", "");
		fprintf(out, " %8" PRIx64 "  %-40s  ", t->in[i].addr, t->in[i].text);
		if (a->fid != t->fid)
			fprintf(out, "[inlined %s] ", t->c->sym->funcs[a->fid].name);
		if (a->file)
			fprintf(out, "%s:%d", base ? base + 1 : a->file, a->line);
		fputc('\n', out);
	}
}

/* The function's id and own file; 0, or -1 (memory). */
static int find_func(struct annot *t)
{
	const struct frame *f;
	uint32_t k = sym_frames(t->c->sym, t->lo, t->lo, &f);
	int line;

	if (!k)
		return -1;
	t->fid = f[k - 1].fid;	/* the outermost: the symbol's function */
	if (sym_line(t->c->sym, t->lo, &t->file, &line))
		t->file = NULL;
	return 0;
}

int report_annotate(const struct ctx *c, FILE *out)
{
	struct annot t = { .c = c };
	char err[256];
	int rc = -1;

	if (!sym_named(c->sym, c->o->annotate, &t.lo, &t.hi) || find_func(&t))
		return -1;	/* opreport.c checked the name */
	if (disasm_range(c->sym->path, t.lo, t.hi, &t.in, &t.n, err, sizeof(err))) {
		fprintf(out, "Annotate:    %s: %s\n", c->o->annotate, err);
		return 0;
	}
	if (annotate_insns(&t))
		goto out;
	fprintf(out, "Annotate:    %s, 0x%" PRIx64 "-0x%" PRIx64 " (%" PRIu64 " bytes, %u "
		"instructions), %s\n", c->sym->funcs[t.fid].name, t.lo, t.hi, t.hi - t.lo, t.n,
		t.file ? t.file : "no line information");
	fprintf(out, "             %" PRIu64 " %s in it: %" PRIu64 " in its own code (its self in "
		"the flat profile), %" PRIu64 " in functions inlined into it\n\n", t.total,
		ctx_unit(c), t.own, t.total - t.own);
	if (print_source(&t, out))
		goto out;
	print_inlined(&t, out);
	print_insns(&t, out);
	rc = 0;
out:
	free(t.in);
	free(t.a);
	return rc;
}
