/*
 * Shell commands about threads and time: ps, sleep, run.
 *
 * `run` starts one thread per chosen core; each calls its workload's step until the
 * shared deadline passes or the command is interrupted (Ctrl-C), then records its count.
 * The command joins them all and prints one result line per core and a total.
 */
#include "app.h"
#include "cpu.h"
#include "error.h"
#include "kmalloc.h"
#include "sched.h"
#include "shell.h"
#include "thread.h"
#include "workloads.h"
#include "tsctime.h"

/* ---- ps ---- */

static const char *state_name(enum thread_state s)
{
	switch (s) {
	case T_RUNNABLE: return "ready";
	case T_RUNNING: return "run";
	case T_SLEEPING: return "sleep";
	case T_DEAD: return "dead";
	}
	return "?";
}

static void ps_row(struct thread *t, void *arg)
{
	uint64_t ms = ms_of_tsc(thread_cpu_tsc(t));

	(void)arg;
	shell_printf("%5d %4d %-6s %8lu.%03lu  %s\n", thread_tid(t), thread_core(t),
		     state_name(thread_state(t)), (unsigned long)(ms / 1000),
		     (unsigned long)(ms % 1000), thread_name(t));
}

static int cmd_ps(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return -EINVAL;
	shell_printf("  TID CORE STATE       CPU(s)  NAME\n");
	thread_foreach(ps_row, NULL);
	for (int i = 0; i < ncpus(); i++)
		if (cpus[i].idle)
			ps_row(cpus[i].idle, NULL);
	return 0;
}
SHELL_CMD("ps", "ps", "list threads: id, core, state, CPU time, name", cmd_ps);

/* ---- sleep ---- */

static int cmd_sleep(int argc, char **argv)
{
	uint64_t ms;

	if (argc != 2 || parse_ms(argv[1], &ms) < 0)
		return -EINVAL;
	return thread_sleep_us(ms * 1000) == -EINTR ? -EINTR : 0;
}
SHELL_CMD("sleep", "sleep SECONDS", "wait (fractions allowed; Ctrl-C interrupts)", cmd_sleep);

/* ---- run ---- */

/* "all", "N", "A-B" or a comma list of those, into a mask of online cores. */
static int parse_cores(const char *s, uint64_t *mask)
{
	int n = ncpus();

	*mask = 0;
	if (!strcmp(s, "all")) {
		*mask = n >= 64 ? ~0ull : (1ull << n) - 1;
		return 0;
	}
	while (*s) {
		long a = 0, b;

		if (*s < '0' || *s > '9')
			return -EINVAL;
		for (; *s >= '0' && *s <= '9'; s++)
			if ((a = a * 10 + (*s - '0')) >= n)
				return -ERANGE;
		b = a;
		if (*s == '-') {
			s++;
			if (*s < '0' || *s > '9')
				return -EINVAL;
			for (b = 0; *s >= '0' && *s <= '9'; s++)
				if ((b = b * 10 + (*s - '0')) >= n)
					return -ERANGE;
			if (b < a)
				return -EINVAL;
		}
		for (long i = a; i <= b; i++)
			*mask |= 1ull << i;
		if (*s == ',' && s[1])
			s++;
		else if (*s)
			return -EINVAL;
	}
	return *mask ? 0 : -EINVAL;
}

/*
 * Every core's thread sets its workload up, says it is ready and waits (yielding, so the
 * shell on core 0 can run) until the shell gives them all one start and one deadline:
 * the cores run the same interval. Started one after another, the first would run a while
 * with the others still setting up, which under emulation (where cores share the host's
 * time) ran it faster and made the total depend on who started when.
 */
struct run_start {
	int ready;			/* threads set up and waiting; atomic */
	uint32_t go;			/* set once start and deadline are; release */
	uint64_t start, deadline;	/* TSC; fixed work: deadline ~0 */
	uint64_t work;			/* fixed work: units each core does; 0: fixed time */
};

struct run_slot {
	const struct workload *w;
	struct run_start *rs;
	volatile bool *stop;
	uint64_t units, end;		/* result; end is set (release) when the thread is done */
	char note[96];			/* the workload's done line, "" for none */
	int core;
	struct thread *t;
};

static void run_thread(void *arg)
{
	struct run_slot *s = arg;
	struct run_start *rs = s->rs;
	void *st = s->w->setup ? s->w->setup() : NULL;

	__atomic_add_fetch(&rs->ready, 1, __ATOMIC_RELEASE);
	/* a spin-wait: under QEMU's -icount round robin, the pause lets the other vCPUs run */
	while (!__atomic_load_n(&rs->go, __ATOMIC_ACQUIRE) && !*s->stop) {
		yield();
		cpu_relax();
	}
	if ((!s->w->setup || st) && rs->work)
		while (s->units < rs->work && !*s->stop)
			s->units += s->w->step(st);
	else if (!s->w->setup || st)
		while (tsc_read() < rs->deadline && !*s->stop)
			s->units += s->w->step(st);
	if (st && s->w->done)
		s->w->done(st, s->note, sizeof(s->note));
	kfree(st);
	__atomic_store_n(&s->end, tsc_read(), __ATOMIC_RELEASE);
}

/*
 * Per core and in all, units per second over each core's own time from the common start.
 * Fixed work prints thousandths: its time is exact to the TSC tick (under -icount, to the
 * instruction), so a rate compares to far better than one unit in the run.
 */
static void run_report(const struct workload *w, struct run_slot *slots, int n,
		       const struct run_start *rs)
{
	uint64_t total = 0;

	for (int i = 0; i < n; i++) {
		uint64_t ticks = slots[i].end > rs->start ? slots[i].end - rs->start : 0;
		/* thousandths of a unit per second (units <= 1e9, tsc_hz < 1.8e10: no overflow) */
		uint64_t num = slots[i].units * tsc_hz();
		uint64_t milli = ticks ? num / ticks * 1000 + num % ticks * 1000 / ticks : 0;

		total += rs->work ? milli : milli / 1000;
		if (rs->work)
			shell_printf("run %s: cpu %d: %lu.%03lu %s/s (%lu in %lu us)\n", w->name,
				     slots[i].core, (unsigned long)(milli / 1000),
				     (unsigned long)(milli % 1000), w->unit,
				     (unsigned long)slots[i].units,
				     (unsigned long)us_of_tsc(ticks));
		else
			shell_printf("run %s: cpu %d: %lu %s/s\n", w->name, slots[i].core,
				     (unsigned long)(milli / 1000), w->unit);
		if (slots[i].note[0])
			shell_printf("run %s: cpu %d: %s\n", w->name, slots[i].core,
				     slots[i].note);
	}
	if (rs->work)
		shell_printf("run %s: total: %lu.%03lu %s/s on %d core%s\n", w->name,
			     (unsigned long)(total / 1000), (unsigned long)(total % 1000), w->unit, n,
			     n == 1 ? "" : "s");
	else
		shell_printf("run %s: total: %lu %s/s on %d core%s\n", w->name,
			     (unsigned long)total, w->unit, n, n == 1 ? "" : "s");
}

/* Fixed work: every thread has finished. */
static bool run_all_done(const struct run_slot *slots, int n)
{
	for (int i = 0; i < n; i++)
		if (!__atomic_load_n(&slots[i].end, __ATOMIC_ACQUIRE))
			return false;
	return true;
}

/*
 * When every thread is set up, start them all at once; wait for the deadline or Ctrl-C,
 * then for every thread.
 */
static int run_wait(struct run_slot *slots, int n, struct run_start *rs, uint64_t secs_ms,
		    volatile bool *stop)
{
	int r = 0;

	while (__atomic_load_n(&rs->ready, __ATOMIC_ACQUIRE) < n && !thread_interrupt_pending())
		thread_sleep_us(100);
	rs->start = tsc_read();
	rs->deadline = rs->work ? ~0ull : rs->start + tsc_of_ms(secs_ms);
	__atomic_store_n(&rs->go, 1, __ATOMIC_RELEASE);
	if (thread_interrupt_pending())
		r = -EINTR;
	else if (!rs->work)
		r = thread_sleep_us(secs_ms * 1000);
	else
		while (!run_all_done(slots, n) && (r = thread_sleep_us(1000)) != -EINTR)
			;
	*stop = true;
	for (int i = 0; i < n; i++)
		kthread_join(slots[i].t);
	return r;
}

/*
 * Shell: run's options. Says what is wrong with them and returns -EINVAL, for which the
 * shell adds the usage line.
 */
static int run_parse(int argc, char **argv, uint64_t *mask, uint64_t *ms, uint64_t *work)
{
	*mask = 1;
	*ms = 1000;
	*work = 0;
	for (int i = 2; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(opt, "-c") && strcmp(opt, "-t") && strcmp(opt, "-n")) {
			shell_eprintf("run: unknown option %s\n", opt);
			return -EINVAL;
		}
		if (!val) {
			shell_eprintf("run: %s needs a value\n", opt);
			return -EINVAL;
		}
		i++;
		if (!strcmp(opt, "-c") && parse_cores(val, mask) < 0) {
			shell_eprintf("run: bad cores %s: all, N, A-B or a list of them, each of "
				      "0..%d\n", val, ncpus() - 1);
			return -EINVAL;
		}
		if (!strcmp(opt, "-t") &&
		    (parse_ms(val, ms) < 0 || *ms == 0 || *ms > 3600 * 1000)) {
			shell_eprintf("run: bad time %s: seconds, 0.001..3600\n", val);
			return -EINVAL;
		}
		if (!strcmp(opt, "-n") &&
		    (parse_u64(val, work) < 0 || *work == 0 || *work > 1000000000)) {
			shell_eprintf("run: bad amount %s: units of work per core, 1..1000000000\n",
				      val);
			return -EINVAL;
		}
	}
	return 0;
}

/* An instance per core of mask; each one's status, how it ended and run time. */
static int app_run(const struct app *a, uint64_t mask, size_t stack, int argc, char **argv)
{
	struct app_inst *ins[64];
	struct app_heap *heap = app_heap_new();
	int n = 0, bad = 0, core, status;
	const char *why;
	struct app_heap_left left;
	uint64_t us;

	if (!heap) {
		shell_eprintf("run %s: cannot start (memory)\n", a->name);
		return 1;
	}
	if (!stack)
		stack = a->stack ? a->stack : APP_STACK_DEFAULT;
	for (int c = 0; c < ncpus() && c < 64; c++)
		if ((mask & (1ull << c)) && !(ins[n++] = app_start(a, c, stack, argc, argv, heap))) {
			shell_eprintf("run %s: cannot start on cpu %d (memory)\n", a->name, c);
			n--;
			break;
		}
	if (app_wait(ins, n))
		shell_eprintf("run: interrupted\n");
	for (int i = 0; i < n; i++) {
		app_result(ins[i], &core, &status, &why, &us);
		shell_printf("run %s: cpu %d: status %d%s%s in %lu.%06lu s\n", a->name, core,
			     status, why ? ", " : "", why ? why : "", (unsigned long)(us / 1000000),
			     (unsigned long)(us % 1000000));
		bad |= status != 0;
		app_inst_free(ins[i]);
	}
	app_heap_free(heap, &left);
	if (left.blocks)
		shell_printf("run %s: %zu blocks (%zu bytes) it did not free were freed\n", a->name,
			     left.blocks, left.bytes);
	bad |= left.overrun != 0;
	if (left.overrun)
		shell_printf("run %s: heap corruption: %zu of them had been written outside their "
			     "bounds\n", a->name, left.overrun);
	return bad ? 1 : 0;
}

/* run NAME [-c CORES] [-s STACK] [-- ARGS...] for an app linked in with make APPS= */
static int run_app(const struct app *a, int argc, char **argv)
{
	uint64_t mask = 1, stack = 0;
	int i;

	for (i = 2; i < argc && strcmp(argv[i], "--"); i += 2) {
		if ((strcmp(argv[i], "-c") && strcmp(argv[i], "-s")) || i + 1 >= argc) {
			shell_eprintf("run: %s: options are -c CORES, -s STACK, then -- ARGS\n",
				      a->name);
			return -EINVAL;
		}
		if (!strcmp(argv[i], "-c") && parse_cores(argv[i + 1], &mask) < 0) {
			shell_eprintf("run: bad cores %s\n", argv[i + 1]);
			return -EINVAL;
		}
		if (!strcmp(argv[i], "-s") && (parse_size(argv[i + 1], 1, &stack) < 0 ||
					       stack < 16384 || stack > APP_STACK_MAX)) {
			shell_eprintf("run: bad stack %s: 16K..64M\n", argv[i + 1]);
			return -EINVAL;
		}
	}
	i += i < argc;		/* past "--" */
	return app_run(a, mask, stack, argc - i, argv + i);
}

/* Shell: `run` alone: every workload with what it does, then the apps linked in. */
static int run_list(void)
{
	shell_printf("workloads: run NAME [-c CORES] [-t SECONDS | -n UNITS]\n");
	for (const struct workload *k = workloads; k->name; k++)
		shell_printf("  %-10s %s (counts %s)\n", k->name, k->about, k->unit);
	shell_printf("apps: run NAME [-c CORES] [-s STACK] [-- ARGS...]\n");
	for (const struct app *k = app_table; k->name; k++)
		shell_printf("  %s\n", k->name);
	if (!app_table[0].name)
		shell_printf("  none linked in (make APPS=\"DIR ...\")\n");
	return 0;
}

/* Shell: a name that is neither a workload nor an app: say so, with the names there are. */
static int run_unknown(const char *name)
{
	shell_eprintf("run: no app %s (apps:", name);
	for (const struct workload *k = workloads; k->name; k++)
		shell_eprintf(" %s", k->name);
	for (const struct app *k = app_table; k->name; k++)
		shell_eprintf(" %s", k->name);
	shell_eprintf(")\n");
	return 1;
}

static int cmd_run(int argc, char **argv)
{
	const struct app *a;

	const struct workload *w;
	struct run_slot *slots;
	struct run_start rs = { 0 };
	volatile bool stop = false;
	uint64_t mask, ms;
	int n = 0, r;

	if (argc < 2)
		return run_list();
	if (!(w = workload_find(argv[1])) && (a = app_find(argv[1])))
		return run_app(a, argc, argv);
	if (!w)		/* before its options: they are a workload's or an app's */
		return run_unknown(argv[1]);
	if ((r = run_parse(argc, argv, &mask, &ms, &rs.work)))
		return r;
	slots = kzmalloc(64 * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (int c = 0; c < ncpus(); c++) {
		if (!(mask & (1ull << c)))
			continue;
		slots[n] = (struct run_slot){ .w = w, .rs = &rs, .stop = &stop, .core = c };
		slots[n].t = kthread_create(w->name, c, run_thread, &slots[n]);
		if (!slots[n].t) {
			stop = true;
			break;
		}
		n++;
	}
	r = run_wait(slots, n, &rs, ms, &stop);
	if (r == -EINTR)
		shell_eprintf("run: interrupted\n");
	run_report(w, slots, n, &rs);
	kfree(slots);
	return r == -EINTR ? 1 : 0;
}
SHELL_CMD("run", "run APP [-c CORES] [-t SECONDS | -n UNITS] | run NAME [-c CORES] [-s STACK] "
	  "[-- ARGS...]",
	  "run a built-in workload on CORES (all, N, A-B, list) for a time, or until each core did "
	  "UNITS (exact rates, for benchmarks); or an app built in with make APPS=: main once per "
	  "core, its status and time each. run alone lists the workloads and apps", cmd_run);
