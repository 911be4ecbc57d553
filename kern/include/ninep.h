/*
 * The host share: virtio-9p + 9P2000.L client + the dev9p device (kern/drivers).
 */
#ifndef NINEP_H
#define NINEP_H

#include "kernel.h"

/*
 * Boot, thread context, after the root file system is mounted: find the virtio-9p
 * devices, bring them up, and mount the one whose mount tag is "host" at /host (made if
 * missing). Returns 0 when /host is mounted, -ENODEV when there is no virtio-9p device,
 * -ENOENT when none has the tag "host", or the error that stopped the mount.
 */
int ninep_init(void);

/* A client's state, for the shell's ninep command. */
struct ninep_stats {
	char tag[64];		/* the device's mount tag */
	uint32_t msize;		/* negotiated message size */
	uint32_t queue;		/* virtqueue entries */
	uint64_t rpcs, errors;	/* RPCs made, RPCs that failed */
	uint64_t irqs;		/* device interrupts taken */
	uint64_t done, polled;	/* requests completed; of those, found by polling */
};
/* Any thread: client index's state; false when there is no such client. */
bool ninep_client_stats(int index, struct ninep_stats *st);

#endif
