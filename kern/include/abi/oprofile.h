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
 * Version 2 frames the stream in blocks: after OPF_SESSION, every record belongs to a block
 * that starts with an OPF_BLOCK record naming the core that wrote it (or OPF_CORE_STREAM,
 * the kernel's own records), the block's sequence number for that writer, its length and
 * its samples. A reader can therefore check the stream against the kernel's counters
 * without trusting them: per core, no block is missing (unless OPF_DROP or the flight
 * recorder's overwritten count says why) or repeated, every block holds the samples and
 * bytes its header says, and
 *	taken == delivered + sum(lost[]) + overwritten
 * where delivered equals the number of OPF_SAMPLE records of that core in the stream.
 */
#ifndef ABI_OPROFILE_H
#define ABI_OPROFILE_H

#include <stdbool.h>
#include <stdint.h>

#define OPF_MAGIC	0x0a464f52504b0a89ULL	/* bytes 89 0a 4b 50 52 4f 46 0a: "\x89\nKPROF\n" */
#define OPF_VERSION	2	/* what the kernel writes */
#define OPF_VERSION_MIN	1	/* oldest a reader must still read: no blocks, session-wide marks */
#define OPF_ALIGN	8
#define OPF_MAX_DEPTH	64	/* most frames a sample may carry */
#define OPF_MAX_BUILD_ID 32
#define OPF_MAX_NAME	32	/* longest thread name, bytes, without NUL */
#define OPF_MAX_REC	(1u << 20)	/* no record is longer; a reader may reject larger */
#define OPF_CORE_STREAM	0xffffu	/* opf_block.core of the kernel's own blocks */

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
	OPF_BLOCK = 11,		/* struct opf_block: v2, first record of every block */
	OPF_DROP = 12,		/* struct opf_drop: v2, blocks the worker dropped */
	/* Scheduler events (sessions with OPF_S_SCHED only, "start -e sched") */
	OPF_SWITCH = 13,	/* struct opf_switch: a core switched threads */
	OPF_WAKEUP = 14,	/* struct opf_wakeup: a thread made another runnable */
	OPF_LOCKWAIT = 15,	/* struct opf_lockwait: a contended lock was taken at last */
	OPF_SCHED_END = 16,	/* struct opf_sched_end: one per core, closing event totals */
	OPF_SWITCH_SHORT = 17,	/* struct opf_switch_short: a switch whose prev needs no stack */
	OPF_SWITCH_SAME = 18,	/* struct opf_switch_short: a blocking switch whose wait is the
				   last OPF_SWITCH's of prev_tid in this block */
	OPF_CRASH = 20,		/* struct opf_crash: a crash dump's cause and panic stack */
	OPF_CRASH_CORE = 21,	/* struct opf_crash_core: one core's state when stopped */
	OPF_CRASH_END = 22,	/* struct opf_crash_end: the dump arrived whole */
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
#define OPF_F_DEPTH	0x0004	/* v2: the walk stopped at the depth limit with frames left */
#define OPF_F_IRQOFF	0x0008	/* v2: interrupts were off where the sample was taken (NMI) */

/* opf_session.flags */
#define OPF_S_SNAPSHOT	0x0001	/* flight-recorder mode: data arrives only in snapshots */
#define OPF_S_RESUMED	0x0002	/* v2: a repeat of the session's header for a reader that
				   opened mid-stream; what came before went to an earlier reader */
#define OPF_S_SCHED	0x0004	/* scheduler and lock events: OPF_SWITCH(_SHORT), OPF_WAKEUP,
				   OPF_LOCKWAIT in the cores' blocks, OPF_SCHED_END at the end */
#define OPF_S_CRASH	0x0008	/* v2: a crash dump (OPF_CRASH follows): each core's last
				   window of the always-on crash recorder, written at a panic */
#define OPF_S_CLOCK_TOLD 0x0010	/* clock OPF_CLOCK_INSN because the launcher said -icount
				   (fw_cfg); without it the kernel measured it */

/* opf_session.source (v2): what took the samples */
enum opf_source {
	OPF_SRC_TIMER = 0,	/* each core's timer interrupt: blind where interrupts are off */
	OPF_SRC_NMI = 1,	/* non-maskable interrupts: sees interrupt-disabled code too */
};

/* opf_session.machine: what the kernel ran on (CPUID's hypervisor signature) */
enum opf_machine {
	OPF_MACH_UNKNOWN = 0,	/* a stream from before the clock fields */
	OPF_MACH_BARE = 1,	/* no hypervisor: hardware */
	OPF_MACH_QEMU_TCG = 2,	/* QEMU's emulator, "TCGTCGTCGTCG" */
	OPF_MACH_KVM = 3,	/* "KVMKVMKVM" */
	OPF_MACH_OTHER = 4,	/* another hypervisor; hv_sig names it */
};

/* opf_session.clock: what the time between samples -- so a sample's weight -- measures */
enum opf_clock {
	OPF_CLOCK_UNKNOWN = 0,	/* a stream from before the clock fields */
	OPF_CLOCK_EMULATION = 1, /* the host's time spent emulating (QEMU TCG without -icount):
				   calls, returns and block boundaries cost far more than
				   straight-line code, so callers and callees are mis-weighted */
	OPF_CLOCK_INSN = 2,	/* instructions executed (QEMU -icount): 2^icount_shift ns each */
	OPF_CLOCK_HARDWARE = 3,	/* real time on real or hardware-virtualized cores */
};

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
	/* v2 (a version-1 record ends here: OPF_SESSION_V1_LEN) */
	uint32_t source;	/* enum opf_source */
	uint32_t pad;
	uint64_t cap;		/* output queue cap, bytes of memory */
	/*
	 * Appended to v2 (a record of OPF_SESSION_V2_LEN bytes ends here; read these as zero:
	 * OPF_MACH_UNKNOWN, OPF_CLOCK_UNKNOWN)
	 */
	uint32_t machine;	/* enum opf_machine */
	uint32_t clock;		/* enum opf_clock */
	int32_t icount_shift;	/* OPF_CLOCK_INSN: each instruction is 2^shift ns; else -1 */
	uint32_t pad2;
	char hv_sig[16];	/* CPUID 0x40000000 signature, NUL-padded; empty on hardware */
};
#define OPF_SESSION_V1_LEN 112u
#define OPF_SESSION_V2_LEN 128u		/* the shortest valid version-2 record */
_Static_assert(__builtin_offsetof(struct opf_session, machine) == OPF_SESSION_V2_LEN,
	       "OPF_SESSION: the clock fields must follow the first v2 fields");

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

/*
 * count samples of core were lost for reason, since the previous opf_lost of that core
 * and reason. In v2 the reason is never OPF_LOST_OUTPUT_FULL: OPF_DROP tells those.
 */
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
	uint64_t taken;		/* sampling interrupts that tried to record a sample */
	uint64_t delivered;	/* samples of this core in the stream */
	uint64_t lost[OPF_LOST_NREASONS];
	uint64_t overwritten;	/* flight recorder: samples replaced by newer ones */
	uint64_t truncated;	/* delivered samples whose backtrace was cut short */
	uint64_t blocks;	/* blocks this core pushed: their seqs are 0 .. blocks-1 */
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
	/* v2 (a version-1 record ends here: OPF_CORE_END_V1_LEN) */
	uint64_t blocks_dropped;	/* of blocks: dropped by the worker (output full) */
	uint64_t blocks_unlisted;	/* of those, whose seqs no OPF_DROP names (no room) */
	uint64_t blocks_overwritten;	/* of blocks: reused by the flight recorder */
	uint64_t depth_cut;		/* delivered samples with OPF_F_DEPTH */
};

/* Length of an OPF_CORE_END written before missed was appended: the shortest valid one. */
#define OPF_CORE_END_MIN_LEN 104u
#define OPF_CORE_END_V1_LEN 112u
_Static_assert(__builtin_offsetof(struct opf_core_end, missed) == OPF_CORE_END_MIN_LEN,
	       "OPF_CORE_END: missed must follow the version-1 fields");
_Static_assert(__builtin_offsetof(struct opf_core_end, blocks_dropped) == OPF_CORE_END_V1_LEN,
	       "OPF_CORE_END: the v2 fields must follow missed");

/* opf_rec.flags of OPF_SESSION_END */
#define OPF_SE_DISCARDED 0x0001	/* v2: "discard" threw the rest of the session away */

struct opf_session_end {
	struct opf_rec h;
	uint64_t end_tsc;
	uint64_t end_ns;
	uint64_t blocks_dropped;	/* blocks the worker dropped for OPF_LOST_OUTPUT_FULL */
	uint64_t bytes;			/* bytes of the stream before this record */
	/* v2 (a version-1 record ends here: OPF_SESSION_END_V1_LEN) */
	uint64_t marks_lost;		/* kernel records (markers) that found no room */
};
#define OPF_SESSION_END_V1_LEN 40u

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

/*
 * Pause and resume. v1: 16 bytes, session-wide, written by the ctl thread. v2: each core
 * writes its own into its own blocks, in time order with its samples.
 */
struct opf_mark {
	struct opf_rec h;
	uint64_t tsc;
	/* v2 (a version-1 record ends here: OPF_MARK_V1_LEN) */
	uint32_t core;
	uint32_t pad;
};
#define OPF_MARK_V1_LEN 16u

/* opf_rec.flags of OPF_BLOCK */
#define OPF_B_PARTIAL	0x0001	/* the rest of a block an earlier reader began: samples and
				   bytes count what follows here only */

/*
 * v2: first record of every block. Records up to the next OPF_BLOCK (or OPF_SESSION, or the
 * end of the stream) belong to it; bytes counts them all, this record included.
 */
struct opf_block {
	struct opf_rec h;
	uint16_t core;		/* writer: a core, or OPF_CORE_STREAM for the kernel's own */
	uint16_t pad;
	uint32_t samples;	/* OPF_SAMPLE records in the block */
	uint64_t seq;		/* per writer, from 0, one more for every block it pushed */
	uint32_t bytes;		/* the block's length in the stream */
	uint32_t pad2;
};

/*
 * v2: the worker dropped blocks seq .. seq + blocks - 1 of core (the output queue was over
 * its cap); their samples are lost OPF_LOST_OUTPUT_FULL. Each dropped block is in at most
 * one OPF_DROP. Drops the kernel had no room to list one by one are told at the end by an
 * OPF_DROP with flag OPF_D_UNLISTED: blocks and samples only, seq meaningless; their count
 * is opf_core_end.blocks_unlisted. The samples of all of a core's OPF_DROP records add up to
 * its lost[OPF_LOST_OUTPUT_FULL].
 */
#define OPF_D_UNLISTED	0x0001
struct opf_drop {
	struct opf_rec h;
	uint16_t core;
	uint16_t pad;
	uint32_t blocks;
	uint64_t seq;
	uint64_t samples;
};

/*
 * Scheduler events. Each is written by the core it happens on (the switching core, the
 * waking core, the core that finally took the lock) into that core's current block, in
 * time order with its samples; like samples they are counted per core, taken = in the
 * stream + lost[] + overwritten (OPF_SCHED_END). tid 0 is the core's idle thread.
 */

/* Why a thread stopped running: opf_switch.why */
enum opf_why {
	OPF_WHY_PREEMPT = 0,	/* its slice ended; still runnable */
	OPF_WHY_YIELD = 1,	/* it gave the core up; still runnable */
	OPF_WHY_SLEEP = 2,	/* a timed sleep (thread_sleep_us) */
	OPF_WHY_RENDEZ = 3,	/* waits on a rendez: obj its address, site its condition */
	OPF_WHY_QLOCK = 4,	/* waits for a qlock: obj, name, holder */
	OPF_WHY_IO = 5,		/* waits for a device's reply (9P, virtio): obj, name */
	OPF_WHY_EXIT = 6,	/* it exited; it never runs again */
	OPF_WHY_N = 7
};

/*
 * Whether a thread switched out for this reason waits (SLEEP, RENDEZ, QLOCK, IO: its wait
 * and its stack are told), rather than staying runnable (PREEMPT, YIELD) or being gone
 * (EXIT). The waiting reasons are the ones between YIELD and EXIT (asserted: a new one
 * goes there), so the test is two compares, as cheap as the scheduler's switch wants it.
 */
static inline bool opf_why_waits(unsigned why)
{
	return why > OPF_WHY_YIELD && why < OPF_WHY_EXIT;
}
_Static_assert(OPF_WHY_PREEMPT < OPF_WHY_YIELD && OPF_WHY_YIELD < OPF_WHY_SLEEP &&
	       OPF_WHY_SLEEP < OPF_WHY_RENDEZ && OPF_WHY_RENDEZ < OPF_WHY_QLOCK &&
	       OPF_WHY_QLOCK < OPF_WHY_IO && OPF_WHY_IO < OPF_WHY_EXIT,
	       "opf_why_waits: the waiting reasons lie between YIELD and EXIT");

#define OPF_OBJ_NAME	16	/* bytes of an object's name in a record, NUL-padded */

/*
 * prev stopped running on core at tsc and next started. frames: prev's stack at the switch,
 * innermost first (nframes <= the session's depth). prev_cpu: the kernel's own count of
 * prev's running time, TSC ticks, the slice ending at tsc included -- so a reader can check
 * the switches it sees against the scheduler. len = sizeof + 8 * nframes.
 */
struct opf_switch {
	struct opf_rec h;
	uint16_t core;
	uint16_t why;		/* enum opf_why */
	uint16_t nframes;
	uint16_t pad;
	uint32_t prev_tid;
	uint32_t next_tid;
	uint64_t tsc;
	uint64_t prev_cpu;	/* TSC ticks prev has run since it was created */
	uint64_t obj;		/* address of what prev waits on (RENDEZ, QLOCK, IO), or 0 */
	uint64_t site;		/* RENDEZ: the address of its condition function; else 0 */
	uint32_t holder;	/* QLOCK: tid of the holder when prev blocked; else 0 */
	uint32_t pad2;
	char name[OPF_OBJ_NAME];	/* QLOCK, IO: the object's name */
	uint64_t frames[];
};

/*
 * The switches whose prev has no wait to explain -- preempted and yield (still runnable),
 * exit (never runs again) -- are written as OPF_SWITCH_SHORT: the first 40 bytes of
 * struct opf_switch, field for field, without obj, site, holder, name and stack (nframes
 * 0). A reader takes it as an OPF_SWITCH with those zero. Half the bytes and no stack walk
 * keep the commonest switch cheap (tests/bench/schedcost.sh); the stack is what off-CPU
 * analysis of a blocked thread needs, and blocking switches keep it.
 */
struct opf_switch_short {
	struct opf_rec h;
	uint16_t core;
	uint16_t why;		/* OPF_WHY_PREEMPT, OPF_WHY_YIELD or OPF_WHY_EXIT */
	uint16_t nframes;	/* 0 */
	uint16_t pad;
	uint32_t prev_tid;
	uint32_t next_tid;
	uint64_t tsc;
	uint64_t prev_cpu;
};
_Static_assert(sizeof(struct opf_switch_short) == __builtin_offsetof(struct opf_switch, obj),
	       "OPF_SWITCH_SHORT is OPF_SWITCH cut before obj");

/*
 * A blocking switch (why SLEEP, RENDEZ, QLOCK or IO) whose prev waits where it waited at its
 * last blocking switch is written as OPF_SWITCH_SAME, laid out as struct opf_switch_short:
 * its obj, site, holder, name and frames are those of the last OPF_SWITCH of prev_tid
 * earlier in the same block (a core's block holds its threads' switches: threads are
 * pinned). The kernel writes one only when it has proven them equal -- the same wait and
 * every word its walk of prev's stack read the same -- and never refers across blocks, so
 * a block stands alone (dropped, overwritten or read in any order). A reader takes it as
 * that OPF_SWITCH with this record's core, why, tids, tsc and prev_cpu. In a block that
 * begins with OPF_B_PARTIAL the OPF_SWITCH may be in the part an earlier reader got: then
 * the switch reads with no frames; in a whole block a reference to nothing is an invalid
 * stream.
 */

/* flags of OPF_WAKEUP */
#define OPF_W_IRQ	0x0001	/* the waker was an interrupt handler (waker: who it interrupted) */
#define OPF_W_RESUMED	0x0002	/* written by the switch that resumed tid (or the stop): in
				   target_core's block, its tsc maybe earlier than records
				   before it; the waker's core is waker_core */

/* waker (on core, or waker_core with OPF_W_RESUMED) made tid, a thread of target_core,
   runnable at tsc. */
struct opf_wakeup {
	struct opf_rec h;
	uint16_t core;		/* the block's: the waker's, or with OPF_W_RESUMED target_core */
	uint16_t target_core;
	uint32_t tid;
	uint32_t waker;
	uint16_t waker_core;	/* OPF_W_RESUMED: the waker's core (else 0) */
	uint16_t pad;
	uint64_t tsc;
};

enum opf_lock_kind {
	OPF_LK_QLOCK = 0,	/* sleeping lock: every contended acquisition */
	OPF_LK_SPIN = 1,	/* spinlock: acquisitions that spun OPROF_SPIN_REPORT or longer */
};

/*
 * tid took lock at tsc after waiting wait TSC ticks for it; holder held it when tid first
 * found it taken (spin: the holder's core | 0x80000000, a spinlock knows no thread).
 * frames: tid's stack where it asked for the lock.
 */
struct opf_lockwait {
	struct opf_rec h;
	uint16_t core;
	uint16_t kind;		/* enum opf_lock_kind */
	uint16_t nframes;
	uint16_t pad;
	uint32_t tid;
	uint32_t holder;
	uint64_t tsc;
	uint64_t wait;
	uint64_t lock;		/* the lock's address */
	char name[OPF_OBJ_NAME];
	uint64_t frames[];
};
#define OPF_HOLDER_CORE	0x80000000u	/* opf_lockwait.holder names a core, not a thread */
#define OPF_HOLDER_NONE	0xffffu		/* ... not known: it let go before the waiter looked */

/* Events by kind (opf_sched_end.written[]) */
enum opf_ev {
	OPF_EV_SWITCH = 0,	/* OPF_SWITCH, OPF_SWITCH_SHORT and OPF_SWITCH_SAME */
	OPF_EV_WAKEUP = 1,
	OPF_EV_LOCK = 2,
	OPF_EV_N = 3
};

/*
 * Closing totals of one core's events (after its OPF_CORE_END). Per core:
 *	taken == (its OPF_SWITCH(_SHORT, _SAME) + OPF_WAKEUP + OPF_LOCKWAIT records in the stream)
 *		 + sum(lost[]) + overwritten
 * lost[] by the reasons of samples: NO_BLOCK (no room), OUTPUT_FULL (in a block the worker
 * dropped), PAUSED (the session was paused), OTHER (the core was already writing: an event
 * raised inside the profiler's own hot path, or a record larger than a block).
 */
struct opf_sched_end {
	struct opf_rec h;
	uint32_t core;
	uint32_t pad;
	uint64_t taken;		/* events that tried to write a record */
	uint64_t written[OPF_EV_N];	/* records written into blocks, by kind */
	uint64_t lost[OPF_LOST_NREASONS];
	uint64_t overwritten;	/* flight recorder: in blocks reused for newer */
};

static inline uint32_t opf_switch_len(uint32_t nframes)
{
	return (uint32_t)sizeof(struct opf_switch) + 8 * nframes;
}

static inline uint32_t opf_lockwait_len(uint32_t nframes)
{
	return (uint32_t)sizeof(struct opf_lockwait) + 8 * nframes;
}

/*
 * Crash dumps (kern/src/oprofile/crash.c). The stream is OPF_SESSION (flags OPF_S_SNAPSHOT |
 * OPF_S_CRASH), then a kernel block (OPF_CORE_STREAM, seq 0) holding OPF_CRASH and one
 * OPF_CRASH_CORE per core, then every core's window (its blocks oldest first, the partial
 * one last), then a kernel block (seq 1) holding OPF_CRASH_END. A dump without
 * OPF_CRASH_END was cut short: everything before the cut is still valid.
 */
enum opf_crash_cause {
	OPF_CRASH_PANIC = 0,	/* an explicit panic() */
	OPF_CRASH_FAULT = 1,	/* a CPU exception (page fault, ...) */
	OPF_CRASH_LOCKUP = 2,	/* the NMI watchdog: a core stopped taking timer interrupts */
};

/* opf_rec.flags of OPF_CRASH */
#define OPF_C_IN_NMI	0x0001	/* the panic happened inside the NMI handler */
#define OPF_C_NORECORD	0x0002	/* no window: the recorder was not running (off, or the
				   panic came before it started); only the stacks are here */

#define OPF_CRASH_MSG	96	/* bytes of the panic message, NUL-padded */

struct opf_crash {
	struct opf_rec h;
	uint16_t core;		/* the core that panicked */
	uint16_t nframes;	/* frames[] */
	uint32_t cause;		/* enum opf_crash_cause */
	uint64_t tsc;		/* when it panicked */
	uint64_t ns;		/* nanoseconds since boot then */
	uint64_t pc;		/* where: the faulting, locked-up, or panic()-calling pc */
	char msg[OPF_CRASH_MSG];	/* the panic message */
	uint64_t frames[];	/* pc's callers, innermost first */
};

/* opf_crash_core.state */
enum opf_crash_state {
	OPF_CS_PANICKED = 0,	/* the panicking core: its stack is in OPF_CRASH */
	OPF_CS_STOPPED = 1,	/* stopped by the panic's NMI; pc and frames where it was */
	OPF_CS_NO_ANSWER = 2,	/* did not answer the NMI in time: window copied anyway */
	OPF_CS_OFFLINE = 3,	/* never came online */
};

/* opf_rec.flags of OPF_CRASH_CORE */
#define OPF_CC_IRQOFF	0x0001	/* interrupts were off where the NMI stopped it */

struct opf_crash_core {
	struct opf_rec h;
	uint16_t core;
	uint16_t state;		/* enum opf_crash_state */
	uint16_t nframes;	/* frames[] */
	uint16_t pad;
	uint32_t tid;		/* thread it was running (0: idle loop or none) */
	uint32_t blocks;	/* blocks of its window that follow */
	uint64_t tsc;		/* when it stopped */
	uint64_t pc;
	uint64_t taken;		/* samples the recorder took on it since it started */
	uint64_t overwritten;	/* of those, in blocks reused for newer ones */
	uint64_t frames[];
};

struct opf_crash_end {
	struct opf_rec h;
	uint64_t bytes;		/* of the dump before this record's block */
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
