// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Image files.  A new image is an unnamed file (O_TMPFILE) in the pool
 * until it is complete and durable, then linked under its name: a crash
 * or a failure at any step leaves nothing behind.
 */
#include "model/model.h"

#include <blkid.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

int image_tmp_open(struct pool *pool, struct new_image *img)
{
	img->pool = pool;
	img->fd = openat(pool->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	return img->fd < 0 ? -1 : 0;
}

/*
 * An extent size hint makes the host allocate whole extents of that size,
 * so the image keeps few extents and clones stay fast.  XFS takes it only
 * while the file has no data.
 */
int image_set_extent_size(int fd, uint32_t bytes, char *err, size_t errlen)
{
	struct fsxattr fsx;

	if (ioctl(fd, FS_IOC_FSGETXATTR, &fsx)) {
		snprintf(err, errlen, "cannot read the file's attributes: %s", strerror(errno));
		return -1;
	}
	fsx.fsx_extsize = bytes;
	if (bytes)
		fsx.fsx_xflags |= FS_XFLAG_EXTSIZE;
	else
		fsx.fsx_xflags &= ~FS_XFLAG_EXTSIZE;
	if (ioctl(fd, FS_IOC_FSSETXATTR, &fsx)) {
		snprintf(err, errlen, "the host refuses an extent size hint of %u bytes: %s",
			 bytes, strerror(errno));
		return -1;
	}
	return 0;
}

int image_clone_from(struct new_image *img, int src_fd)
{
	return ioctl(img->fd, FICLONE, src_fd);
}

/*
 * Make the image durable and give it its name: linked if the name is
 * free, or (replace) linked under a hidden name and renamed over the old
 * image in one step.  The directory is synced after.
 */
int image_publish(struct new_image *img, const char *name, bool replace)
{
	char proc[64], file[SUBVOL_NAME_MAX + 16], tmp[SUBVOL_NAME_MAX + 40];

	if (fsync(img->fd))
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", img->fd);
	snprintf(file, sizeof(file), "%s%s", name, SUBVOL_IMAGE_SUFFIX);
	if (!replace) {
		if (linkat(AT_FDCWD, proc, img->pool->dirfd, file, AT_SYMLINK_FOLLOW))
			return -1;
	} else {
		int old;

		snprintf(tmp, sizeof(tmp), ".%s.new-%d", file, (int)getpid());
		unlinkat(img->pool->dirfd, tmp, 0);
		if (linkat(AT_FDCWD, proc, img->pool->dirfd, tmp, AT_SYMLINK_FOLLOW))
			return -1;
		old = openat(img->pool->dirfd, file, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		if (renameat(img->pool->dirfd, tmp, img->pool->dirfd, file)) {
			int saved = errno;

			unlinkat(img->pool->dirfd, tmp, 0);
			if (old >= 0)
				close(old);
			errno = saved;
			return -1;
		}
		if (old >= 0)
			image_free_blocks(old);
	}
	return fsync(img->pool->dirfd);
}

/*
 * An image just unlinked: free its blocks now, so that the blocks it
 * shared are exclusive again when the pool's volumes rescan their sharing
 * (XFS would free them in the background, some time after the unlink).
 * Closes @fd.  A failure only delays the freeing.
 */
void image_free_blocks(int fd)
{
	if (ftruncate(fd, 0))
		trace("cannot truncate a removed image: %s", strerror(errno));
	close(fd);
}

/*
 * Every unlink and rename of a pool's image goes through these two, so
 * that what an image's flags demand first (an immutable snapshot) is done
 * in one place.  Both sync the directory; errno is kept on failure.
 */
/* The image's id, if it is sealed (seal.c): "" otherwise. */
static void sealed_id(int fd, char id[SUBVOL_ID_LEN + 1])
{
	struct volume_meta meta;
	char err[64];
	int flags;

	id[0] = '\0';
	if (fd < 0 || ioctl(fd, FS_IOC_GETFLAGS, &flags) || !(flags & FS_IMMUTABLE_FL) ||
	    volume_meta_read(fd, &meta, err, sizeof(err)))
		return;
	memcpy(id, meta.id, SUBVOL_ID_LEN + 1);
}

/* A sealed snapshot is unsealed first: an immutable file cannot go. */
int image_unlink(struct pool *pool, const char *name)
{
	char file[SUBVOL_NAME_MAX + 8], id[SUBVOL_ID_LEN + 1];
	int fd, saved;

	snprintf(file, sizeof(file), "%s%s", name, SUBVOL_IMAGE_SUFFIX);
	fd = openat(pool->dirfd, file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	sealed_id(fd, id);
	if (id[0] && image_unseal(pool, fd, id)) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	if (fd >= 0)
		close(fd);
	fd = openat(pool->dirfd, file, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (unlinkat(pool->dirfd, file, 0) || fsync(pool->dirfd)) {
		saved = errno;
		if (fd >= 0)
			close(fd);
		errno = saved;
		return -1;
	}
	if (fd >= 0)
		image_free_blocks(fd);
	return 0;
}

/*
 * Never over an existing image: EEXIST if new_name is taken.  A sealed
 * snapshot's flag is cleared for the rename (which changes its ctime
 * anyway) and set again, renamed or not; see image_seal_suspend().
 */
int image_rename(struct pool *pool, const char *old_name, const char *new_name)
{
	char from[SUBVOL_NAME_MAX + 8], to[SUBVOL_NAME_MAX + 8], id[SUBVOL_ID_LEN + 1];
	bool valid = false;
	int fd, r, saved;

	snprintf(from, sizeof(from), "%s%s", old_name, SUBVOL_IMAGE_SUFFIX);
	snprintf(to, sizeof(to), "%s%s", new_name, SUBVOL_IMAGE_SUFFIX);
	fd = openat(pool->dirfd, from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	sealed_id(fd, id);
	if (id[0] && image_seal_suspend(pool, fd, id, &valid)) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	r = renameat2(pool->dirfd, from, pool->dirfd, to, RENAME_NOREPLACE);
	if (!r && fsync(pool->dirfd))
		r = -1;
	saved = errno;
	if (id[0] && image_seal_resume(pool, fd, id, valid) && !r) {
		saved = errno;
		r = -1;
	}
	if (fd >= 0)
		close(fd);
	errno = saved;
	return r;
}

void image_discard(struct new_image *img)
{
	if (img->fd >= 0)
		close(img->fd);	/* unnamed: the host frees it */
	img->fd = -1;
}

/*
 * Before a clone of an image no device uses: drop the target's sharing
 * record, which would otherwise tell the next activation that blocks the
 * clone now shares are exclusive.  Without a record the target counts
 * every data block as shared (conservative).  Durable before the clone.
 */
int image_forget_sharing(int fd)
{
	int flags;

	/* A sealed snapshot never has one: the target writes none there. */
	if (!ioctl(fd, FS_IOC_GETFLAGS, &flags) && (flags & FS_IMMUTABLE_FL))
		return 0;
	if (fremovexattr(fd, SUBVOL_RECORD_XATTR) && errno != ENODATA)
		return -1;
	return fsync(fd);
}

int image_probe(int fd, char *type, size_t typelen, char *uuid, size_t uuidlen)
{
	blkid_probe pr = blkid_new_probe();
	const char *v;
	int r = -1;

	type[0] = '\0';
	if (uuid)
		uuid[0] = '\0';
	if (!pr)
		return -1;
	if (blkid_probe_set_device(pr, fd, 0, 0))
		goto out;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_UUID);
	/* 1: nothing found; -2: more than one signature, so none for sure. */
	r = blkid_do_safeprobe(pr);
	if (r == 0 && !blkid_probe_lookup_value(pr, "TYPE", &v, NULL))
		snprintf(type, typelen, "%s", v);
	if (r == 0 && uuid && !blkid_probe_lookup_value(pr, "UUID", &v, NULL))
		snprintf(uuid, uuidlen, "%s", v);
	r = r == -1 ? -1 : 0;
out:
	blkid_free_probe(pr);
	return r;
}

bool image_is_xfs(int fd)
{
	char type[32];

	return !image_probe(fd, type, sizeof(type), NULL, 0) && !strcmp(type, "xfs");
}

/*
 * Replay the log of the XFS in the image: a loop device, a mount (nouuid:
 * its origin may be mounted) and an unmount, which leaves the log clean.
 * A snapshot of a frozen XFS has a covered log that XFS tools call dirty.
 */
static int replay_xfs_log(const char *path)
{
	const char *setup[] = { "losetup", "--find", "--show", path, NULL };
	char loop[64], dir[] = "/tmp/subvol-uuid.XXXXXX";
	const char *mnt[] = { "mount", "-t", "xfs", "-o", "nouuid", loop, dir, NULL };
	const char *umnt[] = { "umount", dir, NULL };
	const char *detach[] = { "losetup", "-d", loop, NULL };
	int r = -1;

	if (program_capture(setup, false, loop, sizeof(loop)) || strncmp(loop, "/dev/", 5))
		return -1;
	if (mkdtemp(dir)) {
		if (run_program(mnt, !verbose) == 0)
			r = run_program(umnt, !verbose) ? -1 : 0;
		rmdir(dir);
	}
	run_program(detach, !verbose);
	return r;
}

/*
 * A new filesystem UUID for the XFS in a (not yet visible) clone, so that
 * it mounts beside its origin.  xfs_admin needs a clean log: the log is
 * replayed first if it is not.
 */
/* The XFS's UUID (sb_uuid), as libblkid reads it. */
static int xfs_uuid(int fd, char uuid[64])
{
	char type[32];

	if (image_probe(fd, type, sizeof(type), uuid, 64) || strcmp(type, "xfs") || !uuid[0])
		return -1;
	return 0;
}

/*
 * xfs_admin says why it refused but exits 0 in some of those cases (a log
 * to replay), so success is a changed UUID in the superblock.
 */
static int change_uuid(const char *path, int fd)
{
	const char *argv[] = { "xfs_admin", "-U", "generate", path, NULL };
	char before[64], after[64];
	int r;

	if (xfs_uuid(fd, before))
		return -1;
	r = run_program(argv, !verbose);
	if (r < 0 || r == 127)
		return -2;
	if (xfs_uuid(fd, after))
		return -1;
	return strcmp(before, after) ? 0 : -1;
}

int image_new_xfs_uuid(struct new_image *img, char *err, size_t errlen)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), img->fd);
	r = change_uuid(path, img->fd);
	if (r == -1) {
		trace("xfs_admin refused (a log to replay?): replaying it through a loop device");
		if (replay_xfs_log(path)) {
			snprintf(err, errlen, "its log could not be replayed through a loop device");
			return -1;
		}
		r = change_uuid(path, img->fd);
	}
	if (r) {
		snprintf(err, errlen, r == -2 ? "xfs_admin could not run" :
			 "xfs_admin -U generate failed");
		return -1;
	}
	return 0;
}
