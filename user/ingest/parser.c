/*
 * parser.c: framing and field validation of the profiler stream, incremental and zero-copy.
 * Called by opreport.c through opf_parse_file (the fuzz target feeds opf_feed directly); hands
 * each valid record to the sink (profile.c).
 *
 * Contract: every record the sink sees has passed these checks; everything else stops the
 * parse with one "offset N: reason" message. What is checked per type is one row of kinds[]:
 * its name, its shortest valid length in each format version, where its core id is, and a
 * check for what is particular to it. Unknown record types (and the version-2 types inside a
 * version-1 session) are skipped for forward compatibility; known records may be longer than
 * this reader's struct (fields appended by a later kernel are ignored), and shorter ones of an
 * older version read as zero past their end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "ingest/parser.h"

/* The read buffer starts at READ_FIRST and doubles while reads fill it, up to READ_MAX: room
 * for READ_CHUNK bytes a read beside the part of a record left over. A small stream takes
 * little memory, a large one is read in READ_CHUNK pieces. */
#define READ_CHUNK	(4u << 20)
#define READ_FIRST	(64u << 10)
#define READ_MAX	(READ_CHUNK + OPF_MAX_REC)

static long fail(struct opf_parser *p, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static long fail(struct opf_parser *p, uint64_t off, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(p->err, sizeof(p->err), "offset %llu: ", (unsigned long long)off);

	va_start(ap, fmt);
	vsnprintf(p->err + n, sizeof(p->err) - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/* --- the checks particular to a type; each returns 0 or fail() ---------------------------- */

static long check_session(struct opf_parser *p, const struct opf_view *v)
{
	const struct opf_session *s = &v->r->session;

	if (s->magic != OPF_MAGIC)
		return fail(p, v->off, "bad magic 0x%016llx: not a profiler stream",
			    (unsigned long long)s->magic);
	if (s->version < OPF_VERSION_MIN || s->version > OPF_VERSION)
		return fail(p, v->off, "unsupported format version %u (this reader knows %u..%u)",
			    s->version, OPF_VERSION_MIN, OPF_VERSION);
	if (s->version >= 2 && v->len < OPF_SESSION_V2_LEN)
		return fail(p, v->off, "OPF_SESSION record length %u is shorter than %u "
			    "(format %u)", v->len, OPF_SESSION_V2_LEN, s->version);
	if (s->ncores == 0 || s->ncores > OPF_MAX_CORES)
		return fail(p, v->off, "session has %u cores (supported: 1..%u)", s->ncores,
			    OPF_MAX_CORES);
	if (s->build_id_len > OPF_MAX_BUILD_ID)
		return fail(p, v->off, "build-id length %u exceeds %u", s->build_id_len,
			    OPF_MAX_BUILD_ID);
	return 0;
}

static long check_sample(struct opf_parser *p, const struct opf_view *v)
{
	const struct opf_sample *s = &v->r->sample;

	if (s->nframes > OPF_MAX_DEPTH)
		return fail(p, v->off, "OPF_SAMPLE has %u frames (at most %u)", s->nframes,
			    OPF_MAX_DEPTH);
	if (opf_sample_len(s->nframes) > v->len)
		return fail(p, v->off, "OPF_SAMPLE with %u frames needs %u bytes, record has %u",
			    s->nframes, opf_sample_len(s->nframes), v->len);
	return 0;
}

static long check_thread(struct opf_parser *p, const struct opf_view *v)
{
	if (v->r->thread.namelen > v->len - sizeof(struct opf_thread))
		return fail(p, v->off, "OPF_THREAD name of %u bytes does not fit record of %u",
			    v->r->thread.namelen, v->len);
	return 0;
}

static long check_lost(struct opf_parser *p, const struct opf_view *v)
{
	if (v->r->lost.reason >= OPF_LOST_NREASONS)
		return fail(p, v->off, "OPF_LOST reason %u out of range (0..%u)", v->r->lost.reason,
			    OPF_LOST_NREASONS - 1);
	return 0;
}

static long check_core(struct opf_parser *p, const struct opf_view *v, uint32_t core)
{
	if (core >= p->ncores)
		return fail(p, v->off, "%s names core %u but the session has %u cores",
			    opf_type_name(v->r->h.type), core, p->ncores);
	return 0;
}

/* Version-2 marks name their core; version-1 marks are session-wide. */
static long check_mark(struct opf_parser *p, const struct opf_view *v)
{
	return v->version >= 2 ? check_core(p, v, v->r->mark.core) : 0;
}

static long check_block(struct opf_parser *p, const struct opf_view *v)
{
	const struct opf_block *b = &v->r->block;

	/* Its samples and bytes are checked against the stream by --stats, not here: a header
	 * that lies is an accounting failure, not a malformed stream. */
	return b->core == OPF_CORE_STREAM ? 0 : check_core(p, v, b->core);
}

static long check_frames(struct opf_parser *p, const struct opf_view *v, unsigned n,
			 uint32_t need)
{
	if (n > OPF_MAX_DEPTH)
		return fail(p, v->off, "%s has %u frames (at most %u)", opf_type_name(v->r->h.type),
			    n, OPF_MAX_DEPTH);
	if (need > v->len)
		return fail(p, v->off, "%s with %u frames needs %u bytes, record has %u",
			    opf_type_name(v->r->h.type), n, need, v->len);
	return 0;
}

static long check_switch(struct opf_parser *p, const struct opf_view *v)
{
	const struct opf_switch *s = &v->r->sw;

	if (s->why >= OPF_WHY_N)
		return fail(p, v->off, "OPF_SWITCH reason %u out of range (0..%u)", s->why,
			    OPF_WHY_N - 1);
	return check_frames(p, v, s->nframes, opf_switch_len(s->nframes));
}

/* A short switch is an OPF_SWITCH cut before obj: no reason's object, no stack. */
static long check_switch_short(struct opf_parser *p, const struct opf_view *v)
{
	const struct opf_switch *s = &v->r->sw;

	if (s->why >= OPF_WHY_N)
		return fail(p, v->off, "OPF_SWITCH_SHORT reason %u out of range (0..%u)", s->why,
			    OPF_WHY_N - 1);
	if (s->nframes)
		return fail(p, v->off, "OPF_SWITCH_SHORT has %u frames (it carries none)",
			    s->nframes);
	return 0;
}

/* A same-as-before switch is a short one of a thread that waits (its wait is elsewhere). */
static long check_switch_same(struct opf_parser *p, const struct opf_view *v)
{
	const struct opf_switch *s = &v->r->sw;

	if (!opf_why_waits(s->why))
		return fail(p, v->off, "OPF_SWITCH_SAME reason %u is not a wait (%u..%u)", s->why,
			    OPF_WHY_SLEEP, OPF_WHY_IO);
	if (s->nframes)
		return fail(p, v->off, "OPF_SWITCH_SAME has %u frames (it carries none)",
			    s->nframes);
	return 0;
}

/* A resumed one (OPF_W_RESUMED) is in its thread's core's block and names its waker's core. */
static long check_wakeup(struct opf_parser *p, const struct opf_view *v)
{
	const struct opf_wakeup *w = &v->r->wakeup;

	if ((w->h.flags & OPF_W_RESUMED) && w->core != w->target_core)
		return fail(p, v->off, "OPF_WAKEUP resumed on core %u for a thread of core %u",
			    w->core, w->target_core);
	if ((w->h.flags & OPF_W_RESUMED) && check_core(p, v, w->waker_core))
		return -1;
	return check_core(p, v, w->target_core);
}

static long check_lockwait(struct opf_parser *p, const struct opf_view *v)
{
	const struct opf_lockwait *l = &v->r->lockwait;

	if (l->kind > OPF_LK_SPIN)
		return fail(p, v->off, "OPF_LOCKWAIT kind %u out of range (0..1)", l->kind);
	return check_frames(p, v, l->nframes, opf_lockwait_len(l->nframes));
}

/* --- the table ------------------------------------------------------------------------- */

struct kind {
	const char *name;
	uint32_t min[2];	/* shortest valid length in format 1 and 2; 0: not in that format */
	uint32_t size;		/* this reader's struct: the fixed part handed to the sink */
	uint8_t core_off;	/* offset of the core id (0: none, or the check handles it) */
	uint8_t core_width;	/* its size in bytes: 2 or 4 */
	long (*check)(struct opf_parser *p, const struct opf_view *v);
};

#define SZ(t)	((uint32_t)sizeof(struct t))
static const struct kind kinds[OPF_NTYPES] = {
	[OPF_SESSION] = { "OPF_SESSION", { OPF_SESSION_V1_LEN, OPF_SESSION_V1_LEN },
			  SZ(opf_session), 0, 0, check_session },
	[OPF_SAMPLE] = { "OPF_SAMPLE", { SZ(opf_sample), SZ(opf_sample) }, SZ(opf_sample), 8, 2,
			 check_sample },
	[OPF_THREAD] = { "OPF_THREAD", { SZ(opf_thread), SZ(opf_thread) }, SZ(opf_thread), 12, 2,
			 check_thread },
	[OPF_LOST] = { "OPF_LOST", { SZ(opf_lost), SZ(opf_lost) }, SZ(opf_lost), 8, 2, check_lost },
	[OPF_CORE_END] = { "OPF_CORE_END", { OPF_CORE_END_MIN_LEN, SZ(opf_core_end) },
			   SZ(opf_core_end), 8, 4, NULL },
	[OPF_SESSION_END] = { "OPF_SESSION_END", { OPF_SESSION_END_V1_LEN, SZ(opf_session_end) },
			      SZ(opf_session_end), 0, 0, NULL },
	[OPF_THROTTLE] = { "OPF_THROTTLE", { SZ(opf_throttle), SZ(opf_throttle) },
			   SZ(opf_throttle), 8, 4, NULL },
	[OPF_SNAPSHOT] = { "OPF_SNAPSHOT", { SZ(opf_snapshot), SZ(opf_snapshot) },
			   SZ(opf_snapshot), 0, 0, NULL },
	[OPF_PAUSE] = { "OPF_PAUSE", { OPF_MARK_V1_LEN, SZ(opf_mark) }, SZ(opf_mark), 0, 0,
			check_mark },
	[OPF_RESUME] = { "OPF_RESUME", { OPF_MARK_V1_LEN, SZ(opf_mark) }, SZ(opf_mark), 0, 0,
			 check_mark },
	[OPF_BLOCK] = { "OPF_BLOCK", { 0, SZ(opf_block) }, SZ(opf_block), 0, 0, check_block },
	[OPF_DROP] = { "OPF_DROP", { 0, SZ(opf_drop) }, SZ(opf_drop), 8, 2, NULL },
	[OPF_CRASH] = { "OPF_CRASH", { 0, SZ(opf_crash) }, SZ(opf_crash), 8, 2, NULL },
	[OPF_CRASH_CORE] = { "OPF_CRASH_CORE", { 0, SZ(opf_crash_core) }, SZ(opf_crash_core), 8, 2,
			     NULL },
	[OPF_CRASH_END] = { "OPF_CRASH_END", { 0, SZ(opf_crash_end) }, SZ(opf_crash_end), 0, 0,
			    NULL },
	[OPF_SWITCH] = { "OPF_SWITCH", { 0, SZ(opf_switch) }, SZ(opf_switch), 8, 2, check_switch },
	[OPF_WAKEUP] = { "OPF_WAKEUP", { 0, SZ(opf_wakeup) }, SZ(opf_wakeup), 8, 2, check_wakeup },
	[OPF_LOCKWAIT] = { "OPF_LOCKWAIT", { 0, SZ(opf_lockwait) }, SZ(opf_lockwait), 8, 2,
			   check_lockwait },
	/* read as an OPF_SWITCH: the fixed part past its 40 bytes reads as zero */
	[OPF_SWITCH_SHORT] = { "OPF_SWITCH_SHORT", { 0, SZ(opf_switch_short) }, SZ(opf_switch), 8,
			       2, check_switch_short },
	/* the same, its wait and frames from an OPF_SWITCH before it (events.c finds them) */
	[OPF_SWITCH_SAME] = { "OPF_SWITCH_SAME", { 0, SZ(opf_switch_short) }, SZ(opf_switch), 8,
			      2, check_switch_same },
	[OPF_SCHED_END] = { "OPF_SCHED_END", { 0, SZ(opf_sched_end) }, SZ(opf_sched_end), 8, 4,
			    NULL },
};

const char *opf_type_name(uint16_t type)
{
	return type < OPF_NTYPES && kinds[type].name ? kinds[type].name : "unknown";
}

/* The row for type in this session's format, or NULL when the reader does not know it. */
static const struct kind *kind_of(const struct opf_parser *p, uint16_t type)
{
	uint32_t fmt = p->version >= 2 ? 1 : 0;

	if (type >= OPF_NTYPES || !kinds[type].name)
		return NULL;
	if (type != OPF_SESSION && !kinds[type].min[fmt])
		return NULL;
	return &kinds[type];
}

static uint32_t core_at(const union opf_any *r, const struct kind *k)
{
	const uint8_t *b = (const uint8_t *)r + k->core_off;
	uint32_t c = 0;

	memcpy(&c, b, k->core_width);	/* little-endian host: the low bytes come first */
	return c;
}

/* Hand a record to the sink's handler for its type; a handler's reason gets the offset. */
static long deliver(struct opf_parser *p, opf_handler h, const struct opf_view *v)
{
	char why[192] = "";

	if (h && h(p->arg, v, why, sizeof(why))) {
		p->nomem = !why[0];
		return fail(p, v->off, "%s", why[0] ? why : "out of memory");
	}
	return 0;
}

/* Validate and dispatch the complete record at r (h->len bytes present). */
static long record(struct opf_parser *p, const uint8_t *r, const struct opf_rec *h)
{
	const struct kind *k = kind_of(p, h->type);
	union opf_any a;
	struct opf_view v = { p->off, h->len, p->version, &a, NULL };

	if (!k) {
		a.h = *h;
		return deliver(p, p->sink->unknown, &v) ? -1 : deliver(p, p->sink->every, &v);
	}
	uint32_t min = k->min[p->version >= 2 ? 1 : 0];
	if (h->len < min)
		return fail(p, p->off, "%s record length %u is shorter than %u", k->name, h->len, min);
	memset(&a, 0, sizeof(a));
	memcpy(&a, r, h->len < k->size ? h->len : k->size);
	v.tail = r + (h->len < k->size ? h->len : k->size);
	if (h->type == OPF_SESSION)
		v.version = a.session.version;
	if (k->check && k->check(p, &v))
		return -1;
	if (k->core_width && check_core(p, &v, core_at(&a, k)))
		return -1;
	if (deliver(p, p->sink->on[h->type], &v) || deliver(p, p->sink->every, &v))
		return -1;
	if (h->type == OPF_SESSION) {
		p->have_session = 1;
		p->ncores = a.session.ncores;
		p->version = a.session.version;
	}
	return 0;
}

/* Framing of the header at p->off: 0, or fail(). What is no stream at all (a text, another
 * format) is said so first, rather than as a record of bad length. */
static long check_header(struct opf_parser *p, const struct opf_rec *h)
{
	if (!p->have_session && h->type != OPF_SESSION)
		return fail(p, p->off, "first record has type %u, not OPF_SESSION: not a profiler "
			    "stream", h->type);
	if (h->len < sizeof(struct opf_rec))
		return fail(p, p->off, "record length %u is less than 8", h->len);
	if (h->len % OPF_ALIGN)
		return fail(p, p->off, "record length %u is not a multiple of 8", h->len);
	if (h->len > OPF_MAX_REC)
		return fail(p, p->off, "record length %u exceeds the maximum %u", h->len, OPF_MAX_REC);
	return 0;
}

void opf_parser_init(struct opf_parser *p, const struct opf_sink *sink, void *arg)
{
	memset(p, 0, sizeof(*p));
	p->sink = sink;
	p->arg = arg;
}

long opf_feed(struct opf_parser *p, const uint8_t *buf, size_t len)
{
	size_t pos = 0;

	while (len - pos >= sizeof(struct opf_rec)) {
		struct opf_rec h;

		memcpy(&h, buf + pos, sizeof(h));
		if (check_header(p, &h))
			return -1;
		if (h.len > len - pos)
			break;
		if (record(p, buf + pos, &h))
			return -1;
		pos += h.len;
		p->off += h.len;
	}
	if (p->sink->flush && p->sink->flush(p->arg)) {
		p->nomem = 1;
		return fail(p, p->off, "out of memory");
	}
	return (long)pos;
}

int opf_finish(struct opf_parser *p, const uint8_t *rest, size_t restlen)
{
	if (restlen == 0) {
		if (!p->have_session)
			return (int)fail(p, p->off, "empty stream: no OPF_SESSION record");
		return 0;
	}
	p->cut = 1;
	if (restlen < sizeof(struct opf_rec))
		return (int)fail(p, p->off, "stream ends inside a record header (%zu of 8 bytes)",
				 restlen);
	struct opf_rec h;

	memcpy(&h, rest, sizeof(h));
	return (int)fail(p, p->off, "truncated %s record: length %u, only %zu bytes left",
			 opf_type_name(h.type), h.len, restlen);
}

/* --- files ------------------------------------------------------------------------------ */

/* An open input: a plain descriptor, or a gzip stream over one. */
struct input {
	int fd;
	gzFile gz;
};

/* Read up to n bytes; a short count only at end of stream. Returns -1 on error. */
static ssize_t read_full(struct input *in, uint8_t *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r;

		if (in->gz) {
			unsigned want = n - got > (1u << 30) ? 1u << 30 : (unsigned)(n - got);
			r = gzread(in->gz, b + got, want);
		} else {
			r = read(in->fd, b + got, n - got);
			if (r < 0 && errno == EINTR)
				continue;
		}
		if (r < 0)
			return -1;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

/*
 * Open path ("-": stdin) and sniff for gzip, whose offsets in messages then count
 * decompressed bytes. Bytes already read stay in buf[0..*have). Returns 0 or -1 (p->err set).
 */
static int open_input(struct opf_parser *p, const char *path, struct input *in, uint8_t *buf,
		      size_t *have)
{
	in->gz = NULL;
	in->fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	if (in->fd < 0) {
		snprintf(p->err, sizeof(p->err), "cannot open: %s", strerror(errno));
		return -1;
	}
	ssize_t n = read_full(in, buf, 2);
	if (n < 0) {
		snprintf(p->err, sizeof(p->err), "read error: %s", strerror(errno));
		return -1;
	}
	*have = (size_t)n;
	if (*have == 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		if (in->fd != 0 && lseek(in->fd, 0, SEEK_SET) == 0) {
			in->gz = gzdopen(in->fd, "rb");
			in->fd = -1;
			*have = 0;
		}
		if (!in->gz) {
			snprintf(p->err, sizeof(p->err), "gzip input must be a seekable file");
			return -1;
		}
	}
	posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	return 0;
}

static void close_input(struct input *in)
{
	if (in->gz)
		gzclose(in->gz);
	else if (in->fd > 0)
		close(in->fd);
}

/*
 * Feed the rest of the input through the parser, read into *buf (*cap bytes, have of them
 * already read). A read that fills the buffer doubles it before the next, up to READ_MAX, so
 * every read has room: below READ_MAX the buffer grew since it filled, and at READ_MAX what
 * the parser left (part of one record, less than OPF_MAX_REC) leaves READ_CHUNK free.
 */
static int feed_all(struct opf_parser *p, struct input *in, uint8_t **bufp, size_t *cap,
		    size_t have)
{
	for (;;) {
		uint8_t *buf = *bufp;
		ssize_t n = read_full(in, buf + have, *cap - have);

		if (n < 0) {
			int e;

			if (in->gz)
				snprintf(p->err, sizeof(p->err), "offset %llu: read error: %s",
					 (unsigned long long)(p->off + have), gzerror(in->gz, &e));
			else
				snprintf(p->err, sizeof(p->err), "read error: %s", strerror(errno));
			return -1;
		}
		int full = have + (size_t)n == *cap;
		have += (size_t)n;
		long used = opf_feed(p, buf, have);
		if (used < 0)
			return -1;
		have -= (size_t)used;
		memmove(buf, buf + used, have);
		if (n == 0)
			return opf_finish(p, buf, have);
		if (full && *cap < READ_MAX) {
			size_t ncap = 2 * *cap < READ_MAX ? 2 * *cap : READ_MAX;
			uint8_t *nb = realloc(buf, ncap);	/* aligned as malloc: >= 8 */

			if (!nb) {
				snprintf(p->err, sizeof(p->err), "out of memory");
				p->nomem = 1;
				return -1;
			}
			*bufp = nb;
			*cap = ncap;
		}
	}
}

int opf_parse_file(struct opf_parser *p, const char *path)
{
	struct input in = { -1, NULL };
	size_t cap = READ_FIRST, have = 0;
	uint8_t *buf = malloc(cap);
	int rc = -1;

	if (!buf) {
		snprintf(p->err, sizeof(p->err), "out of memory");
		p->nomem = 1;
	} else if (open_input(p, path, &in, buf, &have) == 0)
		rc = feed_all(p, &in, &buf, &cap, have);
	free(buf);
	close_input(&in);
	return rc;
}
