/*
 * The 9P2000.L client inside kern/drivers: ninep.c speaks the protocol over a virtio-9p
 * queue (one function per message, RPCs tagged so several threads may have requests in
 * flight at once); dev9p.c serves the name space (struct dev) on top of it.
 *
 * Every p9_* call runs in thread context and sleeps until its reply arrives. It returns 0
 * (or a byte count) or a negative errno: the server's Rlerror code unchanged, -EPROTO for a
 * malformed reply, -ENOMEM. Fids are plain numbers; the caller owns each fid it allocates
 * and clunks it (p9_remove clunks too, even when it fails).
 */
#ifndef P9_H
#define P9_H

#include "dev.h"
#include "virtio.h"

#define P9_NOFID	0xffffffffu
#define P9_IOHDRSZ	24	/* Twrite/Rread header, rounded up: payload <= msize - 24 */

/* Linux open flags, as 9P2000.L carries them */
#define L_O_RDONLY	00
#define L_O_WRONLY	01
#define L_O_RDWR	02
#define L_O_CREAT	0100
#define L_O_EXCL	0200
#define L_O_TRUNC	01000
#define L_O_APPEND	02000

#define L_S_IFMT	0170000
#define L_S_IFDIR	0040000
#define L_S_IFLNK	0120000
#define L_S_IFIFO	0010000
#define L_S_IFSOCK	0140000
#define L_S_IFCHR	0020000
#define L_S_IFBLK	0060000

struct p9_client;

struct p9_attr {
	struct qid qid;
	uint32_t mode;		/* Linux st_mode */
	uint64_t size;
	uint64_t mtime;		/* seconds */
};

/* A directory entry as Treaddir returns it; name is the caller's namebuf. */
struct p9_dirent {
	struct qid qid;
	uint64_t next;		/* offset to continue after this entry */
	uint8_t type;
	const char *name;	/* NUL-terminated copy in the caller's scratch */
};

/* The client of the index'th virtio-9p device that p9_probe brought up, or NULL. */
struct p9_client *p9_client(int index);
const char *p9_mount_tag(struct p9_client *c);

uint32_t p9_fid_alloc(struct p9_client *c);
int p9_attach(struct p9_client *c, uint32_t fid, struct qid *qid);
/* newfid names fid's child name (name NULL: the same file as fid). */
int p9_walk(struct p9_client *c, uint32_t fid, uint32_t newfid, const char *name,
	    struct qid *qid);
int p9_getattr(struct p9_client *c, uint32_t fid, struct p9_attr *a);
int p9_lopen(struct p9_client *c, uint32_t fid, uint32_t flags, struct qid *qid,
	     uint32_t *iounit);
/* fid (a directory) becomes the new file name, open with flags. */
int p9_lcreate(struct p9_client *c, uint32_t fid, const char *name, uint32_t flags,
	       uint32_t mode, struct qid *qid, uint32_t *iounit);
int p9_mkdir(struct p9_client *c, uint32_t dfid, const char *name, uint32_t mode,
	     struct qid *qid);
/* All n bytes in msize pieces (or iounit if smaller and non-zero); short only at EOF. */
long p9_read(struct p9_client *c, uint32_t fid, uint64_t off, void *buf, size_t n,
	     uint32_t iounit);
/* All n bytes or an error: never short. */
long p9_write(struct p9_client *c, uint32_t fid, uint64_t off, const void *buf, size_t n,
	      uint32_t iounit);
/* Raw Treaddir data (entries) into buf, at most n bytes; 0 at the end. */
long p9_readdir(struct p9_client *c, uint32_t fid, uint64_t off, void *buf, uint32_t n);
/* Parse the entry at *pos of readdir data buf[0..len); name copied into namebuf. */
int p9_dirent_parse(const uint8_t *buf, uint32_t len, uint32_t *pos, struct p9_dirent *e,
		    char *namebuf, size_t namecap);
int p9_clunk(struct p9_client *c, uint32_t fid);
int p9_remove(struct p9_client *c, uint32_t fid);

/* Find and bring up every virtio-9p device (Tversion), once (boot, thread context);
 * returns how many are up. */
int p9_probe(void);

extern struct dev dev9p;

#endif
