// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Commands on one volume: create, activate, deactivate, remove, resize.
 */
#include "commands/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


static int parse_choice(const char *cmd, const char *opt, const char *val,
			const char *yes, const char *no, bool *out)
{
	if (!strcmp(val, yes))
		*out = true;
	else if (!strcmp(val, no))
		*out = false;
	else
		return usage_error(cmd, "--%s: \"%s\" is not %s or %s", opt, val, yes, no);
	return 0;
}

int parse_policy(const char *cmd, int opt, const char *arg, struct volume_meta *m)
{
	struct subvol_features *f = &m->features;
	uint64_t v;
	bool b = false;

	switch (opt) {
	case 'g':
		if (parse_choice(cmd, "guarantee", arg, "none", "full", &b))
			return EXIT_USAGE;
		f->no_guarantee = b;
		return 0;
	case 'n':
		return parse_choice(cmd, "no-space", arg, "queue", "error",
				    &f->no_space_queue) ? EXIT_USAGE : 0;
	case 't':
		if (parse_size(arg, &v) || strpbrk(arg, "KMGTPkmgtps.") || !v ||
		    v > DM_SUBVOL_NO_SPACE_TIMEOUT_MAX)
			return usage_error(cmd, "--no-space-timeout: \"%s\" is not a number of seconds from 1 to %d",
					   arg, DM_SUBVOL_NO_SPACE_TIMEOUT_MAX);
		f->no_space_timeout = v;
		return 0;
	case 'l':
		if (parse_size(arg, &v) || v % 512)
			return usage_error(cmd, "--low-water: \"%s\" is not a size in whole sectors", arg);
		f->low_water_sectors = v >> 9;
		return 0;
	case 'D':
		f->ignore_discard = true;
		return 0;
	}
	return EXIT_USAGE;
}

#define POLICY_OPTIONS \
	{ "guarantee", required_argument, NULL, 'g' }, \
	{ "no-space", required_argument, NULL, 'n' }, \
	{ "no-space-timeout", required_argument, NULL, 't' }, \
	{ "low-water", required_argument, NULL, 'l' }, \
	{ "ignore-discard", no_argument, NULL, 'D' }

int check_policies(const char *cmd, const struct volume_meta *m, uint64_t block)
{
	if (m->features.no_space_timeout && !m->features.no_space_queue)
		return usage_error(cmd, "--no-space-timeout needs --no-space queue");
	if (m->extent_size % block || m->extent_size > SUBVOL_EXTENT_SIZE_MAX)
		return usage_error(cmd, "--extent-size: %u is not a multiple of the host's %" PRIu64 "-byte blocks up to 1G",
				   m->extent_size, block);
	if (m->extent_size > block && !m->features.no_guarantee)
		return usage_error(cmd, "--extent-size needs --guarantee none: the host would allocate whole extents for one-block writes, which the guarantee does not count");
	/* The space left to fill is at most the size: it would fire at once. */
	if (m->features.low_water_sectors && m->features.low_water_sectors >= m->size >> 9) {
		char lw[32], sz[32];

		format_size(lw, sizeof(lw), m->features.low_water_sectors << 9);
		format_size(sz, sizeof(sz), m->size);
		return usage_error(cmd, "--low-water: %s is not below the volume's size (%s)",
				   lw, sz);
	}
	return 0;
}

void new_volume_meta(struct volume_meta *meta, uint64_t block)
{
	char size_str[32];

	if (meta->size % block) {
		meta->size += block - meta->size % block;
		format_size(size_str, sizeof(size_str), meta->size);
		printf("Rounding the size up to %s (%" PRIu64 " bytes, whole %" PRIu64 "-byte host blocks)\n",
		       size_str, meta->size, block);
	}
	new_id(meta->id);
	meta->kind = VOLUME_KIND_VOLUME;
	meta->created = time(NULL);
}

static int make_fs(struct volume *vol, const char *type, const char *dev)
{
	char prog[32], why[256];
	const char *argv[] = { prog, "-q", dev, NULL };
	int r;

	snprintf(prog, sizeof(prog), "mkfs.%s", type);
	if (!strcmp(type, "ext4"))
		argv[1] = "-F";
	trace("volume %s/%s: %s %s", vol->pool->meta.name, vol->name, prog, dev);
	r = program_capture(argv, true, why, sizeof(why));
	if (r) {
		errmsg("volume %s/%s: %s failed: %s", vol->pool->meta.name, vol->name, prog,
		       why[0] ? why : r == 127 ? "cannot run it" : "no reason given");
		return -1;
	}
	return 0;
}

static int remove_image(struct volume *vol)
{
	if (image_unlink(vol->pool, vol->name)) {
		errmsg("volume %s/%s: cannot remove %s: %s", vol->pool->meta.name,
		       vol->name, vol->path, strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "extent-size", required_argument, NULL, 'e' },
		{ "mkfs", optional_argument, NULL, 'm' },
		{ "inactive", no_argument, NULL, 'I' },
		{ "host-lvm", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		POLICY_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	struct volume_meta meta = { 0 };
	const char *mkfs = NULL, *cmd = "create", *size_arg = NULL;
	bool inactive = false, size_given = false;
	struct new_image img = { .fd = -1 };
	char dev[DM_NAME_LEN + 32], err[256], size_str[32];
	struct pool pool;
	struct volume vol;
	uint64_t block, v;
	int c, r;

	while ((c = cmd_getopt(argc, argv, "s:e:m::Ih", opts)) != -1) {
		switch (c) {
		case 's':
			r = parse_size(optarg, &meta.size);
			if (r == SIZE_TOO_LARGE)
				return usage_error(cmd, "--size: \"%s\" is too large", optarg);
			if (r || !meta.size)
				return usage_error(cmd, "--size: \"%s\" is not a size (e.g. 10G)", optarg);
			size_given = true;
			size_arg = optarg;
			break;
		case 'e':
			if (parse_size(optarg, &v) || v > SUBVOL_EXTENT_SIZE_MAX)
				return usage_error(cmd, "--extent-size: \"%s\" is not a size up to 1G", optarg);
			meta.extent_size = v;
			break;
		case 'm':
			mkfs = optarg ? optarg : "xfs";
			break;
		case 'I':
			inactive = true;
			break;
		case 'H':
			meta.host_lvm = true;
			break;
		case 'h':
			return command_help(cmd);
		case '?':
			return usage_error(cmd, NULL);
		default:
			r = parse_policy(cmd, c, optarg, &meta);
			if (r)
				return r;
		}
	}
	if (optind != argc - 1)
		return usage_error(cmd, "give one POOL/VOLUME");
	if (!size_given)
		return usage_error(cmd, "--size is required");
	if (mkfs && inactive)
		return usage_error(cmd, "--mkfs needs the volume active; drop --inactive");
	if (mkfs && strcmp(mkfs, "xfs") && strcmp(mkfs, "ext4"))
		return usage_error(cmd, "--mkfs: \"%s\" is not xfs or ext4", mkfs);

	if (!inactive && !dm_available()) {
		errmsg("volume %s: cannot activate it: device-mapper is not available here (%s; or --inactive)",
		       argv[optind], DM_LOAD_HINT);
		return EXIT_REFUSED;
	}
	r = volume_spec(argv[optind], &pool, &vol, true, false);
	if (r)
		return r;
	r = EXIT_REFUSED;
	if (vol.exists) {
		errmsg("volume %s/%s: exists already", pool.meta.name, vol.name);
		goto out;
	}
	block = pool_block_size(&pool);
	r = check_policies(cmd, &meta, block);
	if (r)
		goto out;
	v = meta.size;
	if (!size_round_up(&v, block, pool_max_size(&pool))) {
		r = usage_error(cmd, "--size: \"%s\" is too large: at most %" PRIu64 " bytes in pool %s",
				size_arg, pool_max_size(&pool), pool.meta.name);
		goto out;
	}
	r = EXIT_REFUSED;
	new_volume_meta(&meta, block);
	vol.meta = meta;

	if (image_tmp_open(&pool, &img)) {
		errmsg("volume %s/%s: cannot make a file in %s: %s", pool.meta.name, vol.name,
		       pool.path, strerror(errno));
		goto out;
	}
	if (meta.extent_size && image_set_extent_size(img.fd, meta.extent_size, err, sizeof(err))) {
		errmsg("volume %s/%s: %s", pool.meta.name, vol.name, err);
		goto out;
	}
	if (ftruncate(img.fd, meta.size) || volume_meta_write(img.fd, &meta) ||
	    image_publish(&img, vol.name, false)) {
		errmsg("volume %s/%s: cannot make the image %s: %s", pool.meta.name, vol.name,
		       vol.path, strerror(errno));
		goto out;
	}
	vol.exists = true;
	format_size(size_str, sizeof(size_str), meta.size);
	if (inactive) {
		printf("Volume %s/%s created (%s), inactive\n", pool.meta.name, vol.name, size_str);
		r = 0;
		goto out;
	}
	if (volume_activate(&vol, dev, sizeof(dev)) < 0) {
		remove_image(&vol);
		goto out;
	}
	if (mkfs && make_fs(&vol, mkfs, dev)) {
		volume_deactivate(&vol, true);
		remove_image(&vol);
		goto out;
	}
	printf("Volume %s/%s created (%s%s%s), active as %s\n", pool.meta.name, vol.name,
	       size_str, mkfs ? ", " : "", mkfs ? mkfs : "", dev);
	r = 0;
out:
	image_discard(&img);
	pool_close(&pool);
	return r;
}

/* activate and deactivate take any number of volumes, like lvchange. */
static int each_volume(const char *cmd, int argc, char **argv, bool activate)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char dev[DM_NAME_LEN + 32];
	struct pool pool;
	struct volume vol;
	int c, i, r, status = 0;

	while ((c = cmd_getopt(argc, argv, "h", opts)) != -1) {
		if (c == 'h')
			return command_help(cmd);
		return usage_error(cmd, NULL);
	}
	if (optind >= argc)
		return usage_error(cmd, "give at least one POOL/VOLUME");
	for (i = optind; i < argc; i++) {
		r = volume_spec(argv[i], &pool, &vol, true, true);
		if (r) {
			status = status == EXIT_USAGE ? status : r;
			continue;
		}
		if (activate) {
			r = volume_activate(&vol, dev, sizeof(dev));
			if (r == 1)
				printf("Volume %s/%s is already active as %s\n",
				       pool.meta.name, vol.name, dev);
			else if (r == 0)
				printf("Volume %s/%s active as %s\n", pool.meta.name,
				       vol.name, dev);
		} else {
			r = volume_deactivate(&vol, false);
			if (r == 1)
				printf("Volume %s/%s deactivated\n", pool.meta.name, vol.name);
		}
		if (r < 0)
			status = EXIT_REFUSED;
		pool_close(&pool);
	}
	return status;
}

int cmd_activate(int argc, char **argv)
{
	return each_volume("activate", argc, argv, true);
}

int cmd_deactivate(int argc, char **argv)
{
	return each_volume("deactivate", argc, argv, false);
}

/* After removals from the pool at @path, once for all of them. */
static void rescan_pool(const char *path)
{
	struct pool pool;

	if (pool_open(path, &pool, false))
		return;
	pool_rescan_sharing(&pool);
	pool_close(&pool);
}

int cmd_remove(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char name[DM_NAME_LEN], rescan[sizeof(((struct pool *)0)->path)] = "";
	struct pool pool;
	struct volume vol;
	int c, i, r, status = 0;

	while ((c = cmd_getopt(argc, argv, "h", opts)) != -1) {
		if (c == 'h')
			return command_help("remove");
		return usage_error("remove", NULL);
	}
	if (optind >= argc)
		return usage_error("remove", "give at least one POOL/VOLUME");
	for (i = optind; i < argc; i++) {
		r = volume_spec(argv[i], &pool, &vol, true, true);
		if (r) {
			status = status == EXIT_USAGE ? status : r;
			continue;
		}
		c = volume_active(&vol, name, sizeof(name), NULL);
		if (c < 0) {
			status = EXIT_REFUSED;
		} else if (c) {
			errmsg("volume %s/%s: active as %s/%s; deactivate it first",
			       pool.meta.name, vol.name, dm_dir(), name);
			status = EXIT_REFUSED;
		} else if (remove_image(&vol)) {
			status = EXIT_REFUSED;
		} else {
			printf("Volume %s/%s removed\n", pool.meta.name, vol.name);
			if (rescan[0] && strcmp(rescan, pool.path))
				rescan_pool(rescan);
			snprintf(rescan, sizeof(rescan), "%s", pool.path);
		}
		pool_close(&pool);
	}
	if (rescan[0])
		rescan_pool(rescan);
	return status;
}

/*
 * Where the device major:minor is mounted on this host, from
 * /proc/self/mountinfo: its first mount point (octal escapes undone) and
 * filesystem type; false when it is not mounted.
 */
static bool device_mount(unsigned int major, unsigned int minor, char *dir,
			 size_t dirlen, char *type, size_t typelen)
{
	char line[8192], mnt[4096], fstype[64], *sep;
	unsigned int ma, mi;
	size_t i, n;
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	while (f && !found && fgets(line, sizeof(line), f)) {
		sep = strstr(line, " - ");
		if (!sep || sscanf(line, "%*u %*u %u:%u %*s %4095s", &ma, &mi, mnt) != 3 ||
		    ma != major || mi != minor || sscanf(sep, " - %63s", fstype) != 1)
			continue;
		for (i = n = 0; mnt[i] && n + 1 < dirlen; n++) {
			if (mnt[i] == '\\' && strlen(mnt + i) >= 4) {
				dir[n] = (mnt[i + 1] - '0') << 6 | (mnt[i + 2] - '0') << 3 |
					 (mnt[i + 3] - '0');
				i += 4;
			} else {
				dir[n] = mnt[i++];
			}
		}
		dir[n] = '\0';
		snprintf(type, typelen, "%s", fstype);
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/*
 * --resizefs, before anything changes: the volume's filesystem must be
 * one this host has mounted and can grow online (XFS, with xfs_growfs;
 * ext4, with resize2fs).  A guest's filesystem is the guest's to grow.
 */
static int resizefs_check(const struct volume *vol, const char *name,
			  const struct dm_info_lite *info, char *dir, size_t dirlen,
			  char *type, size_t typelen)
{
	const char *v = vol->name, *p = vol->pool->meta.name;

	if (!name) {
		errmsg("volume %s/%s: --resizefs: it is inactive, so no filesystem of it is mounted here; nothing changed (activate and mount it, or resize without -r)",
		       p, v);
		return -1;
	}
	if (!device_mount(info->major, info->minor, dir, dirlen, type, typelen)) {
		errmsg("volume %s/%s: --resizefs: %s/%s is not mounted on this host (a guest grows its own filesystem: xfs_growfs there); nothing changed",
		       p, v, dm_dir(), name);
		return -1;
	}
	if (strcmp(type, "xfs") && strcmp(type, "ext4")) {
		errmsg("volume %s/%s: --resizefs: it holds %s, mounted at %s; only xfs and ext4 are grown; nothing changed",
		       p, v, type, dir);
		return -1;
	}
	return 0;
}

/* Grow the mounted filesystem to the device's new size. */
static int resizefs(const struct volume *vol, const char *dev, const char *dir,
		    const char *type)
{
	const char *xfs[] = { "xfs_growfs", dir, NULL };
	const char *ext4[] = { "resize2fs", dev, NULL };
	const char *const *argv = strcmp(type, "xfs") ? ext4 : xfs;
	char why[256];
	int r;

	trace("volume %s/%s: %s %s", vol->pool->meta.name, vol->name, argv[0], argv[1]);
	r = program_capture(argv, true, why, sizeof(why));
	if (r) {
		errmsg("volume %s/%s: grown, but %s %s failed: %s", vol->pool->meta.name,
		       vol->name, argv[0], argv[1],
		       why[0] ? why : r == 127 ? "cannot run it" : "no reason given");
		return -1;
	}
	return 0;
}

/*
 * --size: SIZE, +SIZE (grow by) or -SIZE (shrink by), as lvresize -L
 * takes it, from the volume's size old; 0 or EXIT_USAGE (said).
 */
static int resize_target(const char *arg, uint64_t old, uint64_t *size)
{
	char a[32], b[32];
	int sign = *arg == '+' ? 1 : *arg == '-' ? -1 : 0, c;

	c = parse_size(arg + (sign != 0), size);
	if (c == SIZE_TOO_LARGE)
		return usage_error("resize", "--size: \"%s\" is too large", arg);
	if (c || !*size)
		return usage_error("resize", "--size: \"%s\" is not a size (e.g. 20G; +5G to add, -5G to take away)",
				   arg);
	if (sign > 0)
		*size = *size > UINT64_MAX - old ? UINT64_MAX : *size + old;
	if (sign < 0 && *size >= old) {
		format_size(a, sizeof(a), *size);
		format_size(b, sizeof(b), old);
		return usage_error("resize", "--size: %s takes away %s, not less than its size (%s)",
				   arg, a, b);
	}
	if (sign < 0)
		*size = old - *size;
	return 0;
}

/* Grow: the file, then the metadata, then the live table; shrink: inactive. */
int cmd_resize(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "resizefs", no_argument, NULL, 'r' },
		{ "yes", no_argument, NULL, 'y' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd = "resize", *size_arg = NULL;
	char name[DM_NAME_LEN], params[4200], size_str[32], old_str[32], by_str[32], q[512];
	char dev[DM_NAME_LEN + 32], mnt[4096], fstype[64];
	struct dm_info_lite info;
	struct volume_meta meta;
	struct pool pool;
	struct volume vol;
	uint64_t size, block, old;
	bool yes = false, active, fs = false;
	struct stat st;
	int c, fd = -1, r = EXIT_REFUSED;

	while ((c = cmd_getopt(argc, argv, "s:L:ryh", opts)) != -1) {
		switch (c) {
		case 's':
		case 'L':
			size_arg = optarg;
			break;
		case 'r':
			fs = true;
			break;
		case 'y':
			yes = true;
			break;
		case 'h':
			return command_help(cmd);
		default:
			return usage_error(cmd, NULL);
		}
	}
	if (optind != argc - 1)
		return usage_error(cmd, "give one POOL/VOLUME");
	if (!size_arg)
		return usage_error(cmd, "--size is required");
	if (fs && *size_arg == '-')
		return usage_error(cmd, "--resizefs grows a filesystem; XFS cannot shrink (shrink the filesystem yourself first, then resize without -r)");
	r = volume_spec(argv[optind], &pool, &vol, true, true);
	if (r)
		return r;
	meta = vol.meta;
	old = meta.size;
	r = resize_target(size_arg, old, &size);
	if (r)
		goto out;
	r = EXIT_REFUSED;
	block = pool_block_size(&pool);
	if (!size_round_up(&size, block, pool_max_size(&pool))) {
		r = usage_error(cmd, "--size: \"%s\" is too large: at most %" PRIu64 " bytes in pool %s",
				size_arg, pool_max_size(&pool), pool.meta.name);
		goto out;
	}
	format_size(size_str, sizeof(size_str), size);
	format_size(old_str, sizeof(old_str), old);
	format_size(by_str, sizeof(by_str), size > old ? size - old : old - size);
	if (meta.kind == VOLUME_KIND_SNAPSHOT) {
		errmsg("volume %s/%s: a snapshot is read-only; resize a clone of it", pool.meta.name,
		       vol.name);
		goto out;
	}
	if (size == old) {
		printf("Volume %s/%s is already %s\n", pool.meta.name, vol.name, size_str);
		r = 0;
		goto out;
	}
	if (fs && size < old) {
		r = usage_error(cmd, "--resizefs grows a filesystem; XFS cannot shrink (%s to %s)",
				old_str, size_str);
		goto out;
	}
	c = volume_active(&vol, name, sizeof(name), &info);
	if (c < 0)
		goto out;
	active = c;
	snprintf(dev, sizeof(dev), "%s/%s", dm_dir(), name);
	if (fs && resizefs_check(&vol, active ? name : NULL, &info, mnt, sizeof(mnt),
				 fstype, sizeof(fstype)))
		goto out;
	fd = open(vol.path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		errmsg("volume %s/%s: cannot open %s: %s", pool.meta.name, vol.name, vol.path,
		       strerror(errno));
		goto out;
	}
	meta.size = size;
	if (size < old) {
		if (active) {
			errmsg("volume %s/%s: shrinking needs the volume inactive (active as %s/%s)",
			       pool.meta.name, vol.name, dm_dir(), name);
			goto out;
		}
		if (meta.features.low_water_sectors && meta.features.low_water_sectors >= size >> 9) {
			errmsg("volume %s/%s: its low-water mark is not below %s; lower it first (subvol set --low-water)",
			       pool.meta.name, vol.name, size_str);
			goto out;
		}
		snprintf(q, sizeof(q), "Shrink %s/%s from %s to %s (by %s)? Data past the new end is lost, and a filesystem on it breaks unless shrunk first.",
			 pool.meta.name, vol.name, old_str, size_str, by_str);
		if (!yes && !confirm(q)) {
			errmsg("volume %s/%s: not shrunk (confirm with --yes)", pool.meta.name,
			       vol.name);
			goto out;
		}
		/* Metadata first: a crash in between leaves a longer file. */
		if (volume_meta_write(fd, &meta) || fsync(fd) || ftruncate(fd, size) ||
		    fsync(fd)) {
			errmsg("volume %s/%s: cannot shrink %s: %s", pool.meta.name, vol.name,
			       vol.path, strerror(errno));
			goto out;
		}
		printf("Volume %s/%s shrunk from %s to %s\n", pool.meta.name, vol.name, old_str,
		       size_str);
		r = 0;
		goto out;
	}

	if ((uint64_t)st.st_size < size && ftruncate(fd, size)) {
		errmsg("volume %s/%s: cannot grow %s: %s", pool.meta.name, vol.name, vol.path,
		       strerror(errno));
		goto out;
	}
	if (volume_meta_write(fd, &meta) || fsync(fd)) {
		errmsg("volume %s/%s: cannot update the metadata: %s", pool.meta.name, vol.name,
		       strerror(errno));
		goto undo_file;
	}
	if (active) {
		vol.meta = meta;
		if (volume_table(&vol, params, sizeof(params)))
			goto undo_meta;
		if (dm_device_reload(name, size >> 9, params, false)) {
			errmsg("volume %s/%s: cannot load the larger table: %s", pool.meta.name,
			       vol.name, dm_last_error());
			goto undo_meta;
		}
		/* Resume swaps the new table in (dm suspends, frozen, to do it). */
		if (dm_device_resume(name)) {
			errmsg("volume %s/%s: cannot switch to the larger table: %s",
			       pool.meta.name, vol.name, dm_last_error());
			goto out;
		}
		if (fs) {
			printf("Volume %s/%s grown from %s to %s\n", pool.meta.name, vol.name,
			       old_str, size_str);
			r = resizefs(&vol, dev, mnt, fstype) ? EXIT_REFUSED : 0;
			if (!r)
				printf("Its %s at %s grown too\n", fstype, mnt);
			goto out;
		}
		printf("Volume %s/%s grown from %s to %s; grow its filesystem too (xfs_growfs MOUNTPOINT, or resize -r)\n",
		       pool.meta.name, vol.name, old_str, size_str);
	} else {
		printf("Volume %s/%s grown from %s to %s\n", pool.meta.name, vol.name, old_str,
		       size_str);
	}
	r = 0;
	goto out;
undo_meta:
	meta.size = old;
	if (volume_meta_write(fd, &meta) == 0)
		fsync(fd);
undo_file:
	if ((uint64_t)st.st_size < size)
		ftruncate(fd, st.st_size);
out:
	if (fd >= 0)
		close(fd);
	pool_close(&pool);
	return r;
}
