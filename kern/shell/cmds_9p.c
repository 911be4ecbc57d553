/*
 * `ninep`: the state of each virtio-9p client (kern/drivers/ninep.c), one line each.
 */
#include "error.h"
#include "ninep.h"
#include "shell.h"

static int cmd_ninep(int argc, char **argv)
{
	struct ninep_stats st;
	int i;

	(void)argv;
	if (argc != 1)
		return -EINVAL;
	for (i = 0; ninep_client_stats(i, &st); i++)
		shell_printf("9p%d: tag %s msize %u queue %u rpcs %llu errors %llu irqs %llu "
			     "polled %llu\n", i, st.tag, st.msize, st.queue,
			     (unsigned long long)st.rpcs, (unsigned long long)st.errors,
			     (unsigned long long)st.irqs, (unsigned long long)st.polled);
	if (i == 0)
		shell_printf("9p: no virtio-9p device\n");
	return 0;
}
SHELL_CMD("ninep", "ninep", "show the 9P client's devices and counters", cmd_ninep);
