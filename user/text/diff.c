/*
 * diff.c: --diff BASE NEW, called by opreport.c: per function, its self and inclusive share
 * in both profiles and the change in points (new - base), sorted by the largest change.
 * Shares are of each profile's own total (periods, or samples with --weight samples), so
 * profiles of different lengths compare; the totals are printed. Both profiles are resolved
 * against one symbol table, so a function has the same id in both ctx.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"
#include "util/textfmt.h"

struct drow {
	uint32_t f;
	double self[2], incl[2];	/* base, new: % of each total */
};

static double dself(const struct drow *r)
{
	return r->self[1] - r->self[0];
}

static double dincl(const struct drow *r)
{
	return r->incl[1] - r->incl[0];
}

static const struct func *diff_funcs;	/* names for the comparison */

/* Largest change of self share first, then of inclusive share, then by name. */
static int by_change(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	double sx = fabs(dself(x)), sy = fabs(dself(y)), ix = fabs(dincl(x)), iy = fabs(dincl(y));

	if (sx != sy)
		return sx < sy ? 1 : -1;
	if (ix != iy)
		return ix < iy ? 1 : -1;
	return strcmp(diff_funcs[x->f].name, diff_funcs[y->f].name);
}

/* One row per function seen in either profile. NULL when out of memory. */
static struct drow *rows_of(const struct ctx *base, const struct ctx *c, uint32_t *n)
{
	struct drow *v = malloc(((size_t)c->nfuncs + 1) * sizeof(*v));

	*n = 0;
	for (uint32_t f = 0; v && f < c->nfuncs; f++) {
		int inb = f < base->nfuncs && base->incl[f], inn = c->incl[f] != 0;

		if (!inb && !inn)
			continue;
		v[(*n)++] = (struct drow){ f,
			{ inb ? pct(base->self[f], base->total) : 0, pct(c->self[f], c->total) },
			{ inb ? pct(base->incl[f], base->total) : 0, pct(c->incl[f], c->total) } };
	}
	return v;
}

static void totals_line(const char *what, const struct ctx *c, FILE *out)
{
	fprintf(out, "%-13s%s: %" PRIu64 " periods, %" PRIu64 " samples\n", what, c->o->file,
		c->periods, c->samples);
}

int report_diff(const struct ctx *base, const struct ctx *c, FILE *out)
{
	uint32_t n;
	struct drow *v = rows_of(base, c, &n);

	if (!v)
		return -1;
	diff_funcs = c->sym->funcs;
	qsort(v, n, sizeof(*v), by_change);
	n = ctx_limit(c, n);
	totals_line("Base:", base, out);
	totals_line("New:", c, out);
	fprintf(out, "Shares are of each profile's total %s; change = new - base, in points.\n\n",
		ctx_unit(c));
	fprintf(out, " self%%:  base     new  change   incl%%:  base     new  change  symbol\n");
	for (uint32_t i = 0; i < n; i++) {
		const struct drow *r = &v[i];

		fprintf(out, "       %6.2f  %6.2f  %+6.2f          %6.2f  %6.2f  %+6.2f  %s\n",
			r->self[0], r->self[1], dself(r), r->incl[0], r->incl[1], dincl(r),
			c->sym->funcs[r->f].name);
	}
	free(v);
	return 0;
}
