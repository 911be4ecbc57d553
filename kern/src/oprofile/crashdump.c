/*
 * The crash dump: at panic, every core's window (crashrec.c), what each core was doing
 * when the panic's NMI stopped it, and the panicking core's own stack, written as one
 * stream (docs/FORMAT.md, "Crash dumps") to the crash port (arch_crash_write), which QEMU
 * connects to a file on the host.
 *
 * Contexts. crash_note: any context on the core about to panic (a fault report, the
 * watchdog in NMI context); the first note wins. crash_core_stopped: NMI context on a core
 * the panic stopped, once, before it halts for good; it writes only its own slot.
 * crash_dump: panic(), interrupts off, every other core stopped (or given up on), so it
 * owns everything: no lock, no allocation, no scheduler, no interrupt is needed; the
 * scratch is static because only one core ever gets here (panic lets one through).
 *
 * A core that did not answer the stop may still be writing its window: its blocks are
 * copied anyway and its OPF_CRASH_CORE says so (its newest block may then be torn).
 *
 * Threads are named as a session names them, by OPF_THREAD records (encode.c's rec_thread):
 * one for every live thread, after the cores' states, walked without the thread list's
 * lock (thread_foreach_stopped: its holder may be stopped). A thread that exited before
 * the panic but still has samples in a window stays unnamed.
 */
#include "crashrec.h"
#include "arch.h"
#include "cpu.h"
#include "sched.h"
#include "thread.h"

/* What a core was doing when it stopped (or, for the panicking core, its note). */
struct cstop {
	uint32_t valid;		/* release: the slot is filled */
	uint32_t tid;
	uint16_t nframes;
	uint16_t flags;		/* OPF_CC_* */
	uint64_t tsc;
	uint64_t pc;
	uint64_t frames[CRASH_DEPTH];
};

static struct cstop stops[MAX_CPUS];
static struct cstop note;
static int note_core = -1;
static uint32_t note_cause = OPF_CRASH_PANIC;
#define CRASH_THREADS	512	/* live threads a dump names; more stay unnamed */
static uint8_t kbuf[MAX_CPUS * (sizeof(struct opf_crash_core) + 8 * CRASH_DEPTH) + 512 +
		    CRASH_THREADS * sizeof(struct opf_thread) + CRASH_THREADS * OPF_MAX_NAME]
	__aligned(8);

/* tf's stack (tf NULL: the function whose frame fp is): pc, then CRASH_DEPTH callers. */
static uint16_t walk(const struct trapframe *tf, uintptr_t fp, uint64_t *pc, uint64_t *frames)
{
	struct cpu *c = this_cpu();
	uintptr_t lo = 0, hi = 0;

	if (c->cur)
		thread_stack(c->cur, &lo, &hi);
	return (uint16_t)arch_crash_walk(tf, fp, lo, hi, pc, frames, CRASH_DEPTH);
}

uint16_t crash_walk(const struct trapframe *tf, uint64_t *pc, uint64_t *frames)
{
	return walk(tf, 0, pc, frames);
}

static void fill_stop(struct cstop *s, const struct trapframe *tf, uintptr_t fp)
{
	struct cpu *c = this_cpu();

	s->tsc = tsc_read();
	s->tid = c ? (uint32_t)thread_tid(c->cur) : 0;
	s->flags = tf && !tf_irq_enabled(tf) ? OPF_CC_IRQOFF : 0;
	s->nframes = walk(tf, fp, &s->pc, s->frames);
	__atomic_store_n(&s->valid, 1, __ATOMIC_RELEASE);
}

void crash_note(const struct trapframe *tf, uint32_t cause)
{
	int none = -1;

	if (!__atomic_compare_exchange_n(&note_core, &none, core_id(), false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return;
	note_cause = cause;
	fill_stop(&note, tf, 0);
}

void crash_core_stopped(const struct trapframe *tf)
{
	must(arch_in_nmi(), "NMI context: the panic's stop");
	fill_stop(&stops[core_id()], tf, 0);
}

static uint64_t dump_bytes;

static void out(const void *p, size_t n)
{
	arch_crash_write(p, n);
	dump_bytes += n;
}

/* The dump's session start: the recorder's, or boot's when it never ran. */
static uint64_t dump_start_tsc(void)
{
	return crash.recording ? crash.start_tsc : crash.boot_tsc;
}

static void out_session(void)
{
	struct rec_session_desc d = {
		.ncores = (uint32_t)ncpus(), .hz = crash.cfg.hz, .depth = CRASH_DEPTH,
		.block_bytes = crash.bsize, .flags = OPF_S_SNAPSHOT | OPF_S_CRASH,
		.source = OPF_SRC_NMI,
		.start_tsc = dump_start_tsc(),
		.start_ns = crash.recording ? crash.start_ns : 0,
	};
	struct opf_session s;

	rec_session(&s, &d);
	out(&s, sizeof(s));
}

/* OPF_CRASH for the panicking core at p; returns its length. */
static uint32_t put_crash(uint8_t *p, const char *msg, const struct cstop *me, uint16_t flags)
{
	rec_crash(p, flags, (uint16_t)core_id(), note_cause, me->tsc, nsec(), me->pc, msg,
		  me->frames, me->nframes);
	return rec_crash_len(me->nframes);
}

static uint32_t window_blocks(const struct crec *r)
{
	return r->mem ? r->nsealed + (r->wp > BLK_HDR) : 0;
}

/* OPF_CRASH_CORE for core i at p (mine: the panicking core's stack); returns its length. */
static uint32_t put_core(uint8_t *p, int i, const struct cstop *mine)
{
	bool me = i == core_id();
	const struct cstop *s = me ? mine : &stops[i];
	bool ok = me || (__atomic_load_n(&s->valid, __ATOMIC_ACQUIRE) && arch_core_stopped(i));
	uint16_t n = ok && !me ? s->nframes : 0;
	uint16_t state = me ? OPF_CS_PANICKED : !READ_ONCE(cpus[i].online) ? OPF_CS_OFFLINE
		       : ok ? OPF_CS_STOPPED : OPF_CS_NO_ANSWER;

	rec_crash_core(p, ok ? s->flags : 0, (uint16_t)i, state, ok ? s->tid : 0,
		       crash.recording ? window_blocks(&crecs[i]) : 0, ok ? s->tsc : 0,
		       ok ? s->pc : 0, crecs[i].taken, crecs[i].overwritten, s->frames, n);
	return rec_crash_core_len(n);
}

/* thread_foreach_stopped callback: t's OPF_THREAD at kbuf + *len, while kbuf has room. */
static void put_thread(struct thread *t, void *len)
{
	uint32_t *at = len, n = rec_thread_len(thread_name(t));

	if (*at + n > sizeof(kbuf))
		return;
	rec_thread(kbuf + *at, (uint32_t)thread_tid(t), thread_core(t), thread_name(t),
		   dump_start_tsc());
	*at += n;
}

/* The kernel's block seq 0: the cause, every core's state, every live thread's name. */
static void out_states(const char *msg, const struct cstop *me, uint16_t flags)
{
	uint32_t len = BLK_HDR;

	len += put_crash(kbuf + len, msg, me, flags);
	for (int i = 0; i < ncpus(); i++)
		len += put_core(kbuf + len, i, me);
	thread_foreach_stopped(put_thread, &len, CRASH_THREADS);
	rec_block((struct opf_block *)kbuf, OPF_CORE_STREAM, 0, 0, len);
	out(kbuf, len);
}

/* Core i's window, oldest block first, then its partial block. */
static void out_window(int i)
{
	const struct crec *r = &crecs[i];
	struct opf_block h;

	for (uint32_t k = r->nsealed; k > 0; k--) {
		const uint8_t *b = crec_block(r, (r->cur + CRASH_NBLOCKS - k) % CRASH_NBLOCKS);

		out(b, MIN(((const struct opf_block *)b)->bytes, crash.bsize));
	}
	if (r->wp <= BLK_HDR)
		return;
	rec_block(&h, (uint16_t)i, r->samples, r->seq, r->wp);
	out(&h, sizeof(h));
	out(crec_block(r, r->cur) + BLK_HDR, r->wp - BLK_HDR);
}

static void out_end(void)
{
	struct {
		struct opf_block b;
		struct opf_crash_end e;
	} t;

	rec_block(&t.b, OPF_CORE_STREAM, 0, 1, sizeof(t));
	rec_crash_end(&t.e, dump_bytes, tsc_read());
	out(&t, sizeof(t));
}

/* The panicking core's stack: the note's if this core wrote one, else panic()'s caller. */
static void my_stack(struct cstop *me, uintptr_t fp)
{
	if (READ_ONCE(note_core) == core_id()) {
		*me = note;
		return;
	}
	fill_stop(me, NULL, fp);
}

void crash_dump(const char *msg, uintptr_t fp)
{
	static struct cstop me;
	bool early = crash.cfg.record && !crash.recording;

	if (!crash.host)
		return;
	my_stack(&me, fp);
	if (note_core == core_id()) {
		printk("crash: cpu %d was here:\n", core_id());
		arch_print_frames(me.pc, me.frames, me.nframes);
	}
	if (!crash.cfg.record || !crash.channel) {
		printk("crash: no crash dump written: %s\n", crash.channel ?
		       "the crash recorder is off" : "the host connected no crash port");
		return;
	}
	out_session();
	out_states(msg, &me, (arch_in_nmi() ? OPF_C_IN_NMI : 0) | (early ? OPF_C_NORECORD : 0));
	for (int i = 0; crash.recording && i < ncpus(); i++)
		out_window(i);
	out_end();
	printk("crash: dump written to the crash port: %lu bytes, %d cores%s\n",
	       (unsigned long)dump_bytes, ncpus(),
	       early ? " (the panic came before the recorder started: stacks only)" : "");
}
