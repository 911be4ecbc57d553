/*
 * Shell commands about the system itself: help (with run's workloads and apps), echo, cpus,
 * nmi, mem, uptime, poweroff, fault.
 * Each is a row of the shell table (SHELL_CMD) and prints in a fixed, greppable format;
 * wrong arguments return -EINVAL so the shell prints the usage line. Only "fault" (which
 * exists to do so) and "poweroff" end the kernel.
 */
#include "kernel.h"
#include "app.h"
#include "arch.h"
#include "error.h"
#include "kmalloc.h"
#include "page.h"
#include "shell.h"
#include "thread.h"
#include "workloads.h"

/* ---- help ---- */

/* The command after prev in name order (NULL: the first), or NULL after the last. */
static const struct cmd *cmd_next_by_name(const struct cmd *prev)
{
	const struct cmd *best = NULL;

	for (const struct cmd *c = __start_shell_cmds; c < __stop_shell_cmds; c++) {
		if (prev && strcmp(c->name, prev->name) <= 0)
			continue;
		if (!best || strcmp(c->name, best->name) < 0)
			best = c;
	}
	return best;
}

static void help_one(const struct cmd *c)
{
	shell_printf("%-40s %s\n", c->usage, c->help);
}

/* Under the commands: what run runs, from its tables (`run` alone says what each does). */
static void help_run_names(void)
{
	shell_printf("  run's workloads:");
	for (const struct workload *w = workloads; w->name; w++)
		shell_printf(" %s", w->name);
	shell_printf("\n  run's apps:");
	for (const struct app *a = app_table; a->name; a++)
		shell_printf(" %s", a->name);
	shell_printf("%s\n", app_table[0].name ? "" : " none linked in (make APPS=\"DIR ...\")");
}

/* Sorted by selection (no array, so no limit on the table): the table is small. */
static int cmd_help(int argc, char **argv)
{
	const struct cmd *c;

	if (argc > 2)
		return -EINVAL;
	if (argc == 2) {
		if (!(c = shell_lookup(argv[1]))) {
			shell_eprintf("help: unknown command: %s\n", argv[1]);
			return -ENOENT;
		}
		help_one(c);
		return 0;
	}
	for (c = cmd_next_by_name(NULL); c; c = cmd_next_by_name(c))
		help_one(c);
	help_run_names();
	return 0;
}
SHELL_CMD("help", "help [COMMAND]", "list the commands, or describe one", cmd_help);

/* ---- echo ---- */

/* One write of the whole line: a file (a ctl file) sees the line, not its words. */
static int cmd_echo(int argc, char **argv)
{
	char *line = kmalloc(SHELL_LINE_MAX + 1);	/* too big for a thread's stack */
	size_t o = 0;

	if (!line)
		return -ENOMEM;
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]);

		if (o + n + 1 >= SHELL_LINE_MAX + 1) {	/* cannot happen: the line held them */
			kfree(line);
			return -EINVAL;
		}
		memcpy(line + o, argv[i], n);
		o += n;
		line[o++] = i + 1 < argc ? ' ' : '\n';
	}
	if (argc == 1)
		line[o++] = '\n';
	shell_write(line, o);
	kfree(line);
	return 0;
}
SHELL_CMD("echo", "echo [ARGS...]", "print the arguments", cmd_echo);

/* ---- status ---- */

/* The previous line's result, for scripts (scripts/profile): "status 0" when it succeeded,
 * else "status R" and, for an error (R < 0), its text. */
static int cmd_status(int argc, char **argv)
{
	int r = shell_last_status();

	(void)argv;
	if (argc != 1)
		return -EINVAL;
	if (r < 0)
		shell_printf("status %d %s\n", r, strerror(r));
	else
		shell_printf("status %d\n", r);
	return 0;
}
SHELL_CMD("status", "status", "the result of the previous command: 0 or its error", cmd_status);

/* ---- cpus ---- */

static int cmd_cpus(int argc, char **argv)
{
	int n = ncpus();

	(void)argv;
	if (argc != 1)
		return -EINVAL;
	for (int i = 0; i < n; i++)
		shell_printf("cpu %d apic %d\n", i, arch_cpu_apic_id(i));
	shell_printf("%d cpus online\n", n);
	return 0;
}
SHELL_CMD("cpus", "cpus", "list the online cores and their APIC ids", cmd_cpus);

/* ---- nmi ---- */

/*
 * Per core, the NMIs taken since boot, how many hit with interrupts off, and how many were
 * ignored because they came before the core was online or began no timer period:
 *	cpu 0 nmi 1234 irqoff 1000 early 0 extra 0
 */
static int cmd_nmi(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return -EINVAL;
	for (int i = 0; i < ncpus(); i++) {
		uint64_t off, n = arch_nmi_count(i, &off);

		shell_printf("cpu %d nmi %lu irqoff %lu early %lu extra %lu\n", i,
			     (unsigned long)n, (unsigned long)off,
			     (unsigned long)arch_nmi_early_count(i),
			     (unsigned long)arch_nmi_extra_count(i));
	}
	return 0;
}
SHELL_CMD("nmi", "nmi", "NMIs each core has taken: all, with interrupts off, ignored",
	  cmd_nmi);

/* ---- mem ---- */

static uint64_t kib_of_pages(size_t pages)
{
	return (uint64_t)pages * (PGSIZE / 1024);
}

/*
 * One line, always the same shape:
 *	mem: total N KiB, free N KiB, heap N KiB in use (N allocations live), heap holds N pages
 * "heap holds" is what the heap really takes from the page allocator (slabs, the cached
 * empty ones included, and large allocations). With -v a second line with the heap's view.
 */
static int cmd_mem(int argc, char **argv)
{
	struct heap_stats hs;
	bool verbose = argc == 2 && !strcmp(argv[1], "-v");

	if (argc > 2 || (argc == 2 && !verbose))
		return -EINVAL;
	kmalloc_stats(&hs);
	shell_printf("mem: total %llu KiB, free %llu KiB, heap %llu KiB in use "
		     "(%llu allocations live), heap holds %llu pages\n",
		     (unsigned long long)kib_of_pages(pages_total()),
		     (unsigned long long)kib_of_pages(pages_free_count()),
		     (unsigned long long)((hs.bytes_in_use + 1023) / 1024),
		     (unsigned long long)(hs.allocs - hs.frees), (unsigned long long)hs.pages);
	if (verbose)
		shell_printf("heap: %llu KiB held in %llu pages (%llu slabs, %llu empty cached, "
			     "%llu returned), %llu bytes in use, %llu allocs, %llu frees\n",
			     (unsigned long long)kib_of_pages(hs.pages),
			     (unsigned long long)hs.pages, (unsigned long long)hs.slabs,
			     (unsigned long long)hs.empty_slabs,
			     (unsigned long long)hs.slabs_returned,
			     (unsigned long long)hs.bytes_in_use,
			     (unsigned long long)hs.allocs, (unsigned long long)hs.frees);
	return 0;
}
SHELL_CMD("mem", "mem [-v]", "physical memory and heap usage", cmd_mem);

/* ---- uptime ---- */

static int cmd_uptime(int argc, char **argv)
{
	uint64_t ms = nsec() / 1000000;

	(void)argv;
	if (argc != 1)
		return -EINVAL;
	shell_printf("up %llu.%03llu s\n", (unsigned long long)(ms / 1000),
		     (unsigned long long)(ms % 1000));
	return 0;
}
SHELL_CMD("uptime", "uptime", "time since boot", cmd_uptime);

/* ---- poweroff ---- */

static int cmd_poweroff(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return -EINVAL;
	shell_printf("powering off\n");
	arch_poweroff();
}
SHELL_CMD("poweroff", "poweroff", "turn the machine off (QEMU exits with status 0)",
	  cmd_poweroff);

/* ---- fault ---- */

#define FAULT_ADDR	0xdead0000000ul	/* far above the identity map: never mapped */

/*
 * A write through an unmapped address: a page fault, which the trap handler turns into a
 * panic with a backtrace. Global, noinline and noipa (no clones such as .constprop) so
 * that the backtrace names exactly this function.
 */
void fault_deliberately(void);
__attribute__((noinline, noipa)) void fault_deliberately(void)
{
	volatile uint64_t *p = (volatile uint64_t *)FAULT_ADDR;

	*p = 0xdeadbeef;
}

/*
 * `fault -n`: the same fault, taken inside the NMI handler of the shell's core (NMIs at
 * 100 Hz, whose function faults on that core only, so one report is printed). Global,
 * noinline and noipa like fault_deliberately, so the backtrace names it.
 */
static int nmi_fault_core = -1;

void fault_in_nmi(const struct trapframe *tf);
__attribute__((noinline, noipa)) void fault_in_nmi(const struct trapframe *tf)
{
	(void)tf;
	if (core_id() == READ_ONCE(nmi_fault_core))
		fault_deliberately();
}

static int fault_nmi(void)
{
	int r;

	WRITE_ONCE(nmi_fault_core, core_id());		/* the shell's thread is pinned */
	/* said before the NMIs start: the fault may come before a later line is out */
	shell_printf("fault: the next NMI on cpu %d writes to %p\n", core_id(),
		     (void *)FAULT_ADDR);
	if ((r = arch_nmi_start(100, fault_in_nmi)) < 0) {
		shell_eprintf("fault: cannot start NMIs: %s\n",
			      r == -ENODEV ? "this machine has no NMI timer route" : strerror(r));
		return 1;
	}
	thread_sleep_us(1000000);
	arch_nmi_stop();
	shell_eprintf("fault: no NMI came within a second\n");
	return 1;
}

/*
 * `fault -0`: a read through a NULL pointer in kernel code, which must fault like any
 * other (page 0 is unmapped) rather than return what low memory holds. The pointer is a
 * global so that the compiler emits the load as written.
 */
uint64_t *volatile fault_null_ptr;
uint64_t fault_null_read(void);
__attribute__((noinline, noipa)) uint64_t fault_null_read(void)
{
	return *fault_null_ptr;
}

static int cmd_fault(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "-n"))
		return fault_nmi();
	if (argc == 2 && !strcmp(argv[1], "-0")) {
		shell_printf("fault: reading through a NULL pointer\n");
		shell_printf("fault: read %lx: page 0 is mapped\n", (unsigned long)fault_null_read());
		return 1;
	}
	if (argc != 1)
		return -EINVAL;
	shell_printf("fault: writing to %p\n", (void *)FAULT_ADDR);
	fault_deliberately();
	return 0;
}
SHELL_CMD("fault", "fault [-n | -0]",
	  "take a deliberate page fault, with -n inside an NMI handler, with -0 a NULL read "
	  "(panics the kernel)",
	  cmd_fault);
