/*
 * flame.c: stacks by function name, root first: the folded text format (one
 * "root;...;leaf count" line per distinct name sequence, sorted, as flamegraph.pl, inferno and
 * speedscope read it) and a self-contained SVG flame graph built from the same merged list,
 * whose script (flame_script.c) zooms and searches. Called by opreport.c for --folded and
 * --flame, and for --diff --flame: a differential graph, the new profile's shape coloured by
 * how each frame's share changed from the base profile (red grew, blue shrank).
 *
 * Geometry: the graph is SVG_W wide with SVG_PAD on each side; a frame's width is its count
 * over the total times SVG_W - 2 * SVG_PAD, so the root ("all") spans the whole width.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "export/export.h"
#include "util/strhash.h"
#include "util/textenc.h"
#include "util/textfmt.h"

struct fstack {
	const uint32_t *fids;	/* leaf first, as in struct stack */
	uint16_t n;
	uint64_t count;
};

static const struct func *fl_funcs;

/* Compare root first, by name. */
static int by_names(const void *a, const void *b)
{
	const struct fstack *x = a, *y = b;
	uint16_t i = 0;

	for (; i < x->n && i < y->n; i++) {
		uint32_t fx = x->fids[x->n - 1 - i], fy = y->fids[y->n - 1 - i];

		if (fx == fy)
			continue;
		int r = strcmp(fl_funcs[fx].name, fl_funcs[fy].name);
		if (r)
			return r;
	}
	return (x->n > y->n) - (x->n < y->n);
}

/* The distinct name sequences with their counts, sorted; NULL when out of memory. */
static struct fstack *merged(const struct ctx *c, size_t *nout)
{
	struct stacks *t = &c->p->stacks;
	struct fstack *v = malloc((t->n + 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		v[i] = (struct fstack){ t->list[i]->fids, t->list[i]->nfids,
					stack_value(c, t->list[i]) };
	fl_funcs = c->sym->funcs;
	qsort(v, t->n, sizeof(*v), by_names);
	for (size_t i = 0; i < t->n; i++) {
		if (n && !by_names(&v[n - 1], &v[i]))
			v[n - 1].count += v[i].count;
		else
			v[n++] = v[i];
	}
	*nout = n;
	return v;
}

int report_folded(const struct ctx *c, FILE *out)
{
	size_t n;
	struct fstack *v = merged(c, &n);

	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++) {
		for (uint16_t j = v[i].n; j-- > 0;) {
			term_puts(out, c->sym->funcs[v[i].fids[j]].name);
			fputc(j ? ';' : ' ', out);
		}
		fprintf(out, "%" PRIu64 "\n", v[i].count);
	}
	free(v);
	return 0;
}

/* Flame graph tree: children in name order (the merged list is sorted). */
struct node {
	uint32_t func;
	uint64_t count;
	struct node *child, *last, *next;
};

#define SVG_W		1200.0
#define SVG_PAD		10.0
#define FRAME_H		16
#define TOP		40
#define BOTTOM		28	/* under the root: the search's "Matched:" line */
#define CHAR_W		7.0

extern const char flame_script[];

/* The part of name that fits in w pixels, cut by characters as the page script also does. */
static void label(FILE *out, const char *name, double w)
{
	int fit = (int)((w - 6) / CHAR_W);

	if (fit < 3)
		return;
	if (shown_chars(name) <= (size_t)fit) {
		xml_escape(out, name);
		return;
	}
	xml_escape_cut(out, name, (size_t)fit - 2);
	fputs("..", out);
}

/* One graph being drawn: the profile, and for a differential graph the base profile. */
struct svg {
	const struct ctx *c;
	const struct ctx *base;		/* NULL: an ordinary graph */
	FILE *out;
	double height;
	double maxd;			/* largest change of a frame's share, for the colour scale */
};

static const char *frame_name(const struct ctx *c, const struct node *nd, int depth)
{
	return depth ? c->sym->funcs[nd->func].name : "all";
}

/* The child of nd (a node of c's graph; NULL: none) named name, or NULL. By name, so that a
 * base profile read against another kernel (its own symbol table) matches. */
static const struct node *child_named(const struct ctx *c, const struct node *nd,
				      const char *name)
{
	for (const struct node *ch = nd ? nd->child : NULL; ch; ch = ch->next)
		if (!strcmp(c->sym->funcs[ch->func].name, name))
			return ch;
	return NULL;
}

/* Change of a frame's share of the total from base to new, in points. */
static double change(const struct svg *g, const struct node *nd, const struct node *bnd)
{
	return pct(nd->count, g->c->total) - (bnd ? pct(bnd->count, g->base->total) : 0.0);
}

static void fill(const struct svg *g, const struct node *nd, const struct node *bnd,
		 const char *name, char *buf, size_t n)
{
	unsigned h = name_hash(name);

	if (!g->base) {
		snprintf(buf, n, "rgb(%u,%u,%u)", 205 + h % 50, (h >> 8) % 230, (h >> 16) % 55);
		return;
	}
	double d = change(g, nd, bnd), t = g->maxd > 0 ? (d < 0 ? -d : d) / g->maxd : 0;
	unsigned v = (unsigned)(250 - 200 * t);

	if (d > 0)
		snprintf(buf, n, "rgb(250,%u,%u)", v, v);	/* grew: red */
	else
		snprintf(buf, n, "rgb(%u,%u,250)", v, v);	/* shrank: blue */
}

static void title(const struct svg *g, const struct node *nd, const struct node *bnd,
		  const char *name)
{
	const struct ctx *c = g->c;

	xml_escape(g->out, name);
	fprintf(g->out, " (%" PRIu64 " %s, %.2f%%", nd->count, ctx_unit(c), pct(nd->count, c->total));
	if (g->base)
		fprintf(g->out, "; base %.2f%%, change %+.2f points",
			bnd ? pct(bnd->count, g->base->total) : 0.0, change(g, nd, bnd));
	fputc(')', g->out);
}

/* Draw nd (at before of the total, depth deep) and its children; bnd: nd's path in base. */
static void emit(const struct svg *g, const struct node *nd, const struct node *bnd,
		 uint64_t before, int depth)
{
	const struct ctx *c = g->c;
	double scale = (SVG_W - 2 * SVG_PAD) / (double)c->total;
	double w = (double)nd->count * scale;
	const char *name = frame_name(c, nd, depth);
	double x = SVG_PAD + (double)before * scale, y = g->height - (depth + 1) * FRAME_H - BOTTOM;
	char rgb[32];

	if (w < 0.1)
		return;	/* too thin to see; its children are thinner */
	fill(g, nd, bnd, name, rgb, sizeof(rgb));
	fprintf(g->out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\" data-n=\"",
		(double)before / (double)c->total, (double)nd->count / (double)c->total, depth);
	xml_escape(g->out, name);
	fprintf(g->out, "\"><title>");
	title(g, nd, bnd, name);
	fprintf(g->out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"%s\" data-fill=\"%s\"/>", x, y, w, FRAME_H - 1, rgb, rgb);
	fprintf(g->out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
	label(g->out, name, w);
	fprintf(g->out, "</text></g>\n");
	for (const struct node *ch = nd->child; ch; ch = ch->next) {
		emit(g, ch, child_named(g->base, bnd, c->sym->funcs[ch->func].name), before,
		     depth + 1);
		before += ch->count;
	}
}

static int depth_of(const struct node *nd, int d)
{
	int max = d;

	for (const struct node *ch = nd->child; ch; ch = ch->next) {
		int k = depth_of(ch, d + 1);

		max = k > max ? k : max;
	}
	return max;
}

/* The largest change of share of any frame of the new graph. */
static double max_change(const struct svg *g, const struct node *nd, const struct node *bnd,
			 int depth)
{
	double d = change(g, nd, bnd), m = d < 0 ? -d : d;

	for (const struct node *ch = nd->child; ch; ch = ch->next) {
		const char *name = g->c->sym->funcs[ch->func].name;
		double k = max_change(g, ch, child_named(g->base, bnd, name), depth + 1);

		m = k > m ? k : m;
	}
	return m;
}

static void free_tree(struct node *nd)
{
	while (nd) {
		struct node *next = nd->next;

		free_tree(nd->child);
		free(nd);
		nd = next;
	}
}

/* The merged stacks as a tree under root (root->count set by the caller). */
static int build_tree(const struct ctx *c, const struct fstack *v, size_t n, struct node *root)
{
	for (size_t i = 0; i < n; i++) {
		struct node *nd = root;

		for (uint16_t j = v[i].n; j-- > 0;) {
			uint32_t f = v[i].fids[j];
			struct node *ch = nd->last;

			/* Sorted input: a matching child, if any, is the last one added. */
			if (!ch || strcmp(c->sym->funcs[ch->func].name, c->sym->funcs[f].name)) {
				if (!(ch = calloc(1, sizeof(*ch))))
					return -1;
				ch->func = f;
				if (nd->last)
					nd->last->next = ch;
				else
					nd->child = ch;
				nd->last = ch;
			}
			ch->count += v[i].count;
			nd = ch;
		}
	}
	return 0;
}

/* The profile of c as a tree; NULL when out of memory. */
static struct node *tree_of(const struct ctx *c)
{
	size_t n;
	struct fstack *v = merged(c, &n);
	struct node *root = calloc(1, sizeof(*root));

	if (v && root) {
		root->count = c->total;
		if (!build_tree(c, v, n, root)) {
			free(v);
			return root;
		}
	}
	free(v);
	free_tree(root);
	return NULL;
}

static void svg_head(const struct svg *g)
{
	const struct ctx *c = g->c;
	FILE *out = g->out;

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n", SVG_W, g->height, SVG_W, g->height);
	fprintf(out, "<style>text { font: 12px monospace; fill: #000; pointer-events: none; } "
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; } g.f { cursor: pointer; } "
		"#unsearch { pointer-events: auto; cursor: pointer; fill: #06c; }</style>\n");
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n",
		SVG_W, g->height);
	fprintf(out, "<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" "
		"style=\"font-size: 16px\">%s", SVG_W / 2, g->base ? "Differential flame graph: " :
		"Flame graph: ");
	if (g->base) {
		xml_escape(out, g->base->o->file);
		fprintf(out, " to ");
	}
	xml_escape(out, c->o->file);
	if (c->fu.f && c->fu.f->on) {	/* which filters shaped it */
		fputs(", ", out);
		xml_escape(out, c->fu.f->desc);
	}
	if (g->base)
		fprintf(out, " (%" PRIu64 " %s; red grew, blue shrank)</text>\n", c->total,
			ctx_unit(c));
	else
		fprintf(out, " (%" PRIu64 " %s; click a frame to zoom, the background to reset)"
			"</text>\n", c->total, ctx_unit(c));
	fprintf(out, "<foreignObject x=\"%.0f\" y=\"26\" width=\"260\" height=\"22\">"
		"<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"text\" "
		"placeholder=\"Search (regexp; Ctrl-F)\" style=\"width: 240px\"/></foreignObject>\n",
		SVG_W - SVG_PAD - 300);
	fprintf(out, "<text id=\"unsearch\" x=\"%.0f\" y=\"40\">reset</text>\n", SVG_W - SVG_PAD - 35);
	fprintf(out, "<text id=\"matched\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\"></text>\n",
		SVG_W - SVG_PAD, g->height - 8);
}

static void svg_tail(const struct svg *g)
{
	fprintf(g->out, "<script type=\"text/ecmascript\"><![CDATA[\nvar TOTAL = %" PRIu64
		", UNIT = '%s';\n%s]]></script>\n</svg>\n", g->c->total, ctx_unit(g->c),
		flame_script);
}

/* Write the graph of c (coloured by change from base when base is not NULL) to path. */
static int write_svg(const struct ctx *c, const struct ctx *base, const char *path)
{
	struct node *root = tree_of(c), *broot = base ? tree_of(base) : NULL;
	struct svg g = { c, base, NULL, 0, 0 };
	int rc = -1;

	if (!root || (base && !broot) || !(g.out = fopen(path, "w")))
		goto out;
	g.height = (depth_of(root, 0) + 1) * FRAME_H + TOP + 22 + BOTTOM;
	if (base)
		g.maxd = max_change(&g, root, broot, 0);
	svg_head(&g);
	if (c->total)
		emit(&g, root, broot, 0, 0);
	svg_tail(&g);
	rc = ferror(g.out) ? -1 : 0;
	if (fclose(g.out))
		rc = -1;
out:
	free_tree(root);
	free_tree(broot);
	return rc;
}

int report_flame(const struct ctx *c, const char *path)
{
	return write_svg(c, NULL, path);
}

int report_diff_flame(const struct ctx *base, const struct ctx *c, const char *path)
{
	return write_svg(c, base, path);
}
