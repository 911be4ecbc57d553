/*
 * fuzz_stream.c: libFuzzer target over the whole of opreport, run as a user runs it. Each
 * input is a stream: written to a memory file, it goes through opreport_main (user/opreport.c,
 * built without its main) once for each command line of runs[] below, which between them
 * ask for every text view and every file opreport writes: the flat profile with --cpu and
 * --inclusive, --thread, --lines, --callgraph, --folded, --stats, the scheduler views
 * (--wall, --offcpu, --locks), --flame, --pprof, --perf-data, --timeline, --trace, the
 * delay profiles of --offcpu and --locks, --snapshot, --weight samples, --diff (the
 * stream against itself, with the differential flame graph), --annotate and every filter. So the parser, the crash-dump
 * cut, the scheduler analysis, symbol resolution and each writer see every input, by the
 * same paths as on the command line (the views of scheduler events in lines of their own: a
 * session without events refuses them, and the others would be left out). Before them the
 * parser alone reads the input in two pieces cut where its last byte says, as a streaming
 * reader gets it: its verdict and what it kept must be those of the input read whole (a
 * difference aborts, a finding).
 *
 * Any input must end in a report or an error message: no crash, leak, undefined behaviour
 * or exit (libFuzzer reports each). Text goes to stdout and messages to stderr, which the
 * make rule's -close_fd_mask=3 discards; files go to /dev/null. Symbols come from the ELF
 * in OPREPORT_FUZZ_KERNEL (the make rule names the tree's kernel, whose functions the real
 * sessions of the corpus sampled), forced on every stream whatever its build-id
 * (--force-kernel: an input's build-id is as random as the rest); the last line needs none.
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ingest/parser.h"
#include "ingest/profile.h"

int opreport_main(int argc, char **argv);

#define ARGS_MAX 40

/* KERNEL and INPUT stand for the ELF's path and the input's; NULL ends a command line. */
static const char KERNEL[] = "KERNEL", INPUT[] = "INPUT";
static const char *const runs[][ARGS_MAX] = {
	{ "-k", KERNEL, "--force-kernel", "--stats", "--cpu", "--inclusive", "--thread", "--lines",
	  "--callgraph", "--perf-data", "/dev/null", "--no-buildid-cache", "-n", "3", INPUT, NULL },
	{ "-k", KERNEL, "--force-kernel", "--wall", "--offcpu", "--locks", "--timeline",
	  "/dev/null", "--trace", "/dev/null", INPUT, NULL },
	{ "-k", KERNEL, "--force-kernel", "--folded", "--flame", "/dev/null", "--pprof",
	  "/dev/null", INPUT, NULL },
	{ "-k", KERNEL, "--force-kernel", "--diff", "--flame", "/dev/null", INPUT, INPUT, NULL },
	{ "-k", KERNEL, "--force-kernel", "--offcpu", "--folded", "--flame", "/dev/null", "--pprof",
	  "/dev/null", INPUT, NULL },
	{ "-k", KERNEL, "--force-kernel", "--locks", "--folded", "--flame", "/dev/null", "--pprof",
	  "/dev/null", INPUT, NULL },
	{ "--snapshot", "1", "--weight", "samples", "--stats", INPUT, NULL },
	{ "-k", KERNEL, "--force-kernel", "--tid", "1-6", "--comm", "shell,spin,lockpair",
	  "--cores", "0,1", "--time", "0.01,", "--no-idle", "--focus", "run|main",
	  "--ignore", "idle", "--thread", "--callgraph", "--annotate", "matrix_inner", "--wall",
	  "--trace", "/dev/null", "--pprof", "/dev/null", INPUT, NULL },
};

/*
 * OPREPORT_FUZZ_LINES=1: print the command lines (KERNEL and INPUT as words) and exit, for
 * tests/t/opreport-fuzz-corpus, which checks with the real program that each is one it
 * takes: a line it refused would fuzz nothing.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!getenv("OPREPORT_FUZZ_LINES"))
		return 0;
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++)
		for (const char *const *a = runs[r]; *a; a++)
			printf("%s%c", *a, a[1] ? ' ' : '\n');
	exit(0);
}

static char input_path[64];
static const char *kernel = "/nonexistent";

static int init(void)
{
	int fd = memfd_create("fuzz-input", 0);

	if (fd < 0)
		return -1;
	snprintf(input_path, sizeof(input_path), "/proc/self/fd/%d", fd);
	if (getenv("OPREPORT_FUZZ_KERNEL"))
		kernel = getenv("OPREPORT_FUZZ_KERNEL");
	return fd;
}

/* Parse data[0..size) fed as data[0..cut) then the rest; into *prof. 0 valid, -1 not. */
static int parse_in_two(const uint8_t *data, size_t size, size_t cut, struct profile *prof)
{
	struct opf_parser ps;
	long used, u2;
	int bad;

	opf_parser_init(&ps, &profile_sink, prof);
	if ((used = opf_feed(&ps, data, cut)) < 0)
		return -1;
	/* the parser consumed whole records: the rest of the first piece comes again */
	size_t rest = cut - (size_t)used, n = rest + size - cut;
	uint8_t *buf = malloc(n + 1);

	if (!buf)
		abort();
	memcpy(buf, data + used, n);
	u2 = opf_feed(&ps, buf, n);
	bad = u2 < 0 || opf_finish(&ps, buf + u2, n - (size_t)u2);
	free(buf);
	return bad ? -1 : 0;
}

/* The same verdict and the same samples, read whole or in two pieces. */
static void check_chunking(const uint8_t *data, size_t size)
{
	struct profile whole = { 0 }, two = { 0 };
	size_t cut = size ? data[size - 1] % (size + 1) : 0;
	int a = parse_in_two(data, size, size, &whole), b = parse_in_two(data, size, cut, &two);

	if (a != b || (!a && (whole.samples != two.samples || whole.nsess != two.nsess ||
			      whole.stacks.n != two.stacks.n)))
		abort();
	profile_free(&whole);
	profile_free(&two);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -2;

	if (fd == -2 && (fd = init()) < 0)
		abort();
	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	check_chunking(data, size);
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		char *argv[ARGS_MAX + 1] = { "opreport" };
		int argc = 1;

		for (const char *const *a = runs[r]; *a; a++)
			argv[argc++] = (char *)(*a == KERNEL ? kernel :
						*a == INPUT ? input_path : *a);
		optind = 0;	/* getopt starts afresh on a new argument vector */
		opreport_main(argc, argv);
	}
	return 0;
}
