/*
 * panic: the one way the kernel gives up. Stops the other cores (by NMI, each noting
 * what it was doing), prints the message and a backtrace of the caller, writes the crash
 * dump when the host collects one (crash.h), and ends QEMU with EXIT_PANIC_CODE (status
 * 99) so that a panic can never look like a pass. Safe from any context, including a fault
 * inside printk (the printk lock is abandoned first) and a second panic on another core.
 */
#include "arch.h"
#include "cons.h"
#include "crash.h"
#include "kernel.h"


static int panicking;

void panic(const char *fmt, ...)
{
	static char msg[OPF_CRASH_MSG];
	va_list ap;

	irq_disable();
	if (__atomic_exchange_n(&panicking, 1, __ATOMIC_SEQ_CST)) {
		/* another core is already reporting: just stop */
		for (;;)
			cpu_halt();
	}
	printk_panic_unlock();
	arch_stop_other_cores();
	printk("\npanic on cpu %d: ", core_id());
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
	printk("\n");
	arch_backtrace_here();
	crash_dump(msg, (uintptr_t)__builtin_frame_address(0));
	arch_exit(EXIT_PANIC_CODE);
}
