// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The "subvol" device-mapper target: a block device whose data lives in a
 * regular file on a host filesystem (XFS, for reflink snapshots), with the
 * I/O of every request done through that filesystem.
 *
 * Table line:
 *   <start> <length> subvol <backing_file> [<#features> <feature>...]
 *
 * See Documentation/admin-guide/device-mapper/subvol.rst.
 */

#include "dm-subvol.h"

#include <linux/module.h>
#include <linux/slab.h>
#include <uapi/linux/dm-subvol.h>

/* Bound on the feature count, well above the features there are. */
#define SUBVOL_MAX_FEATURES	16

/*
 *----------------------------------------------------------------
 * Argument parsing
 *----------------------------------------------------------------
 */

static int subvol_parse_features(struct subvol_c *sc, struct dm_arg_set *as,
				 char **error)
{
	unsigned int count;
	const char *arg;

	if (!as->argc)
		return 0;

	arg = dm_shift_arg(as);
	if (kstrtouint(arg, 10, &count)) {
		*error = "Feature count is not a number";
		return -EINVAL;
	}
	if (count > SUBVOL_MAX_FEATURES || count > as->argc) {
		*error = "Feature count is larger than the features given";
		return -EINVAL;
	}
	if (count < as->argc) {
		*error = "Too many arguments after the features";
		return -EINVAL;
	}

	while (as->argc) {
		arg = dm_shift_arg(as);

		if (!strcasecmp(arg, DM_SUBVOL_FEATURE_IGNORE_DISCARD)) {
			if (sc->ignore_discard) {
				*error = "Feature given twice";
				return -EINVAL;
			}
			sc->ignore_discard = true;
			continue;
		}

		DMERR("%s: unknown feature '%s'", dm_device_name(sc->md), arg);
		*error = "Unknown feature";
		return -EINVAL;
	}
	return 0;
}

/*
 *----------------------------------------------------------------
 * Constructor and destructor
 *----------------------------------------------------------------
 */

static void subvol_dtr(struct dm_target *ti)
{
	struct subvol_c *sc = ti->private;

	subvol_io_exit(sc);
	subvol_backing_close(sc);
	kfree(sc->path);
	kfree(sc);
}

/*
 * Construct a subvol target:
 *   <backing_file> [<#features> <feature>...]
 */
static int subvol_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct subvol_c *sc;
	const char *path;
	int r;

	if (argc < 1) {
		ti->error = "Invalid argument count: need <backing_file> [<#features> ...]";
		return -EINVAL;
	}

	sc = kzalloc(sizeof(*sc), GFP_KERNEL);
	if (!sc) {
		ti->error = "Cannot allocate subvol context";
		return -ENOMEM;
	}
	sc->ti = ti;
	sc->md = dm_table_get_md(ti->table);
	sc->writable = dm_table_get_mode(ti->table) & FMODE_WRITE;
	INIT_LIST_HEAD(&sc->in_use);

	path = dm_shift_arg(&as);
	r = subvol_parse_features(sc, &as, &ti->error);
	if (r)
		goto bad_free;

	sc->path = kstrdup(path, GFP_KERNEL);
	if (!sc->path) {
		ti->error = "Cannot allocate backing file path";
		r = -ENOMEM;
		goto bad_free;
	}

	r = subvol_backing_open(sc, sc->path, &ti->error);
	if (r)
		goto bad_free;

	r = subvol_io_init(sc);
	if (r) {
		ti->error = "Cannot allocate I/O queues";
		goto bad_close;
	}

	ti->private = sc;
	ti->per_io_data_size = sizeof(struct subvol_io);
	ti->num_flush_bios = 1;
	ti->flush_supported = true;
	if (sc->writable) {
		ti->num_write_zeroes_bios = 1;
		if (!sc->ignore_discard) {
			ti->num_discard_bios = 1;
			ti->discards_supported = true;
		}
	}
	return 0;

bad_close:
	subvol_backing_close(sc);
bad_free:
	kfree(sc->path);
	kfree(sc);
	return r;
}

/*
 *----------------------------------------------------------------
 * I/O, suspend and resume
 *----------------------------------------------------------------
 */

static int subvol_map(struct dm_target *ti, struct bio *bio)
{
	return subvol_io_map(ti->private, bio);
}

/*
 * dm has drained the bios in flight before this is called; make what they
 * wrote durable, so that a clone of the backing file taken while we are
 * suspended holds every write the device completed.
 */
static void subvol_postsuspend(struct dm_target *ti)
{
	struct subvol_c *sc = ti->private;
	int r;

	r = subvol_io_sync(sc);
	if (r)
		DMERR("%s: cannot sync backing file %s on suspend: %d",
		      dm_device_name(sc->md), sc->path, r);
}

static int subvol_preresume(struct dm_target *ti)
{
	return subvol_backing_check_size(ti->private);
}

/*
 *----------------------------------------------------------------
 * Status
 *----------------------------------------------------------------
 */

/*
 * INFO: <format> <mode> <block_sectors> <virtual_sectors> <backed_sectors>
 *       <host_free_sectors>, as enum dm_subvol_status_field orders them.
 */
static void subvol_status(struct dm_target *ti, status_type_t type,
			  unsigned int status_flags, char *result,
			  unsigned int maxlen)
{
	struct subvol_c *sc = ti->private;
	unsigned int sz = 0;
	u64 sectors;

	switch (type) {
	case STATUSTYPE_INFO:
		DMEMIT("%u %s %u %llu ", DM_SUBVOL_STATUS_FORMAT,
		       sc->writable ? DM_SUBVOL_MODE_RW : DM_SUBVOL_MODE_RO,
		       sc->block_size >> SECTOR_SHIFT,
		       (unsigned long long)ti->len);
		/* Either size may be unreadable, e.g. on a shut down host. */
		if (subvol_backing_allocated(sc, &sectors))
			DMEMIT(DM_SUBVOL_STATUS_UNKNOWN " ");
		else
			DMEMIT("%llu ", (unsigned long long)sectors);
		if (subvol_backing_host_free(sc, &sectors))
			DMEMIT(DM_SUBVOL_STATUS_UNKNOWN);
		else
			DMEMIT("%llu", (unsigned long long)sectors);
		break;

	case STATUSTYPE_TABLE:
		/*
		 * The path as the constructor got it: libdevmapper escapes
		 * backslashes itself when it loads a table, so printing them
		 * escaped would not survive "dmsetup table | dmsetup load".
		 */
		DMEMIT("%s", sc->path);
		if (sc->ignore_discard)
			DMEMIT(" 1 " DM_SUBVOL_FEATURE_IGNORE_DISCARD);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",backing_file=%s,mode=%s,ignore_discard=%c;", sc->path,
		       sc->writable ? DM_SUBVOL_MODE_RW : DM_SUBVOL_MODE_RO,
		       sc->ignore_discard ? 'y' : 'n');
		break;
	}
}

/*
 *----------------------------------------------------------------
 * Queue limits
 *----------------------------------------------------------------
 */

/* No block devices below us; needed for ->io_hints to be called. */
static int subvol_iterate_devices(struct dm_target *ti,
				  iterate_devices_callout_fn fn, void *data)
{
	return 0;
}

/*
 * The block size is the host filesystem's: smaller direct writes would be
 * read-modify-write on the host, and XFS turns sub-block direct writes to
 * reflinked files into synchronous buffered writes.
 */
static void subvol_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct subvol_c *sc = ti->private;

	limits->logical_block_size = sc->block_size;
	limits->physical_block_size = sc->block_size;
	limits->io_min = sc->block_size;

	if (ti->num_discard_bios) {
		limits->discard_granularity = sc->block_size;
		limits->max_discard_sectors = SUBVOL_MAX_FALLOC_SECTORS;
		limits->max_hw_discard_sectors = SUBVOL_MAX_FALLOC_SECTORS;
	}
	if (ti->num_write_zeroes_bios)
		limits->max_write_zeroes_sectors = SUBVOL_MAX_FALLOC_SECTORS;
}

/*
 *----------------------------------------------------------------
 * Module
 *----------------------------------------------------------------
 */

static struct target_type subvol_target = {
	.name = DM_SUBVOL_TARGET_NAME,
	.version = { DM_SUBVOL_VERSION_MAJOR, DM_SUBVOL_VERSION_MINOR,
		     DM_SUBVOL_VERSION_PATCH },
	.module = THIS_MODULE,
	.ctr = subvol_ctr,
	.dtr = subvol_dtr,
	.map = subvol_map,
	.postsuspend = subvol_postsuspend,
	.preresume = subvol_preresume,
	.status = subvol_status,
	.iterate_devices = subvol_iterate_devices,
	.io_hints = subvol_io_hints,
};

static int __init dm_subvol_init(void)
{
	int r;

	r = dm_register_target(&subvol_target);
	if (r < 0)
		DMERR("register failed %d", r);
	return r;
}

static void __exit dm_subvol_exit(void)
{
	dm_unregister_target(&subvol_target);
}

module_init(dm_subvol_init);
module_exit(dm_subvol_exit);

MODULE_DESCRIPTION(DM_NAME " target for volumes in files on a host filesystem");
MODULE_AUTHOR("The dm-subvol authors");
MODULE_LICENSE("GPL");
