/*
 * The shell's `oprofile` command: `oprofile stat` prints /dev/oprofilestat, `oprofile help`
 * lists the profiler's commands and settings from its own tables
 * (oprof_ctl_help); every other word is written with its arguments to /dev/oprofilectl,
 * exactly as a user could do by hand, and a refusal is printed as the ctl file explains it.
 */
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
#include "oprofile.h"
#include "shell.h"

static int print_file(const char *path)
{
	char buf[512];
	int fd = kopen(path, OREAD);
	long n;

	if (fd < 0)
		return fd;
	while ((n = kread(fd, buf, sizeof(buf))) > 0)
		shell_write(buf, (size_t)n);
	kclose(fd);
	return n < 0 ? (int)n : 0;
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
	shell_printf("oprofile stat | help | COMMAND [ARGS] | SETTING VALUE\n%s", text);
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
	if (join_args(argc, argv, line, sizeof(line)) < 0)
		return -EINVAL;
	if (!strcmp(argv[1], "stat"))
		return argc == 2 ? print_file("/dev/oprofilestat") : -EINVAL;
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
SHELL_CMD("oprofile", "oprofile stat | help | COMMAND [ARGS] | SETTING VALUE",
	  "control the sampling profiler ('oprofile help' lists its commands and settings)",
	  cmd_oprofile);
