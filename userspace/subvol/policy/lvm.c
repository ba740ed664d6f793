// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Volumes that hold LVM physical volumes (a guest's VG, say).
 *
 * A writable copy of such a volume (snapshot --writable, clone) holds the
 * same PV and VG UUIDs and VG name as its origin; LVM cannot use both on
 * one host (or in one VM) until the copy is given new ones, which is what
 * vgimportclone does for a copied PV, as xfs_admin -U does for a copied
 * XFS.  It runs on the copy's device alone (--devices), which also lets
 * it past the lvm.conf filter of "subvol lvm-filter".  A read-only
 * snapshot is left as it is: host LVM never sees it (never --host-lvm).
 *
 * And the LVM logical volume a pool's host filesystem sits on, which
 * subvol monitor extends (host_lv).
 */
#include "policy/policy.h"

#include <libdevmapper.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* An LVM2 label (libblkid's LVM2_member: "LABELONE" in the first sectors). */
bool image_holds_pv(int fd)
{
	char type[32];

	return !image_probe(fd, type, sizeof(type), NULL, 0) && !strcmp(type, "LVM2_member");
}

/* Run an LVM command quietly; its first line that is not a warning in why. */
static int run_lvm(const char *const argv[], char *why, size_t len)
{
	char out[2048], *line, *save, *p;
	int r;

	/* The tool's descriptors are close-on-exec; LVM need not list them. */
	setenv("LVM_SUPPRESS_FD_WARNINGS", "1", 0);
	r = program_capture_all(argv, out, sizeof(out));
	why[0] = '\0';
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		for (p = line; *p == ' '; p++)
			;
		if (!*p || !strncmp(p, "WARNING", 7))
			continue;
		snprintf(why, len, "%s", p);
		break;
	}
	if (r && !why[0])
		snprintf(why, len, r == 127 ? "cannot run %s (lvm2 not installed?)" :
			 "%s failed", argv[0]);
	return r;
}

/* The VG of the PV on dev ("" for an orphan PV), or -1. */
static int pv_vg_name(const char *dev, char *vg, size_t len)
{
	const char *const argv[] = { "pvs", "--noheadings", "-o", "vg_name", "--devices", dev,
				     dev, NULL };
	char out[256], *p, *e;

	vg[0] = '\0';
	setenv("LVM_SUPPRESS_FD_WARNINGS", "1", 0);
	if (program_capture(argv, false, out, sizeof(out)))
		return -1;
	for (p = out; *p == ' '; p++)
		;
	for (e = p + strlen(p); e > p && e[-1] == ' '; e--)
		;
	*e = '\0';
	snprintf(vg, len, "%s", p);
	return 0;
}

void volume_lvm_import_clone(struct volume *vol)
{
	const char *pn = vol->pool->meta.name;
	char name[DM_NAME_LEN], dev[DM_NAME_LEN + 32], why[512], old_vg[256] = "";
	char new_vg[256] = "";
	bool activated = false;
	int active, r = -1;

	active = volume_active(vol, name, sizeof(name), NULL);
	if (active < 0) {
		snprintf(why, sizeof(why), "its device's state is unknown");
		goto note;
	}
	if (!active) {
		if (!dm_available()) {
			snprintf(why, sizeof(why), "device-mapper is not available here to activate it");
			goto note;
		}
		if (volume_activate(vol, dev, sizeof(dev)) < 0) {
			snprintf(why, sizeof(why), "it could not be activated");
			goto note;
		}
		activated = true;
		volume_dm_name(vol, name, sizeof(name));
	}
	snprintf(dev, sizeof(dev), "%s/%s", dm_dir(), name);
	if (pv_vg_name(dev, old_vg, sizeof(old_vg))) {
		snprintf(why, sizeof(why), "pvs cannot read the PV on %s (lvm2 not installed?)", dev);
		goto out;
	}
	if (old_vg[0]) {
		/* No backup of a guest's VG metadata in the host's /etc/lvm. */
		const char *const argv[] = { "vgimportclone", "--config",
					     "backup { backup = 0 archive = 0 }",
					     "--devices", dev, dev, NULL };

		trace("volume %s/%s: vgimportclone --devices %s %s", pn, vol->name, dev, dev);
		r = run_lvm(argv, why, sizeof(why));
		if (!r && (pv_vg_name(dev, new_vg, sizeof(new_vg)) || !strcmp(new_vg, old_vg))) {
			snprintf(why, sizeof(why), "vgimportclone left the VG named %s", old_vg);
			r = -1;
		}
	} else {
		/* An orphan PV (no VG yet): a new PV UUID is all there is. */
		const char *const argv[] = { "pvchange", "--uuid", "--devices", dev, dev, NULL };

		trace("volume %s/%s: pvchange --uuid --devices %s %s", pn, vol->name, dev, dev);
		r = run_lvm(argv, why, sizeof(why));
	}
out:
	if (activated)
		volume_deactivate(vol, true);
	if (!r && old_vg[0])
		printf("Volume %s/%s: its LVM PV has new UUIDs and its VG %s is now %s (vgimportclone), to be used beside its origin's\n",
		       pn, vol->name, old_vg, new_vg);
	else if (!r)
		printf("Volume %s/%s: its LVM PV (in no VG) has a new UUID (pvchange --uuid)\n",
		       pn, vol->name);
	if (!r)
		return;
note:
	printf("Note: %s/%s keeps its origin's LVM PV%s UUIDs (%s); before LVM sees both, run: %s --devices /dev/subvol/%s/%s /dev/subvol/%s/%s\n",
	       pn, vol->name, old_vg[0] ? " and VG" : "", why,
	       r != -1 && !old_vg[0] ? "pvchange --uuid" : "vgimportclone", pn, vol->name, pn,
	       vol->name);
}

/*
 * The LVM logical volume under the filesystem of dirfd: "VG/LV" in out,
 * or false (not a device-mapper device of LVM's, or no device-mapper).
 */
bool host_lv(int dirfd, char *vg, size_t vglen, char *lv, size_t lvlen)
{
	char name[DM_NAME_LEN], uuid[DM_UUID_LEN];
	char *v = NULL, *l = NULL, *layer = NULL;
	struct dm_pool *mem;
	struct stat st;
	bool r = false;

	if (fstat(dirfd, &st) || !dm_is_dm_major(major(st.st_dev)) || !dm_available())
		return false;
	if (dm_device_by_number(major(st.st_dev), minor(st.st_dev), name, sizeof(name),
				uuid, sizeof(uuid)))
		return false;
	if (strncmp(uuid, "LVM-", 4))
		return false;
	mem = dm_pool_create("subvol", 256);
	if (!mem)
		return false;
	if (dm_split_lvm_name(mem, name, &v, &l, &layer) && v && *v && l && *l && !(layer && *layer)) {
		snprintf(vg, vglen, "%s", v);
		snprintf(lv, lvlen, "%s", l);
		r = true;
	}
	dm_pool_destroy(mem);
	return r;
}
