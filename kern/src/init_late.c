/*
 * Late initialization, in the shell thread's context (threads, sleeping and allocation
 * all work): the name space, device files, drivers, the profiler.
 */
#include "dev.h"
#include "kernel.h"

extern struct dev ramfs, devfs;
void ramfs_init(void);
void devcons_init(void);
void oprofile_init(void);

void kernel_late_init(void)
{
	ramfs_init();
	if (ns_mount("/", &ramfs, "") < 0 || ns_mount("/dev", &devfs, "") < 0)
		panic("cannot mount / and /dev");
	devcons_init();				/* /dev/cons, /dev/null, /dev/zero */
	oprofile_init();			/* the profiler: worker, /dev/oprofile* */
}
