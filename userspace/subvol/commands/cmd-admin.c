// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Administration, after lvm2 and zfs: rename and set of a volume, import
 * of a raw image file, pool export and pool remove.
 */
#include "commands/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* Options that are only --help. */
static int no_options(const char *cmd, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = cmd_getopt(argc, argv, "h", opts)) != -1) {
		if (c == 'h') {
			command_help(cmd);
			return -1;
		}
		return usage_error(cmd, NULL);
	}
	return 0;
}

/* 1 active (said so, as refused), 0 not, -1 unknown (said why). */
static int refuse_active(const struct volume *vol, const char *why)
{
	char name[DM_NAME_LEN];
	int r = volume_active(vol, name, sizeof(name), NULL);

	if (r == 1)
		errmsg("volume %s/%s: active as %s/%s; deactivate it first (%s)",
		       vol->pool->meta.name, vol->name, dm_dir(), name, why);
	return r;
}

/* --- rename ------------------------------------------------------------ */

/* NEW, or POOL/NEW where POOL is the volume's pool by name or path. */
static const char *new_name_in(const struct pool *pool, const char *arg)
{
	const char *slash = strrchr(arg, '/');
	char spec[PATH_MAX], real[PATH_MAX];
	size_t n;

	if (!slash)
		return arg;
	n = slash - arg;
	if (n == strlen(pool->meta.name) && !strncmp(arg, pool->meta.name, n))
		return slash + 1;
	if (n < sizeof(spec)) {
		memcpy(spec, arg, n);
		spec[n] = '\0';
		if (realpath(n ? spec : "/", real) && !strcmp(real, pool->path))
			return slash + 1;
	}
	errmsg("volume %s: not in pool %s: a volume is renamed within its pool", arg,
	       pool->meta.name);
	return NULL;
}

/*
 * The image is renamed in one step, never over another.  An active
 * device's table names the image by path, so the volume must be
 * inactive.  Snapshots and clones find their origin by id.
 */
int cmd_rename(int argc, char **argv)
{
	struct volume vol, dst;
	const char *name;
	struct pool pool;
	int r;

	r = no_options("rename", argc, argv);
	if (r)
		return r < 0 ? 0 : r;
	if (optind != argc - 2)
		return usage_error("rename", "give POOL/VOLUME and its NEW name");
	if (volume_spec(argv[optind], &pool, &vol, true, true))
		return EXIT_REFUSED;
	r = EXIT_REFUSED;
	name = new_name_in(&pool, argv[optind + 1]);
	if (!name)
		goto out;
	/* An invalid NEW is a usage error, as create's. */
	r = volume_load(&pool, name, &dst, false);
	if (r)
		goto out;
	r = EXIT_REFUSED;
	if (dst.exists) {
		errmsg("volume %s/%s: exists already", pool.meta.name, name);
		goto out;
	}
	if (refuse_active(&vol, "its table names the image's path"))
		goto out;
	if (image_rename(&pool, vol.name, name)) {
		if (errno == EEXIST)
			errmsg("volume %s/%s: exists already", pool.meta.name, name);
		else
			errmsg("volume %s/%s: cannot rename %s to %s: %s", pool.meta.name,
			       vol.name, vol.path, dst.path, strerror(errno));
		goto out;
	}
	printf("Volume %s/%s renamed to %s/%s\n", pool.meta.name, vol.name, pool.meta.name,
	       name);
	r = 0;
out:
	pool_close(&pool);
	return r;
}

/* --- set --------------------------------------------------------------- */

enum {
	SET_NO_SPACE = 1 << 0,
	SET_TIMEOUT = 1 << 1,
	SET_LOW_WATER = 1 << 2,
	SET_DISCARD = 1 << 3,
	SET_HOST_LVM = 1 << 4,
};

/* The new metadata, then the live table: reload, and resume swaps it in. */
static int set_active(struct volume *vol, const char *name)
{
	char params[4200];

	if (volume_table(vol, params, sizeof(params)))
		return -1;
	if (dm_device_reload(name, vol->meta.size >> 9, params, false)) {
		errmsg("volume %s/%s: cannot load the new table: %s", vol->pool->meta.name,
		       vol->name, dm_last_error());
		return -1;
	}
	/* dm suspends (the filesystem on top frozen) to swap tables. */
	if (dm_device_resume(name)) {
		errmsg("volume %s/%s: cannot switch to the new table: %s (the metadata has the new options)",
		       vol->pool->meta.name, vol->name, dm_last_error());
		return -2;
	}
	return 0;
}

int cmd_set(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "no-space", required_argument, NULL, 'n' },
		{ "no-space-timeout", required_argument, NULL, 't' },
		{ "low-water", required_argument, NULL, 'l' },
		{ "ignore-discard", no_argument, NULL, 'D' },
		{ "no-ignore-discard", no_argument, NULL, 'd' },
		{ "host-lvm", no_argument, NULL, 'H' },
		{ "no-host-lvm", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd = "set";
	struct volume_meta want = { 0 }, meta;
	struct subvol_features *f = &meta.features;
	char name[DM_NAME_LEN], lw[32], sz[32];
	struct dm_info_lite info;
	unsigned int given = 0;
	bool no_ignore = false, host_lvm = false, no_host_lvm = false;
	char holders[256];
	struct pool pool;
	struct volume vol;
	int c, fd = -1, r, active;

	while ((c = cmd_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'n':
		case 't':
		case 'l':
		case 'D':
			r = parse_policy(cmd, c, optarg, &want);
			if (r)
				return r;
			given |= c == 'n' ? SET_NO_SPACE : c == 't' ? SET_TIMEOUT :
				 c == 'l' ? SET_LOW_WATER : SET_DISCARD;
			break;
		case 'd':
			no_ignore = true;
			given |= SET_DISCARD;
			break;
		case 'H':
		case 'L':
			*(c == 'H' ? &host_lvm : &no_host_lvm) = true;
			given |= SET_HOST_LVM;
			break;
		case 'h':
			return command_help(cmd);
		default:
			return usage_error(cmd, NULL);
		}
	}
	if (optind != argc - 1)
		return usage_error(cmd, "give one POOL/VOLUME");
	if (!given)
		return usage_error(cmd, "give an option to change");
	if (no_ignore && want.features.ignore_discard)
		return usage_error(cmd, "--ignore-discard or --no-ignore-discard, not both");
	if (host_lvm && no_host_lvm)
		return usage_error(cmd, "--host-lvm or --no-host-lvm, not both");
	if ((given & SET_NO_SPACE) && (given & SET_TIMEOUT) && !want.features.no_space_queue)
		return usage_error(cmd, "--no-space-timeout needs --no-space queue");
	if (volume_spec(argv[optind], &pool, &vol, true, true))
		return EXIT_REFUSED;
	r = EXIT_REFUSED;
	if (vol.meta.kind == VOLUME_KIND_SNAPSHOT && given == SET_HOST_LVM) {
		errmsg("volume %s/%s: a snapshot's LVM PVs have its origin's UUIDs, and host LVM never uses them; give it to host LVM through a clone (subvol clone, which runs vgimportclone)",
		       pool.meta.name, vol.name);
		goto out;
	}
	if (vol.meta.kind == VOLUME_KIND_SNAPSHOT) {
		errmsg("volume %s/%s: a snapshot is read-only and these options act on writes; set them on a clone of it",
		       pool.meta.name, vol.name);
		goto out;
	}
	meta = vol.meta;
	if (given & SET_NO_SPACE) {
		f->no_space_queue = want.features.no_space_queue;
		if (!f->no_space_queue)
			f->no_space_timeout = 0;
	}
	if (given & SET_TIMEOUT) {
		if (!f->no_space_queue) {
			errmsg("volume %s/%s: --no-space-timeout needs --no-space queue (the volume's is error)",
			       pool.meta.name, vol.name);
			goto out;
		}
		f->no_space_timeout = want.features.no_space_timeout;
	}
	if (given & SET_LOW_WATER)
		f->low_water_sectors = want.features.low_water_sectors;
	if (given & SET_DISCARD)
		f->ignore_discard = want.features.ignore_discard;
	if (given & SET_HOST_LVM)
		meta.host_lvm = host_lvm;
	if (f->low_water_sectors && f->low_water_sectors >= meta.size >> 9) {
		format_size(lw, sizeof(lw), f->low_water_sectors << 9);
		format_size(sz, sizeof(sz), meta.size);
		/* A usage error, as create's for the same value. */
		r = usage_error(cmd, "--low-water: %s is not below the size of %s/%s (%s)",
				lw, pool.meta.name, vol.name, sz);
		goto out;
	}
	r = check_policies(cmd, &meta, pool_block_size(&pool));
	if (r)
		goto out;
	r = EXIT_REFUSED;

	active = volume_active(&vol, name, sizeof(name), &info);
	if (active < 0)
		goto out;
	if (active && info.suspended) {
		errmsg("volume %s/%s: %s is suspended; resume it first (dmsetup resume %s)",
		       pool.meta.name, vol.name, name, name);
		goto out;
	}
	/* Taken from host LVM while LVs on it are active there: deactivate first. */
	if (active && no_host_lvm && vol.meta.host_lvm &&
	    device_holders(info.major, info.minor, holders, sizeof(holders)) > 0) {
		errmsg("volume %s/%s: %s is held by %s (LVM LVs on it active on the host); vgchange -an their VG first",
		       pool.meta.name, vol.name, name, holders);
		goto out;
	}
	fd = open(vol.path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || volume_meta_write(fd, &meta) || fsync(fd)) {
		errmsg("volume %s/%s: cannot update the metadata of %s: %s", pool.meta.name,
		       vol.name, vol.path, strerror(errno));
		goto out;
	}
	if (active && (given & ~SET_HOST_LVM)) {
		struct volume_meta old = vol.meta;

		vol.meta = meta;
		c = set_active(&vol, name);
		if (c == -1 && !volume_meta_write(fd, &old))
			fsync(fd);	/* the old table stays: so does its metadata */
		if (c)
			goto out;
	}
	vol.meta = meta;
	if (active && (given & SET_HOST_LVM))
		volume_host_lvm_changed(&vol, name, &info);
	if (given == SET_HOST_LVM) {
		printf("Volume %s/%s: %s\n", pool.meta.name, vol.name, meta.host_lvm ?
		       "host LVM may scan and activate the PVs on it (host-lvm)" :
		       "host LVM leaves the PVs on it alone (no-host-lvm)");
		r = 0;
		goto out;
	}
	format_size(lw, sizeof(lw), f->low_water_sectors << 9);
	printf("Volume %s/%s: no-space %s, no-space-timeout %u, low-water %s, %s%s%s\n",
	       pool.meta.name, vol.name, f->no_space_queue ? "queue" : "error",
	       f->no_space_timeout, f->low_water_sectors ? lw : "0",
	       f->ignore_discard ? "ignore-discard" : "no-ignore-discard",
	       !(given & SET_HOST_LVM) ? "" : meta.host_lvm ? ", host-lvm" : ", no-host-lvm",
	       active ? " (table reloaded)" : "");
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	pool_close(&pool);
	return r;
}

/* --- import ------------------------------------------------------------ */

static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFBLK:
		return "a block device";
	case S_IFCHR:
		return "a character device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	}
	return "not a regular file";
}

static bool all_zero(const char *buf, size_t len)
{
	return !buf[0] && !memcmp(buf, buf + 1, len - 1);
}

/*
 * Copy the data of src into dst, holes as holes: only the ranges
 * SEEK_DATA finds, and of those only the host blocks that are not all
 * zeros.  The bytes written in *copied.
 */
static int sparse_copy(int src, int dst, uint64_t size, uint32_t block, uint64_t *copied)
{
	const size_t chunk = 1 << 20;
	off_t data, hole, pos = 0;
	char *buf;
	ssize_t n;
	size_t i, len;

	*copied = 0;
	buf = malloc(chunk);
	if (!buf)
		return -1;
	while ((uint64_t)pos < size) {
		data = lseek(src, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;	/* a hole to the end */
		if (data < 0) {
			data = pos;	/* no SEEK_DATA here: all of it is data */
			hole = size;
		} else {
			hole = lseek(src, data, SEEK_HOLE);
			if (hole < 0)
				hole = size;
		}
		for (pos = data; pos < hole; pos += n) {
			len = (uint64_t)(hole - pos) < chunk ? (size_t)(hole - pos) : chunk;
			n = pread(src, buf, len, pos);
			if (n < 0 && errno == EINTR) {
				n = 0;
				continue;
			}
			if (n == 0)
				errno = EIO;	/* shorter than it was */
			if (n <= 0)
				goto fail;
			for (i = 0; i < (size_t)n; i += len) {
				len = block - (pos + i) % block;
				if (len > (size_t)n - i)
					len = n - i;
				if (all_zero(buf + i, len))
					continue;
				if (pwrite(dst, buf + i, len, pos + i) != (ssize_t)len)
					goto fail;
				*copied += len;
			}
		}
	}
	free(buf);
	return 0;
fail:
	free(buf);
	return -1;
}

/*
 * An image of a subvol pool (by its metadata and its directory's) must be
 * inactive: a reflink of a live image would copy a torn state.  Opens its
 * pool in *src_pool when it is one (dirfd -1 otherwise).
 */
static int check_source(const char *file, int fd, struct pool *src_pool,
			struct volume *src_vol)
{
	char dir[PATH_MAX], err[256], *slash;
	size_t n;

	src_pool->dirfd = -1;
	if (volume_meta_read(fd, &src_vol->meta, err, sizeof(err)))
		return 0;
	if (!realpath(file, dir) || !(slash = strrchr(dir, '/')))
		return 0;
	*slash = '\0';
	n = strlen(slash + 1);
	if (n <= strlen(SUBVOL_IMAGE_SUFFIX) ||
	    strcmp(slash + 1 + n - strlen(SUBVOL_IMAGE_SUFFIX), SUBVOL_IMAGE_SUFFIX) ||
	    n - strlen(SUBVOL_IMAGE_SUFFIX) > SUBVOL_NAME_MAX)
		return 0;
	src_pool->dirfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (src_pool->dirfd < 0 || pool_meta_read(src_pool->dirfd, &src_pool->meta, err,
						  sizeof(err))) {
		pool_close(src_pool);
		return 0;
	}
	snprintf(src_pool->path, sizeof(src_pool->path), "%s", *dir ? dir : "/");
	src_vol->pool = src_pool;
	snprintf(src_vol->name, sizeof(src_vol->name), "%.*s",
		 (int)(n - strlen(SUBVOL_IMAGE_SUFFIX)), slash + 1);
	snprintf(src_vol->path, sizeof(src_vol->path), "%s", file);
	if (!valid_name(src_vol->name)) {
		pool_close(src_pool);
		return 0;
	}
	return refuse_active(src_vol, "a clone of a live image is not consistent") ? -1 : 0;
}

/*
 * A raw image file becomes a volume: a reflink clone when it is on the
 * pool's filesystem, else a sparse copy, into an unnamed file that gets
 * its name only when complete (image_publish).
 */
int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "move", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd = "import", *file, *how;
	struct new_image img = { .fd = -1 };
	struct volume_meta meta = { 0 };
	struct pool pool, src_pool = { .dirfd = -1 };
	struct volume vol, src_vol = { 0 };
	char size_str[32], copied_str[32];
	uint64_t copied = 0;
	bool move = false;
	struct stat st;
	int c, src = -1, r = EXIT_REFUSED;

	while ((c = cmd_getopt(argc, argv, "h", opts)) != -1) {
		switch (c) {
		case 'M':
			move = true;
			break;
		case 'h':
			return command_help(cmd);
		default:
			return usage_error(cmd, NULL);
		}
	}
	if (optind != argc - 2)
		return usage_error(cmd, "give a FILE and POOL/NAME");
	file = argv[optind];
	/* O_NONBLOCK: a FIFO must not block the open; it is refused below. */
	src = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (src < 0 || fstat(src, &st)) {
		errmsg("%s: cannot read it: %s", file, strerror(errno));
		if (src >= 0)
			close(src);
		return EXIT_REFUSED;
	}
	if (!S_ISREG(st.st_mode)) {
		errmsg("%s: %s, not an image file (convert it with qemu-img convert -O raw, or copy it with dd)",
		       file, file_kind(st.st_mode));
		close(src);
		return EXIT_REFUSED;
	}
	if (!st.st_size) {
		errmsg("%s: empty; a volume needs a size", file);
		close(src);
		return EXIT_REFUSED;
	}
	if (check_source(file, src, &src_pool, &src_vol)) {
		pool_close(&src_pool);
		close(src);
		return EXIT_REFUSED;
	}
	r = volume_spec(argv[optind + 1], &pool, &vol, true, false);
	if (r)
		goto out_src;
	r = EXIT_REFUSED;
	if (vol.exists) {
		errmsg("volume %s/%s: exists already", pool.meta.name, vol.name);
		goto out;
	}
	meta.size = st.st_size;
	new_volume_meta(&meta, pool_block_size(&pool));
	vol.meta = meta;
	if (image_tmp_open(&pool, &img)) {
		errmsg("volume %s/%s: cannot make a file in %s: %s", pool.meta.name, vol.name,
		       pool.path, strerror(errno));
		goto out;
	}
	/* A reflinked image shares blocks its sharing record calls its own. */
	if (fgetxattr(src, SUBVOL_RECORD_XATTR, NULL, 0) >= 0 && image_forget_sharing(src)) {
		errmsg("%s: cannot drop its sharing record %s before a clone: %s", file,
		       SUBVOL_RECORD_XATTR, strerror(errno));
		goto out;
	}
	if (!image_clone_from(&img, src)) {
		how = "reflinked";
	} else if (errno == EXDEV || errno == EOPNOTSUPP || errno == EINVAL) {
		trace("%s: not on the pool's filesystem (%s): copying it", file, strerror(errno));
		/* Sized first: writes below EOF get no speculative preallocation. */
		if (ftruncate(img.fd, meta.size) ||
		    sparse_copy(src, img.fd, st.st_size, pool_block_size(&pool), &copied)) {
			errmsg("volume %s/%s: cannot copy %s: %s", pool.meta.name, vol.name, file,
			       strerror(errno));
			goto out;
		}
		format_size(copied_str, sizeof(copied_str), copied);
		how = "copied";
	} else {
		errmsg("volume %s/%s: cannot clone %s: %s", pool.meta.name, vol.name, file,
		       strerror(errno));
		goto out;
	}
	if (ftruncate(img.fd, meta.size) || volume_meta_write(img.fd, &meta) ||
	    image_publish(&img, vol.name, false)) {
		errmsg("volume %s/%s: cannot make the image %s: %s", pool.meta.name, vol.name,
		       vol.path, strerror(errno));
		goto out;
	}
	format_size(size_str, sizeof(size_str), meta.size);
	if (how[0] == 'c')
		printf("Volume %s/%s imported from %s (%s, %s of data copied), inactive\n",
		       pool.meta.name, vol.name, file, size_str, copied_str);
	else
		printf("Volume %s/%s imported from %s (%s, %s), inactive\n", pool.meta.name,
		       vol.name, file, size_str, how);
	r = 0;
	if (move) {
		close(src);
		src = -1;
		if (src_pool.dirfd >= 0 ? image_unlink(&src_pool, src_vol.name) : unlink(file)) {
			errmsg("%s: imported, but cannot remove it: %s", file, strerror(errno));
			r = EXIT_REFUSED;
		} else {
			printf("Removed %s\n", file);
		}
	}
out:
	image_discard(&img);
	pool_close(&pool);
out_src:
	pool_close(&src_pool);
	if (src >= 0)
		close(src);
	return r;
}

/* --- pool export, pool remove ------------------------------------------ */

static int pool_export(const char *spec)
{
	char active[SUBVOL_NAME_MAX + 1];
	struct pool pool;
	int r = EXIT_REFUSED;

	if (pool_open(spec, &pool, true))
		return EXIT_REFUSED;
	switch (pool_active_volume(&pool, active, sizeof(active))) {
	case 1:
		errmsg("pool %s: volume %s/%s is active; deactivate the pool's volumes first",
		       pool.meta.name, pool.meta.name, active);
		/* fall through */
	case -1:
		goto out;
	}
	switch (pool_unregister(&pool)) {
	case 0:
		errmsg("pool %s: not registered (at %s), so not exported", pool.meta.name,
		       pool.path);
		break;
	case 1:
		printf("Pool %s exported: %s is kept (subvol pool import %s brings it back)\n",
		       pool.meta.name, pool.path, pool.path);
		r = 0;
	}
out:
	pool_close(&pool);
	return r;
}

/* The images first: a pool half removed is still a pool, to remove again. */
/*
 * The directory's user.subvol.* attributes but the pool's own (removed
 * last): seals left by images this pool never had, as a cp -a copy of a
 * pool carries them, and what subvol monitor kept.
 */
static void remove_subvol_xattrs(struct pool *pool)
{
	char *list, *name;
	ssize_t len = flistxattr(pool->dirfd, NULL, 0);

	if (len <= 0)
		return;
	list = malloc(len);
	if (!list)
		return;
	len = flistxattr(pool->dirfd, list, len);
	for (name = list; len > 0 && name < list + len; name += strlen(name) + 1)
		if (!strncmp(name, "user.subvol.", 12) && strcmp(name, SUBVOL_POOL_XATTR) &&
		    fremovexattr(pool->dirfd, name))
			trace("pool %s: cannot remove %s: %s", pool->meta.name, name,
			      strerror(errno));
	free(list);
}

static int pool_remove(const char *spec, bool yes)
{
	char active[SUBVOL_NAME_MAX + 1], q[PATH_MAX + 128];
	char **names = NULL, **p;
	struct pool pool;
	int n = 0, r = EXIT_REFUSED;

	if (pool_open(spec, &pool, true))
		return EXIT_REFUSED;
	switch (pool_active_volume(&pool, active, sizeof(active))) {
	case 1:
		errmsg("pool %s: volume %s/%s is active; deactivate the pool's volumes first",
		       pool.meta.name, pool.meta.name, active);
		/* fall through */
	case -1:
		goto out;
	}
	names = pool_volumes(&pool);
	if (!names) {
		errmsg("pool %s: cannot read %s", pool.meta.name, pool.path);
		goto out;
	}
	for (p = names; *p; p++)
		n++;
	if (n) {
		snprintf(q, sizeof(q), "Remove pool %s and delete its %d volume%s in %s?",
			 pool.meta.name, n, n == 1 ? "" : "s", pool.path);
		if (!yes && !confirm(q)) {
			errmsg("pool %s: not removed: it holds %d volume%s (confirm with --yes)",
			       pool.meta.name, n, n == 1 ? "" : "s");
			goto out;
		}
	}
	for (p = names; *p; p++) {
		if (image_unlink(&pool, *p)) {
			errmsg("pool %s: cannot delete volume %s: %s", pool.meta.name, *p,
			       strerror(errno));
			goto out;
		}
		trace("pool %s: volume %s deleted", pool.meta.name, *p);
	}
	if (pool_unregister(&pool) < 0)
		goto out;
	/* Seals of images that were never this pool's (a cp -a copy's), the monitor's. */
	remove_subvol_xattrs(&pool);
	if (fremovexattr(pool.dirfd, SUBVOL_POOL_XATTR) || fsync(pool.dirfd)) {
		errmsg("pool %s: cannot remove %s from %s: %s", pool.meta.name, SUBVOL_POOL_XATTR,
		       pool.path, strerror(errno));
		goto out;
	}
	printf("Pool %s removed (%d volume%s deleted); the directory %s is kept\n",
	       pool.meta.name, n, n == 1 ? "" : "s", pool.path);
	r = 0;
out:
	free_names(names);
	pool_close(&pool);
	return r;
}

int cmd_pool_admin(const char *sub, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "yes", no_argument, NULL, 'y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	bool yes = false, remove = !strcmp(sub, "remove");
	int c;

	while ((c = cmd_getopt(argc, argv, "h", opts)) != -1) {
		if (c == 'y' && remove)
			yes = true;
		else if (c == 'h')
			return command_help("pool");
		else
			return usage_error("pool", c == 'y' ? "--yes is for pool remove" : NULL);
	}
	if (optind != argc - 1)
		return usage_error("pool", "pool %s: give one POOL", sub);
	return remove ? pool_remove(argv[optind], yes) : pool_export(argv[optind]);
}
