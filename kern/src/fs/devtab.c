/*
 * /dev: a flat directory of device files served from a table, in the manner of Plan 9's
 * devtab and devgen. Each file is a struct devfile (dev.h) added at boot by its owner
 * (devcons.c, the profiler, ...) with devfs_add; qid path i + 1 names table entry i and
 * qid 0 is the directory. Reads and writes go straight to the file's functions, which
 * see the chan (so per-open state can live in chan->aux).
 */
#include "dev.h"
#include "error.h"
#include "lock.h"

#define NDEVFILE 32

static const struct devfile *files[NDEVFILE];
static int nfiles;
static struct spinlock devfs_lock = SPINLOCK_INIT("devfs");

void devfs_add(const struct devfile *f)
{
	spin_lock(&devfs_lock);
	if (nfiles == NDEVFILE)
		panic("devfs: table full adding %s", f->name);
	files[nfiles++] = f;
	spin_unlock(&devfs_lock);
}

static const struct devfile *file_of(struct chan *c)
{
	uint64_t i = c->qid.path;

	return i >= 1 && i <= (uint64_t)READ_ONCE(nfiles) ? files[i - 1] : NULL;
}

static int devfs_attach(struct chan *c, const char *spec)
{
	(void)spec;
	c->qid = (struct qid){ .path = 0, .type = QTDIR };
	return 0;
}

static int devfs_clone(struct chan *src, struct chan *dst)
{
	dst->qid = src->qid;
	return 0;
}

static int devfs_walk(struct chan *c, const char *name)
{
	if (c->qid.path != 0)
		return -ENOTDIR;
	for (int i = 0; i < READ_ONCE(nfiles); i++)
		if (!strcmp(files[i]->name, name)) {
			c->qid = (struct qid){ .path = (uint64_t)i + 1, .type = QTFILE };
			return 0;
		}
	return -ENOENT;
}

static int devfs_open(struct chan *c, int omode)
{
	const struct devfile *f = file_of(c);

	if (!f)
		return (omode & OMODE) == OREAD ? 0 : -EISDIR;
	if ((omode & OMODE) != OWRITE && !f->read)
		return -EACCES;
	if ((omode & OMODE) != OREAD && !f->write)
		return -EACCES;
	return f->open ? f->open(c, omode) : 0;
}

static int devfs_create(struct chan *c, const char *name, int omode, uint32_t perm)
{
	(void)c; (void)name; (void)omode; (void)perm;
	return -EPERM;
}

static long devfs_read(struct chan *c, void *buf, size_t n, uint64_t off)
{
	const struct devfile *f = file_of(c);

	if (!f)
		return -EISDIR;
	return f->read(c, buf, n, off);
}

static long devfs_write(struct chan *c, const void *buf, size_t n, uint64_t off)
{
	const struct devfile *f = file_of(c);

	if (!f)
		return -EISDIR;
	return f->write(c, buf, n, off);
}

static void devfs_close(struct chan *c)
{
	const struct devfile *f = file_of(c);

	if (f && c->mode >= 0 && f->close)
		f->close(c);
}

static void fill_dir(const struct devfile *f, uint64_t path, struct dir *d)
{
	memset(d, 0, sizeof(*d));
	if (!f) {
		strlcpy(d->name, "dev", sizeof(d->name));
		d->qid = (struct qid){ .path = 0, .type = QTDIR };
		d->mode = DMDIR | 0555;
		return;
	}
	strlcpy(d->name, f->name, sizeof(d->name));
	d->qid = (struct qid){ .path = path, .type = QTFILE };
	d->mode = f->perm;
	d->length = f->length ? f->length() : 0;
}

static int devfs_stat(struct chan *c, struct dir *d)
{
	fill_dir(file_of(c), c->qid.path, d);
	return 0;
}

static int devfs_remove(struct chan *c)
{
	(void)c;
	return -EPERM;
}

static int devfs_dirread(struct chan *c, uint64_t *cookie, struct dir *d)
{
	if (c->qid.path != 0)
		return -ENOTDIR;
	if (*cookie >= (uint64_t)READ_ONCE(nfiles))
		return 0;
	fill_dir(files[*cookie], *cookie + 1, d);
	(*cookie)++;
	return 1;
}

struct dev devfs = {
	.name = "dev",
	.attach = devfs_attach,
	.clone = devfs_clone,
	.walk = devfs_walk,
	.open = devfs_open,
	.create = devfs_create,
	.read = devfs_read,
	.write = devfs_write,
	.close = devfs_close,
	.stat = devfs_stat,
	.remove = devfs_remove,
	.dirread = devfs_dirread,
};
