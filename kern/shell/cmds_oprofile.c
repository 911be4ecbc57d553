/*
 * The shell's `oprofile` command: `oprofile stat` reads /dev/oprofilestat (the "name value"
 * lines programs read) and prints it as a person reads it: the session on a few lines, then
 * a table with a row per core; `oprofile help` lists the profiler's commands and settings
 * from its own tables (oprof_ctl_help); every other word is written with its arguments to
 * /dev/oprofilectl, exactly as a user could do by hand, and a refusal is printed as the ctl
 * file explains it. `oprofile top` prints the profiler's live table (oprof_top_*, top.c)
 * every interval until its count or Ctrl-C.
 */
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
#include "oprofile.h"
#include "shell.h"
#include "thread.h"

#define TOP_USAGE	"oprofile top [-n ROWS] [-i SECONDS] [-c COUNT] [-p]"
#define STAT_MAX	(256 * 1024)	/* the stat file of 64 cores is about 70 KiB */

/* The whole of path into a new NUL-terminated buffer, or NULL with *err. */
static char *read_file(const char *path, int *err)
{
	char *text = kmalloc(STAT_MAX);
	size_t len = 0;
	int fd;
	long n = 0;

	*err = -ENOMEM;
	if (!text)
		return NULL;
	if ((fd = kopen(path, OREAD)) < 0) {
		*err = fd;
		kfree(text);
		return NULL;
	}
	while (len < STAT_MAX - 1 && (n = kread(fd, text + len, STAT_MAX - 1 - len)) > 0)
		len += (size_t)n;
	kclose(fd);
	if (n < 0) {
		*err = (int)n;
		kfree(text);
		return NULL;
	}
	text[len] = 0;
	return text;
}

/* The value of line "name value" in the stat text (as text), or "?" when there is none. */
static const char *stat_str(const char *text, const char *name, char *val, size_t n)
{
	size_t len = strlen(name);

	for (const char *p = text; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p)) {
		if (!strncmp(p, name, len) && p[len] == ' ') {
			size_t k = 0;

			for (p += len + 1; *p && *p != '\n' && k + 1 < n; p++)
				val[k++] = *p;
			val[k] = 0;
			return val;
		}
	}
	strlcpy(val, "?", n);
	return val;
}

static uint64_t stat_u64(const char *text, const char *name)
{
	char val[32];
	uint64_t v = 0;

	parse_u64(stat_str(text, name, val, sizeof(val)), &v);
	return v;
}

static uint64_t stat_cpu(const char *text, int core, const char *what)
{
	char name[48];

	snprintf(name, sizeof(name), "cpu%d.%s", core, what);
	return stat_u64(text, name);
}

/* The per-core table: what `opreport --stats` shows of a stream, live. */
static void print_cores(const char *text, int ncores)
{
	static const char *const cols[] = {
		"taken", "delivered", "lost_noblock", "lost_outfull", "lost_paused", "lost_other",
		"overwritten", "truncated", "depth_cut", "missed", "hz",
	};
	uint64_t sum[ARRAY_SIZE(cols)] = { 0 };

	shell_printf("core     taken delivered  no-block  out-full    paused     other  overwr"
		     "   trunc     cut    missed     hz  load\n");
	for (int i = 0; i < ncores; i++) {
		uint64_t load = stat_cpu(text, i, "load_permille");

		shell_printf("%4d", i);
		for (size_t k = 0; k < ARRAY_SIZE(cols); k++) {
			uint64_t v = stat_cpu(text, i, cols[k]);

			sum[k] += v;
			shell_printf(k < 6 ? " %9lu" : k < 9 ? " %7lu" : k == 9 ? " %9lu" : " %6lu",
				     (unsigned long)v);
		}
		shell_printf(" %3lu.%lu%%\n", (unsigned long)(load / 10), (unsigned long)(load % 10));
	}
	if (ncores > 1) {
		shell_printf(" all");
		for (size_t k = 0; k + 1 < ARRAY_SIZE(cols); k++)
			shell_printf(k < 6 ? " %9lu" : k < 9 ? " %7lu" : " %9lu", (unsigned long)sum[k]);
		shell_printf("\n");
	}
}

/* The machine and what its samples weigh, as opreport's header will name it. */
static void print_clock(const char *t)
{
	char m[32], h[32], c[32], s[8];

	stat_str(t, "clock", c, sizeof(c));
	shell_printf("machine: %s (hypervisor %s); clock: %s%s%s\n",
		     stat_str(t, "machine", m, sizeof(m)), stat_str(t, "hypervisor", h, sizeof(h)),
		     !strcmp(c, "instructions") ? "instructions, -icount shift=" : c,
		     !strcmp(c, "instructions") ? stat_str(t, "icount_shift", s, sizeof(s)) : "",
		     !strcmp(c, "emulation") ? " time (plain TCG: the default, ICOUNT=1, is instructions)" :
		     !strcmp(c, "hardware") ? " time" : "");
}

static int print_stat(void)
{
	char a[32], b[32], c[32], d[32];
	int err;
	char *t = read_file("/dev/oprofilestat", &err);
	int ncores;

	if (!t)
		return err;
	ncores = (int)stat_u64(t, "ncores");
	/* idle, the settings are the next start's; the counters below, the last session's */
	stat_str(t, "state", a, sizeof(a));
	shell_printf("oprofile: %s, %ssession %lu%s: %lu Hz per core by %s, depth %lu, "
		     "%lu-byte blocks, %s mode\n", a, strcmp(a, "idle") ? "" : "last ",
		     (unsigned long)stat_u64(t, "session"),
		     strcmp(a, "idle") ? "" : " below; a start now runs",
		     (unsigned long)stat_u64(t, "hz"),
		     strcmp(stat_str(t, "source", b, sizeof(b)), "nmi") ? "timer" : "NMI",
		     (unsigned long)stat_u64(t, "depth"),
		     (unsigned long)stat_u64(t, "block_bytes"), stat_str(t, "mode", c, sizeof(c)));
	shell_printf("output: %lu KiB queued in %lu blocks (cap %lu KiB), %lu bytes streamed, "
		     "%lu blocks dropped; reader %s\n",
		     (unsigned long)(stat_u64(t, "outq_mem") >> 10),
		     (unsigned long)stat_u64(t, "outq_blocks"),
		     (unsigned long)(stat_u64(t, "outq_cap") >> 10),
		     (unsigned long)stat_u64(t, "stream_bytes"),
		     (unsigned long)stat_u64(t, "blocks_dropped"),
		     stat_u64(t, "reader") ? "open" : "not open");
	if (!strcmp(stat_str(t, "mode", d, sizeof(d)), "snapshot"))
		shell_printf("flight recorder: %lu-block windows, %lu snapshots\n",
			     (unsigned long)stat_u64(t, "window"), (unsigned long)stat_u64(t, "snapshots"));
	print_clock(t);
	if (ncores > 0)
		print_cores(t, ncores);
	shell_printf("(every counter: cat /dev/oprofilestat)\n");
	kfree(t);
	return 0;
}

/* Join argv[1..] with spaces into line; -EINVAL if it does not fit. */
static int join_args(int argc, char **argv, char *line, size_t cap)
{
	size_t o = 0;

	line[0] = 0;
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]);

		if (o + n + 2 > cap)
			return -EINVAL;
		if (i > 1)
			line[o++] = ' ';
		memcpy(line + o, argv[i], n + 1);
		o += n;
	}
	return 0;
}

/* The language, listed from the profiler's tables. */
static int print_help(void)
{
	size_t n = 4096;
	char *text = kmalloc(n);

	if (text && oprof_ctl_help(text, n) >= n) {
		n = oprof_ctl_help(text, n) + 1;
		kfree(text);
		if ((text = kmalloc(n)))
			oprof_ctl_help(text, n);
	}
	if (!text)
		return -ENOMEM;
	shell_printf("oprofile stat | help | COMMAND [ARGS] | SETTING VALUE\n"
		     "  %-58s %s\n%s", TOP_USAGE + 9, "the hottest functions, live: ROWS of them "
		     "(10), every SECONDS (1), COUNT times (until Ctrl-C), -p a column per core",
		     text);
	kfree(text);
	return 0;
}

#define TOP_TEXT	(64 * 1024)	/* 50 rows of 64 cores' columns fit */

struct top_args {
	uint64_t rows, ms, count;	/* count 0: until Ctrl-C */
	bool percore;
};

/* One option's value in [min, max] (ms: seconds with fractions); false, said, if not. */
static bool top_value(const char *opt, const char *v, bool ms, uint64_t min, uint64_t max,
		      uint64_t *out)
{
	if (v && (ms ? parse_ms(v, out) : parse_u64(v, out)) == 0 && *out >= min && *out <= max)
		return true;
	if (ms)
		shell_eprintf("oprofile top: %s wants seconds from 0.1 to 3600 (e.g. 0.5), not '%s'\n",
			      opt, v ? v : "");
	else
		shell_eprintf("oprofile top: %s wants a number from %lu to %lu, not '%s'\n", opt,
			      (unsigned long)min, (unsigned long)max, v ? v : "");
	return false;
}

static bool top_parse(int argc, char **argv, struct top_args *a)
{
	*a = (struct top_args){ .rows = 10, .ms = 1000 };
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		bool ok = true;

		if (!strcmp(o, "-p"))
			a->percore = true;
		else if (!strcmp(o, "-n"))
			ok = top_value(o, v, false, 1, 50, &a->rows), i++;
		else if (!strcmp(o, "-i"))
			ok = top_value(o, v, true, 100, 3600 * 1000, &a->ms), i++;
		else if (!strcmp(o, "-c"))
			ok = top_value(o, v, false, 1, 1000000, &a->count), i++;
		else
			ok = (shell_eprintf("oprofile top: unknown option '%s'\n", o), false);
		if (!ok) {
			shell_eprintf("usage: %s\n", TOP_USAGE);
			return false;
		}
	}
	return true;
}

/*
 * `oprofile top`: a table every interval, COUNT times or until Ctrl-C (the sleep returns
 * -EINTR) or the session's end. The viewer is detached whichever way it ends.
 */
static int print_top(int argc, char **argv)
{
	struct top_args a;
	char err[200];
	char *text;

	if (!top_parse(argc, argv, &a))
		return 1;
	if (!(text = kmalloc(TOP_TEXT)))
		return -ENOMEM;
	if (oprof_top_begin(err, sizeof(err)) < 0) {
		shell_eprintf("%s\n", err);
		kfree(text);
		return 1;
	}
	for (uint64_t k = 1; !a.count || k <= a.count; k++) {
		long n;

		if (thread_sleep_us(a.ms * 1000) == -EINTR) {
			shell_printf("oprofile top: interrupted\n");
			break;
		}
		if ((n = oprof_top_take(text, TOP_TEXT, (unsigned)a.rows, a.percore)) < 0) {
			shell_printf("oprofile top: the session stopped\n");
			break;
		}
		if (a.count)
			shell_printf("\n[%lu/%lu] %s", (unsigned long)k, (unsigned long)a.count, text);
		else
			shell_printf("\n[%lu] %s", (unsigned long)k, text);
	}
	oprof_top_end();
	kfree(text);
	return 0;
}

static int cmd_oprofile(int argc, char **argv)
{
	char line[160], msg[300];
	int fd;
	long r;

	if (argc < 2)
		return -EINVAL;
	if (!strcmp(argv[1], "help"))
		return argc == 2 ? print_help() : -EINVAL;
	if (!strcmp(argv[1], "top"))
		return print_top(argc, argv);
	if (join_args(argc, argv, line, sizeof(line)) < 0)
		return -EINVAL;
	if (!strcmp(argv[1], "stat"))
		return argc == 2 ? print_stat() : -EINVAL;
	fd = kopen("/dev/oprofilectl", ORDWR);
	if (fd < 0)
		return fd;
	r = kwrite(fd, line, strlen(line));
	if (r < 0) {
		long n = kread(fd, msg, sizeof(msg) - 1);

		msg[n > 0 ? n : 0] = 0;
		shell_eprintf("%s", n > 0 ? msg : strerror((int)r));
		if (n <= 0)
			shell_eprintf("\n");
		r = 1;
	} else {
		r = 0;
	}
	kclose(fd);
	return (int)r;
}
SHELL_CMD("oprofile", "oprofile stat | top [-n ROWS] [-i SECONDS] [-c COUNT] [-p] | help | "
	  "COMMAND [ARGS] | SETTING VALUE",
	  "control the sampling profiler ('oprofile help' lists its commands and settings; "
	  "top: the hottest functions, live)",
	  cmd_oprofile);
