/*
 * Shell commands on files: ls, cat, rm, mkdir, cd, pwd. They use the name space through
 * file descriptors (dev.h) and print through shell_printf, so "> FILE" captures them.
 * Errors are printed as "cmd: PATH: reason" and the command goes on with its next
 * argument; the return value reports the last error.
 */
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
#include "shell.h"
#include "thread.h"

#define CAT_BUF	65536

static void complain(const char *cmd, const char *path, int err)
{
	shell_eprintf("%s: %s: %s\n", cmd, path, strerror(err));
}

/* "drwxr-xr-x": the type (d, l, p, s, c or -) and the permission bits, as ls -l shows them. */
static void mode_string(uint32_t mode, char s[11])
{
	static const char rwx[] = "rwxrwxrwx";

	s[0] = mode & DMDIR ? 'd' : mode & DMSYMLINK ? 'l' : mode & DMNAMEDPIPE ? 'p' :
	       mode & DMSOCKET ? 's' : mode & DMDEVICE ? 'c' : '-';
	for (int i = 0; i < 9; i++)
		s[1 + i] = mode & (0400u >> i) ? rwx[i] : '-';
	s[10] = 0;
}

static void print_entry(const struct dir *d, bool lng)
{
	const char *tail = d->mode & DMDIR ? "/" : d->mode & DMSYMLINK ? "@" :
			   d->mode & DMNAMEDPIPE ? "|" : "";
	char mode[11];

	if (lng) {
		mode_string(d->mode, mode);
		shell_printf("%s %10lu %s%s\n", mode, (unsigned long)d->length, d->name, tail);
	} else {
		shell_printf("%s%s\n", d->name, tail);
	}
}

static int cmp_dir(const struct dir *a, const struct dir *b) { return strcmp(a->name, b->name); }

/* Insertion sort: directories are small, and this keeps ls output stable for tests. */
static void sort_dirs(struct dir *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && cmp_dir(&v[j - 1], &v[j]) > 0; j--) {
			struct dir t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

static int list_dir(const char *path, bool lng)
{
	size_t n = 0, cap = 16;
	struct dir *v = kmalloc(cap * sizeof(*v));
	int fd = kopen(path, OREAD), r;

	if (!v) {
		if (fd >= 0)
			kclose(fd);
		return -ENOMEM;
	}
	if (fd < 0) {
		kfree(v);
		return fd;
	}
	while ((r = kdirread(fd, &v[n])) > 0) {
		if (++n == cap) {
			struct dir *w = kmalloc(2 * cap * sizeof(*v));

			if (!w) {
				r = -ENOMEM;
				break;
			}
			memcpy(w, v, n * sizeof(*v));
			kfree(v);
			v = w;
			cap *= 2;
		}
	}
	kclose(fd);
	if (r == 0) {
		sort_dirs(v, n);
		for (size_t i = 0; i < n; i++)
			print_entry(&v[i], lng);
	}
	kfree(v);
	return r;
}

static int ls_one(const char *path, bool lng)
{
	struct dir d;
	int r = kstat(path, &d);

	if (r == 0)
		r = d.mode & DMDIR ? list_dir(path, lng) : (print_entry(&d, lng), 0);
	if (r < 0)
		complain("ls", path, r);
	return r;
}

static int cmd_ls(int argc, char **argv)
{
	bool lng = false;
	int i = 1, r = 0;

	if (argc > 1 && !strcmp(argv[1], "-l")) {
		lng = true;
		i++;
	}
	for (int j = i; j < argc; j++)
		if (argv[j][0] == '-')
			return -EINVAL;
	if (i == argc)
		return ls_one(".", lng) < 0 ? 1 : 0;
	for (; i < argc; i++)
		if (ls_one(argv[i], lng) < 0)
			r = 1;
	return r;
}
SHELL_CMD("ls", "ls [-l] [PATH...]", "list directories (-l: mode and size)", cmd_ls);

static int cat_one(const char *path, char *buf)
{
	int fd = kopen(path, OREAD);
	long n;

	if (fd < 0)
		return fd;
	while ((n = kread(fd, buf, CAT_BUF)) > 0)
		shell_write(buf, (size_t)n);
	kclose(fd);
	return n < 0 ? (int)n : 0;
}

static int cmd_cat(int argc, char **argv)
{
	char *buf;
	int r = 0;

	if (argc < 2)
		return -EINVAL;
	buf = kmalloc(CAT_BUF);
	if (!buf)
		return -ENOMEM;
	for (int i = 1; i < argc; i++) {
		int e = cat_one(argv[i], buf);

		if (e == -EINTR)
			break;
		if (e < 0) {
			complain("cat", argv[i], e);
			r = 1;
		}
	}
	kfree(buf);
	return r;
}
SHELL_CMD("cat", "cat FILE...", "print files", cmd_cat);

static int cmd_rm(int argc, char **argv)
{
	int r = 0;

	if (argc < 2)
		return -EINVAL;
	for (int i = 1; i < argc; i++) {
		int e = kremove(argv[i]);

		if (e < 0) {
			complain("rm", argv[i], e);
			r = 1;
		}
	}
	return r;
}
SHELL_CMD("rm", "rm PATH...", "remove files or empty directories", cmd_rm);

static int cmd_mkdir(int argc, char **argv)
{
	int r = 0;

	if (argc < 2)
		return -EINVAL;
	for (int i = 1; i < argc; i++) {
		int e = kmkdir(argv[i], 0755);

		if (e < 0) {
			complain("mkdir", argv[i], e);
			r = 1;
		}
	}
	return r;
}
SHELL_CMD("mkdir", "mkdir DIR...", "make directories", cmd_mkdir);

static int cmd_cd(int argc, char **argv)
{
	int r;

	if (argc > 2)
		return -EINVAL;
	r = kchdir(argc == 2 ? argv[1] : "/");
	if (r < 0) {
		complain("cd", argc == 2 ? argv[1] : "/", r);
		return 1;
	}
	return 0;
}
SHELL_CMD("cd", "cd [DIR]", "change the current directory (default /)", cmd_cd);

static int cmd_pwd(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return -EINVAL;
	shell_printf("%s\n", kgetcwd());
	return 0;
}
SHELL_CMD("pwd", "pwd", "print the current directory", cmd_pwd);
