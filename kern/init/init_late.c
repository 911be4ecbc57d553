/*
 * Late initialization, in the shell thread's context (threads, sleeping and allocation
 * all work): the name space, device files, drivers, the profiler.
 */
#include "crash.h"
#include "dev.h"
#include "init.h"
#include "ninep.h"
#include "oprofile.h"

extern struct dev ramfs, devfs;

void kernel_late_init(void)
{
	ramfs_init();
	if (ns_mount("/", &ramfs, "") < 0 || ns_mount("/dev", &devfs, "") < 0)
		panic("cannot mount / and /dev");
	devcons_init();				/* /dev/cons, /dev/null, /dev/zero */
	devrandom_init();			/* /dev/random */
	oprofile_init();			/* the profiler: worker, /dev/oprofile* */
	crash_start();				/* crash recorder and NMI watchdog */
	if (ninep_init() == 0)			/* virtio-9p tag "host" at /host */
		kchdir("/host");		/* the shell starts in the host's directory */
	else
		printk("no host share (virtio-9p with mount tag \"host\"): the shell starts in /\n");
}
