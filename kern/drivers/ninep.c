/*
 * 9P2000.L client over virtio-9p: message marshalling and tagged RPCs (p9.h).
 *
 * Transport: one virtqueue; each RPC is one descriptor chain. The T message goes out in a
 * small per-request buffer; bulk data (Twrite's payload) goes out as a second descriptor
 * pointing straight at the caller's buffer, and bulk replies (Rread, Rreaddir) come back
 * split the same way: the 11 header bytes (size, type, tag, count) into the request's own
 * buffer, the data straight into the caller's. So file data is never copied by the guest.
 * An Rlerror is 11 bytes too, so it always lands whole in the header buffer.
 *
 * Concurrency: a request holds one of NSLOT slots for its lifetime; the slot gives it its
 * buffers and its tag (the slot number). Slots are handed out under slot_lock, and a thread
 * finding none free sleeps on slot_r. virtq_transfer matches replies to requests by
 * descriptor chain, so any number of threads (up to NSLOT) have RPCs in flight at once and
 * the server may answer them in any order. Only Tversion (at probe, before anything else)
 * uses NOTAG.
 *
 * Message layout: every message is size[4] type[1] tag[2] then its fields, little endian;
 * strings are len[2] bytes; a qid is type[1] version[4] path[8].
 */
#include "schedev.h"
#include "arch.h"
#include "error.h"
#include "kmalloc.h"
#include "lock.h"
#include "ninep.h"
#include "p9.h"
#include "page.h"
#include "pci.h"
#include "rendez.h"

enum {
	Tlerror = 6, Rlerror,
	Tlopen = 12, Rlopen,
	Tlcreate = 14, Rlcreate,
	Tgetattr = 24, Rgetattr,
	Treaddir = 40, Rreaddir,
	Tmkdir = 72, Rmkdir,
	Tversion = 100, Rversion,
	Tattach = 104, Rattach,
	Twalk = 110, Rwalk,
	Tread = 116, Rread,
	Twrite = 118, Rwrite,
	Tclunk = 120, Rclunk,
	Tremove = 122, Rremove,
};

#define NOTAG		0xffff
#define NSLOT		16
#define TCAP		2048	/* T message bytes per slot (a name is at most 255) */
#define RCAP		2048	/* R message bytes per slot, without a data buffer */
#define RDATA_HDR	11	/* size type tag count: the header of Rread and Rreaddir */
#define MSIZE_WANT	(512u * 1024 + P9_IOHDRSZ)
#define MSIZE_MIN	4096
#define NCLIENT		4
#define VIRTIO_9P_MOUNT_TAG 1	/* feature bit 0: the config holds a mount tag */
#define GETATTR_BASIC	0x7ffull

struct slot {
	uint8_t *t;		/* TCAP bytes */
	uint8_t *r;		/* RCAP bytes */
};

struct p9_client {
	struct virtio_dev vd;
	struct virtq *vq;
	uint32_t msize;		/* negotiated in Tversion */
	char tag[64];		/* mount tag from the device config */
	struct slot slot[NSLOT];
	uint32_t busy;		/* slot i in use: bit i; under slot_lock */
	struct spinlock slot_lock;
	struct rendez slot_r;	/* threads waiting for a free slot */
	uint32_t next_fid;	/* atomic; fids are never reused (2^32 of them) */
	uint64_t nrpc, nerr;	/* atomic counters for the ninep command */
};

static struct p9_client *clients[NCLIENT];
static int nclients;

/* ---- marshalling ---- */

struct msg {
	uint8_t *b;
	uint32_t cap, pos;
	bool bad;		/* overflowed: while building, or while parsing a reply */
};

static void put(struct msg *m, uint64_t v, int n)
{
	if (m->pos + (uint32_t)n > m->cap) {
		m->bad = true;
		return;
	}
	for (int i = 0; i < n; i++)
		m->b[m->pos++] = (uint8_t)(v >> (8 * i));
}

static void putstr(struct msg *m, const char *s)
{
	size_t n = strlen(s);

	if (n > 0xffff || m->pos + 2 + n > m->cap) {
		m->bad = true;
		return;
	}
	put(m, n, 2);
	memcpy(m->b + m->pos, s, n);
	m->pos += (uint32_t)n;
}

static uint64_t get(struct msg *m, int n)
{
	uint64_t v = 0;

	if (m->pos + (uint32_t)n > m->cap) {
		m->bad = true;
		return 0;
	}
	for (int i = 0; i < n; i++)
		v |= (uint64_t)m->b[m->pos++] << (8 * i);
	return v;
}

/* A string into buf (cap bytes, NUL-terminated, truncated to fit). */
static void getstr(struct msg *m, char *buf, size_t cap)
{
	uint32_t n = (uint32_t)get(m, 2);

	if (m->bad || m->pos + n > m->cap) {
		m->bad = true;
		buf[0] = 0;
		return;
	}
	memcpy(buf, m->b + m->pos, MIN((size_t)n, cap - 1));
	buf[MIN((size_t)n, cap - 1)] = 0;
	m->pos += n;
}

static void getqid(struct msg *m, struct qid *q)
{
	q->type = (uint8_t)get(m, 1);
	q->vers = (uint32_t)get(m, 4);
	q->path = get(m, 8);
}

/* ---- slots and RPCs ---- */

/* One RPC: its slot, the T message being built and the reply being parsed. */
struct call {
	int slot;
	uint16_t tag;
	struct msg t, r;
	const void *odata;	/* Twrite payload, sent from the caller's buffer */
	uint32_t olen;
	void *idata;		/* Rread/Rreaddir payload, received into the caller's buffer */
	uint32_t ilen;
};

static bool slot_free_cond(void *arg)
{
	struct p9_client *c = arg;

	return READ_ONCE(c->busy) != (1u << NSLOT) - 1;
}

static int slot_get(struct p9_client *c)
{
	for (;;) {
		spin_lock(&c->slot_lock);
		for (int i = 0; i < NSLOT; i++)
			if (!(c->busy & (1u << i))) {
				c->busy |= 1u << i;
				spin_unlock(&c->slot_lock);
				return i;
			}
		spin_unlock(&c->slot_lock);
		rendez_sleep(&c->slot_r, slot_free_cond, c);
	}
}

static void slot_put(struct p9_client *c, int i)
{
	spin_lock(&c->slot_lock);
	c->busy &= ~(1u << i);
	spin_unlock(&c->slot_lock);
	rendez_wakeup(&c->slot_r);
}

/* Take a slot (may sleep) and start the T message. */
static void call_begin(struct p9_client *c, struct call *k, uint8_t type, uint16_t tag)
{
	int i = slot_get(c);

	*k = (struct call){ .slot = i, .tag = tag == NOTAG ? NOTAG : (uint16_t)i };
	k->t = (struct msg){ .b = c->slot[i].t, .cap = TCAP };
	put(&k->t, 0, 4);		/* size, filled in by rpc */
	put(&k->t, type, 1);
	put(&k->t, k->tag, 2);
}

static void call_end(struct p9_client *c, struct call *k)
{
	slot_put(c, k->slot);
}

/* Check the reply header; turn Rlerror into -errno. */
static int reply_check(struct call *k, uint8_t rtype)
{
	uint32_t size = (uint32_t)get(&k->r, 4);
	uint8_t type = (uint8_t)get(&k->r, 1);
	uint16_t tag = (uint16_t)get(&k->r, 2);

	if (k->r.bad || size < 7 || tag != k->tag)
		return -EPROTO;
	if (type == Rlerror) {
		uint32_t e = (uint32_t)get(&k->r, 4);

		return k->r.bad || e == 0 || e > 4095 ? -EIO : -(int)e;
	}
	return type == rtype ? 0 : -EPROTO;
}

/* Send k's T message, sleep until the reply is in, check it. 0 or -errno. */
static int rpc(struct p9_client *c, struct call *k, uint8_t rtype)
{
	struct slot *s = &c->slot[k->slot];
	struct vbuf out[2] = { { s->t, k->t.pos }, { k->odata, k->olen } };
	struct vbuf in[2] = { { s->r, RCAP }, { k->idata, k->ilen } };
	uint32_t size = k->t.pos + k->olen;
	long got;
	bool said;
	int r;

	if (k->t.bad)
		return -ENAMETOOLONG;	/* only names can make a T message this big */
	for (int i = 0; i < 4; i++)
		s->t[i] = (uint8_t)(size >> (8 * i));
	if (k->idata)
		in[0].len = RDATA_HDR;
	/* a wait in here is for the host's reply: I/O, for the scheduler events (schedev.h) */
	said = schedev_wait(OPF_WHY_IO, c, NULL, "9p", 0);
	got = virtq_transfer(c->vq, out, k->olen ? 2 : 1, in, k->idata ? 2 : 1);
	if (said)
		schedev_unwait();
	__atomic_add_fetch(&c->nrpc, 1, __ATOMIC_RELAXED);
	if (got < 0)
		return (int)got;
	k->r = (struct msg){ .b = s->r, .cap = (uint32_t)MIN((unsigned long)got, in[0].len) };
	r = reply_check(k, rtype);
	if (r < 0)
		__atomic_add_fetch(&c->nerr, 1, __ATOMIC_RELAXED);
	return r;
}

/* ---- messages ---- */

static int version(struct p9_client *c)
{
	struct call k;
	char v[16];
	uint32_t msize = 0;
	int r;

	call_begin(c, &k, Tversion, NOTAG);
	put(&k.t, MSIZE_WANT, 4);
	putstr(&k.t, "9P2000.L");
	r = rpc(c, &k, Rversion);
	if (r == 0) {
		msize = (uint32_t)get(&k.r, 4);
		getstr(&k.r, v, sizeof(v));
		if (k.r.bad || strcmp(v, "9P2000.L") || msize < MSIZE_MIN)
			r = -EPROTO;
	}
	call_end(c, &k);
	if (r == 0)
		c->msize = MIN(msize, MSIZE_WANT);
	return r;
}

uint32_t p9_fid_alloc(struct p9_client *c)
{
	uint32_t f;

	do
		f = __atomic_fetch_add(&c->next_fid, 1, __ATOMIC_RELAXED);
	while (f == P9_NOFID);
	return f;
}

int p9_attach(struct p9_client *c, uint32_t fid, struct qid *qid)
{
	struct call k;
	int r;

	call_begin(c, &k, Tattach, 0);
	put(&k.t, fid, 4);
	put(&k.t, P9_NOFID, 4);		/* afid: no authentication */
	putstr(&k.t, "root");		/* uname; the server goes by n_uname */
	putstr(&k.t, "");		/* aname: the exported directory itself */
	put(&k.t, 0, 4);		/* n_uname: uid 0 */
	r = rpc(c, &k, Rattach);
	if (r == 0)
		getqid(&k.r, qid);
	call_end(c, &k);
	return r;
}

int p9_walk(struct p9_client *c, uint32_t fid, uint32_t newfid, const char *name,
	    struct qid *qid)
{
	struct call k;
	int r;

	call_begin(c, &k, Twalk, 0);
	put(&k.t, fid, 4);
	put(&k.t, newfid, 4);
	put(&k.t, name ? 1 : 0, 2);
	if (name)
		putstr(&k.t, name);
	r = rpc(c, &k, Rwalk);
	if (r == 0) {
		uint16_t n = (uint16_t)get(&k.r, 2);

		/* a partial walk creates no newfid; zero names returns no qid */
		if (n != (name ? 1 : 0))
			r = -ENOENT;
		else if (n)
			getqid(&k.r, qid);
		if (k.r.bad)
			r = -EPROTO;
	}
	call_end(c, &k);
	return r;
}

int p9_getattr(struct p9_client *c, uint32_t fid, struct p9_attr *a)
{
	struct call k;
	int r;

	call_begin(c, &k, Tgetattr, 0);
	put(&k.t, fid, 4);
	put(&k.t, GETATTR_BASIC, 8);
	r = rpc(c, &k, Rgetattr);
	if (r == 0) {
		get(&k.r, 8);				/* valid */
		getqid(&k.r, &a->qid);
		a->mode = (uint32_t)get(&k.r, 4);
		get(&k.r, 4 + 4 + 8 + 8);		/* uid gid nlink rdev */
		a->size = get(&k.r, 8);
		get(&k.r, 8 + 8 + 8 + 8);		/* blksize blocks atime */
		a->mtime = get(&k.r, 8);
		if (k.r.bad)
			r = -EPROTO;
	}
	call_end(c, &k);
	return r;
}

int p9_lopen(struct p9_client *c, uint32_t fid, uint32_t flags, struct qid *qid,
	     uint32_t *iounit)
{
	struct call k;
	int r;

	call_begin(c, &k, Tlopen, 0);
	put(&k.t, fid, 4);
	put(&k.t, flags, 4);
	r = rpc(c, &k, Rlopen);
	if (r == 0) {
		getqid(&k.r, qid);
		*iounit = (uint32_t)get(&k.r, 4);
	}
	call_end(c, &k);
	return r;
}

int p9_lcreate(struct p9_client *c, uint32_t fid, const char *name, uint32_t flags,
	       uint32_t mode, struct qid *qid, uint32_t *iounit)
{
	struct call k;
	int r;

	call_begin(c, &k, Tlcreate, 0);
	put(&k.t, fid, 4);
	putstr(&k.t, name);
	put(&k.t, flags, 4);
	put(&k.t, mode, 4);
	put(&k.t, 0, 4);		/* gid */
	r = rpc(c, &k, Rlcreate);
	if (r == 0) {
		getqid(&k.r, qid);
		*iounit = (uint32_t)get(&k.r, 4);
	}
	call_end(c, &k);
	return r;
}

int p9_mkdir(struct p9_client *c, uint32_t dfid, const char *name, uint32_t mode,
	     struct qid *qid)
{
	struct call k;
	int r;

	call_begin(c, &k, Tmkdir, 0);
	put(&k.t, dfid, 4);
	putstr(&k.t, name);
	put(&k.t, mode, 4);
	put(&k.t, 0, 4);		/* gid */
	r = rpc(c, &k, Rmkdir);
	if (r == 0)
		getqid(&k.r, qid);
	call_end(c, &k);
	return r;
}

/* Bytes per Tread/Twrite: what msize allows, or the server's iounit if smaller. */
static uint32_t io_piece(struct p9_client *c, uint32_t iounit)
{
	uint32_t max = c->msize - P9_IOHDRSZ;

	return iounit && iounit < max ? iounit : max;
}

/*
 * Tread, Treaddir and Twrite have one shape: fid, offset and count in, count out. The data
 * travels as a second descriptor: into ibuf for the reads, from obuf for Twrite (one of
 * them is NULL). Bytes moved (0 at the end of a read), or -errno.
 */
static long io_rpc(struct p9_client *c, int ttype, uint32_t fid, uint64_t off, void *ibuf,
		   const void *obuf, uint32_t n)
{
	struct call k;
	long r;

	call_begin(c, &k, (uint8_t)ttype, 0);
	put(&k.t, fid, 4);
	put(&k.t, off, 8);
	put(&k.t, n, 4);
	k.idata = ibuf;
	k.ilen = ibuf ? n : 0;
	k.odata = obuf;
	k.olen = obuf ? n : 0;
	r = rpc(c, &k, (uint8_t)(ttype + 1));	/* every R type is its T type + 1 */
	if (r == 0) {
		uint32_t got = (uint32_t)get(&k.r, 4);

		r = k.r.bad || got > n ? -EPROTO : (long)got;
	}
	call_end(c, &k);
	return r;
}

long p9_read(struct p9_client *c, uint32_t fid, uint64_t off, void *buf, size_t n,
	     uint32_t iounit)
{
	uint32_t piece = io_piece(c, iounit);
	size_t done = 0;

	while (done < n) {
		uint32_t want = (uint32_t)MIN(n - done, (size_t)piece);
		long r = io_rpc(c, Tread, fid, off + done, (uint8_t *)buf + done, NULL, want);

		if (r < 0)
			return done ? (long)done : r;
		done += (size_t)r;
		if ((uint32_t)r < want)
			break;			/* end of file */
	}
	return (long)done;
}

long p9_write(struct p9_client *c, uint32_t fid, uint64_t off, const void *buf, size_t n,
	      uint32_t iounit)
{
	uint32_t piece = io_piece(c, iounit);
	size_t done = 0;

	while (done < n) {
		uint32_t want = (uint32_t)MIN(n - done, (size_t)piece);
		long r = io_rpc(c, Twrite, fid, off + done, NULL, (const uint8_t *)buf + done,
				want);

		if (r == 0)
			r = -EIO;	/* a server that takes nothing would loop us forever */
		if (r < 0)
			return r;	/* earlier pieces are on the host; the write failed */
		done += (size_t)r;		/* a short write is continued, not reported */
	}
	return (long)done;
}

long p9_readdir(struct p9_client *c, uint32_t fid, uint64_t off, void *buf, uint32_t n)
{
	return io_rpc(c, Treaddir, fid, off, buf, NULL, MIN(n, c->msize - P9_IOHDRSZ));
}

int p9_dirent_parse(const uint8_t *buf, uint32_t len, uint32_t *pos, struct p9_dirent *e,
		    char *namebuf, size_t namecap)
{
	struct msg m = { .b = (uint8_t *)buf, .cap = len, .pos = *pos };

	getqid(&m, &e->qid);
	e->next = get(&m, 8);
	e->type = (uint8_t)get(&m, 1);
	getstr(&m, namebuf, namecap);
	if (m.bad)
		return -EPROTO;
	e->name = namebuf;
	*pos = m.pos;
	return 0;
}

/* Tclunk and Tremove: fid[4], empty reply. */
static int fid_op(struct p9_client *c, uint32_t fid, uint8_t t, uint8_t rt)
{
	struct call k;
	int r;

	call_begin(c, &k, t, 0);
	put(&k.t, fid, 4);
	r = rpc(c, &k, rt);
	call_end(c, &k);
	return r;
}

int p9_clunk(struct p9_client *c, uint32_t fid) { return fid_op(c, fid, Tclunk, Rclunk); }
int p9_remove(struct p9_client *c, uint32_t fid) { return fid_op(c, fid, Tremove, Rremove); }

/* ---- devices ---- */

struct p9_client *p9_client(int index)
{
	return index >= 0 && index < READ_ONCE(nclients) ? clients[index] : NULL;
}

const char *p9_mount_tag(struct p9_client *c) { return c->tag; }

static void tag_read(struct p9_client *c)
{
	uint16_t n = 0;

	if (c->vd.features & VIRTIO_9P_MOUNT_TAG)
		n = MIN(virtio_cfg_read16(&c->vd, 0), (uint16_t)(sizeof(c->tag) - 1));
	for (uint16_t i = 0; i < n; i++)
		c->tag[i] = (char)virtio_cfg_read8(&c->vd, 2 + i);
	c->tag[n] = 0;
}

static int slots_alloc(struct p9_client *c)
{
	for (int i = 0; i < NSLOT; i++) {
		uint8_t *p = page_alloc();

		if (!p)
			return -ENOMEM;
		c->slot[i] = (struct slot){ .t = p, .r = p + TCAP };
	}
	return 0;
}

/* Bring up one virtio-9p function: transport, queue 0, Tversion. */
static int client_start(struct p9_client *c, struct pci_dev *d)
{
	int r = virtio_pci_init(&c->vd, d, VIRTIO_9P_MOUNT_TAG);

	if (r < 0)
		return r;
	tag_read(c);
	spinlock_init(&c->slot_lock, "9pslot");
	rendez_init(&c->slot_r);
	c->next_fid = 1;
	c->msize = MSIZE_MIN;
	if (!(c->vq = virtq_setup(&c->vd, 0)) || slots_alloc(c) < 0)
		r = -ENOMEM;
	if (r == 0)
		r = virtio_start(&c->vd);
	if (r == 0)
		r = version(c);
	if (r < 0)
		virtio_fail(&c->vd);
	return r;
}

int p9_probe(void)
{
	static bool probed;	/* a second probe would reset devices in use */
	struct pci_dev *d;

	if (probed)
		return nclients;
	probed = true;
	pci_scan();
	for (int i = 0; nclients < NCLIENT && (d = pci_find(VIRTIO_VENDOR, 0x1009, i)); i++) {
		struct p9_client *c = kzmalloc(sizeof(*c));
		int r = c ? client_start(c, d) : -ENOMEM;

		if (r < 0) {
			printk("9p: %02x:%02x.%x: %s\n", d->bus, d->dev, d->fn, strerror(r));
			continue;	/* c and its pages stay: the device may still own them */
		}
		clients[nclients] = c;
		__atomic_store_n(&nclients, nclients + 1, __ATOMIC_RELEASE);
	}
	return nclients;
}

/* ---- counters, for the shell's ninep command ---- */

bool ninep_client_stats(int index, struct ninep_stats *st)
{
	struct p9_client *c = p9_client(index);

	if (!c)
		return false;
	strlcpy(st->tag, c->tag, sizeof(st->tag));
	st->msize = c->msize;
	st->queue = virtq_size(c->vq);
	st->rpcs = __atomic_load_n(&c->nrpc, __ATOMIC_RELAXED);
	st->errors = __atomic_load_n(&c->nerr, __ATOMIC_RELAXED);
	st->irqs = c->vd.irqs;
	virtq_stats(c->vq, &st->done, &st->polled);
	return true;
}
