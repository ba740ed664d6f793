// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Activating and deactivating a volume's device.  A volume is active when
 * a device with its UUID exists; the UUID, not the name, identifies it.
 * Links /dev/subvol/<pool>/<volume> come from udev (56-dm-subvol.rules);
 * without udev the tool makes them, as LVM does for /dev/<vg>/<lv>, and
 * so the link /dev/disk/by-id/host-lvm-<DM name> of a volume set
 * --host-lvm, which the lvm.conf filter of "subvol lvm-filter" accepts.
 */
#include "devices/devices.h"

#include <errno.h>
#include <fcntl.h>
#include <libdevmapper.h>
#include <linux/dm-subvol.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The table's features: the volume's, and for a writable volume that sets
 * no low-water mark, the one its pool's autoextend threshold gives, so
 * that subvol monitor hears of the crossing from the device (lvm2 derives
 * a thin pool's low_water_mark from thin_pool_autoextend_threshold alike).
 */
void volume_table_features(const struct volume *vol, struct subvol_features *f)
{
	*f = vol->meta.features;
	if (!f->low_water_sectors && vol->meta.kind == VOLUME_KIND_VOLUME)
		f->low_water_sectors = pool_low_water_sectors(vol->pool);
}

/*
 * The features of a volume's table: for an active one (dm_name), the
 * low-water mark its live table has (the pool's threshold as it was at
 * activation), else the one an activation would give it.
 */
int volume_device_features(const struct volume *v, const char *dm_name,
			   struct subvol_features *f)
{
	char params[4200], path[4096], err[256];
	struct subvol_features live;

	volume_table_features(v, f);
	if (!dm_name)
		return 0;
	if (dm_device_table(dm_name, params, sizeof(params))) {
		errmsg("volume %s/%s: cannot read the table of %s: %s", v->pool->meta.name,
		       v->name, dm_name, dm_last_error());
		return -1;
	}
	if (subvol_table_parse(params, path, sizeof(path), &live, err, sizeof(err))) {
		errmsg("volume %s/%s: %s: %s", v->pool->meta.name, v->name, dm_name, err);
		return -1;
	}
	f->low_water_sectors = live.low_water_sectors;
	return 0;
}

int volume_table(const struct volume *vol, char *params, size_t len)
{
	struct subvol_features f;

	volume_table_features(vol, &f);
	if (subvol_table_build(params, len, vol->path, &f) < 0) {
		errmsg("volume %s/%s: cannot make a table line for %s (whitespace in the path, or bad policies)",
		       vol->pool->meta.name, vol->name, vol->path);
		return -1;
	}
	return 0;
}

int volume_active(const struct volume *vol, char *name, size_t namelen,
		  struct dm_info_lite *info)
{
	char uuid[DM_UUID_LEN];
	struct dm_info_lite dummy;

	if (!info)
		info = &dummy;
	volume_dm_uuid(vol, uuid, sizeof(uuid));
	if (!dm_device_info(uuid, name, namelen, info))
		return info->exists;
	/* No device-mapper here: nothing can be active. */
	if (!dm_available())
		return 0;
	/* Not knowing could mean cloning a live image unfrozen: refuse. */
	errmsg("volume %s/%s: cannot ask device-mapper whether it is active: %s",
	       vol->pool->meta.name, vol->name, dm_last_error());
	return -1;
}

static bool udev_running(void)
{
	const char *off = getenv("DM_DISABLE_UDEV");

	return !(off && *off) && access("/run/udev/control", F_OK) == 0;
}

static const char *dev_dir(void)
{
	const char *d = getenv("SUBVOL_DEV_DIR");

	return d && *d ? d : "/dev";
}

/*
 * /dev/disk/by-id/host-lvm-<DM name> of a volume host LVM may use, when
 * udev does not make it; removed for any other.
 */
static void update_host_lvm_link(const struct volume *vol, const char *dm_name, bool add)
{
	char link[PATH_MAX], target[DM_NAME_LEN + 32];

	snprintf(link, sizeof(link), "%s/disk/by-id/host-lvm-%s", dev_dir(), dm_name);
	if (!add || !volume_host_lvm(&vol->meta)) {
		if (unlink(link) && errno != ENOENT)
			errmsg("volume %s/%s: cannot remove the link %s: %s", vol->pool->meta.name,
			       vol->name, link, strerror(errno));
		return;
	}
	snprintf(target, sizeof(target), "../../mapper/%s", dm_name);
	snprintf(link, sizeof(link), "%s/disk", dev_dir());
	mkdir(link, 0755);
	snprintf(link, sizeof(link), "%s/disk/by-id", dev_dir());
	mkdir(link, 0755);
	snprintf(link, sizeof(link), "%s/disk/by-id/host-lvm-%s", dev_dir(), dm_name);
	unlink(link);
	if (symlink(target, link))
		errmsg("volume %s/%s: cannot make the link %s: %s", vol->pool->meta.name,
		       vol->name, link, strerror(errno));
}

/* The /dev/subvol/<pool>/<volume> link, when udev does not make it. */
static void update_link(const struct volume *vol, const char *dm_name, bool add)
{
	char dir[PATH_MAX], link[PATH_MAX + SUBVOL_NAME_MAX + 2], target[PATH_MAX];

	if (udev_running())
		return;
	update_host_lvm_link(vol, dm_name, add);
	snprintf(dir, sizeof(dir), "%s/subvol/%s", dev_dir(), vol->pool->meta.name);
	snprintf(link, sizeof(link), "%s/%s", dir, vol->name);
	if (!add) {
		unlink(link);
		rmdir(dir);	/* only if it is empty */
		snprintf(dir, sizeof(dir), "%s/subvol", dev_dir());
		rmdir(dir);
		return;
	}
	snprintf(target, sizeof(target), "../../mapper/%s", dm_name);
	snprintf(dir, sizeof(dir), "%s/subvol", dev_dir());
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/subvol/%s", dev_dir(), vol->pool->meta.name);
	mkdir(dir, 0755);
	unlink(link);
	if (symlink(target, link))
		errmsg("volume %s/%s: cannot make the link %s: %s", vol->pool->meta.name,
		       vol->name, link, strerror(errno));
}

int volume_activate(struct volume *vol, char *dev, size_t devlen)
{
	char name[DM_NAME_LEN], uuid[DM_UUID_LEN], params[4200];
	const char *pn = vol->pool->meta.name;
	struct dm_info_lite info;
	struct stat st;

	switch (volume_active(vol, name, sizeof(name), &info)) {
	case 1:
		snprintf(dev, devlen, "%s/%s", dm_dir(), name);
		return 1;
	case -1:
		return -1;
	}
	if (!dm_available()) {
		errmsg("volume %s/%s: cannot activate: device-mapper is not available here (%s)",
		       pn, vol->name, DM_LOAD_HINT);
		return -1;
	}
	if (stat(vol->path, &st)) {
		errmsg("volume %s/%s: %s: %s", pn, vol->name, vol->path, strerror(errno));
		return -1;
	}
	if ((uint64_t)st.st_size < vol->meta.size) {
		errmsg("volume %s/%s: the image is %lld bytes, shorter than the volume's %llu",
		       pn, vol->name, (long long)st.st_size,
		       (unsigned long long)vol->meta.size);
		return -1;
	}
	if (volume_table(vol, params, sizeof(params)))
		return -1;
	volume_dm_name(vol, name, sizeof(name));
	volume_dm_uuid(vol, uuid, sizeof(uuid));
	trace("volume %s/%s: dmsetup create %s --table \"0 %llu subvol %s\"", pn,
	     vol->name, name, (unsigned long long)(vol->meta.size >> 9), params);
	if (dm_device_create(name, uuid, vol->meta.size >> 9, params,
			     vol->meta.kind == VOLUME_KIND_SNAPSHOT)) {
		if (errno == EBUSY || errno == EEXIST)
			errmsg("volume %s/%s: a device named %s or with UUID %s exists already (a copy of this volume active?)",
			       pn, vol->name, name, uuid);
		else
			errmsg("volume %s/%s: cannot activate: %s (kernel log: dmesg | grep subvol)",
			       pn, vol->name, dm_last_error());
		return -1;
	}
	update_link(vol, name, true);
	snprintf(dev, devlen, "%s/%s", dm_dir(), name);
	return 0;
}

int volume_deactivate(struct volume *vol, bool quiet_if_inactive)
{
	char name[DM_NAME_LEN];
	struct dm_info_lite info;

	int r = volume_active(vol, name, sizeof(name), &info);

	if (r < 0)
		return -1;
	if (!r) {
		if (!quiet_if_inactive)
			printf("Volume %s/%s is not active\n", vol->pool->meta.name,
			       vol->name);
		return 0;
	}
	if (info.open_count) {
		char holders[256];

		if (device_holders(info.major, info.minor, holders, sizeof(holders)) > 0)
			errmsg("volume %s/%s: %s is held by %s (an LVM VG on it active? vgchange -an it first)",
			       vol->pool->meta.name, vol->name, name, holders);
		else
			errmsg("volume %s/%s: %s is in use (open %d times: mounted, or held by a process)",
			       vol->pool->meta.name, vol->name, name, info.open_count);
		return -1;
	}
	if (dm_device_remove(name)) {
		errmsg("volume %s/%s: cannot remove %s: %s", vol->pool->meta.name,
		       vol->name, name, dm_last_error());
		return -1;
	}
	update_link(vol, name, false);
	return 1;
}

/*
 * After --host-lvm changed on an active volume: the link host LVM's filter
 * accepts, made by the tool without udev; with udev a change event makes
 * the rules run again, which is waited for.  That event is no activation
 * to the device-mapper rules (DM_ACTIVATION=0): LVM autoactivates a VG
 * on the volume at its next activation, not now.
 */
void volume_host_lvm_changed(const struct volume *vol, const char *dm_name,
			     const struct dm_info_lite *info)
{
	const char *const settle[] = { "udevadm", "settle", "--timeout=30", NULL };
	char path[64];
	int fd;

	if (!udev_running()) {
		update_host_lvm_link(vol, dm_name, true);
		return;
	}
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", info->major, info->minor);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "change", 6) != 6)
		errmsg("volume %s/%s: warning: cannot send udev a change event (%s: %s); udevadm trigger --action=change %s does",
		       vol->pool->meta.name, vol->name, path, strerror(errno), dm_name);
	else
		run_program(settle, true);
	if (fd >= 0)
		close(fd);
}

/*
 * Sharing changed in @pool (an image removed or replaced): every active
 * volume takes it from the host again, so that the copy-on-write reserve
 * of blocks no longer shared is given back.  A failure is only reported:
 * the device then keeps claiming more than it needs, never less.
 */
void pool_rescan_sharing(struct pool *pool)
{
	char **names = pool_volumes(pool), **p;
	char name[DM_NAME_LEN];
	struct volume vol;

	for (p = names; p && *p; p++) {
		if (volume_load(pool, *p, &vol, true) ||
		    volume_active(&vol, name, sizeof(name), NULL) != 1)
			continue;
		if (dm_device_message(name, DM_SUBVOL_MSG_RESCAN_SHARING))
			errmsg("volume %s/%s: warning: cannot take its sharing from the host again: %s",
			       pool->meta.name, vol.name, dm_last_error());
	}
	free_names(names);
}

/*
 * Images without valid metadata are skipped: without an id they cannot
 * have been activated.
 */
int pool_active_volume(struct pool *pool, char *name, size_t namelen)
{
	char **names = pool_volumes(pool), **p, dm[DM_NAME_LEN], err[256];
	struct volume vol;
	int fd, r = 0;

	if (!names) {
		errmsg("pool %s: cannot read %s", pool->meta.name, pool->path);
		return -1;
	}
	for (p = names; *p && !r; p++) {
		memset(&vol, 0, sizeof(vol));
		vol.pool = pool;
		snprintf(vol.name, sizeof(vol.name), "%s", *p);
		snprintf(vol.path, sizeof(vol.path), "%s/%s%s", pool->path, *p,
			 SUBVOL_IMAGE_SUFFIX);
		fd = open(vol.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!volume_meta_read(fd, &vol.meta, err, sizeof(err))) {
			r = volume_active(&vol, dm, sizeof(dm), NULL);
			if (r == 1)
				snprintf(name, namelen, "%s", *p);
		}
		close(fd);
	}
	free_names(names);
	return r;
}
