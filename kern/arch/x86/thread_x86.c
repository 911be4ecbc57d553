/*
 * The x86 parts of threads and timers: a new thread's first stack frame, the wake IPI
 * and the timer hook alarm.c programs.
 */
#include "x86.h"
#include "arch_x86.h"
#include "cpu.h"

/*
 * Lay out a new stack so that swtch's restore (FPU image, pops and ret) lands in entry with
 * a 16-byte aligned stack (as after a call), a zero frame pointer, which ends backtraces,
 * and a clean FPU state (fpu_init_image).
 */
uintptr_t arch_thread_stack_init(uintptr_t top, void (*entry)(void))
{
	uint64_t *sp = (uint64_t *)(top & ~15ul);
	uintptr_t fx;

	*--sp = 0;			/* fake return address of entry: ends backtraces */
	*--sp = (uintptr_t)entry;	/* swtch's ret */
	*--sp = 0;			/* rbp */
	for (int i = 0; i < 5; i++)
		*--sp = 0;		/* rbx, r12..r15 */
	fx = ((uintptr_t)sp - 528) & ~15ul;
	((uint64_t *)fx)[1] = (uintptr_t)sp;	/* swtch's stack pointer after the FPU area */
	fpu_init_image((void *)(fx + 16));
	return fx;
}

/*
 * swtch pushed rbp and made it the frame pointer, pushed five registers below it, then put
 * the FPU image below those and kept the stack pointer from before it at rsp + 8 (swtch.S).
 */
uintptr_t arch_switched_fp(uintptr_t rsp)
{
	return ((const uint64_t *)rsp)[1] + 5 * sizeof(uint64_t);
}

void arch_send_wake_ipi(int core)
{
	lapic_send_ipi(cpus[core].apic_id, T_IPI_WAKE);
}

static void (*irq_work_fn)(void);

static void irq_work(struct trapframe *tf, void *arg)
{
	(void)tf;
	(void)arg;
	if (irq_work_fn)
		irq_work_fn();
}

void arch_irq_work_init(void (*fn)(void))
{
	irq_work_fn = fn;
	irq_register(T_IRQ_WORK, irq_work, NULL);
}

void arch_irq_work_raise(void)
{
	lapic_send_self(T_IRQ_WORK);
}

__attribute__((noinline)) void arch_backtrace_here(void)
{
	uintptr_t fp = read_rbp();

	printk("backtrace:\n");
	backtrace_print(((uintptr_t *)fp)[1], ((uintptr_t *)fp)[0]);
}
