/*
 * The portable start of the kernel. kern/arch brings the boot core's machine up (serial,
 * descriptor tables, interrupt controllers, clocks) and calls kernel_main; kernel_main
 * sets up memory and the console, starts the other cores, which arrive in kernel_ap_main
 * and wait here until the boot core says go, and then the scheduler and the shell.
 */
#include "cons.h"
#include "cpu.h"
#include "crash.h"
#include "init.h"
#include "kmalloc.h"
#include "page.h"
#include "sched.h"
#include "shell.h"
#include "thread.h"

static volatile bool go;

static void shell_thread(void *arg)
{
	(void)arg;
	kernel_late_init();
	shell_run();
}

__noreturn void kernel_main(void)
{
	pages_init();				/* free memory, as the arch found it */
	cons_init();				/* console input sleeps on a rendez */
	crash_init();				/* crash dumps, if the host collects them */
	arch_start_cores();			/* the others wait in kernel_ap_main */
	printk("kern: %d cpus, %lu MiB free, tsc %lu MHz\n", ncpus(),
	       pages_free_count() * PGSIZE >> 20, tsc_hz() / 1000000);
	sched_init();				/* this flow becomes core 0's idle thread */
	__atomic_store_n(&go, true, __ATOMIC_RELEASE);	/* other cores start scheduling */
	if (!kthread_create("shell", 0, shell_thread, NULL))
		panic("cannot create the shell thread");
	sched_idle_boot();
}

__noreturn void kernel_ap_main(void)
{
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		cpu_relax();
	this_cpu()->online = true;
	sched_start_ap();
}
