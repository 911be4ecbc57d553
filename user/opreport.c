/*
 * opreport.c: the program's entry: command line, kernel ELF location and build-id check, and
 * the order of output (the sections[] and files[] tables). Run by users and the tests.
 *
 * Exit status: 0 report written; 2 usage error, invalid/unreadable stream, or a view the
 * stream cannot make (scheduler events not recorded) -- one line on stderr naming the file
 * and the problem; 3 --stats found that the accounting does not add up; 4 --stats on an
 * incomplete stream whose part adds up; 1 any other failure (out of memory, cannot write).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "export/export.h"
#include "export/perf/perfdata.h"
#include "ingest/audit.h"
#include "model/filter.h"
#include "model/kstore.h"
#include "model/sched_acct.h"
#include "model/sched_offcpu.h"
#include "text/text.h"

/* opreport --help, and after a usage error. */
static const char usage_text[] =
		"usage: opreport [options] FILE\n"
		"       opreport --diff [-k ELF] [-n N] [--weight W] [--flame F.svg] [filters] BASE NEW\n"
		"Report a kernel profiler stream (from /dev/oprofile); FILE may be - for stdin\n"
		"and may be gzip-compressed.\n"
		"\n"
		"  -k, --kernel ELF    the stream's kernel ELF (default: found by the stream's\n"
		"                      build-id in build/kernels/, build/kernel.elf, ~/.debug)\n"
		"      --force-kernel  with -k: read the stream against ELF even when it is another\n"
		"                      kernel (a warning on every report)\n"
		"      --add-kernel ELF  keep ELF by its build-id in build/kernels/ and the build-id\n"
		"                      cache (the build does this for every kernel it links)\n"
		"  -n, --limit N       at most N rows (symbols, threads, call graph blocks;\n"
		"                      --lines: N symbols, default 10)\n"
		"      --no-inline     count inlined code in the function it was inlined into, as\n"
		"                      valgrind and perf report --no-inline do (default: inlined\n"
		"                      functions are named, each a frame of its own), in every\n"
		"                      view and file; --perf-data holds addresses, so there give\n"
		"                      perf report --no-inline\n"
		"Views of the samples:\n"
		"      --inclusive     rank symbols by samples anywhere on the stack\n"
		"      --cpu           one column per core\n"
		"  -c, --callgraph     callers and callees of each function\n"
		"      --thread        samples per thread\n"
		"      --lines         hottest source lines of the top symbols\n"
		"      --annotate FUNC FUNC's source lines and instructions, each with its samples\n"
		"      --folded        folded stacks (root;...;leaf count) for flame graph tools\n"
		"Views of the scheduler events (sessions started with oprofile start -e sched):\n"
		"      --wall          per thread: on a CPU, runnable, blocked by reason; per core\n"
		"      --offcpu        time off a CPU by reason, thread and stack\n"
		"      --locks         contended locks: waits, holders, the stacks that waited\n"
		"Files for other tools:\n"
		"      --flame FILE    write an SVG flame graph\n"
		"      --pprof FILE    write a gzipped pprof profile (profile.proto); with --offcpu\n"
		"                      or --locks, waits: contentions/count and delay/nanoseconds\n"
		"      --perf-data FILE  write a perf.data file for perf report, perf script, hotspot;\n"
		"                      adds the kernel ELF to perf's build-id cache (~/.debug)\n"
		"      --no-buildid-cache  with --perf-data: leave the build-id cache alone\n"
		"      --timeline FILE write an HTML page: per core over time, the thread that ran,\n"
		"                      idle, and the profiler's marks (sessions with -e sched)\n"
		"      --trace FILE    the same as Chrome trace-event JSON (speedscope, Perfetto,\n"
		"                      chrome://tracing)\n"
		"Filters (for every view and file; the header says which shaped the report):\n"
		"      --tid LIST      these threads (N, A-B, a comma list)\n"
		"      --comm NAMES    threads of these names (a comma list)\n"
		"      --cores LIST    samples and events of these cores (--cpu is the per-core view)\n"
		"      --time START,END  seconds from the session's start; either may be empty\n"
		"      --no-idle       leave out the idle loop (and, in the scheduler views, threads\n"
		"                      on a CPU less than 1% of the time); the header says how much\n"
		"      --focus RE      samples with a frame matching RE (as pprof's -focus)\n"
		"      --ignore RE     leave out samples with a frame matching RE (pprof's -ignore)\n"
		"Checks and more:\n"
		"      --stats         session and per-core accounting; exit 3 if it does not add up,\n"
		"                      4 if the stream is incomplete (no filters)\n"
		"      --snapshot N    report flight-recorder dump N alone\n"
		"      --diff          BASE NEW: per function, the change of its self and inclusive\n"
		"                      share; with --flame, a differential flame graph\n"
		"      --weight W      periods (default: each sample weighs the time since its\n"
		"                      core's previous one) or samples (raw counts)\n"
		"  -h, --help          this text\n"
		"\n"
		"Without a report option the flat profile (self samples per symbol) is printed.\n"
		"Report options combine; their sections print in the order stats, symbols,\n"
		"threads, lines, annotate, call graph, folded, wall, offcpu, locks.\n";

static void usage(FILE *f)
{
	fputs(usage_text, f);
}

/* What a command-line option does: set a flag, take a string (a path, a list, a pattern), or
 * something of its own. */
enum opt_kind { OK_FLAG, OK_PATH, OK_LIMIT, OK_HELP, OK_KERNEL, OK_SNAPSHOT, OK_WEIGHT };

struct opt_row {
	const char *name;
	int shortopt;		/* 0: long only */
	enum opt_kind kind;
	size_t off;		/* OK_FLAG: the int in struct options; OK_PATH: the const char * */
};

#define FLAG(f)	OK_FLAG, offsetof(struct options, f)
#define PATH(f)	OK_PATH, offsetof(struct options, f)
static const struct opt_row opt_rows[] = {
	{ "kernel", 'k', OK_KERNEL, 0 },
	{ "limit", 'n', OK_LIMIT, 0 },
	{ "callgraph", 'c', FLAG(callgraph) },
	{ "help", 'h', OK_HELP, 0 },
	{ "inclusive", 0, FLAG(inclusive) },
	{ "cpu", 0, FLAG(cpu) },
	{ "thread", 0, FLAG(thread) },
	{ "lines", 0, FLAG(lines) },
	{ "annotate", 0, PATH(annotate) },
	{ "folded", 0, FLAG(folded) },
	{ "flame", 0, PATH(flame) },
	{ "pprof", 0, PATH(pprof) },
	{ "perf-data", 0, PATH(perf_data) },
	{ "no-buildid-cache", 0, FLAG(no_buildid_cache) },
	{ "timeline", 0, PATH(timeline) },
	{ "trace", 0, PATH(trace) },
	{ "stats", 0, FLAG(stats) },
	{ "wall", 0, FLAG(wall) },
	{ "offcpu", 0, FLAG(offcpu) },
	{ "locks", 0, FLAG(locks) },
	{ "diff", 0, FLAG(diff) },
	{ "snapshot", 0, OK_SNAPSHOT, 0 },
	{ "weight", 0, OK_WEIGHT, 0 },
	{ "bench-stats", 0, FLAG(bench_stats) },	/* hidden: timing for the bench */
	/* the kernel of each stream, by build-id (model/kstore.h) */
	{ "force-kernel", 0, FLAG(force_kernel) },
	{ "add-kernel", 0, PATH(add_kernel) },
	/* the filters (model/filter.c) */
	{ "tid", 0, PATH(f_tid) },
	{ "comm", 0, PATH(f_comm) },
	{ "cores", 0, PATH(f_cores) },
	{ "time", 0, PATH(f_time) },
	{ "no-idle", 0, FLAG(no_idle) },
	{ "no-inline", 0, FLAG(no_inline) },
	{ "focus", 0, PATH(f_focus) },
	{ "ignore", 0, PATH(f_ignore) },
};
#define NOPTS (sizeof(opt_rows) / sizeof(opt_rows[0]))

static int takes_arg(enum opt_kind k)
{
	return k != OK_FLAG && k != OK_HELP;
}

/* getopt_long's table and short option string from opt_rows; row i answers 256 + i. */
static void getopt_tables(struct option *lopts, char *shorts)
{
	char *sp = shorts;

	*sp++ = ':';
	for (size_t i = 0; i < NOPTS; i++) {
		const struct opt_row *r = &opt_rows[i];

		lopts[i] = (struct option){ r->name, takes_arg(r->kind) ? required_argument :
					    no_argument, NULL, r->shortopt ? r->shortopt : 256 + (int)i };
		if (r->shortopt) {
			*sp++ = (char)r->shortopt;
			if (takes_arg(r->kind))
				*sp++ = ':';
		}
	}
	*sp = 0;
	lopts[NOPTS] = (struct option){ NULL, 0, NULL, 0 };
}

static const struct opt_row *row_for(int ch)
{
	for (size_t i = 0; i < NOPTS; i++)
		if (opt_rows[i].shortopt ? opt_rows[i].shortopt == ch : ch == 256 + (int)i)
			return &opt_rows[i];
	return NULL;
}

/* A decimal number >= min into *v; else say what opt wants and return 2. */
static int parse_count(const char *arg, long min, long *v, const char *opt, const char *what)
{
	char *end;

	errno = 0;
	*v = strtol(arg, &end, 10);
	if (errno || *end || end == arg || *v < min) {
		fprintf(stderr, "opreport: %s wants %s, not '%s'\n", opt, what, arg);
		return 2;
	}
	return 0;
}

/* Apply one option row. Returns 0, or an exit status. */
static int apply(const struct opt_row *r, const char *arg, struct options *o)
{
	switch (r->kind) {
	case OK_FLAG: *(int *)((char *)o + r->off) = 1; return 0;
	case OK_PATH: *(const char **)((char *)o + r->off) = arg; return 0;
	case OK_KERNEL: o->kernel = arg; return 0;
	case OK_LIMIT: return parse_count(arg, 0, &o->limit, "-n", "a count");
	case OK_SNAPSHOT: return parse_count(arg, 1, &o->snapshot, "--snapshot",
					     "a dump number (1, 2, ...)");
	case OK_HELP: usage(stdout); exit(0);
	case OK_WEIGHT:
		if (strcmp(arg, "periods") && strcmp(arg, "samples")) {
			fprintf(stderr, "opreport: --weight is periods or samples, not '%s'\n", arg);
			return 2;
		}
		o->by_samples = !strcmp(arg, "samples");
		return 0;
	}
	return 2;
}

static int bad_option(int ch, char **argv)
{
	if (ch == ':')
		fprintf(stderr, "opreport: option %s needs an argument\n", argv[optind - 1]);
	else if (optopt)
		fprintf(stderr, "opreport: unknown option -%c\n", optopt);
	else
		fprintf(stderr, "opreport: unknown option %s\n", argv[optind - 1]);
	return 2;
}

/* --diff BASE NEW: two files, and no report but the difference (and its flame graph). */
static int diff_args(int argc, char **argv, struct options *o)
{
	if (argc - optind != 2) {
		fprintf(stderr, "opreport: --diff wants two files, BASE and NEW\n");
		return 2;
	}
	if (o->stats || o->thread || o->lines || o->annotate || o->callgraph || o->folded || o->pprof ||
	    o->perf_data || o->inclusive || o->cpu || o->snapshot || o->wall || o->offcpu ||
	    o->locks || o->timeline || o->trace) {
		fprintf(stderr, "opreport: --diff compares CPU profiles: it combines only with -k, "
			"-n, --weight, --flame and the filters\n");
		return 2;
	}
	o->base = argv[optind];
	o->file = argv[optind + 1];
	return 0;
}

static int parse_args(int argc, char **argv, struct options *o)
{
	struct option lopts[NOPTS + 1];
	char shorts[2 * NOPTS + 2];
	const struct opt_row *r;
	int ch, rc;

	memset(o, 0, sizeof(*o));
	o->limit = -1;
	o->argc = argc;
	o->argv = argv;
	opterr = 0;
	getopt_tables(lopts, shorts);
	while ((ch = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		if (ch == ':' || ch == '?' || !(r = row_for(ch)))
			return bad_option(ch, argv);
		if ((rc = apply(r, optarg, o)))
			return rc;
	}
	if (o->add_kernel) {
		if (argc == optind)
			return 0;
		fprintf(stderr, "opreport: --add-kernel ELF reads no stream\n");
		return 2;
	}
	if (o->diff)
		return diff_args(argc, argv, o);
	if (o->offcpu && o->locks && (o->folded || o->flame || o->pprof)) {
		fprintf(stderr, "opreport: --offcpu and --locks make different stacks: one at a "
			"time with --folded, --flame or --pprof\n");
		return 2;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "opreport: %s\n", argc - optind ? "only one FILE, please" :
			"no FILE given");
		return 2;
	}
	o->file = argv[optind];
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Which sections a command line asks for (the flat profile when nothing else is). */
static void plan(struct options *o)
{
	int sched = o->wall || o->offcpu || o->locks;
	int text = o->stats || o->thread || o->lines || o->callgraph || o->folded || sched ||
		   o->annotate;

	o->symbols = (!text && !o->flame && !o->pprof && !o->perf_data && !o->timeline &&
		      !o->trace) || o->inclusive ||
		     (o->cpu && !o->thread);
	o->annotated = o->annotate != NULL;
	o->header = o->symbols || o->thread || o->lines || o->callgraph || o->annotated;
	o->delay = (o->offcpu || o->locks) && (o->folded || o->flame || o->pprof);
	o->offcpu_text = o->offcpu && !o->delay;
	o->locks_text = o->locks && !o->delay;
	/* --stats alone needs no symbols: do not go looking for an ELF. */
	o->need_elf = o->header || o->folded || o->flame || o->pprof || o->perf_data || o->diff ||
		      o->offcpu || o->locks;
	if (o->diff)
		o->symbols = o->header = 0;
}

/*
 * The text sections in the order they print. A section marked sep is set off by a blank line
 * from a body section before it (the header ends with its own blank line).
 */
struct section {
	size_t wanted;		/* the int in struct options that asks for it */
	int (*run)(const struct ctx *c, FILE *out);
	int sep;
	int body;		/* a blank line goes between it and the next sep section */
};

#define WANT(f)	offsetof(struct options, f)
static const struct section sections[] = {
	{ WANT(header), report_header, 1, 0 },
	{ WANT(symbols), report_symbols, 1, 1 },
	{ WANT(thread), report_threads, 1, 1 },
	{ WANT(lines), report_lines, 1, 1 },
	{ WANT(annotated), report_annotate, 1, 1 },
	{ WANT(callgraph), report_callgraph, 1, 1 },
	{ WANT(folded), report_folded, 0, 0 },
	{ WANT(wall), report_wall, 1, 1 },
	{ WANT(offcpu_text), report_offcpu, 1, 1 },
	{ WANT(locks_text), report_locks, 1, 1 },
};

/* Files written after the text: the option naming the path and the writer. */
struct file_out {
	size_t path;		/* the const char * in struct options */
	int (*write)(const struct ctx *c, const char *path);
};

static const struct file_out files[] = {
	{ offsetof(struct options, flame), report_flame },
	{ offsetof(struct options, pprof), report_pprof },
	{ offsetof(struct options, perf_data), report_perf },
	{ offsetof(struct options, timeline), report_timeline },
	{ offsetof(struct options, trace), report_trace },
};

static int wanted(const struct options *o, size_t off)
{
	return *(const int *)((const char *)o + off);
}

/* Print --stats (its verdict is the status), the sections, and write the files. */
static int run_reports(const struct ctx *c)
{
	const struct options *o = c->o;
	int rc = o->stats ? report_stats(c, stdout) : 0, body = o->stats;

	if (rc < 0)
		return -1;

	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		const struct section *s = &sections[i];

		if (!wanted(o, s->wanted))
			continue;
		if (s->sep && body)
			fputc('\n', stdout);
		if (s->run(c, stdout))
			return -1;
		body = s->body;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *path = *(const char *const *)((const char *)o + files[i].path);

		errno = 0;
		if (path && files[i].write(c, path)) {
			fprintf(stderr, "opreport: cannot write %s%s%s\n", path, errno ? ": " : "",
				errno ? strerror(errno) : "");
			rc = 1;
		}
	}
	return rc;
}

/* One line on stderr saying why the stream is incomplete (the report goes on). */
static void warn_incomplete(const char *file, const struct profile *p)
{
	int resumed = 0, discarded = 0;

	for (uint32_t i = 0; i < p->nsess; i++) {
		resumed |= session_resumed(&p->sess[i]);
		discarded |= session_discarded(&p->sess[i]);
	}
	if (resumed)
		fprintf(stderr, "opreport: warning: %s: incomplete stream: resumed mid-session, its "
			"beginning went to another reader\n", file);
	else if (discarded)
		fprintf(stderr, "opreport: warning: %s: incomplete stream: the session was "
			"discarded before its end\n", file);
	else
		fprintf(stderr, "opreport: warning: %s: incomplete stream (session still running "
			"when copied?): missing OPF_CORE_END/OPF_SESSION_END records\n", file);
}

/*
 * A crash dump the machine could not finish, or a truncated copy: the stream ends inside a
 * record after at least the session header. Everything before the cut is kept. 1: so.
 */
static int crash_cut(const struct opf_parser *ps, struct profile *prof)
{
	struct session *s = prof->nsess == 1 ? &prof->sess[0] : NULL;

	if (!ps->cut || !s || !session_is_crash(s))
		return 0;
	if (!s->crash && !(s->crash = calloc(1, sizeof(*s->crash))))
		return 0;
	s->crash->cut_at = ps->off;
	return 1;
}

/* One line on stderr when a crash dump did not arrive whole. */
static void crash_warn(const char *file, const struct profile *p)
{
	const struct crash_info *ci = p->sess[0].crash;

	if (ci && ci->have_end && !ci->cut_at)
		return;
	fprintf(stderr, "opreport: warning: %s: crash dump cut short%s: reporting what arrived "
		"before the cut\n", file, ci && ci->cut_at ? " inside a record" : "");
	if (ci && ci->cut_at)
		fprintf(stderr, "opreport: warning: %s: the cut is at byte %" PRIu64 "\n", file,
			ci->cut_at);
}

/* The views made of scheduler events: a flag, or a file's path, in struct options. */
static const struct { const char *name; size_t off; int path; } sched_views[] = {
	{ "--wall", offsetof(struct options, wall), 0 },
	{ "--offcpu", offsetof(struct options, offcpu), 0 },
	{ "--locks", offsetof(struct options, locks), 0 },
	{ "--timeline", offsetof(struct options, timeline), 1 },
	{ "--trace", offsetof(struct options, trace), 1 },
};

/*
 * A view of scheduler events asked of a stream without them: it could only print nothing,
 * or a file of nothing. One line saying how to record them, and 2 (before any file is made
 * and before any other warning, so that this is all the user reads); 0 when nothing is
 * missing.
 */
static int sched_views_possible(const struct options *o, const struct profile *prof)
{
	for (size_t i = 0; i < sizeof(sched_views) / sizeof(sched_views[0]); i++) {
		const char *at = (const char *)o + sched_views[i].off;

		if (sched_views[i].path ? !*(const char *const *)at : !*(const int *)at)
			continue;
		if (sched_any(&prof->sched))
			return 0;
		fprintf(stderr, "opreport: %s: %s needs scheduler events, which this session did not "
			"record: start it with \"oprofile start -e sched\"\n", o->file,
			sched_views[i].name);
		return 2;
	}
	return 0;
}

/* Parse the stream into prof, each sample judged by the filters of u; on failure say why
 * (one line) and return the exit status: 2 for the stream, 1 when out of memory. */
static int load(const struct options *o, struct filter_use *u, struct profile *prof)
{
	struct opf_parser ps;
	int cf;

	if (u->f && u->f->on)
		filter_attach(u, prof);
	opf_parser_init(&ps, &profile_sink, prof);
	prof->snapshot = (uint64_t)o->snapshot;
	if (opf_parse_file(&ps, o->file) && !crash_cut(&ps, prof)) {
		fprintf(stderr, "opreport: %s: %s\n", o->file, ps.err);
		return ps.nomem ? 1 : 2;
	}
	if (sched_views_possible(o, prof))
		return 2;
	if (o->snapshot && !profile_dump(prof, prof->snapshot)) {
		fprintf(stderr, "opreport: %s: no snapshot dump %ld: the stream has %" PRIu64 "%s\n",
			o->file, o->snapshot, profile_dumps(prof),
			profile_dumps(prof) ? " (numbered from 1)" : " (not a flight-recorder stream)");
		return 2;
	}
	if (prof->nsess && session_is_crash(&prof->sess[0]))
		crash_warn(o->file, prof);
	else if (!profile_complete(prof))
		warn_incomplete(o->file, prof);
	filter_window(u->f, prof);
	if (sched_any(&prof->sched) && sched_analyze(prof))
		cf = -1;
	else
		cf = conservation_failed(prof);
	if (cf < 0) {
		fprintf(stderr, "opreport: %s: out of memory\n", o->file);
		return 1;
	}
	if (cf && !o->stats)
		fprintf(stderr, "opreport: warning: %s: sample accounting does not add up; "
			"see --stats\n", o->file);
	return 0;
}

/* The build-id session 0 of p carries (n bytes, 0: none) into *id; 2 (said) when a later
 * session names another kernel: one report reads one kernel. */
static int stream_id(const char *file, const struct profile *p, const uint8_t **id, size_t *n)
{
	const struct opf_session *h0 = &p->sess[0].hdr;

	*id = h0->build_id;
	*n = h0->build_id_len;
	for (uint32_t i = 1; i < p->nsess; i++)
		if (p->sess[i].hdr.build_id_len != *n || memcmp(p->sess[i].hdr.build_id, *id, *n)) {
			fprintf(stderr, "opreport: %s: its sessions were made by different kernels "
				"(session %u's build-id is not session 1's): report them one at a "
				"time\n", file, i + 1);
			return 2;
		}
	return 0;
}

/* Can -k's ELF be read, and is it the kernel of build-id (id, n)? 1 it is, 0 another. */
static int k_is(const char *elf, const uint8_t *id, size_t n, int *readable)
{
	uint8_t kid[OPF_MAX_BUILD_ID];
	int kn = kstore_elf_id(elf, kid);

	*readable = kn >= 0;
	return kn >= 0 && (size_t)kn == n && !memcmp(kid, id, n);
}

/*
 * The kernel ELF of a stream whose sessions carry build-id (id, n), into *path (malloc'ed),
 * *forced set when it is another kernel's (--force-kernel). Where it comes from:
 *	-k ELF		when ELF has that build-id (kmatch: -k is some other stream's kernel,
 *			with --diff, so this one is looked for as without -k);
 *	the store, the tree's build, the build-id cache (model/kstore.h), in that order;
 *	-k ELF of another build-id only with --force-kernel (else refused, naming both);
 *	a stream without a build-id: -k, or the tree's build/kernel.elf, unchecked (warned).
 * Returns 0, -1 (no memory), or 2 when there is none (said: the build-id needed, and where
 * it was looked for).
 */
static int find_kernel(const struct options *o, const char *file, const uint8_t *id, size_t n,
		       int kmatch, char **path, int *forced)
{
	char hex[KSTORE_HEX], kh[KSTORE_HEX], places[3 * 4096];
	const char *where;
	int readable = 1;

	*forced = 0;
	kstore_hex(hex, id, n);
	if (!n) {
		fprintf(stderr, "opreport: warning: %s carries no build-id: its kernel cannot be "
			"checked\n", file);
		*path = o->kernel ? strdup(o->kernel) : kstore_tree_kernel();
		return *path ? 0 : -1;
	}
	if (o->kernel && k_is(o->kernel, id, n, &readable))
		return (*path = strdup(o->kernel)) ? 0 : -1;
	if ((*path = kstore_find(id, n, &where)) && (!o->kernel || kmatch))
		return 0;
	if (o->kernel && o->force_kernel && readable) {
		free(*path);
		*forced = 1;
		return (*path = strdup(o->kernel)) ? 0 : -1;
	}
	if (o->kernel) {
		uint8_t kid[OPF_MAX_BUILD_ID];
		int kn = kstore_elf_id(o->kernel, kid);

		kstore_hex(kh, kid, kn > 0 ? (size_t)kn : 0);
		fprintf(stderr, "opreport: %s was made by the kernel with build-id %s; -k %s %s%s%s\n",
			file, hex, o->kernel, !readable ? "is not a readable ELF" : kn > 0 ?
			"has build-id " : "has no build-id", kn > 0 ? kh : "",
			*path ? "" : " (--force-kernel reads the stream against it anyway)");
		if (*path)
			fprintf(stderr, "opreport: %s: its own kernel is %s, in %s: leave -k out\n",
				file, *path, where);
		free(*path);
		*path = NULL;
		return 2;
	}
	kstore_places(places, sizeof(places));
	fprintf(stderr, "opreport: %s: needs the kernel ELF with build-id %s, which is not in %s: "
		"rebuild that kernel, or name it with -k ELF\n", file, hex, places);
	return 2;
}

/*
 * Open the kernel ELF the report of c (its profile loaded) needs; kmatch as find_kernel's.
 * Sets c->kernel_path (NULL: raw addresses) and c->kernel_forced. Returns 0, -1 (no memory)
 * or 2 (no kernel for it: said).
 */
static int open_symbols(struct ctx *c, struct symbols *sym, int kmatch)
{
	const struct options *o = c->o;
	const uint8_t *id;
	size_t n;
	char err[512], *path = NULL;
	int rc;

	c->sym = sym;
	c->kernel_path = NULL;
	if (!o->need_elf)
		return sym_init_raw(sym);
	if ((rc = stream_id(o->file, c->p, &id, &n)) ||
	    (rc = find_kernel(o, o->file, id, n, kmatch, &path, &c->kernel_forced)))
		return rc;
	if ((rc = sym_open(sym, path, err, sizeof(err)))) {
		if (rc < 0) {
			free(path);
			return -1;
		}
		if (n) {	/* the build-id matched, yet the ELF does not load: say why */
			fprintf(stderr, "opreport: %s: %s\n", o->file, err);
			free(path);
			return 2;
		}
		fprintf(stderr, "opreport: warning: %s; reporting raw addresses%s\n", err,
			o->kernel ? "" : " (use -k ELF)");
		free(path);
		return sym_init_raw(sym);
	}
	sym->no_inline = o->no_inline;
	if (c->kernel_forced)
		fprintf(stderr, "opreport: warning: %s is not the kernel that made %s "
			"(--force-kernel): its names may be wrong\n", path, o->file);
	c->kernel_path = path;
	return 0;
}

/* Does -k name the kernel of p's stream (the first session's build-id)? */
static int k_matches(const struct options *o, const struct profile *p)
{
	int readable;

	return o->kernel && p->nsess &&
	       k_is(o->kernel, p->sess[0].hdr.build_id, p->sess[0].hdr.build_id_len, &readable);
}

static void bench_stats(const struct profile *prof, const struct symbols *sym, double t0,
			double t1)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	fprintf(stderr, "bench-stats: samples %" PRIu64 " unique-stacks %zu functions %u "
		"parse-s %.3f total-s %.3f user-s %.3f sys-s %.3f maxrss-kib %ld\n",
		prof->samples, prof->stacks.n, sym->nfuncs, t1 - t0, now() - t0,
		ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
		ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
}

/*
 * --diff: read BASE too, each side against its own kernel (the same symbols when both were
 * made by one; text/diff.c matches functions by name), print the change per function and,
 * with --flame, the differential graph. Returns the exit status, or -1 (no memory).
 */
static int run_diff(struct ctx *c, struct symbols *sym)
{
	struct options ob = *c->o;
	struct profile bprof = { 0 };
	struct symbols bsym = { 0 };
	struct ctx b = { .o = &ob, .p = &bprof, .fu = { .f = c->fu.f } };
	const struct opf_session *nh, *bh;
	const uint8_t *bid;
	size_t bn;
	int rc, kmatch;

	ob.file = c->o->base;
	if ((rc = load(&ob, &b.fu, &bprof)))
		goto out;
	b.ncores = bprof.ncores;
	kmatch = k_matches(c->o, c->p) || k_matches(c->o, &bprof);
	if ((rc = open_symbols(c, sym, kmatch)))
		goto out;
	nh = &c->p->sess[0].hdr;
	bh = &bprof.sess[0].hdr;
	if (!c->kernel_forced && nh->build_id_len == bh->build_id_len &&
	    !memcmp(nh->build_id, bh->build_id, nh->build_id_len)) {
		b.sym = c->sym;		/* one kernel: one table, one id per function */
		b.kernel_path = c->kernel_path;
		if ((rc = stream_id(ob.file, &bprof, &bid, &bn)))	/* its later sessions too */
			goto out;
	} else if ((rc = open_symbols(&b, &bsym, kmatch))) {
		goto out;
	}
	rc = -1;
	if (!sym_resolve(c->sym, &c->p->stacks) && !sym_resolve(b.sym, &bprof.stacks) &&
	    !filter_stacks(&c->fu, c->p, c->sym) && !filter_stacks(&b.fu, &bprof, b.sym) &&
	    !ctx_aggregate(c) && !ctx_aggregate(&b) && !report_diff(&b, c, stdout))
		rc = 0;
	errno = 0;
	if (!rc && c->o->flame && report_diff_flame(&b, c, c->o->flame)) {
		fprintf(stderr, "opreport: cannot write %s%s%s\n", c->o->flame, errno ? ": " : "",
			errno ? strerror(errno) : "");
		rc = 1;
	}
out:
	ctx_free(&b);
	if (b.sym == &bsym)
		free((char *)b.kernel_path);
	sym_close(&bsym);
	profile_free(&bprof);
	return rc;
}

/* The filters of the command line into f; 0, or 2 after saying what is wrong. */
static int parse_filters(const struct options *o, struct filter *f)
{
	char err[256];

	if (filter_parse(f, o, err, sizeof(err))) {
		fprintf(stderr, "opreport: %s\n", err);
		return 2;
	}
	if (f->on && o->stats) {
		fprintf(stderr, "opreport: --stats checks the whole stream: it takes no filters\n");
		return 2;
	}
	return 0;
}

/* --annotate FUNC needs an ELF with a function symbol of that name: 0, or 2 saying why. */
static int check_annotate(const struct ctx *c)
{
	uint64_t lo, hi;
	uint32_t n;

	if (!c->o->annotate || (n = sym_named(c->sym, c->o->annotate, &lo, &hi)) == 1)
		return 0;
	if (!c->kernel_path)
		fprintf(stderr, "opreport: --annotate needs the kernel ELF\n");
	else if (n)
		fprintf(stderr, "opreport: --annotate %s: %u functions have that name in %s; "
			"annotating the first\n", c->o->annotate, n, c->kernel_path);
	else
		fprintf(stderr, "opreport: --annotate: no function %s in %s (a function inlined "
			"everywhere has no symbol: annotate its caller)\n", c->o->annotate,
			c->kernel_path);
	return n ? 0 : 2;
}

/*
 * The report of one stream: its kernel; what the reports read, in this order: the filters
 * on the events (on their stacks too, unless the off-CPU or lock stacks are made of them and
 * judged below), those stacks, every stack resolved, the filters on the stacks; then the
 * sections and files. Returns the exit status, or -1 (no memory).
 */
static int report_one(struct ctx *c, struct symbols *sym)
{
	const struct options *o = c->o;
	struct profile *p = c->p;
	int rc = open_symbols(c, sym, 0);

	if (rc || (rc = check_annotate(c)))
		return rc;
	if (filter_sched(&c->fu, p, sym, !o->delay) ||
	    (o->delay && sched_offcpu_stacks(p, o->locks)) || sym_resolve(sym, &p->stacks) ||
	    (o->delay && sched_offcpu_roots(p, sym)) || filter_stacks(&c->fu, p, sym) ||
	    ctx_aggregate(c))
		return -1;
	return run_reports(c);
}

/* The whole program; main, and the fuzz target (tests/fuzz), which runs it many times in one
 * process: so every path frees what it took and leaves no state behind but getopt's. */
int opreport_main(int argc, char **argv)
{
	struct options o;
	struct filter filt = { 0 };
	struct profile prof = { 0 };
	struct symbols sym = { 0 };
	struct ctx c = { .o = &o, .p = &prof, .fu = { .f = &filt } };
	int rc = parse_args(argc, argv, &o);
	double t0 = now(), t1;

	if (rc || (rc = parse_filters(&o, &filt))) {
		usage(stderr);
		filter_free(&filt);
		return rc;
	}
	if (o.add_kernel && !o.file)
		return kstore_add(o.add_kernel, !o.no_buildid_cache) ? 1 : 0;
	plan(&o);
	if (o.perf_data && !(c.perf = perf_collect(&prof))) {
		fprintf(stderr, "opreport: cannot write %s: no temporary file\n", o.perf_data);
		return 1;
	}
	if ((rc = load(&o, &c.fu, &prof))) {
		perf_free(c.perf);
		profile_free(&prof);
		filter_free(&filt);
		return rc;
	}
	t1 = now();
	c.ncores = prof.ncores;
	rc = o.diff ? run_diff(&c, &sym) : report_one(&c, &sym);
	if (rc < 0) {
		fprintf(stderr, "opreport: out of memory\n");
		rc = 1;
	} else if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "opreport: error writing output: %s\n", strerror(errno));
		rc = 1;
	}
	if (o.bench_stats)
		bench_stats(&prof, &sym, t0, t1);
	ctx_free(&c);
	perf_free(c.perf);
	sym_close(&sym);
	free((char *)c.kernel_path);
	profile_free(&prof);
	filter_free(&filt);
	return rc;
}

#ifndef OPREPORT_NO_MAIN
int main(int argc, char **argv)
{
	return opreport_main(argc, argv);
}
#endif
