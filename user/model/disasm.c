/*
 * disasm.c: the instructions of an address range of the kernel ELF (disasm.h), from
 * binutils' objdump run as a child: `objdump -d -w --no-show-raw-insn --start-address=LO
 * --stop-address=HI ELF`. Its listing has one line per instruction, "ADDR:<tab>TEXT"; the
 * other lines (file format, section and symbol headers, blank lines) do not start with an
 * address and a colon and are skipped. The ELF path goes to objdump as an argument, never
 * through a shell. Called by --annotate once per report.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "model/disasm.h"

/* In the child: objdump's listing to fd, its complaints to /dev/null. Never returns. */
static void run_objdump(int fd, const char *path, uint64_t lo, uint64_t hi)
{
	char a[40], b[40];
	int null = open("/dev/null", O_WRONLY);

	snprintf(a, sizeof(a), "--start-address=0x%" PRIx64, lo);
	snprintf(b, sizeof(b), "--stop-address=0x%" PRIx64, hi);
	if (dup2(fd, 1) < 0 || (null >= 0 && dup2(null, 2) < 0))
		_exit(126);
	execlp("objdump", "objdump", "-d", "-w", "--no-show-raw-insn", a, b, path, (char *)NULL);
	_exit(127);
}

/* One listing line: an instruction into *in; 0 for any other line. */
static int parse_line(const char *l, struct insn *in)
{
	char *end;

	while (*l == ' ')
		l++;
	errno = 0;
	in->addr = strtoull(l, &end, 16);
	if (end == l || errno || end[0] != ':' || end[1] != '\t')
		return 0;
	snprintf(in->text, sizeof(in->text), "%s", end + 2);
	in->text[strcspn(in->text, "\n")] = 0;
	return 1;
}

/* Read the listing from f into *out; 0, or -1 (no memory). */
static int read_listing(FILE *f, struct insn **out, uint32_t *n)
{
	char *line = NULL;
	size_t cap = 0;
	uint32_t room = 0;
	struct insn in;

	while (getline(&line, &cap, f) > 0) {
		if (!parse_line(line, &in))
			continue;
		if (*n == room) {
			struct insn *o = realloc(*out, (room = room ? 2 * room : 64) * sizeof(*o));

			if (!o) {
				free(line);
				return -1;
			}
			*out = o;
		}
		(*out)[(*n)++] = in;
	}
	free(line);
	return 0;
}

int disasm_range(const char *path, uint64_t lo, uint64_t hi, struct insn **out, uint32_t *n,
		 char *err, size_t errlen)
{
	int fd[2], st = 0, rc;
	pid_t pid;
	FILE *f;

	*out = NULL;
	*n = 0;
	if (pipe(fd) || (pid = fork()) < 0) {
		snprintf(err, errlen, "cannot run objdump: %s", strerror(errno));
		return -1;
	}
	if (!pid)
		run_objdump(fd[1], path, lo, hi);
	close(fd[1]);
	if (!(f = fdopen(fd[0], "r"))) {
		close(fd[0]);
		waitpid(pid, &st, 0);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = read_listing(f, out, n);
	fclose(f);
	waitpid(pid, &st, 0);
	if (rc)
		snprintf(err, errlen, "out of memory");
	else if (!WIFEXITED(st) || WEXITSTATUS(st))
		snprintf(err, errlen, WIFEXITED(st) && WEXITSTATUS(st) == 127 ?
			 "objdump not found (binutils; scripts/deps installs it)" :
			 "objdump failed on %s", path);
	if (rc || !WIFEXITED(st) || WEXITSTATUS(st)) {
		free(*out);
		*out = NULL;
		*n = 0;
		return -1;
	}
	return 0;
}
