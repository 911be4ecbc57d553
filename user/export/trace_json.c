/*
 * trace_json.c: --trace FILE, the timeline of every session with scheduler events as Chrome
 * trace-event JSON (the "JSON Object Format" that speedscope, ui.perfetto.dev and
 * chrome://tracing load). Called by opreport.c's files[] table after sched_analyze.
 *
 * Each session is a process (pid = session number) whose threads are its cores (tid = core,
 * named and sorted by metadata events): one complete event ("ph":"X") per span a core ran a
 * thread (cat "thread", named "NAME (tid N)") or idled (cat "idle", "idle"). A viewer draws a
 * lane as a stack of slices, so a lane stays flat only if no span overlaps the next:
 *   - times are whole microseconds from the session's start, each span boundary converted
 *     once (trace_us) and a span's dur the difference of its two ends', so a span ends
 *     exactly where the next begins; JSON numbers that are integers add up exactly in a
 *     viewer's doubles, where rounded decimals do not (a span "ending" a fraction of a
 *     nanosecond after the next began is drawn as its parent). A span shorter than a
 *     microsecond has no length then and is left out.
 *   - events carry no args: speedscope names a frame by the event's name and its args, so
 *     args would split one thread into one frame per distinct value.
 * A wake-up is a flow from the waker's lane at its time ("ph":"s", bound to the span there)
 * to the woken thread's next switch-in ("ph":"f", bound to the span that begins there), the
 * arrows Perfetto and chrome://tracing draw. The profiler's marks are instant events
 * ("ph":"i", cat "profiler") on their core or process-wide, and snapshot dumps complete
 * events on a lane of their own (tid = ncores, "profiler"). The top-level otherData says
 * which filters shaped it, when any did.
 */
#include <inttypes.h>
#include <string.h>

#include "export/export.h"
#include "model/spans.h"
#include "util/textenc.h"
#include "util/u64map.h"

struct trace {
	const struct profile *p;
	struct filter *f;	/* the report's filters, or NULL */
	const struct sched_sess *s;
	uint32_t si;
	FILE *out;
	int first;
	uint64_t flows;		/* flow ids handed out */
};

/* Whole microseconds from the session's start to tsc, rounded: every boundary goes through
 * here once, so two spans that share one share its value. */
static uint64_t trace_us(const struct sched_sess *s, uint64_t tsc)
{
	uint64_t d = tsc > s->start ? tsc - s->start : 0;

	if (!s->tsc_hz)
		return 0;
	return d / s->tsc_hz * 1000000 + (d % s->tsc_hz * 1000000 + s->tsc_hz / 2) / s->tsc_hz;
}

/* The separator before the next event. */
static FILE *next(struct trace *t)
{
	fputs(t->first ? "\n" : ",\n", t->out);
	t->first = 0;
	return t->out;
}

static void meta(struct trace *t, const char *what, uint32_t tid, const char *name)
{
	fprintf(next(t), "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"args\":{\"name\":", what, t->si + 1, tid);
	json_str(t->out, name);
	fputs("}}", t->out);
}

/* An event's name, category, phase, lane and time: the fields every one starts with. */
static void head(struct trace *t, const char *name, const char *cat, const char *ph,
		 uint32_t tid, uint64_t us)
{
	fprintf(next(t), "{\"name\":");
	json_str(t->out, name);
	fprintf(t->out, ",\"cat\":\"%s\",\"ph\":\"%s\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"ts\":%" PRIu64, cat, ph, t->si + 1, tid, us);
}

static int span(void *arg, uint32_t core, const struct tspan *sp)
{
	struct trace *t = arg;
	uint64_t a = trace_us(t->s, sp->t0), b = trace_us(t->s, sp->t1);
	char label[128];

	if (b <= a)
		return 0;	/* under a microsecond: no length at this resolution */
	if (sp->tid)
		snprintf(label, sizeof(label), "%s (tid %" PRIu32 ")",
			 profile_thread_label(t->p, sp->tid), sp->tid);
	head(t, sp->tid ? label : "idle", sp->tid ? "thread" : "idle", "X", core, a);
	fprintf(t->out, ",\"dur\":%" PRIu64 "}", b - a);
	return 0;
}

static int mark(void *arg, const struct tmark *m)
{
	struct trace *t = arg;
	int all = m->core == TM_ALL;
	uint64_t a = trace_us(t->s, m->t0);

	if (m->kind == TM_MISSED)	/* the lane's name counts them; a span would overlap */
		return 0;
	if (m->kind == TM_SNAPSHOT) {
		head(t, m->text, "profiler", "X", t->s->ncores, a);
		fprintf(t->out, ",\"dur\":%" PRIu64 "}", trace_us(t->s, m->t1) - a);
	} else {
		head(t, m->text, "profiler", "i", all ? 0 : m->core, a);
		fprintf(t->out, ",\"s\":\"%s\"}", all ? "p" : "t");
	}
	return 0;
}

/* One flow: from wake-up w on the waker's lane to switch-in in on the woken's. */
static void flow(struct trace *t, const struct sev *w, const struct sev *in)
{
	uint64_t a = trace_us(t->s, w->tsc), b = trace_us(t->s, in->tsc);

	t->flows++;
	head(t, "wakeup", "wakeup", "s", w->core, a);
	fprintf(t->out, ",\"id\":%" PRIu64 "}", t->flows);
	head(t, "wakeup", "wakeup", "f", in->core, b > a ? b : a);
	fprintf(t->out, ",\"id\":%" PRIu64 "}", t->flows);
}

/* A lane of this report: a core the filters keep (and one the session has). */
static int lane(const struct trace *t, uint32_t core)
{
	return core < t->s->ncores && filter_core(t->f, core);
}

/*
 * Each wake-up the filters keep, as a flow to the woken thread's next switch-in (the first
 * wake-up since it last ran: a later one finds it runnable already). In time order, the
 * pending wake-up of each thread in a map. 0 or -1 (memory).
 */
static int flows(struct trace *t)
{
	struct u64map woke;		/* tid -> 1 + its pending wake-up's event */

	if (u64map_init(&woke, 64))
		return -1;
	for (uint32_t i = 0; i < t->s->nev; i++) {
		const struct sev *e = &t->s->ev[i];
		uint64_t *v;

		if (e->kind == SEV_WAKEUP && !e->out && lane(t, e->core)) {
			if (!(v = u64map_get(&woke, e->a))) {
				u64map_free(&woke);
				return -1;
			}
			*v = *v ? *v : i + 1u;
		} else if (e->kind == SEV_SWITCH && (v = u64map_find(&woke, e->b)) && *v) {
			if (!e->out && lane(t, e->core))
				flow(t, &t->s->ev[*v - 1], e);
			*v = 0;
		}
	}
	u64map_free(&woke);
	return 0;
}

/* Session si's lanes, spans, marks and flows. 0 or -1 (memory). */
static int session(struct trace *t)
{
	char name[160];

	snprintf(name, sizeof(name), "session %" PRIu32, t->si + 1);
	meta(t, "process_name", 0, name);
	for (uint32_t k = 0; k <= t->s->ncores; k++) {
		uint64_t missed = k < t->s->ncores ? timeline_missed(t->p, t->si, k) : 0;

		if (k < t->s->ncores && !lane(t, k))
			continue;	/* --cores: not a lane of this report */
		if (k == t->s->ncores)
			snprintf(name, sizeof(name), "profiler");
		else if (missed)
			snprintf(name, sizeof(name), "core %" PRIu32 " (missed %" PRIu64
				 " periods)", k, missed);
		else
			snprintf(name, sizeof(name), "core %" PRIu32, k);
		meta(t, "thread_name", k, name);
		fprintf(next(t), "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":%" PRIu32
			",\"tid\":%" PRIu32 ",\"args\":{\"sort_index\":%" PRIu32 "}}", t->si + 1, k, k);
	}
	for (uint32_t k = 0; k < t->s->ncores; k++)
		timeline_spans(t->p, t->si, k, t->f, span, t);
	timeline_marks(t->p, t->si, t->f, mark, t);
	return flows(t);
}

int report_trace(const struct ctx *c, const char *path)
{
	struct trace t = { c->p, c->fu.f, NULL, 0, NULL, 1, 0 };
	int rc = 0;

	if (!timeline_check(c->p, "--trace") || !(t.out = fopen(path, "w")))
		return -1;
	fputs("{\"displayTimeUnit\":\"ms\",", t.out);
	if (t.f && t.f->on) {
		fputs("\"otherData\":{\"filters\":", t.out);
		json_str(t.out, t.f->desc);
		fputs("},", t.out);
	}
	fputs("\"traceEvents\":[", t.out);
	for (t.si = 0; t.si < c->p->sched.nsess && t.si < c->p->nsess; t.si++) {
		t.s = &c->p->sched.sess[t.si];
		if (t.s->on && session(&t))
			rc = -1;
	}
	fputs("\n]}\n", t.out);
	rc = rc || ferror(t.out) ? -1 : 0;
	if (fclose(t.out))
		rc = -1;
	return rc;
}
