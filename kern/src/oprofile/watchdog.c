/*
 * The NMI hard-lockup watchdog: a core that keeps taking NMIs but no timer interrupt, with
 * interrupts off, for wd_ms is locked up. In panic mode the core reports itself from its
 * own NMI (so its stack is the locked-up code's) and panics, and the crash dump shows
 * what it did before; in warn mode the report is printed by a thread and the core goes on
 * (one report per episode).
 *
 * Evidence of life, checked at the recorder's rate on the core (watchdog_nmi, NMI context,
 * called by crash_nmi at every NMI of its own source, or every so many of a faster
 * session's, arch.h; it writes only its own core's slot): its scheduler tick count moved
 * since the last check, or the NMI found interrupts on (an interrupt pending on it is taken at once;
 * an idle core halts with them on). The clock starts at the last evidence.
 *
 * Emulation. Under TCG a virtual CPU runs only when a host thread is free, and a vCPU
 * that is not running takes neither NMIs nor timer interrupts. Guest time (the TSC) goes
 * on meanwhile, so time alone would call a descheduled vCPU locked up. So a lockup needs
 * both: wd_ms of guest time since the last evidence AND at least half the recorder-rate
 * periods of that time actually checked on the core with interrupts off (the core ran, and ran with
 * them off, for most of it). A vCPU starved by an oversubscribed host takes few NMIs
 * (a pending NMI is held, not queued), so it never reaches the count; long but legitimate
 * interrupts-off work reaches it only after wd_ms (default 1 s, hundreds of times any
 * interrupts-off section of this kernel).
 *
 * Contexts: watchdog_configure and watchdog_start in a thread; the printer is a thread.
 */
#include "crashrec.h"
#include "arch.h"
#include "cpu.h"
#include "thread.h"
#include "tsctime.h"

struct wdcore {
	uint64_t ticks;		/* the core's scheduler ticks at the last NMI */
	uint64_t alive;		/* TSC of the last evidence of life (0: none yet) */
	uint32_t nmis;		/* NMIs with interrupts off and no tick since then */
	uint32_t fired;		/* this episode was reported */
	uint32_t pending;	/* warn mode: a report for the printer (release) */
	uint32_t nframes;
	uint64_t ms, pc;
	uint64_t frames[CRASH_DEPTH];
} __aligned(CACHELINE);

static struct wdcore wds[MAX_CPUS];
static struct {
	uint32_t mode;		/* enum wd_mode */
	uint32_t min_nmis;	/* NMIs a lockup needs: half the periods of ms */
	uint64_t limit;		/* ms in TSC ticks */
} wd;

void watchdog_configure(uint32_t mode, uint32_t ms, uint32_t hz)
{
	WRITE_ONCE(wd.mode, WD_OFF);
	memset(wds, 0, sizeof(wds));
	wd.limit = tsc_of_ms(ms);
	wd.min_nmis = MAX((uint32_t)((uint64_t)ms * hz / 2000), 2u);
	WRITE_ONCE(wd.mode, mode);
}

static void lockup(struct wdcore *w, const struct trapframe *tf, uint64_t now)
{
	uint64_t ms = ms_of_tsc(now - w->alive);

	w->fired = 1;
	if (READ_ONCE(wd.mode) == WD_PANIC) {
		crash_note(tf, OPF_CRASH_LOCKUP);
		panic("watchdog: hard lockup on cpu %d: no timer interrupt for %lu ms "
		      "(%u NMIs with interrupts off)", core_id(), (unsigned long)ms, w->nmis);
	}
	w->ms = ms;
	w->nframes = crash_walk(tf, &w->pc, w->frames);
	__atomic_store_n(&w->pending, 1, __ATOMIC_RELEASE);
}

void watchdog_nmi(const struct trapframe *tf, uint64_t now)
{
	struct wdcore *w = &wds[core_id()];
	uint64_t t = READ_ONCE(this_cpu()->ticks);

	if (READ_ONCE(wd.mode) == WD_OFF)
		return;
	if (tf_irq_enabled(tf) || t != w->ticks || !w->alive) {
		w->ticks = t;
		w->alive = now;
		w->nmis = 0;
		w->fired = 0;
		return;
	}
	w->nmis++;
	if (!w->fired && now - w->alive >= wd.limit && w->nmis >= wd.min_nmis)
		lockup(w, tf, now);
}

/* Warn mode: print what the NMIs found, from a thread (printk is not NMI-safe). */
static void printer(void *arg)
{
	(void)arg;
	for (;;) {
		thread_sleep_us(100000);
		for (int i = 0; i < ncpus(); i++) {
			struct wdcore *w = &wds[i];

			if (!__atomic_load_n(&w->pending, __ATOMIC_ACQUIRE))
				continue;
			printk("watchdog: hard lockup on cpu %d: no timer interrupt for %lu ms "
			       "(warning only); it was at:\n", i, (unsigned long)w->ms);
			arch_print_frames(w->pc, w->frames, w->nframes);
			__atomic_store_n(&w->pending, 0, __ATOMIC_RELEASE);
		}
	}
}

void watchdog_start(void)
{
	if (!kthread_create("watchdog", 0, printer, NULL))
		printk("watchdog: no printer thread: warnings will not be printed\n");
}
