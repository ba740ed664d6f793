/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * Differences between the kernels the subvol target builds against, kept in
 * one place.  The reference kernel is Debian 12's 6.1.  Which interfaces a
 * kernel has is decided by compiling a test of each against its headers
 * (drivers/md/compat/, scripts/kernel-compat writes the answers to
 * dm-subvol-features.h), not by its version: distributions backport.
 */
#ifndef DM_SUBVOL_COMPAT_H
#define DM_SUBVOL_COMPAT_H

#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/uio.h>
#include "dm-subvol-features.h"

/* ITER_SOURCE and ITER_DEST arrived in 6.1.11 and 6.2. */
#ifndef ITER_SOURCE
#define ITER_SOURCE	WRITE
#define ITER_DEST	READ
#endif

/*
 * The idmap of the mount a file was opened on, as the vfs_*xattr(),
 * vfs_fileattr_set() and vfs_tmpfile_open() of the same kernel take it: a
 * struct mnt_idmap since 6.3, a user namespace before.
 */
#ifdef SUBVOL_HAVE_MNT_IDMAP
#define subvol_file_idmap(file)		file_mnt_idmap(file)
#else
#define subvol_file_idmap(file)		file_mnt_user_ns(file)
#endif

/* An unnamed file for the kernel's own use: renamed in 6.6. */
#ifdef SUBVOL_HAVE_KERNEL_TMPFILE_OPEN
#define subvol_tmpfile_open		kernel_tmpfile_open
#else
#define subvol_tmpfile_open		vfs_tmpfile_open
#endif

/* A table's mode bit for "writable": BLK_OPEN_WRITE since 6.5. */
#ifdef SUBVOL_HAVE_BLK_OPEN_WRITE
#define SUBVOL_TABLE_WRITE		BLK_OPEN_WRITE
#else
#define SUBVOL_TABLE_WRITE		FMODE_WRITE
#endif

#endif /* DM_SUBVOL_COMPAT_H */
