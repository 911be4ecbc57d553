/*
 * Boot: where the arch hands over once the machine is up (kern/init). The one place that
 * knows every layer: it starts the core, the devices, the profiler and the shell.
 */
#ifndef INIT_H
#define INIT_H

#include "kernel.h"

__noreturn void kernel_main(void);	/* boot core, once the arch brought up the others */
__noreturn void kernel_ap_main(void);	/* every other core: waits for kernel_main's go */
void kernel_late_init(void);		/* the shell thread: files, devices, profiler, share */

#endif
