/*
 * The profiler's hot path on real hardware: hotpath.c (with qio.c, block.c and the rest of
 * the portable core) built natively for the host at -O2, without sanitizers, pthreads as
 * cores. Emulated cycle counts (opbench in the guest) cannot show what a record costs on
 * a CPU; this can, for the code itself (the kernel adds only the interrupt around it).
 *
 *	oprof-bench [-c THREADS] [-d DEPTH] [-o]	prints "cycles/record" per thread set
 *
 * Each "core" thread records batches of BATCH samples through oprof_tick_irq -- a tick as
 * the glue makes one (oprofile_bench.h), over a stack DEPTH frames deep: the path
 * production's common tick takes, walk included -- timing each batch with rdtsc, and
 * pauses between batches so the worker thread can recycle blocks; a reader thread drains
 * /dev/oprofile's stream. -o measures the design it replaced: a block allocated per
 * sample and appended to one list under one lock. The median batch is kept.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "kernel.h"
#include "abi/oprofile.h"
#include "oprofile.h"
#include "oprofile_bench.h"
#include "shim.h"

#define BATCH	200
#define BATCHES	101
#define MAXT	16

static unsigned depth = 16, nthreads = 1;
static int old_design;
static uint64_t frames[OPF_MAX_DEPTH];
static volatile int go, stop_bg;
static uint64_t result[MAXT];

static int hook_start(uint32_t hz, uint32_t source) { (void)hz; (void)source; return 0; }
static void hook_stop(void) {}
static void hook_threads(oprof_thread_fn fn, void *arg) { (void)fn; (void)arg; }
static void hook_set_rate(int core, uint32_t hz) { (void)core; (void)hz; }

static const struct oprof_hooks hooks = {
	.start_sampling = hook_start, .stop_sampling = hook_stop,
	.foreach_thread = hook_threads, .set_rate = hook_set_rate,
};

/* The value of /dev/oprofilestat's line name (0 when absent). */
static uint64_t stat_get(const char *name)
{
	static char text[1 << 16];
	size_t len = strlen(name);

	oprof_stat_text(text, sizeof(text));
	for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
		if (!strncmp(p, name, len) && p[len] == ' ')
			return strtoull(p + len + 1, NULL, 10);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void pause_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };

	nanosleep(&ts, NULL);
}

static void *core_main(void *arg)
{
	int core = (int)(intptr_t)arg;
	uint64_t v[BATCHES], stack[2 * OPF_MAX_DEPTH];
	struct oprof_tick t;

	shim_set_core(core);
	oprof_bench_tick(&t, core, 1, 0x100000, stack, frames, depth);
	while (!go)
		;
	for (int i = 0; i < BATCHES; i++) {
		uint64_t t0 = __rdtsc();

		t.tsc = t0;
		for (int k = 0; k < BATCH; k++) {
			if (old_design)
				oprof_baseline_record(core, t0, 0x100000, frames, depth);
			else
				oprof_tick_irq(&t);
		}
		v[i] = (__rdtsc() - t0) / BATCH;
		if (old_design && core == 0)
			oprof_baseline_drain();
		pause_ms(2);
	}
	qsort(v, BATCHES, sizeof(v[0]), cmp_u64);
	result[core] = v[BATCHES / 2];
	return NULL;
}

static void *worker_main(void *arg)
{
	(void)arg;
	shim_set_core(0);
	while (!stop_bg) {
		oprof_worker_pass();
		pause_ms(1);
	}
	return NULL;
}

static void *reader_main(void *arg)
{
	static char buf[1 << 16];

	(void)arg;
	while (oprof_read(buf, sizeof(buf)) > 0)
		;
	return NULL;
}

static void ctl(const char *line)
{
	char err[256];

	if (oprof_ctl(line, err, sizeof(err)) < 0) {
		fprintf(stderr, "oprof-bench: %s: %s\n", line, err);
		exit(1);
	}
}

/*
 * The kernel's memory is mapped before anyone records into it; glibc's is not, and gives
 * freed memory back to the OS. So the heap is grown, touched and kept once up front, and
 * blocks never come from (or go back to) mmap: the timings see the hot path, not page
 * faults on fresh blocks. Every thread shares that one arena: another thread's arena would
 * start untouched (the worker allocates the blocks), and a per-thread arena gives pages
 * back when it shrinks.
 */
static void prefault_heap(void)
{
	enum { N = 4096, SZ = 64 << 10 };	/* 256 MiB in pieces below the mmap threshold */
	static void *p[N];

	mallopt(M_TRIM_THRESHOLD, INT32_MAX);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_ARENA_MAX, 1);	/* the worker's and the reader's too: one arena, touched */
	for (int i = 0; i < N; i++)
		if ((p[i] = malloc(SZ)))
			memset(p[i], 0, SZ);
	for (int i = 0; i < N; i++)
		free(p[i]);
}

int main(int argc, char **argv)
{
	pthread_t cores[MAXT], worker, reader;
	char start[64];
	uint64_t sum = 0, worst = 0;
	int opt;

	while ((opt = getopt(argc, argv, "c:d:o")) != -1) {
		if (opt == 'c')
			nthreads = (unsigned)atoi(optarg);
		else if (opt == 'd')
			depth = (unsigned)atoi(optarg);
		else if (opt == 'o')
			old_design = 1;
		else
			return 2;
	}
	if (nthreads < 1 || nthreads > MAXT || depth > OPF_MAX_DEPTH)
		return 2;
	for (unsigned i = 0; i < OPF_MAX_DEPTH; i++)
		frames[i] = 0x100000 + 16 * i;
	prefault_heap();
	shim_set_ncpus((int)nthreads);
	oprof_init(&hooks);
	ctl("budget 100");
	snprintf(start, sizeof(start), "start -f 1000 -d %u", depth);
	if (oprof_open() < 0)
		return 1;
	pthread_create(&reader, NULL, reader_main, NULL);
	ctl(start);
	pthread_create(&worker, NULL, worker_main, NULL);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_create(&cores[i], NULL, core_main, (void *)(intptr_t)i);
	go = 1;
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(cores[i], NULL);
	ctl("stop");
	stop_bg = 1;
	pthread_join(worker, NULL);
	pthread_join(reader, NULL);
	oprof_baseline_drain();
	for (unsigned i = 0; i < nthreads; i++) {
		sum += result[i];
		worst = result[i] > worst ? result[i] : worst;
	}
	printf("oprof-bench: %s depth %u threads %u: %lu cycles/record (mean of per-thread "
	       "medians), worst %lu", old_design ? "global-lock" : "per-core", depth, nthreads,
	       (unsigned long)(sum / nthreads), (unsigned long)worst);
	if (old_design) {
		printf("\n");
		return 0;
	}
	/* a sample that found no block takes a short cut: timings of lost samples are no verdict */
	uint64_t taken = 0, lost = 0;

	for (unsigned i = 0; i < nthreads; i++) {
		static const char *what[] = { "lost_noblock", "lost_outfull", "lost_paused",
					      "lost_other" };
		char name[48];

		snprintf(name, sizeof(name), "cpu%u.taken", i);
		taken += stat_get(name);
		for (unsigned k = 0; k < sizeof(what) / sizeof(what[0]); k++) {
			snprintf(name, sizeof(name), "cpu%u.%s", i, what[k]);
			lost += stat_get(name);
		}
	}
	printf("; %lu of %lu samples lost\n", (unsigned long)lost, (unsigned long)taken);
	return lost ? 3 : 0;
}
