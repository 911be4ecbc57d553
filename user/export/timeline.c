/*
 * timeline.c: --timeline FILE, a self-contained HTML page (no network) showing, per core of
 * every session with scheduler events, which thread ran when, the idle time, and the
 * profiler's own marks (pause and resume, throttles, snapshot dumps, and the periods a core
 * missed, as bands on its row where its samples show them and as a count in its row's
 * label). Called by opreport.c's files[] table after sched_analyze.
 *
 * Each session is one <svg class="tl" data-total="US">: a row per core of spans
 * <g class="s" data-a data-b data-n data-h> (start and end in microseconds from the session's
 * start, the label, the hover text) holding a rect, a title and a text; marks are
 * <g class="m" data-a data-b data-core data-h> holding a line (an instant) or a band (a
 * dump; "m missed": periods its core missed, on that core's row only). The
 * positions written here are the unzoomed ones; the script (timeline_script.c) moves them
 * when the view zooms, exactly as the flame graph's does.
 */
#include <inttypes.h>
#include <string.h>

#include "export/export.h"
#include "model/spans.h"
#include "util/strhash.h"
#include "util/textenc.h"
#include "util/textfmt.h"

#define TL_W	1200.0	/* the drawing's width; timeline_script.c knows the same numbers */
#define TL_LW	190.0	/* left of the plot: the core labels */
#define TL_RP	10.0
#define ROW_H	22
#define TL_TOP	30
#define MISS_H	5	/* the missed-periods strip's height */

extern const char timeline_script[];

struct page {
	const struct profile *p;
	struct filter *f;	/* the report's filters, or NULL */
	const struct sched_sess *s;
	uint32_t si;
	FILE *out;
	double total;		/* the session's length, microseconds */
};

static double px(const struct page *g, double us)
{
	return TL_LW + (g->total > 0 ? us / g->total : 0) * (TL_W - TL_LW - TL_RP);
}

static void fill_of(const char *name, uint32_t tid, char *buf, size_t n)
{
	unsigned h = name_hash(name);

	if (!tid)
		snprintf(buf, n, "#c8cdd7");	/* a blue-grey no text antialiasing makes */
	else
		snprintf(buf, n, "hsl(%u,%u%%,%u%%)", h % 360, 45 + (h >> 9) % 30, 55 + (h >> 17) % 15);
}

/* The hover text of a span: thread, core, when, how long, why it stopped. */
static void span_hover(const struct page *g, uint32_t core, const struct tspan *sp,
		       const char *name)
{
	double a = timeline_us(g->s, sp->t0), b = timeline_us(g->s, sp->t1);
	char why[96];

	if (sp->tid)
		fprintf(g->out, "tid %" PRIu32 " ", sp->tid);
	xml_escape(g->out, name);
	fprintf(g->out, " on core %" PRIu32 ": %.3f ms, from %.3f to %.3f ms", core,
		(b - a) / 1e3, a / 1e3, b / 1e3);
	if (*timeline_why(sp, why, sizeof(why))) {
		fprintf(g->out, "; stopped: ");
		xml_escape(g->out, why);
	}
}

static int span(void *arg, uint32_t core, const struct tspan *sp)
{
	const struct page *g = arg;
	const char *name = sp->tid ? profile_thread_label(g->p, sp->tid) : "idle";
	double a = timeline_us(g->s, sp->t0), b = timeline_us(g->s, sp->t1);
	double x = px(g, a), w = px(g, b) - x, y = TL_TOP + core * ROW_H;
	char rgb[48];

	fill_of(name, sp->tid, rgb, sizeof(rgb));
	fprintf(g->out, "<g class=\"s%s\" data-a=\"%.3f\" data-b=\"%.3f\" data-tid=\"%" PRIu32
		"\" data-n=\"", sp->tid ? "" : " idle", a, b, sp->tid);
	xml_escape(g->out, name);
	fprintf(g->out, "\" data-h=\"");
	span_hover(g, core, sp, name);
	fprintf(g->out, "\"><title>");
	span_hover(g, core, sp, name);
	fprintf(g->out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
		"fill=\"%s\"/><text x=\"%.2f\" y=\"%.1f\"></text></g>\n", x, y + 1,
		w < 0.5 ? 0.5 : w, ROW_H - 3, rgb, x + 3, y + ROW_H - 7.0);
	return 0;
}

/* A mark's words: its text and when ("at A ms"; a missed stretch "from A to B ms"). */
static void mark_words(const struct page *g, const struct tmark *m, double a, double b)
{
	xml_escape(g->out, m->text);
	if (m->kind == TM_MISSED)
		fprintf(g->out, " from %.3f to %.3f ms", a / 1e3, b / 1e3);
	else
		fprintf(g->out, " at %.3f ms", a / 1e3);
}

static int mark(void *arg, const struct tmark *m)
{
	const struct page *g = arg;
	double a = timeline_us(g->s, m->t0), b = timeline_us(g->s, m->t1);
	uint32_t k0 = m->core == TM_ALL ? 0 : m->core, k1 = m->core == TM_ALL ? g->s->ncores :
			m->core + 1;
	double y0 = TL_TOP + k0 * ROW_H, y1 = TL_TOP + k1 * ROW_H;
	static const char *const colour[] = { "#c00", "#080", "#e80", "#06c", "#222" };

	fprintf(g->out, "<g class=\"m%s\" data-a=\"%.3f\" data-b=\"%.3f\" data-core=\"%s%"
		PRIu32 "\" data-h=\"", m->kind == TM_MISSED ? " missed" : "", a, b,
		m->core == TM_ALL ? "all" : "", m->core == TM_ALL ? 0 : m->core);
	mark_words(g, m, a, b);
	fprintf(g->out, "\"><title>");
	mark_words(g, m, a, b);
	fprintf(g->out, "</title>");
	if (m->kind == TM_MISSED)	/* a solid strip along the bottom of the core's row */
		fprintf(g->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
			"fill=\"%s\"/></g>\n", px(g, a), y1 - MISS_H - 1,
			px(g, b) - px(g, a) < 2 ? 2 : px(g, b) - px(g, a), MISS_H, colour[m->kind]);
	else if (m->kind == TM_SNAPSHOT)
		fprintf(g->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" "
			"fill=\"%s\" fill-opacity=\"0.2\"/></g>\n", px(g, a), y0,
			px(g, b) - px(g, a) < 2 ? 2 : px(g, b) - px(g, a), y1 - y0, colour[m->kind]);
	else
		fprintf(g->out, "<line x1=\"%.2f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" "
			"stroke=\"%s\" stroke-width=\"2\"/></g>\n", px(g, a), px(g, a), y0 - 4,
			y1 + 2, colour[m->kind]);
	return 0;
}

/* Row k's label: the core, and the periods it missed when its closing record says so, and
 * how many of those its lane shows (the rest came before its first sample or after its last,
 * or in a stretch without samples: a pause, a gap in its blocks). */
static void core_label(const struct page *g, uint32_t k)
{
	uint64_t missed = timeline_missed(g->p, g->si, k);
	uint64_t placed = timeline_missed_placed(g->p, g->si, k);
	double busy = sched_ms(g->s, g->s->cores[k].busy), idle = sched_ms(g->s, g->s->cores[k].idle);

	fprintf(g->out, "<text class=\"core\" x=\"4\" y=\"%.1f\">core %" PRIu32 "%s<title>core %"
		PRIu32 ": busy %.3f ms, idle %.3f ms", TL_TOP + k * ROW_H + ROW_H - 7.0, k,
		missed ? " (missed)" : "", k, busy, idle);
	if (missed)
		fprintf(g->out, "; missed %" PRIu64 " timer periods (interrupts held off or its "
			"virtual CPU not running), %" PRIu64 " of them drawn where its samples show "
			"them", missed, placed);
	fprintf(g->out, "</title></text>\n");
}

/* One session's drawing. */
static void session(struct page *g)
{
	double h = TL_TOP + g->s->ncores * ROW_H + 12;

	g->total = timeline_us(g->s, g->s->end);
	fprintf(g->out, "<h2>Session %" PRIu32 ": %.3f ms, %" PRIu32 " cores</h2>\n", g->si + 1,
		g->total / 1e3, g->s->ncores);
	fprintf(g->out, "<svg class=\"tl\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\" data-total=\"%.3f\">\n<rect class=\"bg\" x=\"0\" y=\"0\" "
		"width=\"%.0f\" height=\"%.0f\" fill=\"#f8f8f0\"/>\n<g class=\"axis\"></g>\n",
		TL_W, h, g->total, TL_W, h);
	for (uint32_t k = 0; k < g->s->ncores; k++) {
		core_label(g, k);
		timeline_spans(g->p, g->si, k, g->f, span, g);
	}
	timeline_marks(g->p, g->si, g->f, mark, g);
	fprintf(g->out, "</svg>\n");
}

static void head(const struct ctx *c, FILE *out)
{
	fprintf(out, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Timeline: ");
	xml_escape(out, c->o->file);
	fprintf(out, "</title>\n<style>body { font: 13px sans-serif; margin: 12px; } "
		"svg text { font: 12px monospace; pointer-events: none; } "
		"g.s, g.m { cursor: pointer; } g.s:hover rect { stroke: #000; stroke-width: 1; } "
		"#info { font: 12px monospace; min-height: 1.4em; } "
		".key span { display: inline-block; margin-right: 14px; }</style></head>\n<body>\n"
		"<h1>Timeline: ");
	xml_escape(out, c->o->file);
	fprintf(out, "</h1>\n<p>Per core, the thread that ran (grey: idle). Click a span or mark "
		"to zoom to it, the wheel to zoom around the pointer, the background or Escape to "
		"zoom out. Hover for details.</p>\n<p class=\"key\"><span style=\"color:#c00\">| "
		"paused</span><span style=\"color:#080\">| resumed</span><span style=\"color:#e80\">"
		"| throttle</span><span style=\"color:#06c\">&#9608; snapshot dump</span><span "
		"style=\"color:#222\">&#9601; missed timer periods</span></p>\n"
		"<div id=\"view\"></div><div id=\"info\"></div>\n");
	if (c->fu.f && c->fu.f->on) {	/* which filters shaped it */
		fputs("<p>Filters: ", out);
		xml_escape(out, c->fu.f->desc);
		fputs("</p>\n", out);
	}
}

int report_timeline(const struct ctx *c, const char *path)
{
	struct page g = { c->p, c->fu.f, NULL, 0, NULL, 0 };
	int rc;

	if (!timeline_check(c->p, "--timeline") || !(g.out = fopen(path, "w")))
		return -1;
	head(c, g.out);
	for (g.si = 0; g.si < c->p->sched.nsess && g.si < c->p->nsess; g.si++) {
		g.s = &c->p->sched.sess[g.si];
		if (g.s->on)
			session(&g);
	}
	fprintf(g.out, "<script>\n%s</script>\n</body></html>\n", timeline_script);
	rc = ferror(g.out) ? -1 : 0;
	if (fclose(g.out))
		rc = -1;
	return rc;
}
