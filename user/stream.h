/*
 * stream.h: the validating, incremental parser of a profiler stream (kern/include/abi/oprofile.h).
 *
 * The parser owns no data: it checks each record's framing and fields and hands the decoded
 * record to a sink. It can be fed arbitrary chunks; it consumes whole records only.
 */
#ifndef OPREPORT_STREAM_H
#define OPREPORT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "abi/oprofile.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the stream is little-endian; this reader assumes a little-endian host"
#endif

#define OPF_MAX_CORES	1024	/* this reader rejects sessions with more cores */

/*
 * What the parser calls for each valid record. off is the record's byte offset in the stream.
 * Fixed-size parts are copied into aligned structs; frames points at nframes little-endian
 * uint64 values that may be unaligned (read them with memcpy). A callback returns 0 to go on,
 * or -1 after writing a one-line reason (without offset) into err[0..errlen); the parser then
 * stops with that reason. Any callback may be NULL.
 */
struct opf_sink {
	int (*session)(void *arg, uint64_t off, const struct opf_session *s, char *err, size_t errlen);
	int (*sample)(void *arg, const struct opf_sample *s, const uint8_t *frames);
	int (*thread)(void *arg, const struct opf_thread *t, const char *name);
	int (*lost)(void *arg, const struct opf_lost *l);
	int (*core_end)(void *arg, uint64_t off, const struct opf_core_end *e, char *err,
			size_t errlen);
	int (*session_end)(void *arg, uint64_t off, const struct opf_session_end *e);
	int (*throttle)(void *arg, const struct opf_throttle *t);
	int (*snapshot)(void *arg, const struct opf_snapshot *s);
	int (*mark)(void *arg, uint16_t type, const struct opf_mark *m);
	int (*unknown)(void *arg, uint64_t off, uint16_t type, uint32_t len);
	/* Called before opf_feed returns successfully: the buffer it was given may be reused
	 * after this, so a sink holding pointers into it (frames) must be done with them. */
	int (*flush)(void *arg);
};

struct opf_parser {
	const struct opf_sink *sink;
	void *arg;
	uint64_t off;		/* stream offset of the next unconsumed byte */
	int have_session;	/* an OPF_SESSION has been seen */
	uint32_t ncores;	/* of the current session */
	char err[256];		/* "offset N: reason" after a failure */
};

void opf_parser_init(struct opf_parser *p, const struct opf_sink *sink, void *arg);

/*
 * Parse the whole records at the start of buf[0..len). Returns the number of bytes consumed
 * (a multiple of 8; the rest is an incomplete record to be fed again with more data after it),
 * or -1 when the stream is invalid, with p->err set. Bad framing is detected as soon as a
 * record's 8-byte header is present.
 */
long opf_feed(struct opf_parser *p, const uint8_t *buf, size_t len);

/*
 * Call at end of stream with the unconsumed bytes left over from the last opf_feed.
 * Returns 0 if the stream ended on a record boundary after a session header, else -1 with
 * p->err set (empty stream, or a record cut off by the end of the stream).
 */
int opf_finish(struct opf_parser *p, const uint8_t *rest, size_t restlen);

/* Read a whole file (or "-" for stdin; gzip-compressed input is accepted) through a parser.
 * Returns 0, or -1 with p->err set (I/O errors are reported there too). */
int opf_parse_file(struct opf_parser *p, const char *path);

#endif
