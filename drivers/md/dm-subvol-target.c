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
#include "dm-subvol-compat.h"

#include <linux/ctype.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/stringify.h>
#include <uapi/linux/dm-subvol.h>

/* Bound on the feature count, well above the features there are. */
#define SUBVOL_MAX_FEATURES	16

/*
 *----------------------------------------------------------------
 * Argument parsing
 *----------------------------------------------------------------
 */

/* The optional features, as bit numbers of the set already given. */
enum subvol_feature {
	SUBVOL_FEATURE_IGNORE_DISCARD,
	SUBVOL_FEATURE_GUARANTEE,
	SUBVOL_FEATURE_NO_SPACE,
	SUBVOL_FEATURE_NO_SPACE_TIMEOUT,
	SUBVOL_FEATURE_LOW_WATER,
	SUBVOL_NR_FEATURES
};

static const char * const subvol_feature_names[SUBVOL_NR_FEATURES] = {
	[SUBVOL_FEATURE_IGNORE_DISCARD] = DM_SUBVOL_FEATURE_IGNORE_DISCARD,
	[SUBVOL_FEATURE_GUARANTEE] = DM_SUBVOL_FEATURE_GUARANTEE,
	[SUBVOL_FEATURE_NO_SPACE] = DM_SUBVOL_FEATURE_NO_SPACE,
	[SUBVOL_FEATURE_NO_SPACE_TIMEOUT] = DM_SUBVOL_FEATURE_NO_SPACE_TIMEOUT,
	[SUBVOL_FEATURE_LOW_WATER] = DM_SUBVOL_FEATURE_LOW_WATER,
};

static const struct dm_arg subvol_feature_count_arg = {
	0, SUBVOL_MAX_FEATURES,
	"Invalid feature count: not a number, or more than the features given"
};

static const struct dm_arg subvol_no_space_timeout_arg = {
	1, DM_SUBVOL_NO_SPACE_TIMEOUT_MAX,
	"Invalid feature value: no_space_timeout is 1 to "
	__stringify(DM_SUBVOL_NO_SPACE_TIMEOUT_MAX) " seconds"
};

/*
 * Which feature a word "name" or "name:value" is; @value is set to what
 * follows the colon, or NULL.  Returns SUBVOL_NR_FEATURES for none.
 */
static enum subvol_feature subvol_feature_lookup(const char *word,
						 const char **value)
{
	const char *colon = strchr(word, ':');
	size_t len = colon ? colon - word : strlen(word);
	enum subvol_feature f;

	*value = colon ? colon + 1 : NULL;
	for (f = 0; f < SUBVOL_NR_FEATURES; f++) {
		if (strlen(subvol_feature_names[f]) == len &&
		    !strncasecmp(word, subvol_feature_names[f], len))
			break;
	}
	return f;
}

/*
 * A decimal number in @arg's range.  Not dm_read_arg(): its sscanf("%u")
 * takes 2^32 + n for n, so an out-of-range number would pass the check.
 */
static int subvol_read_uint(const struct dm_arg *arg, const char *word,
			    unsigned int *v, char **error)
{
	if (!word || !isdigit(*word) || kstrtouint(word, 10, v) ||
	    *v < arg->min || *v > arg->max) {
		*error = arg->error;
		return -EINVAL;
	}
	return 0;
}

static int subvol_parse_feature(struct subvol_c *sc, enum subvol_feature f,
				const char *value, char **error)
{
	switch (f) {
	case SUBVOL_FEATURE_IGNORE_DISCARD:
		if (value) {
			*error = "Invalid feature value: ignore_discard takes none";
			return -EINVAL;
		}
		sc->ignore_discard = true;
		return 0;

	case SUBVOL_FEATURE_GUARANTEE:
		if (value && !strcasecmp(value, DM_SUBVOL_GUARANTEE_FULL)) {
			sc->guarantee = true;
		} else if (value &&
			   !strcasecmp(value, DM_SUBVOL_GUARANTEE_NONE)) {
			sc->guarantee = false;
		} else {
			*error = "Invalid feature value: guarantee is full or none";
			return -EINVAL;
		}
		return 0;

	case SUBVOL_FEATURE_NO_SPACE:
		if (value && !strcasecmp(value, DM_SUBVOL_NO_SPACE_ERROR)) {
			sc->no_space_queue = false;
		} else if (value &&
			   !strcasecmp(value, DM_SUBVOL_NO_SPACE_QUEUE)) {
			sc->no_space_queue = true;
		} else {
			*error = "Invalid feature value: no_space is error or queue";
			return -EINVAL;
		}
		return 0;

	case SUBVOL_FEATURE_NO_SPACE_TIMEOUT:
		return subvol_read_uint(&subvol_no_space_timeout_arg, value,
					&sc->no_space_timeout, error);

	case SUBVOL_FEATURE_LOW_WATER:
		/* Sectors: more than dm_read_arg()'s unsigned int holds. */
		if (!value || kstrtoull(value, 10, &sc->low_water)) {
			*error = "Invalid feature value: low_water is a number of sectors";
			return -EINVAL;
		}
		return 0;

	default:
		*error = "Unknown feature";
		return -EINVAL;
	}
}

/* [<#features> <feature>...], the rest of the table line. */
static int subvol_parse_features(struct subvol_c *sc, struct dm_arg_set *as,
				 char **error)
{
	DECLARE_BITMAP(seen, SUBVOL_NR_FEATURES) = { 0 };
	enum subvol_feature f;
	const char *value;
	unsigned int argc;
	int r;

	if (!as->argc)
		return 0;

	r = subvol_read_uint(&subvol_feature_count_arg, dm_shift_arg(as),
			     &argc, error);
	if (r)
		return r;
	if (argc > as->argc) {
		*error = subvol_feature_count_arg.error;
		return -EINVAL;
	}
	if (argc < as->argc) {
		*error = "Too many arguments after the features";
		return -EINVAL;
	}

	while (argc--) {
		f = subvol_feature_lookup(dm_shift_arg(as), &value);
		if (f < SUBVOL_NR_FEATURES && test_and_set_bit(f, seen)) {
			*error = "Feature given twice";
			return -EINVAL;
		}
		r = subvol_parse_feature(sc, f, value, error);
		if (r)
			return r;
	}

	if (test_bit(SUBVOL_FEATURE_NO_SPACE_TIMEOUT, seen) &&
	    !sc->no_space_queue) {
		*error = "no_space_timeout needs no_space:queue";
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

	subvol_space_set_live(sc->space, sc, false);
	subvol_space_put(sc->space);
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
	sc->writable = dm_table_get_mode(ti->table) & SUBVOL_TABLE_WRITE;
	sc->guarantee = true;
	sc->no_space_timeout = DM_SUBVOL_NO_SPACE_TIMEOUT_DEFAULT;
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

	if (sc->guarantee && sc->writable) {
		r = subvol_backing_guarantee_check(sc, &ti->error);
		if (r)
			goto bad_close;
	}

	r = subvol_io_init(sc);
	if (r) {
		ti->error = "Cannot allocate I/O queues";
		goto bad_close;
	}

	r = subvol_space_get(sc, &ti->error);
	if (r)
		goto bad_io;

	r = subvol_space_activate(sc);
	if (r) {
		if (r == -ENOSPC)
			ti->error = "No host space for the copy-on-write reserve";
		else if (r == -EOPNOTSUPP)
			ti->error = "No O_TMPFILE on the host: use guarantee:none";
		else
			ti->error = "Cannot create the host space reserve file";
		goto bad_space;
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

bad_space:
	subvol_space_put(sc->space);
bad_io:
	subvol_io_exit(sc);
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

static void subvol_presuspend(struct dm_target *ti)
{
	struct subvol_c *sc = ti->private;

	WRITE_ONCE(sc->suspend_sync, -EINPROGRESS);
	subvol_io_presuspend(sc);
}

static void subvol_presuspend_undo(struct dm_target *ti)
{
	subvol_io_resume(ti->private);
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
	WRITE_ONCE(sc->suspend_sync, r);
}

static int subvol_preresume(struct dm_target *ti)
{
	struct subvol_c *sc = ti->private;
	int r;

	r = subvol_backing_check_size(sc);
	if (r)
		return r;
	if (sc->guarantee && sc->writable) {
		char *error;

		r = subvol_backing_guarantee_check(sc, &error);
		if (r) {
			DMERR("%s: %s: %s", dm_device_name(sc->md), sc->path,
			      error);
			return r;
		}
	}
	r = subvol_space_resume(sc->space);
	if (r)
		return r;
	/* The constructor switched the guarantee on; off waits for now. */
	if (!sc->guarantee || !sc->writable)
		subvol_space_set_guarantee(sc->space, false);
	WRITE_ONCE(sc->space->hold_timeout,
		   sc->no_space_queue ? sc->no_space_timeout : 0);
	subvol_space_set_live(sc->space, sc, true);
	return 0;
}

static void subvol_resume(struct dm_target *ti)
{
	subvol_io_resume(ti->private);
}

/*
 *----------------------------------------------------------------
 * Status
 *----------------------------------------------------------------
 */

/* Blocks to sectors, for the status line. */
static unsigned long long subvol_sectors(struct subvol_c *sc, u64 blocks)
{
	return blocks << (ilog2(sc->block_size) - SECTOR_SHIFT);
}

/* Space the volume can still fill: host free space and the pool's headroom. */
static int subvol_space_left(struct subvol_c *sc, u64 *sectors)
{
	struct subvol_space *space = sc->space;
	int r = subvol_backing_host_free(sc, sectors);

	if (!r && READ_ONCE(space->guarantee))
		*sectors += subvol_sectors(sc,
					   subvol_pool_headroom(space->pool));
	return r;
}

/*
 * Raise the dm event once when the space left drops below the low-water
 * mark; re-arm when it is above again.  Checked at most ten times a second
 * by the writes that fill holes, and by a held reservation (see
 * subvol_provider_hold()).  Process context.
 */
void subvol_check_low_water(struct subvol_c *sc)
{
	unsigned long now = jiffies;
	u64 left;

	if (!sc->low_water ||
	    time_before(now, READ_ONCE(sc->low_water_checked) + HZ / 10))
		return;
	WRITE_ONCE(sc->low_water_checked, now);
	if (subvol_space_left(sc, &left))
		return;

	if (left >= sc->low_water) {
		clear_bit(0, &sc->low_water_hit);
	} else if (!test_and_set_bit(0, &sc->low_water_hit)) {
		DMWARN("%s: space left %llu sectors is below the low-water mark %llu",
		       dm_device_name(sc->md), (unsigned long long)left,
		       (unsigned long long)sc->low_water);
		dm_table_event(sc->ti->table);
	}
}

static void subvol_status_info(struct subvol_c *sc, char *result,
			       unsigned int maxlen)
{
	struct subvol_space *space = sc->space;
	u64 mapped, shared, promised, cow, uncovered, claimed, committed;
	u64 accounting_errors;
	unsigned int sz = 0;
	bool attached;
	u64 sectors;

	DMEMIT("%u %s %u %llu ", DM_SUBVOL_STATUS_FORMAT,
	       sc->writable ? DM_SUBVOL_MODE_RW : DM_SUBVOL_MODE_RO,
	       sc->block_size >> SECTOR_SHIFT,
	       (unsigned long long)sc->ti->len);
	/* Either size may be unreadable, e.g. on a shut down host. */
	if (subvol_backing_allocated(sc, &sectors))
		DMEMIT(DM_SUBVOL_STATUS_UNKNOWN " ");
	else
		DMEMIT("%llu ", (unsigned long long)sectors);
	if (subvol_backing_host_free(sc, &sectors))
		DMEMIT(DM_SUBVOL_STATUS_UNKNOWN " ");
	else
		DMEMIT("%llu ", (unsigned long long)sectors);

	promised = subvol_space_promised(space);
	spin_lock(&space->lock);
	mapped = space->backed;
	shared = space->shared;
	cow = space->cow_reserve;
	uncovered = space->uncovered;
	accounting_errors = space->accounting_errors;
	attached = space->attached;
	spin_unlock(&space->lock);
	claimed = 0;
	committed = 0;
	if (READ_ONCE(space->pool))
		subvol_pool_counters(space->pool, &claimed, &committed);

	DMEMIT("%s %s %llu %llu %llu %llu %llu %llu %llu %s %s %llu",
	       sc->guarantee ? DM_SUBVOL_GUARANTEE_FULL :
			       DM_SUBVOL_GUARANTEE_NONE,
	       sc->no_space_queue ? DM_SUBVOL_NO_SPACE_QUEUE :
				    DM_SUBVOL_NO_SPACE_ERROR,
	       subvol_sectors(sc, mapped), subvol_sectors(sc, shared),
	       subvol_sectors(sc, promised), subvol_sectors(sc, cow),
	       subvol_sectors(sc, claimed), subvol_sectors(sc, committed),
	       subvol_sectors(sc, uncovered),
	       attached ? DM_SUBVOL_CLIENT_ATTACHED : DM_SUBVOL_CLIENT_NONE,
	       test_bit(0, &sc->low_water_hit) ? DM_SUBVOL_LOW_WATER_HIT :
						 DM_SUBVOL_LOW_WATER_OK,
	       (unsigned long long)accounting_errors);
	DMEMIT(" ");
	subvol_copy_status(space, result, maxlen, &sz);
}

/* The features of the table line, as the constructor parsed them. */
static void subvol_status_features(struct subvol_c *sc, char *result,
				   unsigned int maxlen, unsigned int *szp)
{
	unsigned int sz = *szp;
	unsigned int count = !sc->guarantee + sc->ignore_discard +
			     sc->no_space_queue * 2 + !!sc->low_water;

	if (!count)
		return;
	DMEMIT(" %u", count);
	if (sc->ignore_discard)
		DMEMIT(" " DM_SUBVOL_FEATURE_IGNORE_DISCARD);
	if (!sc->guarantee)
		DMEMIT(" " DM_SUBVOL_FEATURE_GUARANTEE ":"
		       DM_SUBVOL_GUARANTEE_NONE);
	if (sc->no_space_queue)
		DMEMIT(" " DM_SUBVOL_FEATURE_NO_SPACE ":" DM_SUBVOL_NO_SPACE_QUEUE
		       " " DM_SUBVOL_FEATURE_NO_SPACE_TIMEOUT ":%u",
		       sc->no_space_timeout);
	if (sc->low_water)
		DMEMIT(" " DM_SUBVOL_FEATURE_LOW_WATER ":%llu",
		       (unsigned long long)sc->low_water);
	*szp = sz;
}

/*
 * @str for an IMA measurement, whose key=value pairs are separated by ','
 * and ';': those, '=', '\' and bytes that are not printable ASCII are
 * written as "\xHH".
 */
static void subvol_emit_escaped(const char *str, char *result,
				unsigned int maxlen, unsigned int *szp)
{
	unsigned int sz = *szp;
	unsigned char c;

	for (; *str; str++) {
		c = *str;
		if (c > ' ' && c < 0x7f && !strchr(",;=\\", c))
			DMEMIT("%c", c);
		else
			DMEMIT("\\x%02x", c);
	}
	*szp = sz;
}

/* INFO: the fields of enum dm_subvol_status_field, in its order. */
static void subvol_status(struct dm_target *ti, status_type_t type,
			  unsigned int status_flags, char *result,
			  unsigned int maxlen)
{
	struct subvol_c *sc = ti->private;
	unsigned int sz = 0;

	switch (type) {
	case STATUSTYPE_INFO:
		subvol_status_info(sc, result, maxlen);
		break;

	case STATUSTYPE_TABLE:
		/*
		 * The path as the constructor got it: libdevmapper escapes
		 * backslashes itself when it loads a table, so printing them
		 * escaped would not survive "dmsetup table | dmsetup load".
		 */
		DMEMIT("%s", sc->path);
		subvol_status_features(sc, result, maxlen, &sz);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",backing_file=");
		subvol_emit_escaped(sc->path, result, maxlen, &sz);
		DMEMIT(",mode=%s,ignore_discard=%c,guarantee=%s,no_space=%s",
		       sc->writable ? DM_SUBVOL_MODE_RW : DM_SUBVOL_MODE_RO,
		       sc->ignore_discard ? 'y' : 'n',
		       sc->guarantee ? DM_SUBVOL_GUARANTEE_FULL :
				       DM_SUBVOL_GUARANTEE_NONE,
		       sc->no_space_queue ? DM_SUBVOL_NO_SPACE_QUEUE :
					    DM_SUBVOL_NO_SPACE_ERROR);
		DMEMIT(",no_space_timeout=%u,low_water=%llu;",
		       sc->no_space_timeout,
		       (unsigned long long)sc->low_water);
		break;
	}
}

/*
 *----------------------------------------------------------------
 * Messages
 *----------------------------------------------------------------
 */

/*
 * dm returns a message's text only when it succeeds, so a refusal says why
 * in the kernel log and returns the error number.
 */
#define SUBVOL_MSG_ERR(sc, fmt, ...) \
	DMERR("%s: message " fmt, dm_device_name((sc)->md), ##__VA_ARGS__)

/*
 * A snapshot message (prepare_snapshot, snapshot_begin) needs the device
 * suspended, and the suspend's sync done and good: a clone of the backing
 * file must hold every write the device completed.  Returns 0, or an
 * error with the reason logged.
 */
int subvol_snapshot_point(struct subvol_c *sc, const char *msg)
{
	int r = READ_ONCE(sc->suspend_sync);

	if (!dm_suspended(sc->ti) || r == -EINPROGRESS) {
		SUBVOL_MSG_ERR(sc, "%s: the device must be suspended", msg);
		return -EBUSY;
	}
	if (r)
		SUBVOL_MSG_ERR(sc, "%s: the suspend could not sync %s: %d",
			       msg, sc->path, r);
	return r;
}

/* A size argument: sectors, whole host blocks.  Returns blocks. */
static int subvol_message_size(struct subvol_c *sc, const char *msg,
			       const char *arg, u64 *blocks)
{
	u64 sectors;

	if (kstrtoull(arg, 10, &sectors) ||
	    sectors & ((sc->block_size >> SECTOR_SHIFT) - 1)) {
		SUBVOL_MSG_ERR(sc, "%s: '%s' is not a whole number of %u-byte blocks",
			       msg, arg, sc->block_size);
		return -EINVAL;
	}
	*blocks = sectors >> (ilog2(sc->block_size) - SECTOR_SHIFT);
	return 0;
}

static int subvol_message(struct dm_target *ti, unsigned int argc,
			  char **argv, char *result, unsigned int maxlen)
{
	struct subvol_c *sc = ti->private;
	u64 blocks;
	int r;

	if (argc == 1 && !strcasecmp(argv[0], DM_SUBVOL_MSG_PREPARE_SNAPSHOT)) {
		r = subvol_snapshot_point(sc, argv[0]);
		if (r)
			return r;
		r = subvol_space_prepare_snapshot(sc->space);
		if (r == -ENOSPC)
			SUBVOL_MSG_ERR(sc, "%s: no host space for the copy-on-write reserve",
				       argv[0]);
		else if (r)
			SUBVOL_MSG_ERR(sc, "%s: cannot remove the sharing record of %s: %d",
				       argv[0], sc->path, r);
		return r;
	}

	if (argc == 2 &&
	    !strcasecmp(argv[0], DM_SUBVOL_MSG_SNAPSHOT_BEGIN))
		return subvol_copy_begin(sc, argv[1]);

	if (argc == 1 && (!strcasecmp(argv[0], DM_SUBVOL_MSG_SNAPSHOT_END) ||
			  !strcasecmp(argv[0], DM_SUBVOL_MSG_SNAPSHOT_CANCEL)))
		return subvol_copy_end(sc, !strcasecmp(argv[0],
					DM_SUBVOL_MSG_SNAPSHOT_CANCEL));

	if (argc == 1 && !strcasecmp(argv[0], DM_SUBVOL_MSG_RESCAN_SHARING)) {
		/*
		 * Blocks not yet cloned must stay counted as shared: no
		 * rescan while a copy is held, nor a copy begun meanwhile.
		 */
		mutex_lock(&sc->space->copy.control);
		if (subvol_copy_busy(sc->space)) {
			mutex_unlock(&sc->space->copy.control);
			SUBVOL_MSG_ERR(sc, "%s: a snapshot copy is held: end or cancel it first",
				       argv[0]);
			return -EBUSY;
		}
		r = subvol_space_rescan_sharing(sc->space);
		mutex_unlock(&sc->space->copy.control);
		if (r == -ENOSPC)
			SUBVOL_MSG_ERR(sc, "%s: no host space to back newly shared blocks of %s",
				       argv[0], sc->path);
		else if (r == -EOPNOTSUPP)
			SUBVOL_MSG_ERR(sc, "%s: the host cannot report the extent map of %s",
				       argv[0], sc->path);
		else if (r)
			SUBVOL_MSG_ERR(sc, "%s: cannot read the extent map of %s: %d",
				       argv[0], sc->path, r);
		return r;
	}

	if (argc == 2 && (!strcasecmp(argv[0], DM_SUBVOL_MSG_RESERVE) ||
			  !strcasecmp(argv[0], DM_SUBVOL_MSG_RELEASE))) {
		if (!sc->writable) {
			SUBVOL_MSG_ERR(sc, "%s: the device is read-only",
				       argv[0]);
			return -EINVAL;
		}
		r = subvol_message_size(sc, argv[0], argv[1], &blocks);
		if (r)
			return r;
		if (!strcasecmp(argv[0], DM_SUBVOL_MSG_RELEASE)) {
			subvol_space_user_release(sc->space, blocks);
			return 0;
		}
		r = subvol_space_user_reserve(sc->space, blocks);
		if (r)
			SUBVOL_MSG_ERR(sc, "%s: the host filesystem has no space for %s sectors",
				       argv[0], argv[1]);
		return r;
	}

	SUBVOL_MSG_ERR(sc, "'%s' is unknown or has the wrong number of arguments",
		       argc ? argv[0] : "");
	return -EINVAL;
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
	.presuspend = subvol_presuspend,
	.presuspend_undo = subvol_presuspend_undo,
	.postsuspend = subvol_postsuspend,
	.preresume = subvol_preresume,
	.resume = subvol_resume,
	.status = subvol_status,
	.message = subvol_message,
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
