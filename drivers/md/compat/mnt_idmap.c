// SPDX-License-Identifier: GPL-2.0-only
/*
 * SUBVOL_HAVE_MNT_IDMAP: idmapped-mount helpers take a struct mnt_idmap,
 * not a user namespace (v6.3, "fs: port vfs_*() helpers to struct
 * mnt_idmap" and the series around it; file_mnt_user_ns() removed).
 */
#include <linux/fs.h>
#include <linux/mount.h>

struct mnt_idmap *subvol_compat_test(struct file *file);
struct mnt_idmap *subvol_compat_test(struct file *file)
{
	return file_mnt_idmap(file);
}
