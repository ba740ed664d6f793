/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The policies on top of the devices: LVM inside volumes and under pools
 * (lvm.c), and subvol monitor acting on the pools' autoextend policies
 * (monitor.c).  Called by the commands alone.
 */
#ifndef SUBVOL_POLICY_H
#define SUBVOL_POLICY_H

#include "devices/devices.h"

/* lvm.c: volumes that hold LVM physical volumes. */
/* Whether the image (or device) holds an LVM2 PV label. */
bool image_holds_pv(int fd);
/*
 * A writable copy of a volume holding a PV: new PV and VG UUIDs and a new
 * VG name (vgimportclone), so that LVM can use it beside its origin; or a
 * note saying why not.  Activates the volume for it if it is not active.
 */
void volume_lvm_import_clone(struct volume *vol);
/* The LVM logical volume "VG", "LV" under the pool's host. */
bool host_lv(int dirfd, char *vg, size_t vglen, char *lv, size_t lvlen);

/* monitor.c: subvol monitor's run, its options parsed (commands/cmd-monitor.c). */
#define MONITOR_INTERVAL_DEFAULT	10
#define MONITOR_INTERVAL_MAX		3600

struct monitor_opts {
	unsigned int interval;	/* seconds between checks */
	bool once;		/* one check, then exit: failed if one failed */
	bool daemonize;
	const char *pidfile;	/* with daemonize; NULL for none */
};

/* Its exit status; until SIGTERM or SIGINT unless once. */
int monitor_run(const struct monitor_opts *o);

#endif
