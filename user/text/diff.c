/*
 * diff.c: --diff, called by opreport.c with each side's ctx (one part, or several kernels'
 * parts merged by name): per function, its self and inclusive share in both profiles and
 * the change in points (new - base), sorted by the largest change; each change with its 95%
 * half-width and a "*" when it is beyond it (docs/FORMAT.md, "How sure a share is").
 * Shares are of each side's own total (periods, or samples with --weight samples), so
 * profiles of different lengths compare; the totals are printed, and a line says when the
 * two sides were taken differently (rate, depth, clock, missed periods), which moves shares
 * by more than their noise. Each side is read against its own kernel, so functions are
 * matched by name.
 *
 * A change's variance is the sum of both sides'; a side's is its sampling variance (the
 * binomial of its weighted samples, model/noise.h), times, when the side holds several runs
 * (sessions: scripts/profile -n N, several files) that vary more than sampling explains,
 * their dispersion -- or the spread of the share's own runs when larger (Student's t for
 * their number): runs of one workload vary by more than sampling in an emulator or on a
 * busy host.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/clockdesc.h"
#include "model/noise.h"
#include "text/text.h"
#include "util/textenc.h"
#include "util/textfmt.h"

/* A function's counts in both profiles (0 base, 1 new), matched by name. */
struct drow {
	const char *name;
	uint64_t self[2], incl[2];
	double self_w2[2], incl_w2[2];
	double pself[2], pincl[2];	/* the same as % of each profile's total */
	double vself, vincl;		/* the changes' variances, squared points */
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

static const char *key_name;	/* bsearch has no argument: the name looked for */

static int name_is(const void *key, const void *row)
{
	(void)key;
	return strcmp(key_name, ((const struct drow *)row)->name);
}

/* A share's variance on side c: sampling's times the runs' dispersion, or its own runs'
 * spread when larger (model/noise.h); runs: its count in each run. */
static double side_var(const struct ctx *c, uint64_t v, double v2, const uint64_t *runs)
{
	double var = c->dispersion * noise_var_ac((double)v, (double)c->total, v2, c->total_w2);
	double spread = noise_runs_var(runs, c->run_total, c->nruns);

	return spread > var ? spread : var;
}

/* Side i's share of every row (sorted by name) and its variance added to the row's changes';
 * the runs of every function of a row's name summed. 0 or -1 (memory). */
static int side_variances(const struct ctx *c, int i, struct drow *v, uint32_t n)
{
	uint64_t *sr = calloc((size_t)n * c->nruns + 1, sizeof(*sr));
	uint64_t *ir = calloc((size_t)n * c->nruns + 1, sizeof(*ir));

	for (uint32_t f = 0; sr && ir && f < c->nfuncs; f++) {
		const struct drow *r;

		if (!c->incl[f])
			continue;
		key_name = c->sym->funcs[f].name;
		r = bsearch(v, v, n, sizeof(*v), name_is);
		for (uint32_t k = 0; r && k < c->nruns; k++) {
			sr[(size_t)(r - v) * c->nruns + k] += c->self_run[(size_t)f * c->nruns + k];
			ir[(size_t)(r - v) * c->nruns + k] += c->incl_run[(size_t)f * c->nruns + k];
		}
	}
	for (uint32_t j = 0; sr && ir && j < n; j++) {
		struct drow *r = &v[j];

		r->pself[i] = pct(r->self[i], c->total);
		r->pincl[i] = pct(r->incl[i], c->total);
		r->vself += side_var(c, r->self[i], r->self_w2[i], sr + (size_t)j * c->nruns);
		r->vincl += side_var(c, r->incl[i], r->incl_w2[i], ir + (size_t)j * c->nruns);
	}
	free(sr);
	free(ir);
	return sr && ir ? 0 : -1;
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
			v[k].self_w2[i] = side[i]->self_w2[f];
			v[k].incl[i] = side[i]->incl[f];
			v[k++].incl_w2[i] = side[i]->incl_w2[f];
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
			r->self_w2[i] += v[j].self_w2[i];
			r->incl_w2[i] += v[j].incl_w2[i];
		}
	}
	if (side_variances(side[0], 0, v, *n) || side_variances(side[1], 1, v, *n)) {
		free(v);
		return NULL;
	}
	return v;
}

/* A side's first session: how it was taken. */
static const struct opf_session *taken(const struct ctx *c)
{
	return &c->p->sess[0].hdr;
}

static double missed_pct(const struct ctx *c)
{
	uint64_t due, m = profile_missed(c->p, &due);

	return pct(m, due);
}

static void totals_line(const char *what, const struct ctx *c, FILE *out)
{
	const struct opf_session *h = taken(c);
	char clock[128];

	fprintf(out, "%-13s", what);
	for (int i = 0; i < (c->o->nfiles > 1 ? c->o->nfiles : 1); i++)
		fprintf(out, "%s%s", i ? ", " : "", c->o->nfiles > 1 ? c->o->files[i] : c->o->file);
	fprintf(out, ": %" PRIu64 " periods, %" PRIu64 " samples, %" PRIu32 " run%s", c->periods,
		c->samples, c->nruns, c->nruns == 1 ? "" : "s");
	if (c->nruns > 1)
		fprintf(out, " (varying %.2f times as much as sampling explains)", c->dispersion);
	fprintf(out, "; %" PRIu32 " Hz, depth %" PRIu32 ", %s, %.1f%% of periods missed\n", h->hz,
		h->depth, clock_text(h, clock, sizeof(clock)), missed_pct(c));
}

/*
 * What differs between how the two sides were taken, beyond a few percent (rate, missed
 * periods) or at all (depth, clock): it moves shares by more than their noise. One WARNING
 * line, or none.
 */
static void taken_line(const struct ctx *b, const struct ctx *c, FILE *out)
{
	const struct opf_session *x = taken(b), *y = taken(c);
	char cx[128], cy[128];
	const char *sep = "";

	clock_text(x, cx, sizeof(cx));
	clock_text(y, cy, sizeof(cy));
	if (fabs((double)x->hz - (double)y->hz) <= 0.03 * (x->hz > y->hz ? x->hz : y->hz) &&
	    x->depth == y->depth && !strcmp(cx, cy) && fabs(missed_pct(b) - missed_pct(c)) <= 3)
		return;
	fprintf(out, "WARNING: the two were taken differently, which moves shares by more than "
		"their noise:");
	if (fabs((double)x->hz - (double)y->hz) > 0.03 * (x->hz > y->hz ? x->hz : y->hz)) {
		fprintf(out, " rate %" PRIu32 " against %" PRIu32 " Hz", x->hz, y->hz);
		sep = ";";
	}
	if (x->depth != y->depth) {
		fprintf(out, "%s depth %" PRIu32 " against %" PRIu32, sep, x->depth, y->depth);
		sep = ";";
	}
	if (strcmp(cx, cy)) {
		fprintf(out, "%s clock %s against %s", sep, cx, cy);
		sep = ";";
	}
	if (fabs(missed_pct(b) - missed_pct(c)) > 3)
		fprintf(out, "%s missed periods %.1f%% against %.1f%%", sep, missed_pct(b),
			missed_pct(c));
	fputc('\n', out);
}

/* A change and its half-width, "*" when it is beyond it. */
static void change(FILE *out, double d, double var)
{
	double hw = NOISE_Z95 * sqrt(var);

	fprintf(out, "  %+6.2f %6.2f %c", d, hw, fabs(d) > hw ? '*' : ' ');
}

int report_diff(const struct ctx *base, const struct ctx *c, FILE *out)
{
	const struct ctx *side[2] = { base, c };
	uint32_t n, marked = 0;
	struct drow *v = rows_of(side, &n);

	if (!v)
		return -1;
	qsort(v, n, sizeof(*v), by_change);
	for (uint32_t i = 0; i < n; i++)
		marked += fabs(dself(&v[i])) > NOISE_Z95 * sqrt(v[i].vself) ||
			  fabs(dincl(&v[i])) > NOISE_Z95 * sqrt(v[i].vincl);
	totals_line("Base:", base, out);
	totals_line("New:", c, out);
	taken_line(base, c, out);
	fprintf(out, "Shares are of each profile's total %s; change = new - base, in points; "
		"\u00b1 its 95%% half-width (sampling error, or the runs' spread when larger); * a "
		"change beyond it (%" PRIu32 " of %" PRIu32 " functions).\n\n", ctx_unit(c), marked,
		n);
	fprintf(out, " self%%:  base     new  change      \u00b1    incl%%:  base     new  change "
		"     \u00b1    symbol\n");
	n = ctx_limit(c, n);
	for (uint32_t i = 0; i < n; i++) {
		const struct drow *r = &v[i];

		fprintf(out, "       %6.2f  %6.2f", r->pself[0], r->pself[1]);
		change(out, dself(r), r->vself);
		fprintf(out, "        %6.2f  %6.2f", r->pincl[0], r->pincl[1]);
		change(out, dincl(r), r->vincl);
		fputs("  ", out);
		term_puts(out, r->name);
		fputc('\n', out);
	}
	free(v);
	return 0;
}
