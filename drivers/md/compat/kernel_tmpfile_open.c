// SPDX-License-Identifier: GPL-2.0-only
/*
 * SUBVOL_HAVE_KERNEL_TMPFILE_OPEN: vfs_tmpfile_open() is called
 * kernel_tmpfile_open() (v6.6, "fs: rename {vfs,kernel}_tmpfile_open()").
 */
#include <linux/cred.h>
#include <linux/fs.h>
#include <linux/mount.h>

struct file *subvol_compat_test(struct file *backing, const struct path *dir);
struct file *subvol_compat_test(struct file *backing, const struct path *dir)
{
	return kernel_tmpfile_open(file_mnt_idmap(backing), dir, S_IFREG | 0600,
				   O_RDWR, current_cred());
}
