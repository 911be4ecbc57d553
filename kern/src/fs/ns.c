/*
 * The name space and file descriptors (dev.h).
 *
 * Mounts are set up at boot (thread context) and only ever added: a mount binds an
 * absolute path to the root chan of a device instance. Resolving a path cleans it
 * lexically (".", "..", repeated slashes, like Plan 9's cleanname), takes the mount with
 * the longest matching prefix, clones its root and walks the rest one name at a time.
 *
 * Each thread owns a struct fstate (descriptors and current directory), touched only by
 * that thread, except when a new thread copies its creator's. Chans are shared between
 * descriptors (dup, inheritance) by reference count; the last kclose closes the chan at
 * its device.
 */
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
#include "lock.h"
#include "sched.h"
#include "thread.h"

#define NMOUNT		16
#define PATH_MAX	256

struct mount {
	char path[PATH_MAX];
	size_t len;
	struct dev *dev;
	struct chan root;	/* never opened; cloned for every walk */
};

struct fstate {
	struct chan *fd[NFD];
	char cwd[PATH_MAX];
};

static struct mount mounts[NMOUNT];
static int nmounts;
static struct spinlock mount_lock = SPINLOCK_INIT("mounts");


static struct fstate *my_fs(void)
{
	struct thread *t = current();

	return t ? *thread_fstate(t) : NULL;
}

/* ---- chans ---- */

static struct chan *chan_new(struct dev *d)
{
	struct chan *c = kzmalloc(sizeof(*c));

	if (c) {
		c->dev = d;
		c->mode = -1;
		c->ref = 1;
	}
	return c;
}

static void chan_put(struct chan *c)
{
	if (__atomic_sub_fetch(&c->ref, 1, __ATOMIC_ACQ_REL) == 0) {
		c->dev->close(c);
		kfree(c);
	}
}

/* ---- paths ---- */

/*
 * Clean path (relative to cwd) into abs: absolute, no "." or "..", no repeated or
 * trailing slash. -ENAMETOOLONG if it does not fit.
 */
int ns_abspath(const char *path, char *abs, size_t n)
{
	char tmp[PATH_MAX * 2];
	size_t o = 0;		/* abs[0..o) is "/a/b" without the trailing NUL; "" is root */
	const char *p = tmp, *name;

	if (!path || !*path)
		return -ENOENT;
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s/%s", path[0] == '/' ? "" : kgetcwd(),
			     path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		name = p;
		while (*p && *p != '/')
			p++;
		len = (size_t)(p - name);
		if (len == 0 || (len == 1 && name[0] == '.'))
			continue;
		if (len == 2 && name[0] == '.' && name[1] == '.') {
			while (o > 0 && abs[--o] != '/')
				;
			continue;
		}
		if (len > NAME_MAX || o + 1 + len + 1 > n)
			return -ENAMETOOLONG;
		abs[o++] = '/';
		memcpy(abs + o, name, len);
		o += len;
	}
	if (o == 0)
		abs[o++] = '/';
	abs[o] = 0;
	return 0;
}

/* The mount with the longest prefix of abs; *rest points at what remains ("" or "a/b"). */
static struct mount *mount_of(const char *abs, const char **rest)
{
	struct mount *best = NULL;

	spin_lock(&mount_lock);
	for (int i = 0; i < nmounts; i++) {
		struct mount *m = &mounts[i];
		size_t l = m->len;

		if (l == 1 && abs[0] == '/') {		/* "/" matches everything */
			if (!best)
				best = m;
			continue;
		}
		if (!strncmp(abs, m->path, l) && (abs[l] == 0 || abs[l] == '/'))
			if (!best || l > best->len)
				best = m;
	}
	spin_unlock(&mount_lock);
	if (best) {
		*rest = abs + (best->len == 1 ? 1 : best->len);
		while (**rest == '/')
			(*rest)++;
	}
	return best;
}

/* Walk abs (cleaned) to a new unopened chan. */
static int walk_abs(const char *abs, struct chan **out)
{
	const char *rest, *p;
	struct mount *m = mount_of(abs, &rest);
	struct chan *c;
	char name[NAME_MAX + 1];
	int r;

	if (!m)
		return -ENOENT;
	c = chan_new(m->dev);
	if (!c)
		return -ENOMEM;
	r = m->dev->clone(&m->root, c);
	if (r < 0) {
		kfree(c);
		return r;
	}
	for (p = rest; *p && r == 0;) {
		size_t len = 0;

		while (p[len] && p[len] != '/')
			len++;
		memcpy(name, p, len);
		name[len] = 0;
		p += len;
		while (*p == '/')
			p++;
		r = c->dev->walk(c, name);
	}
	if (r < 0) {
		chan_put(c);
		return r;
	}
	*out = c;
	return 0;
}

static int walk_path(const char *path, struct chan **out)
{
	char abs[PATH_MAX];
	int r = ns_abspath(path, abs, sizeof(abs));

	return r < 0 ? r : walk_abs(abs, out);
}

/* Split cleaned abs into its parent's chan and the last name. */
static int walk_parent(const char *path, struct chan **parent, char *name)
{
	char abs[PATH_MAX];
	char *slash;
	int r = ns_abspath(path, abs, sizeof(abs));

	if (r < 0)
		return r;
	if (!strcmp(abs, "/"))
		return -EEXIST;
	slash = strrchr(abs, '/');
	strlcpy(name, slash + 1, NAME_MAX + 1);
	if (slash == abs)
		slash[1] = 0;
	else
		*slash = 0;
	return walk_abs(abs, parent);
}

/* ---- mounts ---- */

int ns_mount(const char *path, struct dev *d, const char *spec)
{
	struct mount *m;
	int r;

	if (nmounts == NMOUNT)
		return -ENOSPC;
	if (strcmp(path, "/")) {
		struct dir st;

		r = kstat(path, &st);
		if (r == -ENOENT)
			r = kmkdir(path, 0755);
		if (r < 0)
			return r;
	}
	m = &mounts[nmounts];
	memset(m, 0, sizeof(*m));
	strlcpy(m->path, path, sizeof(m->path));
	m->len = strlen(m->path);
	m->dev = d;
	m->root.dev = d;
	m->root.mode = -1;
	m->root.ref = 1;
	r = d->attach(&m->root, spec);
	if (r < 0)
		return r;
	spin_lock(&mount_lock);
	nmounts++;
	spin_unlock(&mount_lock);
	return 0;
}

/* ---- descriptors ---- */

/* Descriptors 0-2 are the standard ones: only kdup2 puts a chan there. */
static int fd_install(struct chan *c)
{
	struct fstate *fs = my_fs();

	for (int i = 3; fs && i < NFD; i++)
		if (!fs->fd[i]) {
			fs->fd[i] = c;
			return i;
		}
	chan_put(c);
	return -EMFILE;
}

static struct chan *fd_get(int fd)
{
	struct fstate *fs = my_fs();

	if (!fs || fd < 0 || fd >= NFD)
		return NULL;
	return fs->fd[fd];
}

static int open_chan(struct chan *c, int omode)
{
	int r = c->dev->open(c, omode);

	if (r < 0) {
		chan_put(c);
		return r;
	}
	c->mode = omode;
	return fd_install(c);
}

int kopen(const char *path, int omode)
{
	struct chan *c;
	int r = walk_path(path, &c);

	return r < 0 ? r : open_chan(c, omode);
}

int kcreate(const char *path, int omode, uint32_t perm)
{
	char name[NAME_MAX + 1];
	struct chan *c;
	int r = walk_path(path, &c);

	if (r == 0) {
		if (omode & OEXCL) {
			chan_put(c);
			return -EEXIST;
		}
		return open_chan(c, omode);
	}
	if (r != -ENOENT)
		return r;
	r = walk_parent(path, &c, name);
	if (r < 0)
		return r;
	r = c->dev->create(c, name, omode & ~OEXCL, perm);
	if (r < 0) {
		chan_put(c);
		return r;
	}
	c->mode = omode & ~OEXCL;
	return fd_install(c);
}

long kread(int fd, void *buf, size_t n)
{
	struct chan *c = fd_get(fd);
	long r;

	if (!c)
		return -EBADF;
	if ((c->mode & OMODE) == OWRITE)
		return -EBADF;
	r = c->dev->read(c, buf, n, c->offset);
	if (r > 0)
		c->offset += (uint64_t)r;
	return r;
}

long kwrite(int fd, const void *buf, size_t n)
{
	struct chan *c = fd_get(fd);
	size_t done = 0;

	if (!c)
		return -EBADF;
	if ((c->mode & OMODE) == OREAD)
		return -EBADF;
	while (done < n) {
		long r = c->dev->write(c, (const char *)buf + done, n - done, c->offset);

		if (r == 0)
			r = -EIO;
		if (r < 0) {
			/* the first error stays: a command's later writes must not hide it */
			__atomic_compare_exchange_n(&c->werr, &(int){ 0 }, (int)r, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			return r;
		}
		done += (size_t)r;
		c->offset += (uint64_t)r;
	}
	return (long)n;
}

int kwerror(int fd)
{
	struct chan *c = fd_get(fd);

	return c ? __atomic_load_n(&c->werr, __ATOMIC_RELAXED) : 0;
}

int kclose(int fd)
{
	struct fstate *fs = my_fs();
	struct chan *c = fd_get(fd);

	if (!c)
		return -EBADF;
	fs->fd[fd] = NULL;
	chan_put(c);
	return 0;
}

int kdup2(int oldfd, int newfd)
{
	struct fstate *fs = my_fs();
	struct chan *c = fd_get(oldfd);

	if (!c || newfd < 0 || newfd >= NFD)
		return -EBADF;
	if (oldfd == newfd)
		return newfd;
	__atomic_add_fetch(&c->ref, 1, __ATOMIC_ACQ_REL);
	if (fs->fd[newfd])
		chan_put(fs->fd[newfd]);
	fs->fd[newfd] = c;
	return newfd;
}

int kstat(const char *path, struct dir *d)
{
	struct chan *c;
	int r = walk_path(path, &c);

	if (r < 0)
		return r;
	r = c->dev->stat(c, d);
	chan_put(c);
	return r;
}

int kremove(const char *path)
{
	char abs[PATH_MAX];
	const char *rest;
	struct chan *c;
	int r = ns_abspath(path, abs, sizeof(abs));

	if (r < 0)
		return r;
	if (mount_of(abs, &rest) && !*rest)
		return -EBUSY;		/* a mount point */
	r = walk_abs(abs, &c);
	if (r < 0)
		return r;
	r = c->dev->remove(c);
	chan_put(c);
	return r;
}

int kmkdir(const char *path, uint32_t perm)
{
	char name[NAME_MAX + 1];
	struct chan *c;
	int r = walk_path(path, &c);

	if (r == 0) {
		chan_put(c);
		return -EEXIST;
	}
	r = walk_parent(path, &c, name);
	if (r < 0)
		return r;
	r = c->dev->create(c, name, OREAD, perm | DMDIR);
	chan_put(c);
	return r;
}

int kdirread(int fd, struct dir *d)
{
	struct chan *c = fd_get(fd);

	if (!c)
		return -EBADF;
	if (!(c->qid.type & QTDIR))
		return -ENOTDIR;
	return c->dev->dirread(c, &c->offset, d);
}

int kchdir(const char *path)
{
	char abs[PATH_MAX];
	struct fstate *fs = my_fs();
	struct dir d;
	int r = ns_abspath(path, abs, sizeof(abs));

	if (r < 0)
		return r;
	r = kstat(abs, &d);
	if (r < 0)
		return r;
	if (!(d.mode & DMDIR))
		return -ENOTDIR;
	if (fs)
		strlcpy(fs->cwd, abs, sizeof(fs->cwd));
	return 0;
}

const char *kgetcwd(void)
{
	struct fstate *fs = my_fs();

	return fs ? fs->cwd : "/";
}

struct fstate *fstate_new(struct fstate *from)
{
	struct fstate *fs = kzmalloc(sizeof(*fs));

	if (!fs)
		return NULL;
	strlcpy(fs->cwd, from ? from->cwd : "/", sizeof(fs->cwd));
	for (int i = 0; from && i < NFD; i++)
		if ((fs->fd[i] = from->fd[i]))
			__atomic_add_fetch(&fs->fd[i]->ref, 1, __ATOMIC_ACQ_REL);
	return fs;
}

void fstate_free(struct fstate *fs)
{
	if (!fs)
		return;
	for (int i = 0; i < NFD; i++)
		if (fs->fd[i])
			chan_put(fs->fd[i]);
	kfree(fs);
}
