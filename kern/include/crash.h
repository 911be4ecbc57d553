/*
 * The crash recorder, its dump on panic, and the NMI hard-lockup watchdog
 * (kern/src/oprofile/crashrec.c, crashdump.c, watchdog.c; the channel and the NMI stop are
 * kern/arch/x86/crashport.c).
 *
 * When the host collects crash dumps (scripts/RUN hands the kernel the fw_cfg file
 * opt/kern/crash and connects an I/O port to a file), every online core keeps a low-rate
 * window of its own recent samples from boot on, taken from the NMI source's background
 * function, independently of any profiling session (they coexist: a session's NMIs at its
 * own rate also feed the recorder, at most at the recorder's rate). On panic the panicking
 * core stops the others with an NMI and writes every window, each core's state and its own
 * stack to the port, with no scheduler, no interrupt and no 9P.
 */
#ifndef CRASH_H
#define CRASH_H

#include "kernel.h"
#include "abi/oprofile.h"

struct trapframe;

#define CRASH_DEF_HZ		100	/* samples per second per core */
#define CRASH_MAX_HZ		1000
#define CRASH_DEF_WINDOW_KB	64	/* per core: a few seconds at the default rate */
#define CRASH_MIN_WINDOW_KB	8
#define CRASH_MAX_WINDOW_KB	4096
#define CRASH_DEPTH		16	/* frames per sample */
#define CRASH_NBLOCKS		8	/* blocks a window is cut into */
#define WATCHDOG_DEF_MS		1000
#define WATCHDOG_MIN_MS		100

enum wd_mode { WD_OFF, WD_WARN, WD_PANIC };

/* The crash settings: the host's options at boot, `crash` in the shell after. */
struct crash_cfg {
	bool record;		/* the recorder runs */
	uint32_t hz;
	uint32_t window_kb;	/* per core */
	uint32_t wd_mode;	/* enum wd_mode */
	uint32_t wd_ms;		/* no timer interrupt for this long: a hard lockup */
};

/* Boot core, kernel_main, before the other cores start: read the host's options. */
void crash_init(void);
/* Shell thread, late init, every core online: start the recorder and the watchdog. */
void crash_start(void);
/* Thread context: apply new settings (the recorder restarts empty). 0 or -errno. */
int crash_configure(const struct crash_cfg *cfg, char *err, size_t errlen);
void crash_get(struct crash_cfg *cfg, bool *channel);
/* Thread context: print the recorder's and the watchdog's state. */
void crash_print_status(int (*out)(const char *fmt, ...));

/*
 * Before panic(): the context that is the panic's real stack (a fault's, or the locked-up
 * code's), and why. Any context; only the panicking core's first note counts.
 */
void crash_note(const struct trapframe *tf, uint32_t cause);
/*
 * panic(), other cores stopped, interrupts off: print the note, write the dump. fp: panic's
 * own frame, whose caller is the panic's stack unless a note says otherwise.
 */
void crash_dump(const char *msg, uintptr_t fp);

/* NMI context on every online core at the recorder's rate (arch_nmi_background): true
 * when it recorded a sample (arch_nmi_fn). */
bool crash_nmi(const struct trapframe *tf);
/* NMI context on a core the panic stopped, before it halts for good. */
void crash_core_stopped(const struct trapframe *tf);
/* watchdog.c, from crash_nmi. */
void watchdog_nmi(const struct trapframe *tf, uint64_t now);
void watchdog_configure(uint32_t mode, uint32_t ms, uint32_t hz);
void watchdog_start(void);	/* thread context: the warning printer */

#endif
