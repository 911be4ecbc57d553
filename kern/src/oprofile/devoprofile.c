/*
 * The profiler's device files, in the manner of Plan 9's devkprof:
 *
 *	/dev/oprofile		the data stream (one reader at a time; see reader.c)
 *	/dev/oprofilectl	write command lines, one command per line (oprof_ctl); read
 *				back the outcome of this open's last write ("ok" or the
 *				first error)
 *	/dev/oprofilestat	"name value" lines, a snapshot taken when opened
 *
 * All run in the calling thread's context and may sleep.
 */
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
#include "oprofile.h"

#define CTL_MSG	256	/* longest message a ctl command leaves */

/* ---- /dev/oprofile ---- */

static int datafile_open(struct chan *c, int omode)
{
	(void)c;
	(void)omode;
	return oprof_open();
}

static long datafile_read(struct chan *c, void *buf, size_t n, uint64_t off)
{
	(void)c;
	(void)off;
	return oprof_read(buf, n);
}

static void datafile_close(struct chan *c)
{
	(void)c;
	oprof_close();
}

/* ---- /dev/oprofilectl ---- */

static int ctlfile_open(struct chan *c, int omode)
{
	(void)omode;
	c->aux = kzmalloc(CTL_MSG);
	if (!c->aux)
		return -ENOMEM;
	strlcpy(c->aux, "ok", CTL_MSG);
	return 0;
}

/*
 * A write holds one command per line (a last line without a newline counts). They run in
 * order; the first that fails stops the rest, and its error is the write's and the file's.
 */
static long ctlfile_write(struct chan *c, const void *buf, size_t n, uint64_t off)
{
	const char *p = buf, *end = p + n;
	char line[OPROF_CTL_LINE];

	(void)off;
	while (p < end) {
		const char *nl = p;
		size_t len;
		int r;

		while (nl < end && *nl != '\n')
			nl++;
		len = (size_t)(nl - p);
		if (len >= sizeof(line)) {
			snprintf(c->aux, CTL_MSG, "oprofile: command too long");
			return -EINVAL;
		}
		memcpy(line, p, len);
		line[len] = 0;
		if ((r = oprof_ctl(line, c->aux, CTL_MSG)) < 0)
			return r;
		p = nl + (nl < end);
	}
	strlcpy(c->aux, "ok", CTL_MSG);
	return (long)n;
}

static long text_read(const char *text, void *buf, size_t n, uint64_t off)
{
	size_t len = strlen(text);

	if (off >= len)
		return 0;
	n = MIN(n, len - (size_t)off);
	memcpy(buf, text + off, n);
	return (long)n;
}

static long ctlfile_read(struct chan *c, void *buf, size_t n, uint64_t off)
{
	char msg[CTL_MSG + 1];

	snprintf(msg, sizeof(msg), "%s\n", (char *)c->aux);
	return text_read(msg, buf, n, off);
}

static void aux_close(struct chan *c)
{
	kfree(c->aux);
	c->aux = NULL;
}

/* ---- /dev/oprofilestat ---- */

static int statfile_open(struct chan *c, int omode)
{
	size_t cap = 4096, len;

	(void)omode;
	for (;;) {
		char *text = kmalloc(cap);

		if (!text)
			return -ENOMEM;
		len = oprof_stat_text(text, cap);
		if (len < cap) {
			c->aux = text;
			return 0;
		}
		kfree(text);
		cap = len + 1;
	}
}

static long statfile_read(struct chan *c, void *buf, size_t n, uint64_t off)
{
	return text_read(c->aux, buf, n, off);
}

static const struct devfile datafile = {
	.name = "oprofile", .perm = 0444, .read = datafile_read,
	.open = datafile_open, .close = datafile_close,
};
static const struct devfile ctlfile = {
	.name = "oprofilectl", .perm = 0666, .read = ctlfile_read, .write = ctlfile_write,
	.open = ctlfile_open, .close = aux_close,
};
static const struct devfile statfile = {
	.name = "oprofilestat", .perm = 0444, .read = statfile_read,
	.open = statfile_open, .close = aux_close,
};

void devoprofile_init(void)
{
	devfs_add(&datafile);
	devfs_add(&ctlfile);
	devfs_add(&statfile);
}
