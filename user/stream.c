/*
 * stream.c: framing and field validation of the profiler stream, incremental and zero-copy.
 *
 * Contract: every record the sink sees has passed these checks; everything else stops the
 * parse with one "offset N: reason" message. Unknown record types are skipped (forward
 * compatibility); known records may be longer than this reader's struct (fields appended by a
 * later kernel are ignored), never shorter.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "stream.h"

#define READ_CHUNK	(4u << 20)	/* bytes read per call; the buffer also holds one record */

static const char *type_name(uint16_t type)
{
	static const char *const names[] = {
		[OPF_SESSION] = "OPF_SESSION", [OPF_SAMPLE] = "OPF_SAMPLE",
		[OPF_THREAD] = "OPF_THREAD", [OPF_LOST] = "OPF_LOST",
		[OPF_CORE_END] = "OPF_CORE_END", [OPF_SESSION_END] = "OPF_SESSION_END",
		[OPF_THROTTLE] = "OPF_THROTTLE", [OPF_SNAPSHOT] = "OPF_SNAPSHOT",
		[OPF_PAUSE] = "OPF_PAUSE", [OPF_RESUME] = "OPF_RESUME",
	};
	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "unknown";
}

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

/* Sink failures come back as a bare reason; prefix the offset. */
static long sink_fail(struct opf_parser *p, uint64_t off, const char *why)
{
	return fail(p, off, "%s", why);
}

void opf_parser_init(struct opf_parser *p, const struct opf_sink *sink, void *arg)
{
	memset(p, 0, sizeof(*p));
	p->sink = sink;
	p->arg = arg;
}

/* Minimum length of each known record type. */
static uint32_t min_len(uint16_t type)
{
	switch (type) {
	case OPF_SESSION: return OPF_SESSION_V1_LEN;
	case OPF_SAMPLE: return sizeof(struct opf_sample);
	case OPF_THREAD: return sizeof(struct opf_thread);
	case OPF_LOST: return sizeof(struct opf_lost);
	case OPF_CORE_END: return OPF_CORE_END_MIN_LEN;
	case OPF_SESSION_END: return OPF_SESSION_END_V1_LEN;
	case OPF_THROTTLE: return sizeof(struct opf_throttle);
	case OPF_SNAPSHOT: return sizeof(struct opf_snapshot);
	case OPF_PAUSE: case OPF_RESUME: return OPF_MARK_V1_LEN;
	default: return sizeof(struct opf_rec);
	}
}

static long check_core(struct opf_parser *p, uint64_t off, uint16_t type, uint32_t core)
{
	if (core >= p->ncores)
		return fail(p, off, "%s names core %u but the session has %u cores",
			    type_name(type), core, p->ncores);
	return 0;
}

/* Validate and dispatch the complete record at r (rec.len bytes present). */
static long record(struct opf_parser *p, const uint8_t *r, const struct opf_rec *h)
{
	const struct opf_sink *k = p->sink;
	uint64_t off = p->off;
	char why[192];

	if (!p->have_session && h->type != OPF_SESSION)
		return fail(p, off, "first record has type %u, not OPF_SESSION: not a profiler stream",
			    h->type);
	if (h->len < min_len(h->type))
		return fail(p, off, "%s record length %u is shorter than %u", type_name(h->type),
			    h->len, min_len(h->type));
	why[0] = 0;
	switch (h->type) {
	case OPF_SESSION: {
		struct opf_session s = { 0 };

		memcpy(&s, r, h->len < sizeof(s) ? h->len : sizeof(s));
		if (s.magic != OPF_MAGIC)
			return fail(p, off, "bad magic 0x%016llx: not a profiler stream",
				    (unsigned long long)s.magic);
		if (s.version < OPF_VERSION_MIN || s.version > OPF_VERSION)
			return fail(p, off, "unsupported format version %u (this reader knows %u..%u)",
				    s.version, OPF_VERSION_MIN, OPF_VERSION);
		if (s.ncores == 0 || s.ncores > OPF_MAX_CORES)
			return fail(p, off, "session has %u cores (supported: 1..%u)", s.ncores,
				    OPF_MAX_CORES);
		if (s.build_id_len > OPF_MAX_BUILD_ID)
			return fail(p, off, "build-id length %u exceeds %u", s.build_id_len,
				    OPF_MAX_BUILD_ID);
		if (k->session && k->session(p->arg, off, &s, why, sizeof(why)))
			return sink_fail(p, off, why);
		p->have_session = 1;
		p->ncores = s.ncores;
		return 0;
	}
	case OPF_SAMPLE: {
		struct opf_sample s;

		memcpy(&s, r, sizeof(s));
		if (s.nframes > OPF_MAX_DEPTH)
			return fail(p, off, "OPF_SAMPLE has %u frames (at most %u)", s.nframes,
				    OPF_MAX_DEPTH);
		if (opf_sample_len(s.nframes) > h->len)
			return fail(p, off, "OPF_SAMPLE with %u frames needs %u bytes, record has %u",
				    s.nframes, opf_sample_len(s.nframes), h->len);
		if (check_core(p, off, h->type, s.core))
			return -1;
		if (k->sample && k->sample(p->arg, &s, r + sizeof(s)))
			return fail(p, off, "out of memory");
		return 0;
	}
	case OPF_THREAD: {
		struct opf_thread t;
		char name[OPF_MAX_NAME + 1];

		memcpy(&t, r, sizeof(t));
		if (t.namelen > h->len - sizeof(t))
			return fail(p, off, "OPF_THREAD name of %u bytes does not fit record of %u",
				    t.namelen, h->len);
		if (check_core(p, off, h->type, t.core))
			return -1;
		/* Longer names than the ABI allows are cut, not rejected. */
		size_t n = t.namelen < OPF_MAX_NAME ? t.namelen : OPF_MAX_NAME;
		memcpy(name, r + sizeof(t), n);
		name[n] = 0;
		if (k->thread && k->thread(p->arg, &t, name))
			return fail(p, off, "out of memory");
		return 0;
	}
	case OPF_LOST: {
		struct opf_lost l;

		memcpy(&l, r, sizeof(l));
		if (check_core(p, off, h->type, l.core))
			return -1;
		if (l.reason >= OPF_LOST_NREASONS)
			return fail(p, off, "OPF_LOST reason %u out of range (0..%u)", l.reason,
				    OPF_LOST_NREASONS - 1);
		if (k->lost && k->lost(p->arg, &l))
			return fail(p, off, "out of memory");
		return 0;
	}
	case OPF_CORE_END: {
		struct opf_core_end e = { 0 };

		/* an older, shorter record leaves the appended fields 0 */
		memcpy(&e, r, h->len < sizeof(e) ? h->len : sizeof(e));
		if (check_core(p, off, h->type, e.core))
			return -1;
		if (k->core_end && k->core_end(p->arg, off, &e, why, sizeof(why)))
			return sink_fail(p, off, why);
		return 0;
	}
	case OPF_SESSION_END: {
		struct opf_session_end e = { 0 };

		memcpy(&e, r, h->len < sizeof(e) ? h->len : sizeof(e));
		if (k->session_end && k->session_end(p->arg, off, &e))
			return fail(p, off, "out of memory");
		return 0;
	}
	case OPF_THROTTLE: {
		struct opf_throttle t;

		memcpy(&t, r, sizeof(t));
		if (check_core(p, off, h->type, t.core))
			return -1;
		if (k->throttle && k->throttle(p->arg, &t))
			return fail(p, off, "out of memory");
		return 0;
	}
	case OPF_SNAPSHOT: {
		struct opf_snapshot s;

		memcpy(&s, r, sizeof(s));
		if (k->snapshot && k->snapshot(p->arg, &s))
			return fail(p, off, "out of memory");
		return 0;
	}
	case OPF_PAUSE:
	case OPF_RESUME: {
		struct opf_mark m = { 0 };

		memcpy(&m, r, h->len < sizeof(m) ? h->len : sizeof(m));
		if (k->mark && k->mark(p->arg, h->type, &m))
			return fail(p, off, "out of memory");
		return 0;
	}
	default:
		if (k->unknown && k->unknown(p->arg, off, h->type, h->len))
			return fail(p, off, "out of memory");
		return 0;
	}
}

long opf_feed(struct opf_parser *p, const uint8_t *buf, size_t len)
{
	size_t pos = 0;

	while (len - pos >= sizeof(struct opf_rec)) {
		struct opf_rec h;

		memcpy(&h, buf + pos, sizeof(h));
		if (h.len < sizeof(struct opf_rec))
			return fail(p, p->off, "record length %u is less than 8", h.len);
		if (h.len % OPF_ALIGN)
			return fail(p, p->off, "record length %u is not a multiple of 8", h.len);
		if (h.len > OPF_MAX_REC)
			return fail(p, p->off, "record length %u exceeds the maximum %u", h.len,
				    OPF_MAX_REC);
		if (!p->have_session && h.type != OPF_SESSION)
			return fail(p, p->off,
				    "first record has type %u, not OPF_SESSION: not a profiler stream",
				    h.type);
		if (h.len > len - pos)
			break;
		if (record(p, buf + pos, &h))
			return -1;
		pos += h.len;
		p->off += h.len;
	}
	if (p->sink->flush && p->sink->flush(p->arg))
		return fail(p, p->off, "out of memory");
	return (long)pos;
}

int opf_finish(struct opf_parser *p, const uint8_t *rest, size_t restlen)
{
	if (restlen == 0) {
		if (!p->have_session)
			return (int)fail(p, p->off, "empty stream: no OPF_SESSION record");
		return 0;
	}
	if (restlen < sizeof(struct opf_rec))
		return (int)fail(p, p->off, "stream ends inside a record header (%zu of 8 bytes)",
				 restlen);
	struct opf_rec h;

	memcpy(&h, rest, sizeof(h));
	return (int)fail(p, p->off, "truncated %s record: length %u, only %zu bytes left",
			 type_name(h.type), h.len, restlen);
}

/* Read up to n bytes; a short count only at end of stream. Returns -1 on error. */
static ssize_t read_full(int fd, gzFile gz, uint8_t *b, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r;

		if (gz) {
			unsigned want = n - got > (1u << 30) ? 1u << 30 : (unsigned)(n - got);
			r = gzread(gz, b + got, want);
		} else {
			r = read(fd, b + got, n - got);
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

int opf_parse_file(struct opf_parser *p, const char *path)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	gzFile gz = NULL;
	size_t cap = READ_CHUNK + OPF_MAX_REC, have = 0;
	uint8_t *buf;
	int rc = -1;

	if (fd < 0) {
		snprintf(p->err, sizeof(p->err), "cannot open: %s", strerror(errno));
		return -1;
	}
	buf = aligned_alloc(OPF_ALIGN, cap);
	if (!buf) {
		snprintf(p->err, sizeof(p->err), "out of memory");
		goto out;
	}
	/* Sniff for gzip: offsets in messages then count decompressed bytes. */
	ssize_t n = read_full(fd, NULL, buf, 2);
	if (n < 0)
		goto ioerr;
	have = (size_t)n;
	if (have == 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
		if (fd != 0 && lseek(fd, 0, SEEK_SET) == 0) {
			gz = gzdopen(fd, "rb");
			fd = -1;
			have = 0;
		}
		if (!gz) {
			snprintf(p->err, sizeof(p->err), "gzip input must be a seekable file");
			goto out;
		}
	}
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (;;) {
		n = read_full(fd, gz, buf + have, READ_CHUNK);
		if (n < 0)
			goto ioerr;
		have += (size_t)n;
		long used = opf_feed(p, buf, have);
		if (used < 0)
			goto out;
		have -= (size_t)used;
		memmove(buf, buf + used, have);
		if (n == 0)
			break;
	}
	rc = opf_finish(p, buf, have);
	goto out;
ioerr:
	if (gz) {
		int e;
		snprintf(p->err, sizeof(p->err), "offset %llu: read error: %s",
			 (unsigned long long)(p->off + have), gzerror(gz, &e));
	} else {
		snprintf(p->err, sizeof(p->err), "read error: %s", strerror(errno));
	}
out:
	free(buf);
	if (gz)
		gzclose(gz);
	else if (fd > 0)
		close(fd);
	return rc;
}
