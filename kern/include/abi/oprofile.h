/*
 * The profiler's data stream: what /dev/oprofile produces and user/opreport reads.
 *
 * Shared verbatim by the kernel and the host tools, so it uses only fixed-width types and
 * no kernel headers. docs/FORMAT.md is the prose version of this file; keep them in step.
 *
 * A stream is a sequence of records. Every record starts with struct opf_rec, whose len
 * counts the whole record (header included) in bytes and is a multiple of 8, so a reader
 * can always step over a record it does not understand. Everything is little-endian and
 * every record starts 8-byte aligned. The first record of a stream is OPF_SESSION, whose
 * magic and version a reader checks before trusting anything else. The stream of a
 * session ends with one OPF_CORE_END per core followed by OPF_SESSION_END.
 *
 * Conservation, checkable from the file alone: for every core,
 *	taken == delivered + sum(lost[]) + overwritten
 * where delivered equals the number of OPF_SAMPLE records of that core in the stream.
 */
#ifndef ABI_OPROFILE_H
#define ABI_OPROFILE_H

#include <stdint.h>

#define OPF_MAGIC	0x0a464f52504b0a89ULL	/* bytes 89 0a 4b 50 52 4f 46 0a: "\x89\nKPROF\n" */
#define OPF_VERSION	1
#define OPF_ALIGN	8
#define OPF_MAX_DEPTH	64	/* most frames a sample may carry */
#define OPF_MAX_BUILD_ID 32
#define OPF_MAX_NAME	32	/* longest thread name, bytes, without NUL */
#define OPF_MAX_REC	(1u << 20)	/* no record is longer; a reader may reject larger */

enum opf_type {
	OPF_SESSION = 1,	/* struct opf_session: first record of every stream */
	OPF_SAMPLE = 2,		/* struct opf_sample */
	OPF_THREAD = 3,		/* struct opf_thread: a thread's name, at start or creation */
	OPF_LOST = 4,		/* struct opf_lost: samples a core could not record */
	OPF_CORE_END = 5,	/* struct opf_core_end: one per core, closing totals */
	OPF_SESSION_END = 6,	/* struct opf_session_end: last record of a session */
	OPF_THROTTLE = 7,	/* struct opf_throttle: a core changed its own rate */
	OPF_SNAPSHOT = 8,	/* struct opf_snapshot: begin/end of a flight-recorder dump */
	OPF_PAUSE = 9,		/* struct opf_mark: sampling paused at tsc */
	OPF_RESUME = 10,	/* struct opf_mark: sampling resumed at tsc */
};

/* Why a sample was not delivered. Indexes opf_core_end.lost[] and opf_lost.reason. */
enum opf_lost_reason {
	OPF_LOST_NO_BLOCK = 0,		/* the core's empty queue was empty at a block switch */
	OPF_LOST_OUTPUT_FULL = 1,	/* the worker dropped a block: output queue over its cap */
	OPF_LOST_PAUSED = 2,		/* a sample would have been taken while paused */
	OPF_LOST_OTHER = 3,		/* anything else (e.g. record larger than a block) */
	OPF_LOST_NREASONS = 4
};

/* Common header of every record. */
struct opf_rec {
	uint16_t type;		/* enum opf_type */
	uint16_t flags;		/* per type; OPF_F_* */
	uint32_t len;		/* bytes in the record, header included; multiple of 8 */
};

/* opf_rec.flags of OPF_SAMPLE */
#define OPF_F_TRUNCATED	0x0001	/* the frame walk stopped early (bad or out-of-stack fp) */
#define OPF_F_IDLE	0x0002	/* the core was idle (in its halt loop) */

/* opf_session.flags */
#define OPF_S_SNAPSHOT	0x0001	/* flight-recorder mode: data arrives only in snapshots */

struct opf_session {
	struct opf_rec h;
	uint64_t magic;		/* OPF_MAGIC */
	uint32_t version;	/* OPF_VERSION */
	uint32_t ncores;	/* cores sampling; core ids are 0..ncores-1 */
	uint32_t hz;		/* requested sampling rate per core */
	uint32_t depth;		/* most frames per sample */
	uint64_t tsc_hz;	/* TSC ticks per second, to turn timestamps into time */
	uint64_t start_tsc;	/* TSC when sampling started */
	uint64_t start_ns;	/* nanoseconds since boot when sampling started */
	uint32_t block_bytes;	/* size of a per-core block */
	uint32_t period_ms;	/* worker period */
	uint32_t flags;		/* OPF_S_* */
	uint32_t build_id_len;	/* bytes used in build_id */
	uint8_t build_id[OPF_MAX_BUILD_ID];	/* GNU build-id of the kernel ELF */
	uint64_t session_id;	/* counts sessions since boot, from 1 */
};

/*
 * One sample: the interrupted pc and up to depth return addresses, innermost first
 * (frames[0] is pc's caller). len = sizeof(struct opf_sample) + 8 * nframes, rounded to 8.
 */
struct opf_sample {
	struct opf_rec h;
	uint16_t core;
	uint16_t nframes;
	uint32_t tid;		/* thread id; 0 means the core's idle loop */
	uint64_t tsc;
	uint64_t pc;
	uint64_t frames[];
};

struct opf_thread {
	struct opf_rec h;
	uint32_t tid;
	uint16_t core;		/* core the thread was created on */
	uint16_t namelen;	/* bytes in name, no NUL; name is padded with zeros to 8 */
	uint64_t tsc;		/* when the thread was created, or start_tsc if alive at start */
	char name[];
};

/* count samples of core were lost for reason, since the previous opf_lost of that core. */
struct opf_lost {
	struct opf_rec h;
	uint16_t core;
	uint16_t reason;	/* enum opf_lost_reason */
	uint32_t pad;
	uint64_t count;
	uint64_t tsc;		/* when the record was written */
};

struct opf_core_end {
	struct opf_rec h;
	uint32_t core;
	uint32_t pad;
	uint64_t taken;		/* timer interrupts that tried to record a sample */
	uint64_t delivered;	/* samples of this core in the stream */
	uint64_t lost[OPF_LOST_NREASONS];
	uint64_t overwritten;	/* flight recorder: samples replaced by newer ones */
	uint64_t truncated;	/* delivered samples whose backtrace was cut short */
	uint64_t blocks;	/* blocks this core pushed */
	uint64_t throttles;	/* times this core lowered its rate */
	uint32_t final_hz;	/* rate at the end (lower than opf_session.hz if throttled) */
	uint32_t pad2;
	/*
	 * Appended after the first release (records without it are OPF_CORE_END_MIN_LEN long;
	 * read it as 0 then): timer expiries this core was too late to take -- interrupts held
	 * off, or its virtual CPU not running -- so taken + missed is the session's length in
	 * sampling periods. Not samples: in none of taken, delivered, lost.
	 */
	uint64_t missed;
};

/* Length of an OPF_CORE_END written before missed was appended: the shortest valid one. */
#define OPF_CORE_END_MIN_LEN 104u
_Static_assert(__builtin_offsetof(struct opf_core_end, missed) == OPF_CORE_END_MIN_LEN,
	       "OPF_CORE_END: missed must follow the version-1 fields");

struct opf_session_end {
	struct opf_rec h;
	uint64_t end_tsc;
	uint64_t end_ns;
	uint64_t blocks_dropped;	/* blocks the worker dropped for OPF_LOST_OUTPUT_FULL */
	uint64_t bytes;			/* bytes of the stream before this record */
};

struct opf_throttle {
	struct opf_rec h;
	uint32_t core;
	uint32_t new_hz;
	uint64_t tsc;
	uint32_t old_hz;
	uint32_t budget_pct;	/* the budget it was over (lowered) or well under (raised) */
};

struct opf_snapshot {
	struct opf_rec h;	/* flags: OPF_SNAP_BEGIN or OPF_SNAP_END */
	uint64_t seq;		/* counts snapshots in the session, from 1 */
	uint64_t tsc;
};
#define OPF_SNAP_BEGIN	0x0001
#define OPF_SNAP_END	0x0002

struct opf_mark {
	struct opf_rec h;
	uint64_t tsc;
};

static inline uint32_t opf_align(uint32_t n)
{
	return (n + OPF_ALIGN - 1) & ~(uint32_t)(OPF_ALIGN - 1);
}

static inline uint32_t opf_sample_len(uint32_t nframes)
{
	return opf_align((uint32_t)sizeof(struct opf_sample) + 8 * nframes);
}

static inline uint32_t opf_thread_len(uint32_t namelen)
{
	return opf_align((uint32_t)sizeof(struct opf_thread) + namelen);
}

#endif /* ABI_OPROFILE_H */
