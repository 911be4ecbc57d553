/*
 * The host share: virtio-9p + 9P2000.L client + the dev9p device (kern/drivers).
 */
#ifndef NINEP_H
#define NINEP_H

/*
 * Boot, thread context, after the root file system is mounted: find the virtio-9p
 * devices, bring them up, and mount the one whose mount tag is "host" at /host (made if
 * missing). Returns 0 when /host is mounted, -ENODEV when there is no virtio-9p device,
 * -ENOENT when none has the tag "host", or the error that stopped the mount.
 */
int ninep_init(void);

#endif
