/*
 * The root file system: an in-memory tree. One qlock guards the whole tree (operations
 * are short and happen in thread context). A node stays allocated while chans refer to
 * it: remove unlinks it from its directory and the last chan frees it. File data is one
 * heap buffer grown by doubling.
 */
#include "dev.h"
#include "error.h"
#include "kmalloc.h"
#include "qlock.h"

struct node {
	char name[NAME_MAX + 1];
	bool isdir;
	uint32_t perm;
	uint64_t qpath;
	uint8_t *data;		/* files: contents */
	size_t len, cap;
	struct node *parent;	/* NULL for the root and for removed nodes */
	struct node *child;	/* directories: first entry */
	struct node *sib;	/* next entry in the parent */
	int ref;		/* chans naming it, plus one while linked in the tree */
};

static struct qlock fs_lock;
static struct node *root;
static uint64_t next_qpath = 1;

static struct node *node_new(const char *name, bool isdir, uint32_t perm)
{
	struct node *n = kzmalloc(sizeof(*n));

	if (!n)
		return NULL;
	strlcpy(n->name, name, sizeof(n->name));
	n->isdir = isdir;
	n->perm = perm & 0777;
	n->qpath = next_qpath++;
	n->ref = 1;
	return n;
}

/* fs_lock held */
static void node_put(struct node *n)
{
	if (--n->ref == 0) {
		kfree(n->data);
		kfree(n);
	}
}

static struct qid qid_of(struct node *n)
{
	return (struct qid){ .path = n->qpath, .type = n->isdir ? QTDIR : QTFILE };
}

static void set_node(struct chan *c, struct node *n)
{
	c->aux = n;
	c->qid = qid_of(n);
}

static int ramfs_attach(struct chan *c, const char *spec)
{
	(void)spec;
	qlock(&fs_lock);
	if (!root) {
		root = node_new("/", true, 0755);
		if (!root) {
			qunlock(&fs_lock);
			return -ENOMEM;
		}
	}
	root->ref++;
	set_node(c, root);
	qunlock(&fs_lock);
	return 0;
}

static int ramfs_clone(struct chan *src, struct chan *dst)
{
	qlock(&fs_lock);
	((struct node *)src->aux)->ref++;
	set_node(dst, src->aux);
	qunlock(&fs_lock);
	return 0;
}

static struct node *lookup(struct node *dir, const char *name)
{
	for (struct node *n = dir->child; n; n = n->sib)
		if (!strcmp(n->name, name))
			return n;
	return NULL;
}

static int ramfs_walk(struct chan *c, const char *name)
{
	struct node *d = c->aux, *n;
	int r = 0;

	qlock(&fs_lock);
	if (!d->isdir)
		r = -ENOTDIR;
	else if (!(n = lookup(d, name)))
		r = -ENOENT;
	else {
		n->ref++;
		node_put(d);
		set_node(c, n);
	}
	qunlock(&fs_lock);
	return r;
}

static int ramfs_open(struct chan *c, int omode)
{
	struct node *n = c->aux;

	if (n->isdir && (omode & OMODE) != OREAD)
		return -EISDIR;
	if (!n->isdir && (omode & OTRUNC)) {
		qlock(&fs_lock);
		n->len = 0;
		qunlock(&fs_lock);
	}
	return 0;
}

static int ramfs_create(struct chan *c, const char *name, int omode, uint32_t perm)
{
	struct node *d = c->aux, *n;
	int r = 0;

	if (!strcmp(name, ".") || !strcmp(name, "..") || !*name)
		return -EINVAL;
	qlock(&fs_lock);
	if (!d->isdir)
		r = -ENOTDIR;
	else if (lookup(d, name))
		r = -EEXIST;
	else if (!(n = node_new(name, perm & DMDIR, perm)))
		r = -ENOMEM;
	else {
		n->parent = d;
		n->sib = d->child;
		d->child = n;
		n->ref++;		/* the chan's */
		node_put(d);
		set_node(c, n);
	}
	qunlock(&fs_lock);
	(void)omode;
	return r;
}

static long ramfs_read(struct chan *c, void *buf, size_t cnt, uint64_t off)
{
	struct node *n = c->aux;
	size_t k = 0;

	if (n->isdir)
		return -EISDIR;
	qlock(&fs_lock);
	if (off < n->len) {
		k = MIN(cnt, n->len - (size_t)off);
		memcpy(buf, n->data + off, k);
	}
	qunlock(&fs_lock);
	return (long)k;
}

static int grow(struct node *n, size_t need)
{
	size_t cap = n->cap ? n->cap : 256;
	uint8_t *d;

	while (cap < need)
		cap *= 2;
	if (cap == n->cap)
		return 0;
	d = kmalloc(cap);
	if (!d)
		return -ENOSPC;
	memcpy(d, n->data, n->len);
	kfree(n->data);
	n->data = d;
	n->cap = cap;
	return 0;
}

static long ramfs_write(struct chan *c, const void *buf, size_t cnt, uint64_t off)
{
	struct node *n = c->aux;
	long r = (long)cnt;

	if (n->isdir)
		return -EISDIR;
	qlock(&fs_lock);
	if (c->mode & OAPPEND)
		off = n->len;
	if (off + cnt > (64u << 20))
		r = -EFBIG;
	else if (grow(n, off + cnt) < 0)
		r = -ENOSPC;
	else {
		if (off > n->len)
			memset(n->data + n->len, 0, off - n->len);
		memcpy(n->data + off, buf, cnt);
		n->len = MAX(n->len, off + cnt);
	}
	qunlock(&fs_lock);
	return r;
}

static void ramfs_close(struct chan *c)
{
	qlock(&fs_lock);
	node_put(c->aux);
	qunlock(&fs_lock);
}

static void fill(struct node *n, struct dir *d)
{
	memset(d, 0, sizeof(*d));
	strlcpy(d->name, n->name, sizeof(d->name));
	d->qid = qid_of(n);
	d->mode = (n->isdir ? DMDIR : 0) | n->perm;
	d->length = n->isdir ? 0 : n->len;
}

static int ramfs_stat(struct chan *c, struct dir *d)
{
	qlock(&fs_lock);
	fill(c->aux, d);
	qunlock(&fs_lock);
	return 0;
}

static int ramfs_remove(struct chan *c)
{
	struct node *n = c->aux, *p;
	int r = 0;

	qlock(&fs_lock);
	p = n->parent;
	if (!p)
		r = n == root ? -EBUSY : -ENOENT;
	else if (n->isdir && n->child)
		r = -ENOTEMPTY;
	else {
		struct node **pp = &p->child;

		while (*pp != n)
			pp = &(*pp)->sib;
		*pp = n->sib;
		n->parent = NULL;
		node_put(n);		/* the tree's reference */
	}
	qunlock(&fs_lock);
	return r;
}

static int ramfs_dirread(struct chan *c, uint64_t *cookie, struct dir *d)
{
	struct node *dir = c->aux, *n;
	uint64_t i = 0;

	qlock(&fs_lock);
	for (n = dir->child; n && i < *cookie; n = n->sib)
		i++;
	if (n) {
		fill(n, d);
		(*cookie)++;
	}
	qunlock(&fs_lock);
	return n ? 1 : 0;
}

struct dev ramfs = {
	.name = "ramfs",
	.attach = ramfs_attach,
	.clone = ramfs_clone,
	.walk = ramfs_walk,
	.open = ramfs_open,
	.create = ramfs_create,
	.read = ramfs_read,
	.write = ramfs_write,
	.close = ramfs_close,
	.stat = ramfs_stat,
	.remove = ramfs_remove,
	.dirread = ramfs_dirread,
};

void ramfs_init(void)
{
	qlock_init_named(&fs_lock, "ramfs");
}
