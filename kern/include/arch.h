/*
 * The arch boundary: everything portable code may ask of the machine. Implemented under
 * kern/arch/x86 (and, for the host-testable files, by tests/host/shim). Nothing outside
 * kern/arch uses inline assembly.
 */
#ifndef ARCH_H
#define ARCH_H

#include "kernel.h"

#define MAX_CPUS	64
#define PGSIZE		4096

/* Interrupt flag. irq_save disables and returns the old state; irq_restore puts it back. */
unsigned long irq_save(void);
void irq_restore(unsigned long flags);
void irq_enable(void);
void irq_disable(void);
bool irq_enabled(void);

/* Core numbering is dense, 0 .. ncpus()-1; core 0 is the boot core. */
int core_id(void);		/* any context; meaningful with interrupts off or pinned */
int ncpus(void);		/* cores online */

uint64_t tsc_read(void);	/* any context */
uint64_t tsc_hz(void);		/* calibrated once at boot */
uint64_t nsec(void);		/* nanoseconds since boot, from the TSC */

void cpu_relax(void);		/* spin-wait hint */
void cpu_halt(void);		/* sti; hlt, atomically: wakes on the next interrupt */
/* ACPI soft-off: QEMU exits with status 0. */
__noreturn void arch_poweroff(void);
/* isa-debug-exit: QEMU exits with status (code << 1) | 1, never 0. */
__noreturn void arch_exit(int code);
#define EXIT_PANIC_CODE		0x31	/* QEMU exit status 99: the kernel panicked */
#define EXIT_PANIC_STATUS	99

/* The build-id note of the running kernel (GNU build-id), for the profiler's header. */
const uint8_t *kernel_build_id(size_t *len);

/*
 * For the profiler's unwinder, interrupt context: the return address of the function
 * interrupted at pc with stack pointer sp (stack [lo, hi)) when its frame is not linked
 * into the frame-pointer chain (prologue, ret, frameless leaf); 0 when the chain is
 * complete as it stands.
 */
uintptr_t arch_unlinked_return(uintptr_t pc, uintptr_t sp, uintptr_t lo, uintptr_t hi);

/* --- Apps (kern/apps/app.c): the page map, and main on a stack of its own --- */

/*
 * Thread context: make the page at va (below 4 GiB) fault on any access: 0, or -1 when a
 * page table is needed and *spare is NULL. A page table it needs it takes from *spare
 * (a free page, PGSIZE aligned), setting *spare to NULL; the caller frees an untaken one.
 */
int arch_page_unmap(uintptr_t va, void **spare);
void arch_page_map(uintptr_t va);	/* undo arch_page_unmap(va) */
void arch_page_flush(uintptr_t va);	/* this core's TLB entry for va */
struct app_ctx;
struct trapframe;
int arch_app_enter(struct app_ctx *ctx, int (*main)(int, char **), int argc, char **argv,
		   uintptr_t stack_top);
__noreturn void arch_app_leave(struct app_ctx *ctx, int status);
/* Trap context: the interrupted code resumes in arch_app_leave(ctx, status) instead. */
void arch_tf_app_leave(struct trapframe *tf, struct app_ctx *ctx, int status);

/* Symbol of a kernel address, for backtraces: name and offset, false if unknown. */
bool ksym_lookup(uintptr_t pc, const char **name, uintptr_t *off);

/*
 * What the kernel runs on (kern/arch/x86/machine.c), identified once at boot on the boot
 * core; any context may read it afterwards. It decides what the profiler's samples weigh.
 */
enum machine_kind {
	MACHINE_BARE = 0,	/* no hypervisor bit in CPUID: hardware */
	MACHINE_QEMU_TCG = 1,	/* QEMU's emulator ("TCGTCGTCGTCG") */
	MACHINE_KVM = 2,	/* KVM ("KVMKVMKVM"), whatever drives it */
	MACHINE_OTHER_HV = 3,	/* another hypervisor: hv_sig names it */
};
struct machine {
	enum machine_kind kind;
	char hv_sig[13];	/* CPUID 0x40000000 signature, NUL-terminated; "" on hardware */
	bool icount;		/* guest time follows instructions executed (QEMU -icount) */
	bool icount_told;	/* ... said by the launcher (fw_cfg), not measured */
	int icount_shift;	/* then each instruction is 2^shift ns of guest time; else -1 */
};
const struct machine *arch_machine(void);

/* --- Boot (kern/init calls these; the arch enters kernel_main and kernel_ap_main) --- */

/*
 * Boot core, once: fn(start, end) for every free physical range the firmware reported,
 * minus low memory, the kernel image and the boot information (for the page allocator).
 */
void arch_mem_foreach(void (*fn)(uintptr_t start, uintptr_t end));
/* Boot core, once memory and the console work: start every other core (kernel_ap_main). */
void arch_start_cores(void);

/* --- Timers (alarm.c) --- */

/*
 * Interrupts off, own core: one timer interrupt at TSC tsc_deadline (0: none). now: the
 * TSC read just before (the timer counts from it: an older reading makes it late by the
 * difference, never early).
 */
void arch_timer_set(uint64_t tsc_deadline, uint64_t now);

/*
 * The interrupted context, for alarm callbacks and the profiler. struct trapframe is the
 * arch's own; portable code only ever holds a pointer and uses these accessors.
 */
struct trapframe;
uintptr_t tf_pc(const struct trapframe *tf);
uintptr_t tf_fp(const struct trapframe *tf);	/* frame pointer (rbp) */
uintptr_t tf_sp(const struct trapframe *tf);
bool tf_irq_enabled(const struct trapframe *tf);	/* interrupts were on where it stopped */

/*
 * Where tf stopped, for a sample, in one call (interrupt or NMI context): its pc and frame
 * pointer in *pc and *fp, and returned, the leaf's return address as arch_unlinked_return
 * gives it for the stack [lo, hi) (0 when the chain is complete or there is no stack).
 */
uintptr_t arch_tf_where(const struct trapframe *tf, uintptr_t lo, uintptr_t hi, uintptr_t *pc,
			uintptr_t *fp);

/* --- Threads (sched.c) --- */

/*
 * Switch stacks: save the callee-saved registers and the stack pointer into *save_rsp,
 * load new_rsp and return into whatever that stack was saved by (or was laid out for).
 */
void swtch(uintptr_t *save_rsp, uintptr_t new_rsp);
/* Lay out a new thread's stack below top so that swtch to the result calls entry. */
uintptr_t arch_thread_stack_init(uintptr_t top, void (*entry)(void));
/* The frame pointer of a thread switched out with stack pointer rsp: its walk starts there. */
uintptr_t arch_switched_fp(uintptr_t rsp);
/* Any context: bring core out of hlt (it re-checks its run queue). */
void arch_send_wake_ipi(int core);
/* The interrupt controller's id of core, for the cpus command. */
int arch_cpu_apic_id(int core);
/*
 * Deferred work out of NMI context. arch_irq_work_raise (any context, NMI included) makes
 * this core call the fn given to arch_irq_work_init in ordinary interrupt context, once
 * its interrupts are on: that is where an NMI handler's wake-ups (which take locks) go.
 * One fn for the kernel (the profiler's worker kick); init at boot, thread context.
 */
void arch_irq_work_init(void (*fn)(void));
void arch_irq_work_raise(void);

/* --- Sampling by NMI (kern/arch/x86/nmi.c) --- */

/*
 * fn(tf) runs on every online core about hz times a second, in NMI context -- also where
 * interrupts are off. fn must be NMI-safe: no locks, no allocation, no printk, no
 * sleeping; it gets the interrupted context (tf accessors) and must not fault. The
 * interrupted context may be anywhere: an interrupt handler, the scheduler mid switch, a
 * core's start-up before its first thread (then it has no current thread). fn returns
 * whether it did the period's work (a sample taken, not skipped): under an emulator that
 * runs its virtual CPUs in turn on one host thread, the core then gives up its turn, so
 * that the next one takes its NMI within the same period (kern/arch/x86/nmi.c, "The
 * route"); a period fn skips costs no such hand-over.
 *
 * The periods come from a hardware timer (HPET, on a grid, so the rate does not drift),
 * delivered to every core at once where the machine allows, else to core 0, which passes
 * each on to the others by IPI: a core still handling the last NMI when the next arrives
 * misses it (count missed periods by the clock). Each period's moment is spread over
 * spread percent of a period around its grid point, drawn from seed (jitter.h; 0: a fixed
 * period). Thread context, not concurrently with itself (or stop). Returns 0; -ENODEV
 * when this machine has no usable route (no HPET); -EBUSY when already running; -EINVAL
 * for fn NULL, hz not in 1..100000 or spread over 100.
 */
typedef bool (*arch_nmi_fn)(const struct trapframe *tf);
/* Any context, after boot: this machine has a route for arch_nmi_start. */
bool arch_nmi_available(void);
int arch_nmi_start(uint32_t hz, uint32_t spread, uint64_t seed, arch_nmi_fn fn);
/* Stop; returns only when no core is inside fn or will enter it again. Thread context. */
void arch_nmi_stop(void);
/*
 * The background NMI function (the crash recorder and watchdog): fn(tf) on every online
 * core at hz, whether or not arch_nmi_start's fn runs: while no arch_nmi_start source runs,
 * at every NMI of a source of its own at hz; while one at a higher rate runs, at every
 * (rate / hz)-th NMI the core takes of it. fn NULL stops it (returns once no core
 * is inside). Thread context, not concurrently with arch_nmi_start/stop. 0 or -errno.
 */
int arch_nmi_background(uint32_t hz, arch_nmi_fn fn);
/* Any context: NMIs this core has taken since boot (all, and those that hit with IF clear). */
uint64_t arch_nmi_count(int core, uint64_t *irqoff);
/*
 * Any context: of those, the ones ignored (fn not called): taken before the core was online;
 * extra: the ones that began no timer period for the core (the timer pulsed twice, or the
 * NMI came from elsewhere).
 */
uint64_t arch_nmi_early_count(int core);
uint64_t arch_nmi_extra_count(int core);

/* --- Panic (panic.c) --- */

/*
 * Stop every other online core with an NMI (so interrupts-off code stops too): each calls
 * crash_core_stopped with what it was doing and halts for good. Returns once all answered
 * or after about half a second; arch_core_stopped says which did.
 */
void arch_stop_other_cores(void);
bool arch_core_stopped(int core);

/* --- Crash dumps (kern/arch/x86/crashport.c) --- */

/* Boot core, boot time: the host's crash options (a string), or -1 if it gave none. */
int arch_crash_options(char *buf, size_t len);
/* Any context: the host connected the crash port to a file. */
bool arch_crash_channel(void);
/* Any context (panic): bytes to the crash port, in order, no interrupt needed. */
void arch_crash_write(const void *p, size_t n);
/*
 * Any context: the stack of tf's context, or (tf NULL) of the function whose frame fp is
 * (pc: inside the call it will return from), then up to max return addresses; the walk only checks
 * plausibility (a panic's stack may cross from an NMI's stack into a thread's). [lo, hi):
 * the interrupted thread's stack (lo == hi: none), for a frameless function's caller.
 */
unsigned arch_crash_walk(const struct trapframe *tf, uintptr_t fp, uintptr_t lo, uintptr_t hi,
			 uint64_t *pc, uint64_t *frames, unsigned max);
/* Any context: this core is inside its NMI handler. */
bool arch_in_nmi(void);
/* Print pc and frames symbolized, one per line (panic context). */
void arch_print_frames(uint64_t pc, const uint64_t *frames, unsigned n);
void arch_backtrace_here(void);		/* print the caller's frame-pointer chain */

#endif
