/*
 * The IDT and the C side of every interrupt and exception.
 *
 * trap() runs with interrupts off on the interrupted stack (an NMI: on its own, and it goes
 * straight to nmi_trap, which needs neither GS nor anything else set up per core).
 * Exceptions are fatal (there is no user mode), and so never return, which the NMI
 * handler relies on (nmi.c): they print the vector, error code, registers, CR2 for page
 * faults and a symbolized backtrace, then panic. Device and timer interrupts go to the handler
 * registered for their vector and are acknowledged at the LAPIC. The timer has an entry of
 * its own (timer_trap) and may end in a context switch (sched_preempt_irq), after the EOI.
 */
#include "x86.h"
#include "arch_x86.h"
#include "alarm.h"
#include "cpu.h"
#include "crash.h"
#include "sched.h"
#include "thread.h"
#include "app.h"

struct idt_entry {
	uint16_t off_lo;
	uint16_t sel;
	uint8_t ist;
	uint8_t type;		/* 0x8e: present, ring 0, 64-bit interrupt gate */
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t zero;
} __attribute__((packed));

static struct idt_entry idt[256] __aligned(16);
static struct { irq_handler fn; void *arg; } handlers[256];
extern char trap_vectors[];
extern char __app_text_start[], __app_text_end[];	/* kernel.ld */
/* The apps' text length, for timer_trap's one compare (set before any interrupt) */
static uintptr_t app_text_len;

static const char *const exc_names[32] = {
	"divide error", "debug", "NMI", "breakpoint", "overflow", "bound range",
	"invalid opcode", "device not available", "double fault", "coprocessor overrun",
	"invalid TSS", "segment not present", "stack fault", "general protection",
	"page fault", "reserved", "x87 floating point", "alignment check", "machine check",
	"SIMD floating point", "virtualization", "control protection",
};

void idt_init(void)
{
	app_text_len = (uintptr_t)(__app_text_end - __app_text_start);
	for (int v = 0; v < 256; v++) {
		uintptr_t a = (uintptr_t)trap_vectors + 16 * v;

		idt[v] = (struct idt_entry){
			.off_lo = a & 0xffff, .sel = SEG_KCODE,
			.ist = v == T_DF ? 1 : v == T_NMI ? 2 : v == T_PF ? 3 : 0,
			.type = 0x8e, .off_mid = (a >> 16) & 0xffff, .off_hi = a >> 32,
		};
	}
}

void idt_load(void)
{
	struct { uint16_t lim; uint64_t base; } __attribute__((packed)) d = {
		sizeof(idt) - 1, (uintptr_t)idt
	};

	__asm__ volatile("lidt %0" :: "m"(d));
}

/* Boot time only, before the vector can fire. */
void irq_register(int vector, irq_handler fn, void *arg)
{
	handlers[vector].fn = fn;
	handlers[vector].arg = arg;
}

void print_frame(int depth, uintptr_t pc)
{
	const char *name;
	uintptr_t off;

	if (ksym_lookup(pc, &name, &off))
		printk("  #%d %016lx %s+0x%lx\n", depth, pc, name, off);
	else
		printk("  #%d %016lx ?\n", depth, pc);
}

/* Print the frame-pointer chain starting at pc, fp; stops at anything implausible. */
static void backtrace_from(int depth, uintptr_t pc, uintptr_t fp)
{
	for (; depth < 32; depth++) {
		print_frame(depth, pc);
		if (fp == 0 || (fp & 7) || fp < 0x100000 || fp >= (1ull << 32))
			break;
		pc = ((uintptr_t *)fp)[1];
		fp = ((uintptr_t *)fp)[0];
		if (pc == 0)
			break;
	}
}

void backtrace_print(uintptr_t pc, uintptr_t fp)
{
	backtrace_from(0, pc, fp);
}

/* The faulting function, its caller if the frame chain skips it (leaf), then the chain. */
void backtrace_print_tf(struct trapframe *tf)
{
	struct thread *t = this_cpu()->cur;
	uintptr_t lo = this_cpu()->irq_stack_lo, hi = this_cpu()->irq_stack_hi, ret;

	if (t)
		thread_stack(t, &lo, &hi);
	nmi_stack_bounds(core_id(), &lo, &hi, tf->rsp);	/* a fault inside an NMI handler */
	ret = arch_unlinked_return(tf->rip, tf->rsp, lo, hi);
	if (!ret) {
		backtrace_print(tf->rip, tf->rbp);
		return;
	}
	print_frame(0, tf->rip);	/* frameless: its caller's address is on the stack */
	backtrace_from(1, ret, tf->rbp);
}

static __noreturn void trap_fatal(struct trapframe *tf)
{
	const char *name = tf->vector < 32 && exc_names[tf->vector] ? exc_names[tf->vector]
								     : "unexpected interrupt";

	printk("\nFATAL: %s (vector %lu, error 0x%lx) on cpu %d%s\n", name, tf->vector, tf->error,
	       core_id(), nmi_in_handler(core_id()) ? ", inside the NMI handler" : "");
	if (tf->vector == T_PF)
		printk("  cr2 %016lx (%s, %s)\n", read_cr2(),
		       tf->error & 1 ? "protection violation" : "page not present",
		       tf->error & 2 ? "write" : "read");
	printk("  rip %016lx rsp %016lx rbp %016lx rflags %016lx\n", tf->rip, tf->rsp, tf->rbp,
	       tf->rflags);
	printk("  rax %016lx rbx %016lx rcx %016lx rdx %016lx\n", tf->rax, tf->rbx, tf->rcx,
	       tf->rdx);
	printk("  rsi %016lx rdi %016lx r8  %016lx r9  %016lx\n", tf->rsi, tf->rdi, tf->r8, tf->r9);
	printk("  r10 %016lx r11 %016lx r12 %016lx r13 %016lx\n", tf->r10, tf->r11, tf->r12,
	       tf->r13);
	printk("  r14 %016lx r15 %016lx cs %lx ss %lx\n", tf->r14, tf->r15, tf->cs, tf->ss);
	printk("backtrace:\n");
	backtrace_print_tf(tf);
	crash_note(tf, OPF_CRASH_FAULT);
	panic("%s at %016lx", name, tf->rip);
}

/*
 * The timer interrupt, from its own entry (trapentry.S: timer_entry), interrupts off. tf's
 * rbx and r12-r15 are not saved there: read nothing but rip, rsp, rbp and rflags (and the
 * redirect arch_tf_app_leave makes). It may end in a context switch, after the EOI.
 */
void timer_trap(struct trapframe *tf)
{
	struct cpu *c = cpu_here();
	uint64_t now = rdtsc();
	bool hold = turns_due(c->id, now);	/* under -icount, another core's slice */

	c->irqs++;
	lapic_eoi();
	alarm_interrupt(tf, c, now);
	if (unlikely(hold))
		turns_hold(tf, c);		/* stand still (turns.c) */
	/* app_tick acts only on an app's code (and checks again): no call elsewhere */
	if (tf->rip - (uintptr_t)__app_text_start < app_text_len)
		app_tick(tf);
	sched_preempt_irq(c, tf->rflags & RFLAGS_IF);
}

/* Every other vector (trap_common). */
void trap(struct trapframe *tf)
{
	int v = (int)tf->vector;

	if (v == T_NMI) {
		nmi_trap(tf);
		return;
	}
	if (v < IRQ_BASE && !app_trap(tf))
		trap_fatal(tf);
	if (v < IRQ_BASE)
		return;		/* the app instance's fault: it resumes at its exit */
	cpu_here()->irqs++;
	if (v == T_SPURIOUS)
		return;
	if (handlers[v].fn)
		handlers[v].fn(tf, handlers[v].arg);
	else if (v != T_IPI_WAKE)
		printk("trap: stray interrupt %d on cpu %d\n", v, core_id());
	if (v >= IRQ_BASE)
		lapic_eoi();
}

uintptr_t tf_pc(const struct trapframe *tf) { return tf->rip; }
uintptr_t tf_fp(const struct trapframe *tf) { return tf->rbp; }
uintptr_t tf_sp(const struct trapframe *tf) { return tf->rsp; }
bool tf_irq_enabled(const struct trapframe *tf) { return tf->rflags & RFLAGS_IF; }
