/*
 * The plain device files: /dev/cons (the serial console: reads return one input line,
 * writes print), /dev/null (reads end of file, writes vanish) and /dev/zero (reads zeros).
 */
#include "cons.h"
#include "dev.h"
#include "error.h"
#include "thread.h"

/* One line of console input (up to n bytes), newline included; -EINTR on Ctrl-C. */
static long cons_read(struct chan *c, void *buf, size_t n, uint64_t off)
{
	char *p = buf;
	size_t got = 0;

	(void)c;
	(void)off;
	while (got < n) {
		int ch = cons_getc_intr();

		if (ch < 0)
			return got ? (long)got : ch;
		if (ch == 0x04 && got == 0)	/* Ctrl-D: end of file */
			return 0;
		if (ch == '\r')
			ch = '\n';
		cons_write((char *)&ch, 1);
		p[got++] = (char)ch;
		if (ch == '\n')
			break;
	}
	return (long)got;
}

static long cons_fwrite(struct chan *c, const void *buf, size_t n, uint64_t off)
{
	(void)c;
	(void)off;
	cons_write(buf, n);
	return (long)n;
}

static long null_read(struct chan *c, void *buf, size_t n, uint64_t off)
{
	(void)c; (void)buf; (void)n; (void)off;
	return 0;
}

static long null_write(struct chan *c, const void *buf, size_t n, uint64_t off)
{
	(void)c; (void)buf; (void)off;
	return (long)n;
}

static long zero_read(struct chan *c, void *buf, size_t n, uint64_t off)
{
	(void)c;
	(void)off;
	memset(buf, 0, n);
	return (long)n;
}

static const struct devfile cons_file = {
	.name = "cons", .perm = 0666, .read = cons_read, .write = cons_fwrite,
};
static const struct devfile null_file = {
	.name = "null", .perm = 0666, .read = null_read, .write = null_write,
};
static const struct devfile zero_file = {
	.name = "zero", .perm = 0444, .read = zero_read, .write = null_write,
};

void devcons_init(void)
{
	devfs_add(&cons_file);
	devfs_add(&null_file);
	devfs_add(&zero_file);
}
