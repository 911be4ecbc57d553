/*
 * `opbench`: the cost of recording one sample, in TSC cycles, for the benchmark table.
 *
 * Each chosen core runs a thread that records batches of samples with interrupts off,
 * timing each batch with the TSC, and sleeps between batches so the worker can recycle
 * the blocks (the measurement is of the hot path, not of running out of blocks). A sample
 * is a tick as the glue makes one (oprofile_bench.h), through oprof_tick_irq: the path
 * production's common tick takes, its walk of a -d deep stack included. All threads
 * start together, so "-c 8" measures 8 cores recording at once.
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
#include "tsctime.h"

#define BATCH		200
#define MAX_BATCHES	64

struct bench {
	unsigned depth;		/* frames of the stack each sample walks */
	int batches;
	bool old;
	volatile int ready;		/* threads waiting at the start line */
	volatile bool go;
	uint64_t frames[OPF_MAX_DEPTH];
	uint64_t per_core[MAX_CPUS];	/* median cycles per record, per core */
};

/*
 * One batch with interrupts off; cycles per record. Each sample is a tick as production's
 * (oprof_tick_irq, walk included), over a stack of bn->depth frames.
 */
static uint64_t batch(struct bench *bn, int core)
{
	uint64_t stack[2 * OPF_MAX_DEPTH];
	struct oprof_tick t;
	unsigned long f;
	uint64_t t0, t1;

	oprof_bench_tick(&t, core, 1, (uintptr_t)batch, stack, bn->frames, bn->depth);
	f = irq_save();
	t.tsc = t0 = tsc_read();
	for (int i = 0; i < BATCH; i++) {
		if (bn->old)
			oprof_baseline_record(core, t0, (uintptr_t)batch, bn->frames, bn->depth);
		else
			oprof_tick_irq(&t);
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
 * `tickload [-m timer|nmi] HZ`: an empty periodic interrupt at HZ on every core (0
 * removes it), the control for profiling-overhead measurements: it costs what a timer
 * interrupt (an alarm on each core) or an NMI (arch_nmi_start) costs, and nothing of the
 * profiler's. Its handler only counts, per core, the ticks it took and how many of them
 * found interrupts off, where a timer interrupt can never land. Replacing or removing a
 * load prints what the load did, with its length by the TSC:
 *	tickload: nmi 1000 Hz for 1.234567 s
 *	tickload: cpu 0: 1234 ticks, 1200 with interrupts off
 * Shell context; the state below has no lock, so one tickload at a time (not two
 * backgrounded at once).
 */
enum tl_mode { TL_OFF, TL_TIMER, TL_NMI };

/* One core's counts; written only on that core, by its alarm or its NMI handler. */
struct tl_count {
	uint64_t ticks;
	uint64_t irqoff;	/* ticks whose interrupted context had interrupts off */
} __aligned(CACHELINE);

static struct tl_count tl_counts[MAX_CPUS];
static struct alarm tickload_alarms[MAX_CPUS];
static uint64_t tickload_period;	/* TSC ticks; 0 disarms (timer mode) */
static enum tl_mode tl_mode;
static uint64_t tl_hz, tl_start;

static void tl_count(const struct trapframe *tf)
{
	struct tl_count *c = &tl_counts[core_id()];

	WRITE_ONCE(c->ticks, c->ticks + 1);
	if (!tf_irq_enabled(tf))
		WRITE_ONCE(c->irqoff, c->irqoff + 1);
}

/* Timer interrupt, interrupts off. */
static void tickload_fire(struct alarm *a, struct trapframe *tf)
{
	(void)a;
	tl_count(tf);
}

/* NMI context. */
static void tickload_nmi(const struct trapframe *tf)
{
	tl_count(tf);
}

/* In a thread on each core: (re)arm or disarm that core's alarm. */
static void tickload_arm(void *arg)
{
	struct alarm *a = &tickload_alarms[core_id()];

	(void)arg;
	if (!a->fn) {		/* first use: a zeroed alarm is not a disarmed one */
		alarm_init(a, tickload_fire, NULL);
		a->spaced = a->fast = true;	/* as the sampler's: the floor it pays */
	}
	alarm_cancel(a);
	if (tickload_period)
		alarm_set(a, tsc_read() + tickload_period, tickload_period);
}

static void tickload_timers(uint64_t period)
{
	struct thread *ts[MAX_CPUS];

	tickload_period = period;
	for (int i = 0; i < ncpus(); i++)
		ts[i] = kthread_create("tickload", i, tickload_arm, NULL);
	for (int i = 0; i < ncpus(); i++)
		if (ts[i])
			kthread_join(ts[i]);
}

/* Remove the running load, if any, and report what it did. */
static void tickload_off(void)
{
	uint64_t us;

	if (tl_mode == TL_NMI)
		arch_nmi_stop();
	else if (tl_mode == TL_TIMER)
		tickload_timers(0);
	else
		return;
	us = us_of_tsc(tsc_read() - tl_start);
	shell_printf("tickload: %s %lu Hz for %lu.%06lu s\n", tl_mode == TL_NMI ? "nmi" : "timer",
		     (unsigned long)tl_hz, (unsigned long)(us / 1000000),
		     (unsigned long)(us % 1000000));
	for (int i = 0; i < ncpus(); i++)
		shell_printf("tickload: cpu %d: %lu ticks, %lu with interrupts off\n", i,
			     (unsigned long)READ_ONCE(tl_counts[i].ticks),
			     (unsigned long)READ_ONCE(tl_counts[i].irqoff));
	tl_mode = TL_OFF;
}

static int cmd_tickload(int argc, char **argv)
{
	enum tl_mode mode = TL_TIMER;
	uint64_t hz;
	int i = 1, r;

	if (argc == 4 && !strcmp(argv[1], "-m")) {
		if (!strcmp(argv[2], "nmi"))
			mode = TL_NMI;
		else if (strcmp(argv[2], "timer"))
			return -EINVAL;
		i = 3;
	}
	if (argc != i + 1 || parse_u64(argv[i], &hz) < 0 || hz > 100000)
		return -EINVAL;
	tickload_off();
	if (hz == 0)
		return 0;
	memset(tl_counts, 0, sizeof(tl_counts));
	tl_hz = hz;
	/* the load's length is measured from before it starts to after it stops */
	tl_start = tsc_read();
	if (mode == TL_NMI) {
		if ((r = arch_nmi_start((uint32_t)hz, tickload_nmi)) < 0) {
			shell_eprintf("tickload: NMIs at %lu Hz: %s\n", (unsigned long)hz,
				      r == -ENODEV ? "this machine has no NMI timer route"
						   : strerror(r));
			return 1;
		}
	} else {
		tickload_timers(tsc_hz() / hz);
	}
	tl_mode = mode;
	return 0;
}
SHELL_CMD("tickload", "tickload [-m timer|nmi] HZ",
	  "an empty timer interrupt or NMI at HZ on every core (0: off), to measure their cost",
	  cmd_tickload);
