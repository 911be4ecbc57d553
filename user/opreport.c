/*
 * opreport.c: the program's entry: command line, kernel ELF location and build-id check, and
 * the order of output (the sections[] and files[] tables). Run by users and the tests.
 *
 * Exit status: 0 report written; 2 usage error or invalid/unreadable stream (one line on
 * stderr naming the file, the offset and the problem); 3 --stats found that the per-core
 * accounting does not add up; 1 any other failure (out of memory, cannot write an output).
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
		"  -k, --kernel ELF    kernel ELF for symbols (default: build/kernel.elf of this tree)\n"
		"  -n, --limit N       at most N rows (symbols, threads, call graph blocks;\n"
		"                      --lines: N symbols, default 10)\n"
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
	/* the filters (model/filter.c) */
	{ "tid", 0, PATH(f_tid) },
	{ "comm", 0, PATH(f_comm) },
	{ "cores", 0, PATH(f_cores) },
	{ "time", 0, PATH(f_time) },
	{ "no-idle", 0, FLAG(no_idle) },
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

/* <dir of this executable>/../build/kernel.elf, with the ".." folded away. */
static char *default_kernel(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *path;

	if (n <= 0)
		return strdup("build/kernel.elf");
	exe[n] = 0;
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(exe, '/');

		if (!slash)
			return strdup("build/kernel.elf");
		*slash = 0;
	}
	if (asprintf(&path, "%s/build/kernel.elf", exe) < 0)
		return NULL;
	return path;
}

static void hexs(char *dst, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(dst + 2 * i, "%02x", b[i]);
	dst[2 * n] = 0;
}

/* Warn when the stream was made by another kernel than the ELF. */
static void check_build_id(const struct profile *p, struct symbols *s, const char *path)
{
	const struct opf_session *h = &p->sess[0].hdr;
	const uint8_t *id;
	size_t n = sym_build_id(s, &id);
	char a[2 * OPF_MAX_BUILD_ID + 1], b[2 * OPF_MAX_BUILD_ID + 1];

	if (!h->build_id_len)
		return;
	hexs(a, h->build_id, h->build_id_len);
	if (!n) {
		fprintf(stderr, "opreport: warning: build-id mismatch: stream has %s, %s has none\n",
			a, path);
		return;
	}
	if (n > OPF_MAX_BUILD_ID)
		n = OPF_MAX_BUILD_ID;
	hexs(b, id, n);
	if (n != h->build_id_len || memcmp(id, h->build_id, n))
		fprintf(stderr, "opreport: warning: build-id mismatch: stream has %s, %s has %s\n",
			a, path, b);
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

/* Parse the stream into prof, each sample judged by the filters of u; on failure say why
 * (one line) and return 2. */
static int load(const struct options *o, struct filter_use *u, struct profile *prof)
{
	struct opf_parser ps;

	if (u->f && u->f->on)
		filter_attach(u, prof);
	opf_parser_init(&ps, &profile_sink, prof);
	prof->snapshot = (uint64_t)o->snapshot;
	if (opf_parse_file(&ps, o->file) && !crash_cut(&ps, prof)) {
		fprintf(stderr, "opreport: %s: %s\n", o->file, ps.err);
		return 2;
	}
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
	if (sched_any(&prof->sched) && sched_analyze(prof)) {
		fprintf(stderr, "opreport: out of memory\n");
		return 2;
	}
	if (conservation_failed(prof) && !o->stats)
		fprintf(stderr, "opreport: warning: %s: sample accounting does not add up; "
			"see --stats\n", o->file);
	return 0;
}

/* Open the kernel ELF the report needs, or fall back to raw addresses with a warning.
 * Sets c->kernel_path (NULL for raw). Returns 0 or -1 (out of memory). */
static int open_symbols(struct ctx *c, struct symbols *sym, char **defk)
{
	const struct options *o = c->o;
	const char *kpath = NULL;
	char err[512];

	c->sym = sym;
	c->kernel_path = NULL;
	if (!o->need_elf)
		return sym_init_raw(sym);
	if (!(kpath = o->kernel ? o->kernel : (*defk = default_kernel())) ||
	    sym_open(sym, kpath, err, sizeof(err))) {
		fprintf(stderr, "opreport: warning: %s; reporting raw addresses%s\n",
			kpath ? err : "out of memory", o->kernel ? "" : " (use -k ELF)");
		return sym_init_raw(sym);
	}
	check_build_id(c->p, sym, kpath);
	c->kernel_path = kpath;
	return 0;
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
 * --diff: read BASE too, resolve it with NEW's symbols (so function ids agree), print the
 * change per function and, with --flame, the differential graph. Returns the exit status.
 */
static int run_diff(struct ctx *c)
{
	struct options ob = *c->o;
	struct profile bprof = { 0 };
	struct ctx b = { .o = &ob, .p = &bprof, .sym = c->sym, .kernel_path = c->kernel_path,
			 .fu = { .f = c->fu.f } };
	int rc;

	ob.file = c->o->base;
	if ((rc = load(&ob, &b.fu, &bprof))) {
		profile_free(&bprof);
		return rc;
	}
	b.ncores = bprof.ncores;
	rc = -1;
	if (!sym_resolve(c->sym, &bprof.stacks) && !filter_stacks(&b.fu, &bprof, c->sym) &&
	    !ctx_aggregate(c) && !ctx_aggregate(&b) && !report_diff(&b, c, stdout))
		rc = 0;
	errno = 0;
	if (!rc && c->o->flame && report_diff_flame(&b, c, c->o->flame)) {
		fprintf(stderr, "opreport: cannot write %s%s%s\n", c->o->flame, errno ? ": " : "",
			errno ? strerror(errno) : "");
		rc = 1;
	}
	ctx_free(&b);
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

/*
 * What the reports read, once the symbols are open, in this order: the filters on the
 * events (on their stacks too, unless the off-CPU or lock stacks are made of them and
 * judged below), those stacks, every stack resolved, the filters on the stacks. 0 or -1.
 */
static int derive(struct ctx *c)
{
	const struct options *o = c->o;
	struct profile *p = c->p;

	return filter_sched(&c->fu, p, c->sym, !o->delay) ||
	       (o->delay && sched_offcpu_stacks(p, o->locks)) || sym_resolve(c->sym, &p->stacks) ||
	       (o->delay && sched_offcpu_roots(p, c->sym)) || filter_stacks(&c->fu, p, c->sym);
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

/* With the stream read: the symbols, what the reports derive, the reports, or --diff. Returns
 * the exit status. */
static int report(struct ctx *c, struct symbols *sym, char **defk)
{
	int rc;

	if (open_symbols(c, sym, defk)) {
		fprintf(stderr, "opreport: out of memory\n");
		return 1;
	}
	if ((rc = check_annotate(c)))
		return rc;
	if (derive(c) || (c->o->diff ? (rc = run_diff(c)) < 0 :
			  ctx_aggregate(c) || (rc = run_reports(c)) < 0)) {
		fprintf(stderr, "opreport: out of memory\n");
		return 1;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "opreport: error writing output: %s\n", strerror(errno));
		rc = 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct options o;
	struct filter filt = { 0 };
	struct profile prof = { 0 };
	struct symbols sym = { 0 };
	struct ctx c = { .o = &o, .p = &prof, .fu = { .f = &filt } };
	char *defk = NULL;
	int rc = parse_args(argc, argv, &o);
	double t0 = now(), t1;

	if (rc || (rc = parse_filters(&o, &filt))) {
		usage(stderr);
		filter_free(&filt);
		return rc;
	}
	plan(&o);
	if (o.perf_data && !(c.perf = perf_collect(&prof))) {
		fprintf(stderr, "opreport: cannot write %s: no temporary file\n", o.perf_data);
		return 1;
	}
	if (!(rc = load(&o, &c.fu, &prof))) {
		t1 = now();
		c.ncores = prof.ncores;
		rc = report(&c, &sym, &defk);
		if (o.bench_stats)
			bench_stats(&prof, &sym, t0, t1);
	}
	ctx_free(&c);
	perf_free(c.perf);
	sym_close(&sym);
	profile_free(&prof);
	filter_free(&filt);
	free(defk);
	return rc;
}
