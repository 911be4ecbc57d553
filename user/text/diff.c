/*
 * diff.c: --diff BASE NEW, called by opreport.c: per function, its self and inclusive share
 * in both profiles and the change in points (new - base), sorted by the largest change.
 * Shares are of each profile's own total (periods, or samples with --weight samples), so
 * profiles of different lengths compare; the totals are printed. Each profile is read
 * against its own kernel (opreport.c), so functions are matched by name.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"
#include "util/textfmt.h"

/* A function's counts in both profiles (0 base, 1 new), matched by name. */
struct drow {
	const char *name;
	uint64_t self[2], incl[2];
	double pself[2], pincl[2];	/* the same as % of each profile's total */
};

static double dself(const struct drow *r)
{
	return r->pself[1] - r->pself[0];
}

static double dincl(const struct drow *r)
{
	return r->pincl[1] - r->pincl[0];
}

/* Largest change of self share first, then of inclusive share, then by name. */
static int by_change(const void *a, const void *b)
{
	const struct drow *x = a, *y = b;
	double sx = fabs(dself(x)), sy = fabs(dself(y)), ix = fabs(dincl(x)), iy = fabs(dincl(y));

	if (sx != sy)
		return sx < sy ? 1 : -1;
	if (ix != iy)
		return ix < iy ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct drow *)a)->name, ((const struct drow *)b)->name);
}

/*
 * One row per function name seen in either profile (each read against its own kernel, so
 * an id means nothing across them; a name does), its shares of each total. NULL: no memory.
 */
static struct drow *rows_of(const struct ctx *side[2], uint32_t *n)
{
	size_t cap = (size_t)side[0]->nfuncs + side[1]->nfuncs + 1, k = 0;
	struct drow *v = calloc(cap, sizeof(*v));

	*n = 0;
	if (!v)
		return NULL;
	for (int i = 0; i < 2; i++)
		for (uint32_t f = 0; f < side[i]->nfuncs; f++) {
			if (!side[i]->incl[f])
				continue;
			v[k].name = side[i]->sym->funcs[f].name;
			v[k].self[i] = side[i]->self[f];
			v[k++].incl[i] = side[i]->incl[f];
		}
	qsort(v, k, sizeof(*v), by_name);
	for (size_t j = 0; j < k; j++) {	/* merge the rows of one name */
		struct drow *r;

		if (!*n || strcmp(v[*n - 1].name, v[j].name)) {
			v[(*n)++] = v[j];
			continue;
		}
		r = &v[*n - 1];
		for (int i = 0; i < 2; i++) {
			r->self[i] += v[j].self[i];
			r->incl[i] += v[j].incl[i];
		}
	}
	for (uint32_t j = 0; j < *n; j++)
		for (int i = 0; i < 2; i++) {
			v[j].pself[i] = pct(v[j].self[i], side[i]->total);
			v[j].pincl[i] = pct(v[j].incl[i], side[i]->total);
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
	const struct ctx *side[2] = { base, c };
	uint32_t n;
	struct drow *v = rows_of(side, &n);

	if (!v)
		return -1;
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
			r->pself[0], r->pself[1], dself(r), r->pincl[0], r->pincl[1], dincl(r),
			r->name);
	}
	free(v);
	return 0;
}
