/*
 * trace_json.c: --trace FILE, the timeline of every session with scheduler events as Chrome
 * trace-event JSON (the "JSON Object Format" chrome://tracing and ui.perfetto.dev load).
 * Called by opreport.c's files[] table after sched_analyze.
 *
 * Each session is a process (pid = session number) whose threads are its cores (tid = core):
 * one complete event ("ph":"X") per span a core ran a thread (cat "thread"), idled (cat
 * "idle") or did what no event says (cat "unknown": a gap in its events), ts and dur in microseconds from the session's start; the profiler's marks are
 * instant events ("ph":"i", cat "profiler") on their core, or process-wide, and snapshot
 * dumps complete events on a row of their own (tid = ncores, "profiler").
 */
#include <inttypes.h>
#include <string.h>

#include "export/export.h"
#include "model/sched_gaps.h"
#include "model/spans.h"

struct trace {
	const struct profile *p;
	const struct sched_sess *s;
	uint32_t si;
	FILE *out;
	int first;
};

/* s as a JSON string, quotes included. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
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

static int span(void *arg, uint32_t core, const struct tspan *sp)
{
	struct trace *t = arg;
	int unknown = sp->tid == TSPAN_UNKNOWN, thread = sp->tid && !unknown;
	const char *name = unknown ? "unknown" : thread ? profile_thread_label(t->p, sp->tid) :
			   "idle";
	char why[96], label[128];

	snprintf(label, sizeof(label), thread ? "%s (tid %" PRIu32 ")" : "%s", name, sp->tid);
	fprintf(next(t), "{\"name\":");
	json_str(t->out, label);
	fprintf(t->out, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
		",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"tid\":%" PRId64 ",\"thread\":",
		unknown ? "unknown" : thread ? "thread" : "idle", t->si + 1, core,
		timeline_us(t->s, sp->t0), timeline_us(t->s, sp->t1) - timeline_us(t->s, sp->t0),
		unknown ? (int64_t)-1 : (int64_t)sp->tid);
	json_str(t->out, name);
	fputs(",\"stopped\":", t->out);
	json_str(t->out, timeline_why(sp, why, sizeof(why)));
	fputs("}}", t->out);
	return 0;
}

static int mark(void *arg, const struct tmark *m)
{
	struct trace *t = arg;
	int all = m->core == TM_ALL;

	if (m->kind == TM_MISSED)	/* the row's name counts them; a span would overlap */
		return 0;

	fprintf(next(t), "{\"name\":");
	json_str(t->out, m->text);
	fprintf(t->out, ",\"cat\":\"profiler\",\"pid\":%" PRIu32 ",\"ts\":%.3f,", t->si + 1,
		timeline_us(t->s, m->t0));
	if (m->kind == TM_SNAPSHOT)
		fprintf(t->out, "\"ph\":\"X\",\"tid\":%" PRIu32 ",\"dur\":%.3f}", t->s->ncores,
			timeline_us(t->s, m->t1) - timeline_us(t->s, m->t0));
	else
		fprintf(t->out, "\"ph\":\"i\",\"s\":\"%s\",\"tid\":%" PRIu32 "}", all ? "p" : "t",
			all ? 0 : m->core);
	return 0;
}

/* Session si's rows, spans and marks; a session with unknown time says so (a label on its
 * process, and on stderr). */
static void session(struct trace *t)
{
	char name[160], warn[512];

	snprintf(name, sizeof(name), "session %" PRIu32, t->si + 1);
	meta(t, "process_name", 0, name);
	if (sched_unknown_text(t->s, t->si, warn, sizeof(warn))) {
		char label[540];

		snprintf(label, sizeof(label), "WARNING: %s", warn);
		meta(t, "process_labels", 0, label);
		fprintf(stderr, "opreport: warning: --trace: %s\n", warn);
	}
	for (uint32_t k = 0; k <= t->s->ncores; k++) {
		uint64_t missed = k < t->s->ncores ? timeline_missed(t->p, t->si, k) : 0;

		if (k == t->s->ncores)
			snprintf(name, sizeof(name), "profiler");
		else if (missed)
			snprintf(name, sizeof(name), "core %" PRIu32 " (missed %" PRIu64
				 " periods)", k, missed);
		else
			snprintf(name, sizeof(name), "core %" PRIu32, k);
		meta(t, "thread_name", k, name);
	}
	for (uint32_t k = 0; k < t->s->ncores; k++)
		timeline_spans(t->s, k, span, t);
	timeline_marks(t->p, t->si, mark, t);
}

int report_trace(const struct ctx *c, const char *path)
{
	struct trace t = { c->p, NULL, 0, NULL, 1 };
	int rc;

	if (!timeline_check(c->p, "--trace") || !(t.out = fopen(path, "w")))
		return -1;
	fputs("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", t.out);
	for (t.si = 0; t.si < c->p->sched.nsess && t.si < c->p->nsess; t.si++) {
		t.s = &c->p->sched.sess[t.si];
		if (t.s->on)
			session(&t);
	}
	fputs("\n]}\n", t.out);
	rc = ferror(t.out) ? -1 : 0;
	if (fclose(t.out))
		rc = -1;
	return rc;
}
