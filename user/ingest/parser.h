/*
 * parser.h: the validating, incremental parser of a profiler stream
 * (kern/include/abi/oprofile.h, format versions 1 and 2). Called by opreport.c (and the fuzz
 * target) through opf_parse_file or opf_feed/opf_finish; delivers records to a sink, which
 * profile.c provides.
 *
 * The parser owns no data: it checks each record's framing and fields and hands the decoded
 * record to the sink's handler for its type. It can be fed arbitrary chunks; it consumes whole
 * records only.
 */
#ifndef OPREPORT_STREAM_H
#define OPREPORT_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "abi/oprofile.h"

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the stream is little-endian; this reader assumes a little-endian host"
#endif

#define OPF_MAX_CORES	1024		/* this reader rejects sessions with more cores */
#define OPF_NTYPES	(OPF_CRASH_END + 1)	/* record types this reader knows are below this */

/* The fixed part of any known record, copied aligned and zero-extended. */
union opf_any {
	struct opf_rec h;
	struct opf_session session;
	struct opf_sample sample;
	struct opf_thread thread;
	struct opf_lost lost;
	struct opf_core_end core_end;
	struct opf_session_end session_end;
	struct opf_throttle throttle;
	struct opf_snapshot snapshot;
	struct opf_mark mark;
	struct opf_block block;
	struct opf_drop drop;
	struct opf_crash crash;
	struct opf_crash_core crash_core;
	struct opf_crash_end crash_end;
	struct opf_switch sw;
	struct opf_wakeup wakeup;
	struct opf_lockwait lockwait;
	struct opf_sched_end sched_end;
};

/*
 * One valid record as a handler sees it. A record shorter than this reader's struct (an older
 * version's) reads as zero past its end; a longer one (a newer version's) is cut to the struct.
 * tail points at the bytes after the struct in the caller's buffer (a sample's frames, a
 * thread's name): unaligned, valid only until the sink's flush.
 */
struct opf_view {
	uint64_t off;		/* stream offset of the record */
	uint32_t len;		/* its length in the stream */
	uint32_t version;	/* format version of the session it belongs to */
	const union opf_any *r;
	const uint8_t *tail;
};

/*
 * A handler returns 0 to go on, or -1 to stop the parse; it may write a one-line reason
 * (without offset) into err[0..errlen), else the reason is "out of memory".
 */
typedef int (*opf_handler)(void *arg, const struct opf_view *v, char *err, size_t errlen);

struct opf_sink {
	opf_handler on[OPF_NTYPES];	/* by record type; NULL ignores the type */
	opf_handler unknown;		/* records of a type this reader does not know */
	opf_handler every;		/* after the type's handler, for every record */
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
	uint32_t version;	/* of the current session */
	int cut;		/* the failure: the stream ends inside a record (at off) */
	int nomem;		/* the failure: out of memory, nothing wrong with the stream */
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

/* "OPF_SAMPLE" for a known type, "unknown" otherwise. */
const char *opf_type_name(uint16_t type);

#endif
