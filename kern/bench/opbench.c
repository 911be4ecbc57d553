/*
 * `opbench`: the cost of recording one sample, in TSC cycles, for the benchmark table.
 *
 * Each chosen core runs a thread that records batches of samples with interrupts off,
 * timing each batch with the TSC, and sleeps between batches so the worker can recycle
 * the blocks (the measurement is of the hot path, not of running out of blocks). All
 * threads start together, so "-c 8" measures 8 cores recording at once.
 *
 * "-o" measures instead the design the profiler replaced (baseline.c, after Akaros kprof):
 * allocate a block per sample and append it to one global queue under one global lock.
 * Those blocks are freed between batches, outside the timing.
 *
 * The profiler must be running (oprofile start -f 1 keeps its own alarms out of the way)
 * for the per-core path; opbench starts and stops such a session itself.
 */
#include "abi/oprofile.h"
#include "alarm.h"
#include "cpu.h"
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
#include "oprofile.h"
#include "oprofile_bench.h"
#include "shell.h"
#include "thread.h"

#define BATCH		200
#define MAX_BATCHES	64

struct bench {
	unsigned depth;
	int batches;
	bool old;
	volatile int ready;		/* threads waiting at the start line */
	volatile bool go;
	uint64_t frames[OPF_MAX_DEPTH];
	uint64_t per_core[MAX_CPUS];	/* median cycles per record, per core */
};

/* One batch with interrupts off; cycles per record. */
static uint64_t batch(struct bench *bn, int core)
{
	unsigned long f = irq_save();
	uint64_t t0 = tsc_read(), t1;

	for (int i = 0; i < BATCH; i++) {
		if (bn->old)
			oprof_baseline_record(core, t0, (uintptr_t)batch, bn->frames, bn->depth);
		else
			oprof_sample_irq(core, 1, t0, (uintptr_t)batch, bn->frames, bn->depth, 0);
	}
	t1 = tsc_read();
	irq_restore(f);
	return (t1 - t0) / BATCH;
}

static void sort_u64(uint64_t *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

static void bench_thread(void *arg)
{
	struct bench *bn = arg;
	int core = core_id();
	uint64_t v[MAX_BATCHES];

	__atomic_add_fetch(&bn->ready, 1, __ATOMIC_SEQ_CST);
	while (!bn->go)
		cpu_relax();
	for (int i = 0; i < bn->batches; i++) {
		v[i] = batch(bn, core);
		if (bn->old && core == 0)
			oprof_baseline_drain();
		thread_sleep_us(20000);
	}
	sort_u64(v, bn->batches);
	bn->per_core[core] = v[bn->batches / 2];
}

static int ctl(const char *line)
{
	char err[160];
	int r = oprof_ctl(line, err, sizeof(err));

	if (r < 0)
		shell_eprintf("%s\n", err);
	return r;
}

static int run_bench(struct bench *bn, int ncores)
{
	struct thread *ts[MAX_CPUS];
	uint64_t sum = 0, worst = 0;

	for (int i = 0; i < ncores; i++)
		if (!(ts[i] = kthread_create("opbench", i, bench_thread, bn)))
			return -ENOMEM;
	while (bn->ready < ncores)
		thread_sleep_us(1000);
	bn->go = true;
	for (int i = 0; i < ncores; i++)
		kthread_join(ts[i]);
	oprof_baseline_drain();
	for (int i = 0; i < ncores; i++) {
		sum += bn->per_core[i];
		worst = MAX(worst, bn->per_core[i]);
	}
	shell_printf("opbench: %s depth %u cores %d: %lu cycles/record (mean of per-core "
		     "medians), worst core %lu\n", bn->old ? "global-lock" : "per-core",
		     bn->depth, ncores, (unsigned long)(sum / ncores), (unsigned long)worst);
	return 0;
}

static int cmd_opbench(int argc, char **argv)
{
	struct bench *bn = kzmalloc(sizeof(*bn));
	int ncores = 1, r;
	uint64_t v;

	if (!bn)
		return -ENOMEM;
	bn->depth = 16;
	bn->batches = 20;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o")) {
			bn->old = true;
			continue;
		}
		if (i + 1 >= argc || parse_u64(argv[i + 1], &v) < 0)
			goto usage;
		if (!strcmp(argv[i], "-d") && v <= OPF_MAX_DEPTH)
			bn->depth = (unsigned)v;
		else if (!strcmp(argv[i], "-c") && v >= 1 && v <= (uint64_t)ncpus())
			ncores = (int)v;
		else if (!strcmp(argv[i], "-n") && v >= 1 && v <= MAX_BATCHES)
			bn->batches = (int)v;
		else
			goto usage;
		i++;
	}
	for (unsigned i = 0; i < OPF_MAX_DEPTH; i++)
		bn->frames[i] = (uintptr_t)cmd_opbench + i;
	if (!bn->old && (r = ctl("start -f 1 -d 64")) < 0) {
		kfree(bn);
		return 1;
	}
	r = run_bench(bn, ncores);
	if (!bn->old) {
		ctl("stop");
		ctl("discard");
	}
	kfree(bn);
	return r;
usage:
	kfree(bn);
	return -EINVAL;
}
SHELL_CMD("opbench", "opbench [-o] [-d DEPTH] [-c NCORES] [-n BATCHES]",
	  "cycles per profiler record on NCORES cores at once (-o: the old global-lock design)",
	  cmd_opbench);

/*
 * `tickload HZ`: an empty periodic alarm at HZ on every core (0 removes it), the control
 * for profiling-overhead measurements: it costs what a timer interrupt costs and nothing
 * of the profiler's.
 */
static struct alarm tickload_alarms[MAX_CPUS];
static uint64_t tickload_period;

static void tickload_fire(struct alarm *a, struct trapframe *tf)
{
	(void)a;
	(void)tf;
}

static void tickload_arm(void *arg)
{
	struct alarm *a = &tickload_alarms[core_id()];

	(void)arg;
	if (!a->fn)		/* first use: a zeroed alarm is not a disarmed one */
		alarm_init(a, tickload_fire, NULL);
	alarm_cancel(a);
	if (tickload_period)
		alarm_set(a, tsc_read() + tickload_period, tickload_period);
}

static int cmd_tickload(int argc, char **argv)
{
	struct thread *ts[MAX_CPUS];
	uint64_t hz;

	if (argc != 2 || parse_u64(argv[1], &hz) < 0 || hz > 100000)
		return -EINVAL;
	tickload_period = hz ? tsc_hz() / hz : 0;
	for (int i = 0; i < ncpus(); i++)
		ts[i] = kthread_create("tickload", i, tickload_arm, NULL);
	for (int i = 0; i < ncpus(); i++)
		if (ts[i])
			kthread_join(ts[i]);
	return 0;
}
SHELL_CMD("tickload", "tickload HZ",
	  "an empty timer interrupt at HZ on every core (0: off), to measure interrupt cost",
	  cmd_tickload);
