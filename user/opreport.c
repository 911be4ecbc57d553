/*
 * opreport.c: command line, kernel ELF location and build-id check, and the order of output.
 *
 * Exit status: 0 report written; 2 usage error or invalid/unreadable stream (one line on
 * stderr naming the file, the offset and the problem); 3 --stats found that the per-core
 * accounting does not add up; 1 any other failure (out of memory, cannot write an output).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: opreport [options] FILE\n"
		"Report a kernel profiler stream (from /dev/oprofile); FILE may be - for stdin\n"
		"and may be gzip-compressed.\n"
		"\n"
		"  -k, --kernel ELF    kernel ELF for symbols (default: build/kernel.elf of this tree)\n"
		"  -n, --limit N       at most N rows (symbols, threads, call graph blocks;\n"
		"                      --lines: N symbols, default 10)\n"
		"      --inclusive     rank symbols by samples anywhere on the stack\n"
		"      --cpu           one column per core\n"
		"  -c, --callgraph     callers and callees of each function\n"
		"      --thread        samples per thread\n"
		"      --lines         hottest source lines of the top symbols\n"
		"      --folded        folded stacks (root;...;leaf count) for flame graph tools\n"
		"      --flame FILE    write an SVG flame graph\n"
		"      --pprof FILE    write a gzipped pprof profile (profile.proto)\n"
		"      --stats         session and per-core accounting; exit 3 if it does not add up\n"
		"  -h, --help          this text\n"
		"\n"
		"Without a report option the flat profile (self samples per symbol) is printed.\n"
		"Report options combine; their sections print in the order stats, symbols,\n"
		"threads, lines, call graph, folded.\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
	enum { O_INCL = 256, O_CPU, O_THREAD, O_LINES, O_FOLDED, O_FLAME, O_PPROF, O_STATS,
	       O_BENCH };
	static const struct option lopts[] = {
		{ "kernel", required_argument, NULL, 'k' },
		{ "limit", required_argument, NULL, 'n' },
		{ "callgraph", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "inclusive", no_argument, NULL, O_INCL },
		{ "cpu", no_argument, NULL, O_CPU },
		{ "thread", no_argument, NULL, O_THREAD },
		{ "lines", no_argument, NULL, O_LINES },
		{ "folded", no_argument, NULL, O_FOLDED },
		{ "flame", required_argument, NULL, O_FLAME },
		{ "pprof", required_argument, NULL, O_PPROF },
		{ "stats", no_argument, NULL, O_STATS },
		{ "bench-stats", no_argument, NULL, O_BENCH },	/* hidden: timing for the bench */
		{ NULL, 0, NULL, 0 },
	};
	int ch;

	memset(o, 0, sizeof(*o));
	o->limit = -1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":k:n:ch", lopts, NULL)) != -1) {
		switch (ch) {
		case 'k': o->kernel = optarg; break;
		case 'n': {
			char *end;
			errno = 0;
			long v = strtol(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 0) {
				fprintf(stderr, "opreport: -n wants a count, not '%s'\n", optarg);
				return 2;
			}
			o->limit = v;
			break;
		}
		case 'c': o->callgraph = 1; break;
		case 'h': usage(stdout); exit(0);
		case O_INCL: o->inclusive = 1; break;
		case O_CPU: o->cpu = 1; break;
		case O_THREAD: o->thread = 1; break;
		case O_LINES: o->lines = 1; break;
		case O_FOLDED: o->folded = 1; break;
		case O_FLAME: o->flame = optarg; break;
		case O_PPROF: o->pprof = optarg; break;
		case O_STATS: o->stats = 1; break;
		case O_BENCH: o->bench_stats = 1; break;
		case ':':
			fprintf(stderr, "opreport: option %s needs an argument\n", argv[optind - 1]);
			return 2;
		default:
			if (optopt)
				fprintf(stderr, "opreport: unknown option -%c\n", optopt);
			else
				fprintf(stderr, "opreport: unknown option %s\n", argv[optind - 1]);
			return 2;
		}
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

int main(int argc, char **argv)
{
	struct options o;
	struct profile prof = { 0 };
	struct opf_parser ps;
	struct symbols sym;
	struct ctx c = { 0 };
	char err[512];
	char *defk = NULL;
	int rc = parse_args(argc, argv, &o);
	double t0 = now();

	if (rc) {
		usage(stderr);
		return rc;
	}
	opf_parser_init(&ps, &profile_sink, &prof);
	if (opf_parse_file(&ps, o.file)) {
		fprintf(stderr, "opreport: %s: %s\n", o.file, ps.err);
		profile_free(&prof);
		return 2;
	}
	double t1 = now();
	if (!profile_complete(&prof)) {
		fprintf(stderr, "opreport: warning: %s: incomplete stream (session still running "
			"when copied?): missing OPF_CORE_END/OPF_SESSION_END records\n", o.file);
	}
	if (conservation_failed(&prof) && !o.stats)
		fprintf(stderr, "opreport: warning: %s: sample accounting does not add up; "
			"see --stats\n", o.file);

	int text = o.stats || o.thread || o.lines || o.callgraph || o.folded;
	int symbols = (!text && !o.flame && !o.pprof) || o.inclusive || (o.cpu && !o.thread);
	/* --stats alone needs no symbols: do not go looking for an ELF. */
	int need_elf = symbols || o.thread || o.lines || o.callgraph || o.folded || o.flame || o.pprof;
	const char *kpath = NULL;

	if (!need_elf) {
		if (sym_init_raw(&sym))
			goto oom;
	} else if (!(kpath = o.kernel ? o.kernel : (defk = default_kernel())) ||
		   sym_open(&sym, kpath, err, sizeof(err))) {
		fprintf(stderr, "opreport: warning: %s; reporting raw addresses%s\n",
			kpath ? err : "out of memory", o.kernel ? "" : " (use -k ELF)");
		kpath = NULL;
		if (sym_init_raw(&sym))
			goto oom;
	} else {
		check_build_id(&prof, &sym, kpath);
	}
	c.o = &o;
	c.p = &prof;
	c.sym = &sym;
	c.kernel_path = kpath;
	c.ncores = prof.ncores;
	if (sym_resolve(&sym, &prof.stacks) || ctx_aggregate(&c))
		goto oom;

	rc = 0;
	if (o.stats)
		rc = report_stats(&c, stdout);
	if (symbols || o.thread || o.lines || o.callgraph) {
		if (o.stats)
			fputc('\n', stdout);
		report_header(&c, stdout);
	}
	if (symbols)
		report_symbols(&c, stdout);
	if (o.thread) {
		if (symbols)
			fputc('\n', stdout);
		report_threads(&c, stdout);
	}
	if (o.lines) {
		if (symbols || o.thread)
			fputc('\n', stdout);
		report_lines(&c, stdout);
	}
	if (o.callgraph) {
		if (symbols || o.thread || o.lines)
			fputc('\n', stdout);
		if (report_callgraph(&c, stdout))
			goto oom;
	}
	if (o.folded && report_folded(&c, stdout))
		goto oom;
	if (o.flame && report_flame(&c, o.flame)) {
		fprintf(stderr, "opreport: cannot write %s: %s\n", o.flame, strerror(errno));
		rc = 1;
	}
	if (o.pprof && report_pprof(&c, o.pprof)) {
		fprintf(stderr, "opreport: cannot write %s\n", o.pprof);
		rc = 1;
	}
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "opreport: error writing output: %s\n", strerror(errno));
		rc = 1;
	}
	if (o.bench_stats) {
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		fprintf(stderr, "bench-stats: samples %" PRIu64 " unique-stacks %zu functions %u "
			"parse-s %.3f total-s %.3f user-s %.3f sys-s %.3f maxrss-kib %ld\n",
			prof.samples, prof.stacks.n, sym.nfuncs, t1 - t0, now() - t0,
			ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
			ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss);
	}
	ctx_free(&c);
	sym_close(&sym);
	profile_free(&prof);
	free(defk);
	return rc;
oom:
	fprintf(stderr, "opreport: out of memory\n");
	return 1;
}
