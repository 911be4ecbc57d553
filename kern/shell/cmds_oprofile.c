/*
 * The shell's `oprofile` command: `oprofile stat` prints /dev/oprofilestat; every other
 * word (start, stop, pause, resume, flush, snapshot, discard and the settings) is written
 * with its arguments to /dev/oprofilectl, exactly as a user could do by hand, and a
 * refusal is printed as the ctl file explains it.
 */
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
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

static int cmd_oprofile(int argc, char **argv)
{
	char line[160], msg[200];
	int fd;
	long r;

	if (argc < 2 || join_args(argc, argv, line, sizeof(line)) < 0)
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
SHELL_CMD("oprofile",
	  "oprofile start [-f HZ] [-d DEPTH] [-b BLOCKBYTES] [-s [-w BLOCKS]] | stop | pause | "
	  "resume | flush | snapshot | stat | discard | SETTING VALUE",
	  "control the sampling profiler (settings: hz depth blockbytes period cap stale "
	  "emptydepth window budget maxhz)",
	  cmd_oprofile);
