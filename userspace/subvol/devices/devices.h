/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What talks to device-mapper and block devices: libdevmapper (dm.c),
 * the devices of volumes (activation.c), the lock and status of a
 * snapshot copy (copy-owner.c).  Above the model (model/), below the
 * policy and the commands.
 */
#ifndef SUBVOL_DEVICES_H
#define SUBVOL_DEVICES_H

#include "model/model.h"

/* What to load when device-mapper or the target is missing. */
#define DM_LOAD_HINT "modprobe dm_mod; modprobe dm-subvol, or insmod dm-subvol.ko where it is not installed"

/* dm.c: libdevmapper, with udev synchronisation as dmsetup does. */
struct dm_info_lite {
	bool exists;
	bool suspended;
	bool read_only;
	int open_count;
	unsigned int major, minor;
};

void dm_setup_logging(void);
const char *dm_last_error(void);
bool dm_available(void);
int dm_device_info(const char *uuid, char *name, size_t namelen,
		   struct dm_info_lite *info);
int dm_device_create(const char *name, const char *uuid, uint64_t sectors,
		     const char *params, bool read_only);
int dm_device_reload(const char *name, uint64_t sectors, const char *params,
		     bool read_only);
int dm_device_suspend(const char *name);
int dm_device_resume(const char *name);
int dm_device_remove(const char *name);
int dm_device_message(const char *name, const char *msg);
int dm_device_status(const char *name, char *params, size_t len,
		     uint64_t *sectors);
int dm_device_table(const char *name, char *params, size_t len);

/* For subvol monitor: the subvol devices, and their events. */
struct dm_subvol_device {
	char name[DM_NAME_LEN];
	char uuid[DM_UUID_LEN];
	char params[4200];
	uint32_t event_nr;
	unsigned int major, minor;
};

int dm_subvol_devices(struct dm_subvol_device **devs, size_t *nr);
int dm_wait_event(const struct dm_subvol_device *dev, uint32_t event_nr);
int dm_event_nr(const struct dm_subvol_device *dev, uint32_t *event_nr);
int dm_device_by_number(unsigned int major, unsigned int minor, char *name,
			size_t namelen, char *uuid, size_t uuidlen);

/*
 * copy-owner.c: the lock a snapshot copy's process holds on its origin's
 * image.  copy_owner_lock: the lock's fd, or -1 (errno EWOULDBLOCK:
 * another process owns a copy of it).  copy_owned: whether some process
 * holds it.  copy_status: the device DEV's status, parsed, with its
 * snapshot copy field (-1 with errno: EPROTO for a target without it).
 * copy_cancel_orphan, with the lock held: cancel the copy the device DEV
 * reports, if any (1, *was saying what state it was in; 0 none; -1 the
 * device could not be asked).
 */
int copy_status(const char *dev, struct subvol_status *st);
int copy_owner_lock(const char *image);
bool copy_owned(const char *image);
int copy_cancel_orphan(const char *dev, const char **was);

/* activation.c */
int volume_activate(struct volume *vol, char *dev, size_t devlen);
/* 1 deactivated, 0 was not active, -1 refused (said why). */
int volume_deactivate(struct volume *vol, bool quiet_if_inactive);
/* 1 active (name set), 0 inactive, -1 unknown (said why). */
int volume_active(const struct volume *vol, char *name, size_t namelen,
		  struct dm_info_lite *info);
/* The table's features: the volume's, with the pool's low-water mark. */
void volume_table_features(const struct volume *vol, struct subvol_features *f);
/*
 * Those of its device: with dm_name (active), the low-water mark of the
 * live table; 0, or -1 said why.
 */
int volume_device_features(const struct volume *v, const char *dm_name,
			   struct subvol_features *f);
int volume_table(const struct volume *vol, char *params, size_t len);
/* After the metadata's host_lvm changed: links and udev (see activation.c). */
void volume_host_lvm_changed(const struct volume *vol, const char *dm_name,
			     const struct dm_info_lite *info);
void pool_rescan_sharing(struct pool *pool);
/* 1 a volume is active (its name in name), 0 none, -1 unknown (said why). */
int pool_active_volume(struct pool *pool, char *name, size_t namelen);

/*
 * holders.c: the device names (DM names, else kernel names) holding
 * major:minor, comma-separated in out: an LVM LV active on it, say.  How
 * many, or -1.
 */
int device_holders(unsigned int major, unsigned int minor, char *out, size_t len);

#endif
