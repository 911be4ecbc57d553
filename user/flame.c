/*
 * flame.c: stacks by function name, root first: the folded text format (one
 * "root;...;leaf count" line per distinct name sequence, sorted, as flamegraph.pl, inferno and
 * speedscope read it) and a self-contained SVG flame graph built from the same merged list.
 * Called by opreport.c for --folded and --flame.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

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
		for (uint16_t j = v[i].n; j-- > 0;)
			fprintf(out, "%s%c", c->sym->funcs[v[i].fids[j]].name, j ? ';' : ' ');
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
#define CHAR_W		7.0

static void xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&apos;", out); break;
		default:
			if ((unsigned char)*s < 0x20)
				fputc('?', out);
			else
				fputc(*s, out);
		}
	}
}

/* The part of name that fits in w pixels, as the page script also computes. */
static void label(FILE *out, const char *name, double w)
{
	int fit = (int)((w - 6) / CHAR_W);
	size_t len = strlen(name);

	if (fit < 3)
		return;
	if (len <= (size_t)fit) {
		xml(out, name);
		return;
	}
	char buf[512];
	size_t k = (size_t)fit - 2 < sizeof(buf) - 3 ? (size_t)fit - 2 : sizeof(buf) - 3;
	memcpy(buf, name, k);
	strcpy(buf + k, "..");
	xml(out, buf);
}

static unsigned color_hash(const char *s)
{
	unsigned h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

static int max_depth;

static void emit(const struct ctx *c, FILE *out, const struct node *nd, uint64_t before, int depth,
		 double height)
{
	double scale = (SVG_W - 2 * SVG_PAD) / (double)c->total;
	double w = (double)nd->count * scale;

	if (w < 0.1)
		return;	/* too thin to see; its children are thinner */
	const char *name = depth ? c->sym->funcs[nd->func].name : "all";
	double fx = (double)before / (double)c->total, fw = (double)nd->count / (double)c->total;
	double x = SVG_PAD + (double)before * scale, y = height - (depth + 1) * FRAME_H - 10;
	unsigned h = color_hash(name);

	fprintf(out, "<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\" data-n=\"", fx,
		fw, depth);
	xml(out, name);
	fprintf(out, "\"><title>");
	xml(out, name);
	fprintf(out, " (%" PRIu64 " %s, %.2f%%)</title>", nd->count, ctx_unit(c),
		pct(nd->count, c->total));
	fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"rgb(%u,%u,%u)\"/>", x, y, w, FRAME_H - 1, 205 + h % 50, (h >> 8) % 230,
		(h >> 16) % 55);
	fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
	label(out, name, w);
	fprintf(out, "</text></g>\n");
	uint64_t off = before;
	for (const struct node *ch = nd->child; ch; ch = ch->next) {
		emit(c, out, ch, off, depth + 1, height);
		off += ch->count;
	}
}

static void depth_of(const struct node *nd, int d)
{
	if (d > max_depth)
		max_depth = d;
	for (const struct node *ch = nd->child; ch; ch = ch->next)
		depth_of(ch, d + 1);
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

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var W = 1200, PAD = 10, CW = 7;\n"
	"function frames() { return document.querySelectorAll('g.f'); }\n"
	"function fit(name, w) {\n"
	"  var n = Math.floor((w - 6) / CW);\n"
	"  if (n < 3) return '';\n"
	"  return name.length <= n ? name : name.substring(0, n - 2) + '..';\n"
	"}\n"
	"function place(g, fx, fw) {\n"
	"  var r = g.querySelector('rect'), t = g.querySelector('text');\n"
	"  var x = PAD + fx * (W - 2 * PAD), w = fw * (W - 2 * PAD);\n"
	"  r.setAttribute('x', x.toFixed(2)); r.setAttribute('width', w.toFixed(2));\n"
	"  t.setAttribute('x', (x + 3).toFixed(2));\n"
	"  t.textContent = fit(g.getAttribute('data-n'), w);\n"
	"}\n"
	"function attrs(g) {\n"
	"  return [+g.getAttribute('data-x'), +g.getAttribute('data-w'), +g.getAttribute('data-d')];\n"
	"}\n"
	"function zoom(z) {\n"
	"  var a = attrs(z), eps = 1e-9;\n"
	"  frames().forEach(function (g) {\n"
	"    var b = attrs(g);\n"
	"    if (b[2] >= a[2] && b[0] >= a[0] - eps && b[0] + b[1] <= a[0] + a[1] + eps) {\n"
	"      g.style.display = ''; g.style.opacity = '';\n"
	"      place(g, (b[0] - a[0]) / a[1], b[1] / a[1]);\n"
	"    } else if (b[2] < a[2] && b[0] <= a[0] + eps && b[0] + b[1] >= a[0] + a[1] - eps) {\n"
	"      g.style.display = ''; g.style.opacity = '0.5';\n"
	"      place(g, 0, 1);\n"
	"    } else {\n"
	"      g.style.display = 'none';\n"
	"    }\n"
	"  });\n"
	"}\n"
	"function reset() {\n"
	"  frames().forEach(function (g) {\n"
	"    var b = attrs(g);\n"
	"    g.style.display = ''; g.style.opacity = '';\n"
	"    place(g, b[0], b[1]);\n"
	"  });\n"
	"}\n"
	"document.addEventListener('click', function (e) {\n"
	"  var g = e.target.closest ? e.target.closest('g.f') : null;\n"
	"  if (g) zoom(g); else reset();\n"
	"});\n"
	"]]></script>\n";

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

static void svg_head(const struct ctx *c, double height, FILE *out)
{
	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n", SVG_W, height, SVG_W, height);
	fprintf(out, "<style>text { font: 12px monospace; fill: #000; pointer-events: none; } "
		"g.f:hover rect { stroke: #000; stroke-width: 0.5; } g.f { cursor: pointer; }"
		"</style>\n");
	fputs(script, out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n",
		SVG_W, height);
	fprintf(out, "<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" "
		"style=\"font-size: 16px\">Flame graph: ", SVG_W / 2);
	xml(out, c->o->file);
	fprintf(out, " (%" PRIu64 " %s; click a frame to zoom, the background to reset)"
		"</text>\n", c->total, ctx_unit(c));
}

int report_flame(const struct ctx *c, const char *path)
{
	size_t n;
	struct fstack *v = merged(c, &n);
	struct node *root = calloc(1, sizeof(*root));
	FILE *out = NULL;
	int rc = -1;

	if (!v || !root)
		goto out;
	root->count = c->total;
	if (build_tree(c, v, n, root) || !(out = fopen(path, "w")))
		goto out;
	max_depth = 0;
	depth_of(root, 0);
	double height = (max_depth + 1) * FRAME_H + TOP + 20;
	svg_head(c, height, out);
	if (c->total)
		emit(c, out, root, 0, 0, height);
	fprintf(out, "</svg>\n");
	rc = ferror(out) ? -1 : 0;
	if (fclose(out))
		rc = -1;
out:
	free_tree(root);
	free(v);
	return rc;
}
