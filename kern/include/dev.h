/*
 * Devices and the name space, in the Plan 9 manner.
 *
 * A device (struct dev) serves a tree of files through a table of functions. A struct chan
 * names one file of one device: the device's qid for it, and, once opened, the open mode
 * and the device's per-open state (aux). The name space (ns.c) maps absolute paths to
 * chans: it finds the mount whose path is the longest prefix, clones that mount's root
 * chan and walks the rest of the path one component at a time.
 *
 * All device functions run in thread context and may sleep. They return 0 (or a byte
 * count) on success and a negative error (error.h) on failure; the error travels up to
 * the shell, which prints strerror(). A device keeps per-chan state in chan->aux and
 * frees it in close.
 */
#ifndef DEV_H
#define DEV_H

#include "kernel.h"

#define NAME_MAX	255

#define QTDIR	0x80		/* qid.type: a directory */
#define QTFILE	0x00

#define DMDIR	0x80000000u	/* dir.mode: a directory */
#define DMSYMLINK 0x02000000u	/* dir.mode: a symbolic link (9P shares; never followed) */
#define DMDEVICE 0x00800000u	/* dir.mode: a character or block device */
#define DMNAMEDPIPE 0x00200000u	/* dir.mode: a FIFO */
#define DMSOCKET 0x00100000u	/* dir.mode: a socket */
#define DMSPECIAL (DMSYMLINK | DMDEVICE | DMNAMEDPIPE | DMSOCKET)	/* not openable */

/* open modes */
#define OREAD	0
#define OWRITE	1
#define ORDWR	2
#define OMODE	3		/* mask for the three above */
#define OTRUNC	0x10		/* truncate on open (write modes) */
#define OAPPEND	0x20		/* every write goes to the end */
#define OEXCL	0x40		/* with create: fail if it exists */

struct qid {
	uint64_t path;		/* unique within the device instance */
	uint8_t type;		/* QTDIR or QTFILE */
	uint32_t vers;
};

struct dir {
	char name[NAME_MAX + 1];
	struct qid qid;
	uint32_t mode;		/* DMDIR or another type bit | permission bits (0777) */
	uint64_t length;	/* bytes; 0 for directories and streams */
	uint64_t mtime;		/* seconds, 0 when unknown */
};

struct dev;

struct chan {
	struct dev *dev;
	struct qid qid;
	int mode;		/* open mode (OREAD...), -1 while not open */
	uint64_t offset;	/* for sequential read/write through a file descriptor */
	void *aux;		/* the device's state for this chan */
	void *devinst;		/* the device instance (e.g. which 9P mount) */
	int ref;		/* file descriptors sharing it */
	int werr;		/* first error a kwrite through it returned, 0 if none */
};

struct dev {
	const char *name;
	/* make c the root of the device instance named by spec */
	int (*attach)(struct chan *c, const char *spec);
	/* dst becomes a new, unopened chan for the same file as src (src is not open) */
	int (*clone)(struct chan *src, struct chan *dst);
	/* c (a directory, not open) becomes its child name; ".." is handled by ns.c */
	int (*walk)(struct chan *c, const char *name);
	int (*open)(struct chan *c, int omode);
	/* c (a directory, not open) becomes the new file name, created and opened omode */
	int (*create)(struct chan *c, const char *name, int omode, uint32_t perm);
	long (*read)(struct chan *c, void *buf, size_t n, uint64_t off);
	long (*write)(struct chan *c, const void *buf, size_t n, uint64_t off);
	/* release c, open or not; the device frees c->aux */
	void (*close)(struct chan *c);
	int (*stat)(struct chan *c, struct dir *d);
	/* remove the file c names (not open); c is closed by the caller afterwards */
	int (*remove)(struct chan *c);
	/*
	 * Directory listing of c (open OREAD): fill d with the entry at *cookie, advance
	 * *cookie; return 1, or 0 at the end. The cookie starts at 0 and is opaque.
	 */
	int (*dirread)(struct chan *c, uint64_t *cookie, struct dir *d);
};

/*
 * Simple devices: a flat directory of files served from a static table (devtab.c).
 * A file is { name, qid path, perm, read, write, open, close }; the device's root is qid 0.
 */
struct devfile {
	const char *name;
	uint32_t perm;
	/* NULL read or write: the file is write-only or read-only */
	long (*read)(struct chan *c, void *buf, size_t n, uint64_t off);
	long (*write)(struct chan *c, const void *buf, size_t n, uint64_t off);
	int (*open)(struct chan *c, int omode);		/* optional */
	void (*close)(struct chan *c);			/* optional, for opened chans */
	uint64_t (*length)(void);			/* optional, for stat */
};

/* Add files to /dev (boot time, thread context). Names must be unique. */
void devfs_add(const struct devfile *f);

/* ---- the name space and file descriptors (ns.c), for kernel threads and the shell ---- */

#define NFD	16

/* Register a device instance's root at path (an existing directory, or "/"). */
int ns_mount(const char *path, struct dev *d, const char *spec);

int kopen(const char *path, int omode);			/* fd or -err */
/* Open path, creating it (perm) if missing; an existing file keeps its data unless omode
 * has OTRUNC. With OEXCL an existing file is an error. Returns fd or -err. */
int kcreate(const char *path, int omode, uint32_t perm);
long kread(int fd, void *buf, size_t n);
long kwrite(int fd, const void *buf, size_t n);		/* all of it, or -err */
int kwerror(int fd);	/* first kwrite error on fd's file (as ferror), 0 if none or no fd */
int kclose(int fd);
int kdup2(int oldfd, int newfd);
int kstat(const char *path, struct dir *d);
int kremove(const char *path);
int kmkdir(const char *path, uint32_t perm);
/* Next directory entry of fd: 1 and *d, or 0 at the end. */
int kdirread(int fd, struct dir *d);
int kchdir(const char *path);
const char *kgetcwd(void);
/* Make abs (size NAME_MAX + 1 or more) the absolute, cleaned form of path. */
int ns_abspath(const char *path, char *abs, size_t n);

/*
 * Per-thread file state: descriptors and current directory. A new thread starts with the
 * creator's (descriptors shared by reference count, cwd copied).
 */
struct fstate;
struct fstate *fstate_new(struct fstate *from);
void fstate_free(struct fstate *fs);

/* Boot, thread context: the file systems and device files of kern/src/fs. */
void ramfs_init(void);		/* the root file system */
void devcons_init(void);	/* /dev/cons, /dev/null, /dev/zero */
void devrandom_init(void);	/* /dev/random */

#endif
