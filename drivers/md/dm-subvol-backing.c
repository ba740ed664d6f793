// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * Backing files of the subvol target: open the file a table names, check
 * that it can back the target, and keep the list of files in use so that
 * two devices never write one file and no device writes into itself.
 */

#include "dm-subvol.h"
#include "dm-subvol-compat.h"

#include <linux/blkdev.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/fileattr.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/mutex.h>
#include <linux/namei.h>
#include <linux/quota.h>
#include <linux/stat.h>
#include <linux/statfs.h>

/*
 * Every constructed target is on subvol_in_use, protected by
 * subvol_in_use_lock.  A new table of the same mapped device may name the
 * same file: a reload to resize or to change features.  The old and the new
 * table then coexist until the resume swaps them, and only one of them ever
 * gets I/O, so that case is allowed; any other sharing is refused.
 */
static DEFINE_MUTEX(subvol_in_use_lock);
static LIST_HEAD(subvol_in_use);

/* Chains of subvol devices stacked on one another are never longer. */
#define SUBVOL_MAX_STACK_DEPTH	16

/*
 * Would I/O to @file come back to @sc's own device?  The file's filesystem
 * may live on @sc's device itself, or on another subvol device whose file
 * lives on @sc's device, and so on down the chain.
 */
static bool subvol_file_on_own_device(struct subvol_c *sc, struct file *file)
{
	dev_t own = disk_devt(dm_disk(sc->md));
	unsigned int depth;

	lockdep_assert_held(&subvol_in_use_lock);
	for (depth = 0; file && depth < SUBVOL_MAX_STACK_DEPTH; depth++) {
		struct block_device *bdev = file_inode(file)->i_sb->s_bdev;
		struct subvol_c *below;

		if (!bdev)
			return false;
		if (bdev->bd_dev == own)
			return true;

		file = NULL;
		list_for_each_entry(below, &subvol_in_use, in_use) {
			if (disk_devt(dm_disk(below->md)) == bdev->bd_dev) {
				file = below->file;
				break;
			}
		}
	}
	return false;
}

/* Is @inode the backing file of any subvol target?  Sleeps. */
bool subvol_backing_in_use(struct inode *inode)
{
	struct subvol_c *other;
	bool found = false;

	mutex_lock(&subvol_in_use_lock);
	list_for_each_entry(other, &subvol_in_use, in_use) {
		if (file_inode(other->file) == inode) {
			found = true;
			break;
		}
	}
	mutex_unlock(&subvol_in_use_lock);
	return found;
}

/*
 * Is @inode the backing file of a target of another device, or of another
 * target in @sc's own table?
 */
static bool subvol_file_in_use(struct subvol_c *sc, struct inode *inode)
{
	struct subvol_c *other;

	lockdep_assert_held(&subvol_in_use_lock);
	list_for_each_entry(other, &subvol_in_use, in_use) {
		if (file_inode(other->file) != inode)
			continue;
		if (other->md != sc->md || other->ti->table == sc->ti->table)
			return true;
	}
	return false;
}

/*
 * Hole punching is what discard and write-zeroes turn into.  Some
 * filesystems have ->fallocate but refuse to punch (vfat, ext4 on files
 * without extents), so ask for real: one block past the end of the file,
 * which frees nothing and changes only the timestamps, as any write would.
 */
static int subvol_probe_punch_hole(struct file *file, unsigned int block_size)
{
	loff_t end = round_up(i_size_read(file_inode(file)), block_size);

	if (!file->f_op->fallocate)
		return -EOPNOTSUPP;
	return vfs_fallocate(file, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			     end, block_size);
}

static char *subvol_open_error(int r)
{
	switch (r) {
	case -ENOENT:
	case -ENOTDIR:
		return "Backing file not found";
	case -EACCES:
	case -EPERM:
		return "Permission denied opening backing file";
	case -EROFS:
		return "Backing file is on a read-only filesystem";
	case -ETXTBSY:
		return "Backing file is busy (a swap file or being executed)";
	case -EISDIR:
		return "Backing file is not a regular file";
	default:
		return "Cannot open backing file";
	}
}

/* Checks of an opened backing file that need no lock. */
static int subvol_check_file(struct subvol_c *sc, struct file *file,
			     char **error)
{
	struct inode *inode = file_inode(file);
	sector_t block_sectors;
	int r;

	if (!S_ISREG(inode->i_mode)) {
		*error = "Backing file is not a regular file";
		return -EINVAL;
	}

	sc->block_size = inode->i_sb->s_blocksize;
	if (sc->block_size > PAGE_SIZE) {
		*error = "Backing filesystem block size is larger than a page";
		return -EINVAL;
	}
	block_sectors = sc->block_size >> SECTOR_SHIFT;
	if (sc->ti->len & (block_sectors - 1)) {
		*error = "Length is not a multiple of the backing filesystem block size";
		return -EINVAL;
	}
	if (i_size_read(inode) < (loff_t)to_bytes(sc->ti->len)) {
		*error = "Backing file is shorter than the target length";
		return -EINVAL;
	}

	/* The I/O path calls ->read_iter and ->write_iter directly. */
	if (!(file->f_mode & FMODE_CAN_ODIRECT) || !file->f_op->read_iter ||
	    (sc->writable && !file->f_op->write_iter)) {
		*error = "Backing filesystem does not support direct I/O";
		return -EINVAL;
	}

	/* Read-only tables never discard, so they need no hole punching. */
	if (sc->writable) {
		/* Opening an active swap file for writing is not refused. */
		if (IS_SWAPFILE(inode)) {
			*error = subvol_open_error(-ETXTBSY);
			return -ETXTBSY;
		}
		r = subvol_probe_punch_hole(file, sc->block_size);
		if (r == -EOPNOTSUPP) {
			*error = "Backing filesystem does not support hole punching";
			return -EINVAL;
		}
		if (r) {
			*error = "Cannot punch holes in backing file";
			return r;
		}
	}
	return 0;
}

/**
 * subvol_backing_open - open and check the backing file of a new target
 * @sc: the target, with ti, md and writable set
 * @path: the file's absolute path, as the table gives it
 * @error: set to the reason on failure, for ti->error
 *
 * On success sc->file and sc->block_size are set and the file is on the
 * in-use list; undo with subvol_backing_close().
 */
int subvol_backing_open(struct subvol_c *sc, const char *path, char **error)
{
	int flags = (sc->writable ? O_RDWR : O_RDONLY) | O_LARGEFILE;
	struct path lookup;
	struct file *file;
	int r;

	/* A relative path would resolve against the cwd of dmsetup. */
	if (path[0] != '/') {
		*error = "Backing file path must be absolute";
		return -EINVAL;
	}

	/* Look before opening: opening a FIFO or a device has side effects. */
	r = kern_path(path, LOOKUP_FOLLOW, &lookup);
	if (r) {
		*error = subvol_open_error(r);
		return r;
	}
	if (!d_is_reg(lookup.dentry))
		r = -EISDIR;
	path_put(&lookup);
	if (r) {
		*error = subvol_open_error(r);
		return -EINVAL;
	}

	file = filp_open(path, flags, 0);
	if (IS_ERR(file)) {
		*error = subvol_open_error(PTR_ERR(file));
		return PTR_ERR(file);
	}

	r = subvol_check_file(sc, file, error);
	if (r)
		goto bad;

	mutex_lock(&subvol_in_use_lock);
	if (subvol_file_in_use(sc, file_inode(file))) {
		*error = "Backing file is already used by another subvol device";
		r = -EBUSY;
	} else if (subvol_file_on_own_device(sc, file)) {
		*error = "Backing file lives on the device itself";
		r = -ELOOP;
	} else {
		sc->file = file;
		list_add(&sc->in_use, &subvol_in_use);
	}
	mutex_unlock(&subvol_in_use_lock);
	if (r)
		goto bad;
	return 0;

bad:
	fput(file);
	return r;
}

/* Undo subvol_backing_open(). */
void subvol_backing_close(struct subvol_c *sc)
{
	mutex_lock(&subvol_in_use_lock);
	list_del(&sc->in_use);
	mutex_unlock(&subvol_in_use_lock);
	fput(sc->file);
	sc->file = NULL;
}

/*
 *----------------------------------------------------------------
 * The host's allocation size
 *----------------------------------------------------------------
 *
 * With guarantee:full a write takes one host block from the pool for each
 * hole or shared block it writes, so the host must allocate no more than
 * that.  XFS allocates by hints: an extent size hint rounds every
 * allocation of the file up to the hint, and a copy-on-write allocates a
 * whole CoW extent (the cowextsize hint, 32 blocks by default) for one
 * shared block.  So the backing file may have no extent size hint, and
 * the target keeps its CoW extent size at one block.  Other host
 * filesystems allocate by rules the target does not know: they can
 * only be used without the guarantee.
 */

/*
 * Host quotas: the pool's claim is charged to root (the reserve file's
 * owner, whom XFS does not limit), the backing file's writes to its own
 * user, group and project.  A limit on any of those would fail writes
 * that the claim backs (EDQUOT), which no release of the claim can help.
 * So the guarantee takes a host that limits none of them.
 */
static int subvol_backing_quota_check(struct subvol_c *sc, u32 projid,
				      char **error)
{
	static const char *const why[MAXQUOTAS] = {
		[USRQUOTA] = "Host quota limits the backing file's user: use guarantee:none",
		[GRPQUOTA] = "Host quota limits the backing file's group: use guarantee:none",
		[PRJQUOTA] = "Host quota limits the backing file's project: use guarantee:none",
	};
	struct inode *inode = file_inode(sc->file);
	struct super_block *sb = inode->i_sb;
	unsigned int ids[MAXQUOTAS];
	struct qc_state st;
	int type;

	if (!sb->s_qcop || !sb->s_qcop->get_state ||
	    sb->s_qcop->get_state(sb, &st))
		return 0;
	ids[USRQUOTA] = from_kuid(&init_user_ns, inode->i_uid);
	ids[GRPQUOTA] = from_kgid(&init_user_ns, inode->i_gid);
	ids[PRJQUOTA] = projid;
	for (type = 0; type < MAXQUOTAS; type++) {
		if ((st.s_state[type].flags & QCI_LIMITS_ENFORCED) &&
		    ids[type]) {
			*error = (char *)why[type];
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * Check the backing file's hints and the host's quotas, setting the CoW
 * extent size to one block if it is not.  Sleeps; takes the inode lock.
 */
static int subvol_backing_hints(struct subvol_c *sc, char **error)
{
	struct file *file = sc->file;
	struct dentry *dentry = file->f_path.dentry;
	struct fileattr fa;
	u32 extsize, projid;
	int r;

	r = vfs_fileattr_get(dentry, &fa);
	if (r) {
		*error = "Cannot read the backing file's allocation hints";
		return r;
	}
	if (fa.fsx_xflags & FS_XFLAG_REALTIME) {
		*error = "Backing file is on the realtime device: use guarantee:none";
		return -EINVAL;
	}
	if ((fa.fsx_xflags & FS_XFLAG_EXTSIZE) &&
	    fa.fsx_extsize > sc->block_size) {
		*error = "Backing file has an extent size hint: clear it or use guarantee:none";
		return -EINVAL;
	}
	r = subvol_backing_quota_check(sc, fa.fsx_projid, error);
	if (r)
		return r;
	if ((fa.fsx_xflags & FS_XFLAG_COWEXTSIZE) &&
	    fa.fsx_cowextsize == sc->block_size)
		return 0;

	extsize = fa.fsx_extsize;
	projid = fa.fsx_projid;
	fileattr_fill_xflags(&fa, fa.fsx_xflags | FS_XFLAG_COWEXTSIZE);
	fa.fsx_extsize = extsize;
	fa.fsx_projid = projid;
	fa.fsx_cowextsize = sc->block_size;
	r = mnt_want_write_file(file);
	if (!r) {
		r = vfs_fileattr_set(subvol_file_idmap(file), dentry, &fa);
		mnt_drop_write_file(file);
	}
	if (r)
		*error = "Cannot set the backing file's CoW extent size to one block";
	return r;
}

/*
 * Before a table with guarantee:full is used: the host must be XFS and
 * the backing file's hints as above.  Sleeps.
 */
int subvol_backing_guarantee_check(struct subvol_c *sc, char **error)
{
	if (file_inode(sc->file)->i_sb->s_magic != XFS_SUPER_MAGIC) {
		*error = "guarantee:full needs an XFS host filesystem: use guarantee:none";
		return -EINVAL;
	}
	sc->hints_checked = jiffies;
	return subvol_backing_hints(sc, error);
}

/*
 * The hints can be changed on the host at any time (xfs_io cowextsize):
 * writes that allocate check them again, at most once a second, and
 * restore the CoW extent size.  Process context.
 */
void subvol_backing_recheck_hints(struct subvol_c *sc)
{
	struct super_block *sb = file_inode(sc->file)->i_sb;
	unsigned long last = READ_ONCE(sc->hints_checked);
	char *error;

	if (time_before(jiffies, last + HZ) ||
	    cmpxchg(&sc->hints_checked, last, jiffies) != last)
		return;
	/*
	 * Setting a hint again waits for a frozen host (mnt_want_write_file()),
	 * here in the I/O worker, which must not wait for the thaw: the write
	 * is held meanwhile anyway (subvol_start_write()).  Check again at a
	 * write after the thaw.  Only a hint: a freeze that begins right after
	 * it is waited for.
	 */
	if (subvol_host_frozen(sb)) {
		WRITE_ONCE(sc->hints_checked, last);
		return;
	}
	if (subvol_backing_hints(sc, &error))
		DMERR_LIMIT("%s: %s: %s", dm_device_name(sc->md), sc->path,
			    error);
}

/*
 * The backing file may have been changed while the device was suspended
 * (cloned, grown, or, by mistake, truncated).  Clones and growth need
 * nothing, as every request goes through the host filesystem; a file now
 * too short for the table must not be resumed.
 */
int subvol_backing_check_size(struct subvol_c *sc)
{
	loff_t size = i_size_read(file_inode(sc->file));

	if (size < (loff_t)to_bytes(sc->ti->len)) {
		DMERR("%s: backing file %s is %lld bytes, shorter than the device (%llu bytes)",
		      dm_device_name(sc->md), sc->path, size,
		      (unsigned long long)to_bytes(sc->ti->len));
		return -EINVAL;
	}
	return 0;
}

/*
 * Sectors allocated to the backing file on the host.  Asks the filesystem:
 * XFS does not keep inode->i_blocks, it computes st_blocks in ->getattr.
 * May sleep.
 */
int subvol_backing_allocated(struct subvol_c *sc, u64 *sectors)
{
	struct kstat stat;
	int r;

	r = vfs_getattr(&sc->file->f_path, &stat, STATX_BLOCKS,
			AT_STATX_SYNC_AS_STAT);
	if (!r)
		*sectors = stat.blocks;
	return r;
}

/* Sectors free on the host filesystem for ordinary writers.  May sleep. */
int subvol_backing_host_free(struct subvol_c *sc, u64 *sectors)
{
	struct kstatfs st;
	int r;

	r = vfs_statfs(&sc->file->f_path, &st);
	if (!r)
		*sectors = (st.f_bavail * st.f_bsize) >> SECTOR_SHIFT;
	return r;
}
