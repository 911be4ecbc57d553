/*
 * The sampling profiler, as the rest of the kernel sees it (implemented in kern/src/oprofile/).
 *
 * Contexts, and what each may call:
 *	sampling interrupt or NMI	oprof_tick_irq (which may call back hooks->set_rate
 *	(core N)			and hooks->kick on the same core)
 *	any thread, on core N		oprof_thread_created (the thread-create hook)
 *	the worker kthread (core 0)	oprof_worker_wait, oprof_worker_pass
 *	ordinary interrupt or thread	oprof_worker_wake (what hooks->kick arranges)
 *	device file operations		oprof_open, oprof_read, oprof_close, oprof_ctl,
 *					oprof_stat_text (thread context; they may sleep)
 *	boot				oprof_init, once, before any of the above
 *
 * The glue (kern/src/oprofile/glue.c, its sampling source in sampler.c) implements struct
 * oprof_hooks: the profiler's portable core never touches timers, trap frames or the
 * thread list itself.
 */
#ifndef OPROFILE_H
#define OPROFILE_H

#include "kernel.h"

/* Defaults and limits of the settings (see oprof_ctl). */
#define OPROF_DEF_HZ		1000
#define OPROF_MAX_HZ		20000		/* default "maxhz": the rates the profiler is built for */
#define OPROF_ABS_MAX_HZ	100000		/* "maxhz" may go this far; the budget guards it */
#define OPROF_DEF_DEPTH		16
#define OPROF_DEF_BLOCK		(32 * 1024)
#define OPROF_MIN_BLOCK		256
#define OPROF_MAX_BLOCK		(1024 * 1024)	/* keeps a block's sample count below 2^16 */
#define OPROF_DEF_PERIOD_MS	100
#define OPROF_DEF_CAP		(64ull << 20)
#define OPROF_DEF_STALE		2		/* worker periods */
#define OPROF_DEF_EMPTYDEPTH	4		/* least blocks per core's empty queue */
#define OPROF_MAX_EMPTYDEPTH	256		/* most the worker gives a core as its rate grows */
#define OPROF_DEF_WINDOW	8		/* flight recorder: blocks per core */
#define OPROF_MAX_WINDOW	1024
#define OPROF_DEF_BUDGET	25		/* percent of a core's time sampling may take */
#define OPROF_DEF_JITTER	100		/* percent of a period a sample's moment spreads over */
#define OPROF_BUDGET_MS		100		/* the window the budget is measured over */
#define OPROF_TICK_MAX_US	1000		/* most one tick is charged against the budget, */
#define OPROF_TICK_MAX_PERIODS	4		/* ... and at most this many of its periods */
#define OPROF_BUDGET_STRIKES	5		/* windows over budget in a row before halving */
#define OPROF_BUDGET_EVERY	8		/* the budget times one tick in this many (2^n) */
#define OPROF_RAISE_WINDOWS	10		/* windows under a quarter of it before doubling */

struct schedev_ops;

/* Callback of oprof_hooks.foreach_thread: one live thread. */
typedef void (*oprof_thread_fn)(void *arg, uint32_t tid, int core, const char *name);

/*
 * What the glue provides. All but set_rate and kick are called from the ctl thread (thread
 * context, may sleep) with the profiler's session lock held, so they must not call back
 * into oprof_ctl, oprof_worker_pass or oprof_stat_text.
 */
struct oprof_hooks {
	/*
	 * Start sampling every online core 0..ncpus()-1 about hz times a second from source
	 * (enum opf_source: its timer interrupt, or NMIs); each sample calls oprof_tick_irq
	 * on its own core. Sample k is taken at its grid point k / hz s from the start, moved
	 * by an offset spread over spread percent of a period, drawn from seed (jitter.h: the
	 * session header records both). 0 or -errno (then no core may be left sampling;
	 * -ENODEV: no such source on this machine).
	 */
	int (*start_sampling)(uint32_t hz, uint32_t source, uint32_t spread, uint64_t seed);
	/*
	 * Stop sampling: return once no core is inside, or will enter, a sampling interrupt
	 * or NMI (timer: a thread that disarms each core's timer has run there; NMI: no
	 * core is in its handler). Thread-context writers (oprof_thread_created, on any
	 * core) the profiler then waits out itself, with on_core on every core: a thread can
	 * only run on a core once nothing there has interrupts off. Without on_core, this
	 * hook must also wait for those (run a thread on every core) before returning.
	 */
	void (*stop_sampling)(void);
	/*
	 * Call fn(arg, tid, core, name) for every live thread. fn writes records into blocks
	 * it may kmalloc (never sleeps); it does not otherwise care which locks are held.
	 */
	void (*foreach_thread)(oprof_thread_fn fn, void *arg);
	/*
	 * Interrupt context on core, from inside oprof_tick_irq (that is,
	 * from the core's own sampling callback): from now on sample this core at hz. Used by
	 * the overhead budget to lower a core's rate. May be NULL.
	 */
	void (*set_rate)(int core, uint32_t hz);
	/*
	 * Any context, NMI included: see that oprof_worker_wake runs soon in ordinary
	 * (interrupt or thread) context. May be NULL: then the worker is woken directly,
	 * which is not NMI-safe.
	 */
	void (*kick)(void);
	/*
	 * Run fn(arg) on core in thread context with interrupts off and return when it did
	 * (it waits for the core's interrupts to be on). For a core that did not hand its
	 * flight-recorder window over in time, and at stop, to wait out a thread-context
	 * writer on every core. May be NULL: then the ctl thread waits, and stop_sampling
	 * must wait out those writers itself.
	 */
	void (*on_core)(int core, void (*fn)(void *), void *arg);
	/*
	 * At init: the source a session uses unless told otherwise (the "mode" setting's
	 * default): the truest this machine has. May be NULL: the timer.
	 */
	uint32_t (*default_source)(void);
	/*
	 * Start (ops) or stop (NULL) the scheduler and lock events of a session started with
	 * "-e sched" (schedev_register). May be NULL: no events.
	 */
	void (*sched_events)(const struct schedev_ops *ops);
	/*
	 * Any context: as kick, but never a direct wake-up (a self-interrupt). The profiler
	 * kicks this way from inside any writer on a core (a tick, an event whose caller
	 * may hold the locks a wake-up takes, an NMI). May be NULL: kick is used.
	 */
	void (*kick_later)(void);
};

/*
 * Failures a test arms with the ctl command "inject" (ctl.c, beside oprof_fault_take), each
 * taken once: the code that would fail asks oprof_fault_take (any context) and acts as if
 * it had.
 */
#define OPROF_FAULT_DROP_BLOCK	0x1	/* the worker frees a full block and counts nothing */
#define OPROF_FAULT_ARM		0x2	/* arming the last core fails at the next start, and
					   so does the first try at disarming core 0 after it */
#define OPROF_FAULT_NOMEM	0x4	/* the pool refuses the next block it would give
					   under its limit (pool_get, not forced) */
bool oprof_fault_take(unsigned fault);

/* Boot, thread context: the profiler's state, its worker on core 0 and its files (glue.c). */
void oprofile_init(void);
/* The device files /dev/oprofile, /dev/oprofilectl, /dev/oprofilestat (devoprofile.c). */
void devoprofile_init(void);

/* Boot: set defaults, create the output queue. hooks must stay valid forever. */
void oprof_init(const struct oprof_hooks *hooks);
/* Host tests only: free what oprof_init made. The profiler must be idle with no reader. */
void oprof_fini(void);

/*
 * Run one line of /dev/oprofilectl (trailing newline allowed). 0 on success; otherwise
 * -errno, with a one-line message starting "oprofile: " in err (always NUL terminated).
 * The commands and settings are the tables in ctl.c; oprof_ctl_help lists them. A line is
 * shorter than OPROF_CTL_LINE bytes; a longer one is refused ("command too long").
 */
#define OPROF_CTL_LINE	160
int oprof_ctl(const char *line, char *err, size_t errlen);
/*
 * Every command with its usage and every setting with its range and next value, one per
 * line, into buf (NUL terminated, truncated to n - 1). Returns the whole text's length.
 */
size_t oprof_ctl_help(char *buf, size_t n);

/* /dev/oprofile. One reader at a time: a second open gets -EBUSY. */
int oprof_open(void);
/*
 * Copy up to n bytes of the stream into buf. Sleeps while nothing is queued and the
 * session's stream is not finished (also while idle: a reader opened before "start"
 * streams). Returns bytes (> 0), 0 at the end of a session's stream (and from then on
 * until close), or -EINTR when the reading thread is interrupted before any byte.
 * One thread reads at a time.
 */
long oprof_read(void *buf, size_t n);
void oprof_close(void);

/*
 * /dev/oprofilestat: "name value" lines into buf (NUL terminated, truncated to n - 1).
 * Returns the length of the whole text, like snprintf, so a caller can retry bigger.
 */
size_t oprof_stat_text(char *buf, size_t n);

/*
 * `oprofile top` (top.c), a thread's calls, each taking the session lock. begin attaches the
 * one viewer (starting a session with the next settings if none runs): 0, or -errno with a
 * one-line message in err. take formats the hottest functions since begin or the last take
 * (at most rows of them; percore: a share column per core) into buf, NUL terminated and cut
 * to n - 1, and starts a new interval: the whole text's length, or -EPIPE when the session
 * watched has ended. end detaches (after a successful begin only), stopping the session if
 * begin started it. The session's stream and its reader lose nothing to a viewer.
 */
int oprof_top_begin(char *err, size_t errlen);
long oprof_top_take(char *buf, size_t n, unsigned rows, bool percore);
void oprof_top_end(void);

/* Worker kthread body: for (;;) { oprof_worker_wait(); oprof_worker_pass(); } */
void oprof_worker_wait(void);	/* sleeps one worker period, or less if kicked */
void oprof_worker_pass(void);	/* drain full blocks, refill empty rings */
/* Ordinary interrupt or thread context: wake the worker if a core asked for a pass. */
void oprof_worker_wake(void);

/* What the timer interrupt saw; filled by the glue from the trap frame and current(). */
struct oprof_tick {
	uint64_t tsc;		/* tsc_read() at the interrupt */
	uintptr_t pc;		/* interrupted pc */
	uintptr_t fp;		/* interrupted frame pointer (rbp) */
	uintptr_t stack_lo;	/* bounds [lo, hi) of the stack fp walks; lo == hi: none */
	uintptr_t stack_hi;
	uint32_t tid;		/* interrupted thread; 0 for the idle loop */
	uint16_t flags;		/* OPF_F_IDLE when the core was idle */
	uint16_t core;		/* core_id() */
	uint64_t missed;	/* timer expiries skipped so far, for the stat file (0: unknown) */
	uintptr_t leaf_ret;	/* caller of pc when fp does not include it (arch_unlinked_return);
				   0: the frame chain from fp is complete */
};

/*
 * Interrupt or NMI context, on t->core, interrupts off: walk t's frames (up to the
 * session's depth) and record one sample. Takes no lock, no atomic read-modify-write, no
 * fence; never allocates, never sleeps, never waits: NMI-safe, also when it lands inside
 * another call of itself or of oprof_thread_created on the same core. Harmless when no
 * session is running. The time from t->tsc to its return counts against the core's
 * budget, which may call hooks->set_rate.
 */
void oprof_tick_irq(const struct oprof_tick *t);
/*
 * On core, interrupts off, once its sampling timer is disarmed (hooks->stop_sampling):
 * the timer expiries it skipped over the whole session (periods owed less the ticks it
 * delivered), for OPF_CORE_END.missed, to which the profiler adds the ticks it delivered
 * after the core's gate closed at stop -- so taken + missed is every period owed. The
 * ticks report the running count themselves (oprof_tick.missed).
 */
void oprof_missed(int core, uint64_t missed);

/*
 * Thread-create hook, in the creating thread on its current core (disables interrupts
 * around the per-core block itself): writes an OPF_THREAD record while a session runs.
 */
void oprof_thread_created(uint32_t tid, int core, const char *name);

/*
 * Frame-pointer walk, any context: follow the rbp chain from fp (saved fp at [fp], return
 * address at [fp + 8]) storing up to max return addresses in frames; returns how many.
 * Only ever reads [fp, fp + 16) for fp with lo <= fp, fp + 16 <= hi, fp 8-aligned, and
 * each fp strictly above the previous one. *truncated is set when the walk stopped at a
 * pointer failing those checks; fp == 0 or a zero return address is the clean end of the
 * chain, and stopping at max is not truncation (the depth was the caller's choice): *more
 * says whether the chain went on past max (the stack was cut at the depth limit).
 */
unsigned oprof_backtrace(uintptr_t fp, uintptr_t lo, uintptr_t hi, uint64_t *frames,
			 unsigned max, bool *truncated, bool *more);

#endif
