/*
 * dev9p: the host's directory, served to the name space (dev.h) through the 9P client.
 *
 * Each chan owns one fid (struct fidstate in chan->aux): attach makes a fid for the
 * export's root, clone walks a new fid with no names, walk moves the chan's own fid one
 * name down in place (Twalk with newfid == fid, which leaves the fid as it was when the
 * walk fails). open and create turn the fid into an open file (Tlopen, Tlcreate, Tmkdir);
 * close clunks it. An open directory also keeps a second, unopened fid (wfid) from which
 * dirread walks to each entry to stat it, since 9P does not walk from an open fid.
 *
 * Directory listing: the chan keeps the last Treaddir reply; dirread's cookie is the 9P
 * offset of the next entry, so a reply is reused as long as the caller continues where
 * it left off, and re-read from the cookie otherwise. "." and ".." are skipped.
 *
 * All functions run in thread context and sleep in RPCs; errors are the server's errno.
 * A chan is used by one thread at a time, except that several descriptors may share an
 * open chan: read, write and stat on it are independent RPCs and need no lock here, while
 * dirread's cache is only used through kdirread by one thread (the ns contract).
 */
#include "error.h"
#include "kmalloc.h"
#include "ninep.h"
#include "p9.h"

#define DIRBUF	8192	/* bytes per Treaddir */

struct fidstate {
	uint32_t fid;		/* P9_NOFID once Tremove has consumed it */
	uint32_t wfid;		/* open directories: unopened clone; else P9_NOFID */
	uint32_t iounit;	/* from Tlopen/Tlcreate; 0: use msize */
	bool open;
	char name[NAME_MAX + 1];	/* last path element, for stat; "/" at the root */
	uint8_t *dbuf;		/* DIRBUF bytes of the last Treaddir, NULL before the first */
	uint32_t dlen, dpos;	/* valid bytes in dbuf; next entry to parse */
	uint64_t dcookie;	/* 9P offset of the entry at dpos */
};

static struct p9_client *client(struct chan *c) { return c->devinst; }
static struct fidstate *fs_of(struct chan *c) { return c->aux; }

static struct fidstate *fs_new(uint32_t fid, const char *name)
{
	struct fidstate *fs = kzmalloc(sizeof(*fs));

	if (fs) {
		fs->fid = fid;
		fs->wfid = P9_NOFID;
		strlcpy(fs->name, name, sizeof(fs->name));
	}
	return fs;
}

/* spec names a mount tag; "" is the first 9P device. */
static struct p9_client *client_for(const char *spec)
{
	struct p9_client *p;

	for (int i = 0; (p = p9_client(i)); i++)
		if (!*spec || !strcmp(spec, p9_mount_tag(p)))
			return p;
	return NULL;
}

static int dev9p_attach(struct chan *c, const char *spec)
{
	struct p9_client *p = client_for(spec);
	uint32_t fid;
	int r;

	if (!p)
		return -ENODEV;
	fid = p9_fid_alloc(p);
	r = p9_attach(p, fid, &c->qid);
	if (r < 0)
		return r;
	c->aux = fs_new(fid, "/");
	if (!c->aux) {
		p9_clunk(p, fid);
		return -ENOMEM;
	}
	c->devinst = p;
	return 0;
}

static int dev9p_clone(struct chan *src, struct chan *dst)
{
	struct p9_client *p = client(src);
	uint32_t fid = p9_fid_alloc(p);
	struct qid q;
	int r = p9_walk(p, fs_of(src)->fid, fid, NULL, &q);

	if (r < 0)
		return r;
	dst->aux = fs_new(fid, fs_of(src)->name);
	if (!dst->aux) {
		p9_clunk(p, fid);
		return -ENOMEM;
	}
	dst->qid = src->qid;
	dst->devinst = p;
	return 0;
}

static int dev9p_walk(struct chan *c, const char *name)
{
	struct fidstate *fs = fs_of(c);
	struct qid q;
	int r;

	if (!(c->qid.type & QTDIR))
		return -ENOTDIR;
	r = p9_walk(client(c), fs->fid, fs->fid, name, &q);
	if (r < 0)
		return r;
	c->qid = q;
	strlcpy(fs->name, name, sizeof(fs->name));
	return 0;
}

static uint32_t lflags(int omode)
{
	static const uint32_t acc[] = { L_O_RDONLY, L_O_WRONLY, L_O_RDWR, L_O_RDONLY };
	uint32_t f = acc[omode & OMODE];

	if ((omode & OTRUNC) && (omode & OMODE) != OREAD)
		f |= L_O_TRUNC;
	if (omode & OAPPEND)
		f |= L_O_APPEND;	/* the host's pwrite then appends, whatever the offset */
	if (omode & OEXCL)
		f |= L_O_EXCL;
	return f;
}

/* Directories: read-only, and keep an unopened clone for dirread's walks. */
static int open_dir(struct chan *c, int omode)
{
	struct p9_client *p = client(c);
	struct fidstate *fs = fs_of(c);
	uint32_t wfid;
	struct qid q;
	int r;

	if ((omode & OMODE) != OREAD)
		return -EISDIR;
	wfid = p9_fid_alloc(p);
	r = p9_walk(p, fs->fid, wfid, NULL, &q);
	if (r < 0)
		return r;
	r = p9_lopen(p, fs->fid, L_O_RDONLY, &q, &fs->iounit);
	if (r < 0) {
		p9_clunk(p, wfid);
		return r;
	}
	fs->wfid = wfid;
	return 0;
}

/*
 * Only regular files and directories open: the host refuses anything else (and QEMU calls
 * such a client broken), so ask first and say what the file is. -ELOOP: a symbolic link
 * (the share follows none); -ENXIO: a FIFO, socket or device.
 */
static int open_check(struct chan *c)
{
	struct p9_attr a;
	int r = p9_getattr(client(c), fs_of(c)->fid, &a);

	if (r < 0)
		return r;
	switch (a.mode & L_S_IFMT) {
	case L_S_IFLNK:
		return -ELOOP;
	case L_S_IFIFO: case L_S_IFSOCK: case L_S_IFCHR: case L_S_IFBLK:
		return -ENXIO;
	}
	return 0;
}

static int dev9p_open(struct chan *c, int omode)
{
	struct fidstate *fs = fs_of(c);
	struct qid q;
	int r;

	if (c->qid.type & QTDIR)
		r = open_dir(c, omode);
	else if ((r = open_check(c)) == 0)
		r = p9_lopen(client(c), fs->fid, lflags(omode), &q, &fs->iounit);
	if (r == 0)
		fs->open = true;
	return r;
}

static int dev9p_create(struct chan *c, const char *name, int omode, uint32_t perm)
{
	struct fidstate *fs = fs_of(c);
	struct qid q;
	int r;

	if (!(c->qid.type & QTDIR))
		return -ENOTDIR;
	if (perm & DMDIR) {
		r = p9_mkdir(client(c), fs->fid, name, perm & 0777, &q);
		if (r == 0)
			r = dev9p_walk(c, name);
		return r < 0 ? r : dev9p_open(c, omode);
	}
	r = p9_lcreate(client(c), fs->fid, name, lflags(omode) | L_O_CREAT, perm & 0777, &q,
		       &fs->iounit);
	if (r < 0)
		return r;
	c->qid = q;
	strlcpy(fs->name, name, sizeof(fs->name));
	fs->open = true;
	return 0;
}

static long dev9p_read(struct chan *c, void *buf, size_t n, uint64_t off)
{
	struct fidstate *fs = fs_of(c);

	if (c->qid.type & QTDIR)
		return -EISDIR;
	if (!fs->open)
		return -EBADF;
	return p9_read(client(c), fs->fid, off, buf, n, fs->iounit);
}

static long dev9p_write(struct chan *c, const void *buf, size_t n, uint64_t off)
{
	struct fidstate *fs = fs_of(c);

	if (!fs->open)
		return -EBADF;
	return p9_write(client(c), fs->fid, off, buf, n, fs->iounit);
}

static void dev9p_close(struct chan *c)
{
	struct fidstate *fs = fs_of(c);

	if (!fs)
		return;
	if (fs->fid != P9_NOFID)
		p9_clunk(client(c), fs->fid);
	if (fs->wfid != P9_NOFID)
		p9_clunk(client(c), fs->wfid);
	kfree(fs->dbuf);
	kfree(fs);
	c->aux = NULL;
}

static void dir_fill(struct dir *d, const char *name, const struct p9_attr *a)
{
	strlcpy(d->name, name, sizeof(d->name));
	d->qid = a->qid;
	static const struct { uint32_t ifmt, dm; } types[] = {
		{ L_S_IFDIR, DMDIR }, { L_S_IFLNK, DMSYMLINK }, { L_S_IFIFO, DMNAMEDPIPE },
		{ L_S_IFSOCK, DMSOCKET }, { L_S_IFCHR, DMDEVICE }, { L_S_IFBLK, DMDEVICE },
	};

	d->mode = a->mode & 0777;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++)
		if ((a->mode & L_S_IFMT) == types[i].ifmt)
			d->mode |= types[i].dm;
	d->length = d->mode & DMDIR ? 0 : a->size;
	d->mtime = a->mtime;
}

static int dev9p_stat(struct chan *c, struct dir *d)
{
	struct p9_attr a;
	int r = p9_getattr(client(c), fs_of(c)->fid, &a);

	if (r == 0)
		dir_fill(d, fs_of(c)->name, &a);
	return r;
}

static int dev9p_remove(struct chan *c)
{
	struct fidstate *fs = fs_of(c);
	int r = p9_remove(client(c), fs->fid);

	fs->fid = P9_NOFID;		/* clunked by Tremove, success or not */
	return r;
}

/* Stat the entry name of the open directory c through its spare fid. */
static int child_stat(struct chan *c, const struct p9_dirent *e, struct dir *d)
{
	struct p9_client *p = client(c);
	uint32_t fid = p9_fid_alloc(p);
	struct p9_attr a;
	struct qid q;
	int r = p9_walk(p, fs_of(c)->wfid, fid, e->name, &q);

	if (r < 0)
		return r;
	r = p9_getattr(p, fid, &a);
	p9_clunk(p, fid);
	if (r == 0)
		dir_fill(d, e->name, &a);
	return r;
}

/* Make sure dbuf holds entries starting at cookie; 0 entries (end) or -errno. */
static long dir_fetch(struct chan *c, uint64_t cookie)
{
	struct fidstate *fs = fs_of(c);
	long r;

	if (fs->dbuf && fs->dpos < fs->dlen && fs->dcookie == cookie)
		return 1;
	if (!fs->dbuf && !(fs->dbuf = kmalloc(DIRBUF)))
		return -ENOMEM;
	r = p9_readdir(client(c), fs->fid, cookie, fs->dbuf, DIRBUF);
	fs->dlen = r > 0 ? (uint32_t)r : 0;
	fs->dpos = 0;
	fs->dcookie = cookie;
	return r;
}

static int dev9p_dirread(struct chan *c, uint64_t *cookie, struct dir *d)
{
	struct fidstate *fs = fs_of(c);
	struct p9_dirent e;
	char name[NAME_MAX + 1];
	long r;

	if (!fs->open || fs->wfid == P9_NOFID)
		return -EBADF;
	for (;;) {
		if ((r = dir_fetch(c, *cookie)) <= 0)
			return (int)r;
		if (p9_dirent_parse(fs->dbuf, fs->dlen, &fs->dpos, &e, name, sizeof(name)) < 0)
			return -EPROTO;
		*cookie = fs->dcookie = e.next;
		if (!strcmp(name, ".") || !strcmp(name, ".."))
			continue;
		if (child_stat(c, &e, d) < 0) {
			/* gone since the listing, or unreadable: list it by name anyway */
			struct p9_attr a = { .qid = e.qid, .mode = e.type == 4 ? L_S_IFDIR : 0 };

			dir_fill(d, name, &a);
		}
		return 1;
	}
}

struct dev dev9p = {
	.name = "9p",
	.attach = dev9p_attach,
	.clone = dev9p_clone,
	.walk = dev9p_walk,
	.open = dev9p_open,
	.create = dev9p_create,
	.read = dev9p_read,
	.write = dev9p_write,
	.close = dev9p_close,
	.stat = dev9p_stat,
	.remove = dev9p_remove,
	.dirread = dev9p_dirread,
};

/* ---- boot ---- */

int ninep_init(void)
{
	struct p9_client *p;
	int n = p9_probe();

	if (n == 0)
		return -ENODEV;
	for (int i = 0; (p = p9_client(i)); i++)
		if (!strcmp(p9_mount_tag(p), "host"))
			return ns_mount("/host", &dev9p, "host");
	return -ENOENT;
}
