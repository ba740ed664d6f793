// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * Snapshot copies: the backing file as it was at a suspend, cloned by
 * reflink into a file the tool opened, after the device has resumed.
 *
 * "snapshot_begin <fd>", while the device is suspended, takes the file,
 * claims the copy-on-write reserve as "prepare_snapshot" does, and starts
 * a worker that clones the backing file into it, a run of units at a time.
 * The guest runs meanwhile; every request that changes the backing file
 * first clones the units it touches that the worker has not cloned yet
 * (subvol_copy_before_write()), so the file receives each unit as it was
 * at the suspend.  A unit is cloned once: @done says which are, and
 * copy->lock, held across each clone, orders the worker and the writes.
 * When every unit is cloned the worker syncs the file, marks the copy
 * done and raises a dm event; "snapshot_end" lets go of the file, as
 * "snapshot_cancel" does at any time.
 *
 * The copy belongs to the space, so a reload of the same backing file
 * carries it on; the space's end (the device removed, or its table
 * replaced by one on another file) cancels it.
 */

#include "dm-subvol.h"

#include <linux/bitmap.h>
#include <linux/file.h>
#include <linux/ktime.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <uapi/linux/dm-subvol.h>

/*
 * A unit of the copy: 256 KiB of the file, one bit of @done (8 MiB of
 * bitmap for 16 TiB).  A clone's cost grows with the extents it covers,
 * and a write waits for the clone in progress, if any, and for its own:
 * a unit has at most 64 extents of 4 KiB.
 */
#define SUBVOL_COPY_UNIT_SHIFT	18

/*
 * The worker's clone calls grow up to this many units (4 MiB) while they
 * are fast, one unit at a time, and halve when one is slow.  Runs are
 * short because the next range may hold far more extents than the last:
 * the extent map is not at hand in a worker (FIEMAP needs a user buffer).
 */
#define SUBVOL_COPY_MAX_RUN	16

/*
 * A clone holds the backing file's locks, and every write to the file
 * waits for it: the worker sizes its clone calls to take about this long.
 */
static unsigned int copy_slice_ms = 20;
module_param(copy_slice_ms, uint, 0644);
MODULE_PARM_DESC(copy_slice_ms,
		 "Milliseconds a snapshot copy's clone call aims to take");

/*
 * A limit on the copy's pace, in MiB of the file per second (0: none),
 * for hosts whose disks the copy would keep too busy, as md's
 * speed_limit_max; the writes' own clones are not limited.
 */
static unsigned int copy_rate_mib;
module_param(copy_rate_mib, uint, 0644);
MODULE_PARM_DESC(copy_rate_mib,
		 "MiB per second a snapshot copy proceeds at most (0: no limit)");

#define SUBVOL_COPY_ERR(space, fmt, ...) \
	DMERR("%s: " fmt, dm_device_name((space)->md), ##__VA_ARGS__)

static struct subvol_space *copy_space(struct subvol_copy *copy)
{
	return container_of(copy, struct subvol_space, copy);
}

/* Tell dmeventd and the tool: the copy is done or failed. */
static void subvol_copy_event(struct subvol_space *space)
{
	mutex_lock(&space->live_lock);
	if (space->live)
		dm_table_event(space->live->ti->table);
	mutex_unlock(&space->live_lock);
}

/* The copy cannot complete: keep @error for the status line. */
static void subvol_copy_fail(struct subvol_copy *copy, int error,
			     const char *what)
{
	lockdep_assert_held(&copy->lock);
	SUBVOL_COPY_ERR(copy_space(copy), "snapshot copy of %pD failed: %s: %d",
			copy_space(copy)->file, what, error);
	WRITE_ONCE(copy->error, error);
	WRITE_ONCE(copy->state, SUBVOL_COPY_FAILED);
}

/* Mark units [@first, @end) cloned; none of them is yet. */
static void subvol_copy_mark(struct subvol_copy *copy, u64 first, u64 end)
{
	lockdep_assert_held(&copy->lock);
	bitmap_set(copy->done, first, end - first);
	WRITE_ONCE(copy->nr_done, copy->nr_done + end - first);
}

/*
 * Clone [@pos, @pos + @len) of @src into @dest at the same offset, under
 * freeze protection the caller holds.  Not vfs_clone_file_range(), which
 * would take that protection again, waiting on a frozen host; this is
 * what do_clone_file_range() did before 6.8 folded it into that.  The
 * files are regular and on one filesystem (subvol_copy_get_file() checked),
 * and the filesystem checks the range.
 */
static loff_t subvol_clone_range(struct file *src, struct file *dest,
				 loff_t pos, loff_t len)
{
	if (!src->f_op->remap_file_range)
		return -EOPNOTSUPP;
	return src->f_op->remap_file_range(src, pos, dest, pos, len, 0);
}

/*
 * Clone units [@first, @end), none cloned yet, from the backing file into
 * the snapshot's file at the same offset.  A clone writes to the host, so
 * it needs the host's freeze protection, as vfs_clone_file_range() takes
 * it; unless @wait, a frozen host gets -EAGAIN rather than a wait that
 * would hold copy->lock, and every write behind it, until the thaw.
 * Sleeps; the caller holds copy->lock.
 */
static int subvol_copy_units(struct subvol_copy *copy, u64 first, u64 end,
			     bool wait)
{
	struct subvol_space *space = copy_space(copy);
	struct super_block *sb = file_inode(copy->dest)->i_sb;
	loff_t pos = (loff_t)first << copy->unit_shift;
	loff_t len = min_t(loff_t, (loff_t)end << copy->unit_shift,
			   copy->size) - pos;
	loff_t r;

	lockdep_assert_held(&copy->lock);
	if (wait)
		sb_start_write(sb);
	else if (!sb_start_write_trylock(sb))
		return -EAGAIN;
	r = subvol_clone_range(space->file, copy->dest, pos, len);
	sb_end_write(sb);
	if (r < 0)
		return r;
	if (r != len)
		return -EIO;
	subvol_copy_mark(copy, first, end);
	return 0;
}

/*
 * A request is about to change [@pos, @pos + @len) of the backing file:
 * clone first the units of it that the snapshot has not received yet.
 * Called before every host call that changes the file's data or
 * allocation.  Process context; sleeps.  If a clone fails the copy fails,
 * and the request goes on: the volume must not suffer for its snapshot.
 * Returns 0, or -EAGAIN if the host is frozen and not @wait: the caller
 * holds the request and calls again later.
 */
int subvol_copy_before_write(struct subvol_space *space, loff_t pos,
			     loff_t len, bool wait)
{
	struct subvol_copy *copy = &space->copy;
	bool failed = false;
	u64 first, last, end;
	int r = 0;

	/*
	 * A copy starts while the device is suspended, so no request is
	 * between this check and its host call then; and one that has
	 * stopped running needs nothing more.
	 */
	if (READ_ONCE(copy->state) != SUBVOL_COPY_RUNNING || !len)
		return 0;

	mutex_lock(&copy->lock);
	if (copy->state != SUBVOL_COPY_RUNNING || pos >= copy->size)
		goto out;
	first = pos >> copy->unit_shift;
	last = min_t(u64, DIV_ROUND_UP_ULL(pos + len, 1ULL << copy->unit_shift),
		     copy->nr_units);
	while (first < last) {
		first = find_next_zero_bit(copy->done, last, first);
		if (first >= last)
			break;
		end = find_next_bit(copy->done, last, first);
		r = subvol_copy_units(copy, first, end, wait);
		if (r == -EAGAIN)
			break;
		if (r) {
			subvol_copy_fail(copy, r, "copy before a write");
			failed = true;
			r = 0;
			break;
		}
		first = end;
	}
out:
	mutex_unlock(&copy->lock);
	if (failed)
		subvol_copy_event(space);
	return r;
}

/*
 * The worker's last step: make the snapshot's file durable.  Without
 * copy->lock, which writes need no longer: every unit is cloned.
 */
static void subvol_copy_sync(struct subvol_copy *copy)
{
	struct subvol_space *space = copy_space(copy);
	int r = vfs_fsync(copy->dest, 0);

	mutex_lock(&copy->lock);
	/* A cancel may have come meanwhile: then it owns the state. */
	if (copy->state == SUBVOL_COPY_SYNCING) {
		if (r)
			subvol_copy_fail(copy, r, "sync of the snapshot's file");
		else
			WRITE_ONCE(copy->state, SUBVOL_COPY_DONE);
	}
	mutex_unlock(&copy->lock);
	if (!r)
		DMINFO("%s: snapshot copy of %pD complete",
		       dm_device_name(space->md), space->file);
	subvol_copy_event(space);
}

/*
 * One run of the worker: the next units not cloned yet, as one clone call
 * of up to copy->run units, or as many as are holes in the backing file
 * (nothing to clone: the snapshot's file is a hole there too).  Queues
 * itself again until all are done, so that a cancel can stop it between
 * two runs.  Process context.
 */
static void subvol_copy_work(struct work_struct *work)
{
	struct subvol_copy *copy = container_of(to_delayed_work(work),
						struct subvol_copy, work);
	struct subvol_space *space = copy_space(copy);
	u64 first, end, limit, hole_end;
	unsigned int noio_flags, rate;
	unsigned long delay = 0;
	bool sync = false, failed = false, again = false;
	loff_t data;
	ktime_t t0;
	s64 ms;
	int r;

	/* Writes to our device may wait for this worker: no I/O reclaim. */
	noio_flags = memalloc_noio_save();
	mutex_lock(&copy->lock);
	if (copy->state != SUBVOL_COPY_RUNNING)
		goto out;

	first = find_next_zero_bit(copy->done, copy->nr_units, copy->next);
	if (first >= copy->nr_units && copy->next)
		first = find_first_zero_bit(copy->done, copy->nr_units);
	if (first >= copy->nr_units) {
		WRITE_ONCE(copy->state, SUBVOL_COPY_SYNCING);
		sync = true;
		goto out;
	}
	end = find_next_bit(copy->done, copy->nr_units, first);

	/* Holes: mark them done without a clone. */
	data = vfs_llseek(space->file, (loff_t)first << copy->unit_shift,
			  SEEK_DATA);
	if (data == -ENXIO || (data >= 0 && data >= copy->size))
		hole_end = end;
	else if (data < 0)
		hole_end = first;	/* cannot tell: clone it */
	else
		hole_end = min_t(u64, data >> copy->unit_shift, end);
	if (hole_end > first) {
		subvol_copy_mark(copy, first, hole_end);
		copy->next = hole_end;
		again = true;
		goto out;
	}

	limit = min_t(u64, end, first + copy->run);
	t0 = ktime_get();
	r = subvol_copy_units(copy, first, limit, false);
	if (r == -EAGAIN) {
		/* The host is frozen: look again after a while. */
		again = true;
		delay = HZ / 4;
		goto out;
	}
	if (r) {
		subvol_copy_fail(copy, r, "clone");
		failed = true;
		goto out;
	}
	copy->next = limit;
	again = true;
	rate = READ_ONCE(copy_rate_mib);
	if (rate)
		delay = msecs_to_jiffies(div_u64(((limit - first) <<
					copy->unit_shift) * MSEC_PER_SEC,
					(u64)rate << 20));

	/* Aim for copy_slice_ms per call: writes wait for a clone. */
	ms = ktime_ms_delta(ktime_get(), t0);
	if (ms > READ_ONCE(copy_slice_ms) && copy->run > 1)
		copy->run /= 2;
	else if (ms < READ_ONCE(copy_slice_ms) / 2 &&
		 copy->run < SUBVOL_COPY_MAX_RUN)
		copy->run++;
out:
	mutex_unlock(&copy->lock);
	if (again)
		queue_delayed_work(copy->wq, &copy->work, delay);
	else if (sync)
		subvol_copy_sync(copy);
	else if (failed)
		subvol_copy_event(space);
	memalloc_noio_restore(noio_flags);
}

void subvol_copy_init(struct subvol_copy *copy)
{
	mutex_init(&copy->control);
	mutex_init(&copy->lock);
	INIT_DELAYED_WORK(&copy->work, subvol_copy_work);
	copy->state = SUBVOL_COPY_NONE;
}

/*
 * Stop the worker and let go of the snapshot's file, in any state.  The
 * caller holds copy->control.  Sleeps.
 */
static void subvol_copy_stop(struct subvol_copy *copy)
{
	lockdep_assert_held(&copy->control);
	mutex_lock(&copy->lock);
	WRITE_ONCE(copy->state, SUBVOL_COPY_NONE);
	mutex_unlock(&copy->lock);

	/* The worker sees NONE at its next run, or is not queued at all. */
	cancel_delayed_work_sync(&copy->work);
	destroy_workqueue(copy->wq);
	copy->wq = NULL;
	fput(copy->dest);
	copy->dest = NULL;
	kvfree(copy->done);
	copy->done = NULL;
	WRITE_ONCE(copy->nr_done, 0);
	WRITE_ONCE(copy->error, 0);
}

/* The space is going away: cancel a copy in progress.  Sleeps. */
void subvol_copy_exit(struct subvol_space *space)
{
	struct subvol_copy *copy = &space->copy;

	mutex_lock(&copy->control);
	if (copy->state != SUBVOL_COPY_NONE) {
		DMWARN("%s: snapshot copy of %pD cancelled: the device is going away",
		       dm_device_name(space->md), space->file);
		subvol_copy_stop(copy);
	}
	mutex_unlock(&copy->control);
	mutex_destroy(&copy->lock);
	mutex_destroy(&copy->control);
}

/* Is a copy held, running or not?  "rescan_sharing" must wait for it. */
bool subvol_copy_busy(struct subvol_space *space)
{
	return READ_ONCE(space->copy.state) != SUBVOL_COPY_NONE;
}

#define SUBVOL_MSG_ERR(sc, fmt, ...) \
	DMERR("%s: message " fmt, dm_device_name((sc)->md), ##__VA_ARGS__)

/* The file descriptor of "snapshot_begin <fd>", checked.  Sleeps. */
static struct file *subvol_copy_get_file(struct subvol_c *sc, const char *arg)
{
	const char *msg = DM_SUBVOL_MSG_SNAPSHOT_BEGIN;
	struct inode *backing = file_inode(sc->file);
	struct file *file;
	struct inode *inode;
	unsigned int fd;
	int r = -EINVAL;

	if (kstrtouint(arg, 10, &fd)) {
		SUBVOL_MSG_ERR(sc, "%s: '%s' is not a file descriptor number",
			       msg, arg);
		return ERR_PTR(-EINVAL);
	}
	/* The message runs in the caller's process: its file table. */
	file = fget(fd);
	if (!file) {
		SUBVOL_MSG_ERR(sc, "%s: %u is not an open file descriptor of the caller",
			       msg, fd);
		return ERR_PTR(-EBADF);
	}
	inode = file_inode(file);
	if (!S_ISREG(inode->i_mode)) {
		SUBVOL_MSG_ERR(sc, "%s: file descriptor %u is not a regular file",
			       msg, fd);
	} else if (inode->i_sb != backing->i_sb) {
		SUBVOL_MSG_ERR(sc, "%s: file descriptor %u is not on the filesystem of %s",
			       msg, fd, sc->path);
		r = -EXDEV;
	} else if (inode == backing) {
		SUBVOL_MSG_ERR(sc, "%s: file descriptor %u is the backing file itself",
			       msg, fd);
	} else if (subvol_backing_in_use(inode)) {
		SUBVOL_MSG_ERR(sc, "%s: file descriptor %u is the backing file of a subvol device",
			       msg, fd);
		r = -EBUSY;
	} else if (!(file->f_mode & FMODE_WRITE) ||
		   (file->f_flags & O_APPEND)) {
		SUBVOL_MSG_ERR(sc, "%s: file descriptor %u is not open for writing",
			       msg, fd);
		r = -EBADF;
	} else if (i_size_read(inode) < i_size_read(backing)) {
		SUBVOL_MSG_ERR(sc, "%s: file descriptor %u is smaller than %s",
			       msg, fd, sc->path);
	} else {
		return file;
	}
	fput(file);
	return ERR_PTR(r);
}

/*
 * "snapshot_begin <fd>": the device is suspended, and the backing file
 * is as the snapshot must be.  Sleeps.
 */
static int subvol_copy_start(struct subvol_c *sc, struct file *file);

int subvol_copy_begin(struct subvol_c *sc, const char *arg)
{
	const char *msg = DM_SUBVOL_MSG_SNAPSHOT_BEGIN;
	unsigned int noio_flags;
	struct file *file;
	int r;

	r = subvol_snapshot_point(sc, msg);
	if (r)
		return r;
	file = subvol_copy_get_file(sc, arg);
	if (IS_ERR(file))
		return PTR_ERR(file);

	/* Reclaim must not write to the device: it is suspended. */
	noio_flags = memalloc_noio_save();
	r = subvol_copy_start(sc, file);
	memalloc_noio_restore(noio_flags);
	if (r)
		fput(file);
	return r;
}

/* snapshot_begin, with @file checked: the target takes it, or not. */
static int subvol_copy_start(struct subvol_c *sc, struct file *file)
{
	const char *msg = DM_SUBVOL_MSG_SNAPSHOT_BEGIN;
	struct subvol_space *space = sc->space;
	struct subvol_copy *copy = &space->copy;
	struct workqueue_struct *wq;
	unsigned long *done;
	loff_t size;
	u64 nr;
	int r;

	mutex_lock(&copy->control);
	if (copy->state != SUBVOL_COPY_NONE) {
		SUBVOL_MSG_ERR(sc, "%s: a snapshot copy is already held (%s)",
			       msg, copy->state == SUBVOL_COPY_RUNNING ||
			       copy->state == SUBVOL_COPY_SYNCING ? "running" :
			       "not ended: send " DM_SUBVOL_MSG_SNAPSHOT_END " or "
			       DM_SUBVOL_MSG_SNAPSHOT_CANCEL);
		r = -EBUSY;
		goto bad_unlock;
	}

	size = i_size_read(file_inode(sc->file));
	nr = DIV_ROUND_UP_ULL(size, 1ULL << SUBVOL_COPY_UNIT_SHIFT);
	r = -ENOMEM;
	done = kvcalloc(BITS_TO_LONGS(nr) ?: 1, sizeof(long), GFP_KERNEL);
	if (!done) {
		SUBVOL_MSG_ERR(sc, "%s: cannot allocate the copy's bitmap", msg);
		goto bad_unlock;
	}
	wq = alloc_workqueue("dm-subvol-copy-%s", WQ_UNBOUND | WQ_MEM_RECLAIM,
			     1, dm_device_name(sc->md));
	if (!wq) {
		SUBVOL_MSG_ERR(sc, "%s: cannot allocate the copy's worker", msg);
		goto bad_done;
	}

	/* From here on every mapped block counts as shared, or ENOSPC. */
	r = subvol_space_prepare_snapshot(space);
	if (r == -ENOSPC) {
		SUBVOL_MSG_ERR(sc, "%s: no host space for the copy-on-write reserve",
			       msg);
		goto bad_wq;
	} else if (r) {
		SUBVOL_MSG_ERR(sc, "%s: cannot remove the sharing record of %s: %d",
			       msg, sc->path, r);
		goto bad_wq;
	}

	mutex_lock(&copy->lock);
	copy->dest = file;
	copy->size = size;
	copy->unit_shift = SUBVOL_COPY_UNIT_SHIFT;
	copy->nr_units = nr;
	copy->done = done;
	copy->nr_done = 0;
	copy->next = 0;
	copy->run = 1;
	copy->error = 0;
	copy->wq = wq;
	WRITE_ONCE(copy->state, SUBVOL_COPY_RUNNING);
	mutex_unlock(&copy->lock);
	queue_delayed_work(wq, &copy->work, 0);
	mutex_unlock(&copy->control);
	DMINFO("%s: snapshot copy of %s started: %llu bytes",
	       dm_device_name(sc->md), sc->path, (unsigned long long)size);
	return 0;

bad_wq:
	destroy_workqueue(wq);
bad_done:
	kvfree(done);
bad_unlock:
	mutex_unlock(&copy->control);
	return r;
}

/*
 * "snapshot_end": the tool has the complete copy; "snapshot_cancel"
 * (@cancel): stop a copy in any state.  Either lets go of the file.
 * Sleeps.
 */
int subvol_copy_end(struct subvol_c *sc, bool cancel)
{
	struct subvol_copy *copy = &sc->space->copy;
	const char *msg = cancel ? DM_SUBVOL_MSG_SNAPSHOT_CANCEL :
				   DM_SUBVOL_MSG_SNAPSHOT_END;
	enum subvol_copy_state state;
	int r = 0;

	mutex_lock(&copy->control);
	state = READ_ONCE(copy->state);
	if (state == SUBVOL_COPY_NONE) {
		SUBVOL_MSG_ERR(sc, "%s: no snapshot copy", msg);
		r = -EINVAL;
	} else if (!cancel && state != SUBVOL_COPY_DONE) {
		SUBVOL_MSG_ERR(sc, "%s: the snapshot copy is %s: send %s",
			       msg, state == SUBVOL_COPY_FAILED ? "failed" :
			       "not complete", DM_SUBVOL_MSG_SNAPSHOT_CANCEL);
		r = -EBUSY;
	} else {
		if (cancel)
			DMINFO("%s: snapshot copy of %s cancelled",
			       dm_device_name(sc->md), sc->path);
		subvol_copy_stop(copy);
	}
	mutex_unlock(&copy->control);
	return r;
}

/* The status line's snapshot_copy field. */
void subvol_copy_status(struct subvol_space *space, char *result,
			unsigned int maxlen, unsigned int *szp)
{
	struct subvol_copy *copy = &space->copy;
	unsigned int sz = *szp;
	u64 copied, total;

	switch (READ_ONCE(copy->state)) {
	case SUBVOL_COPY_NONE:
		DMEMIT(DM_SUBVOL_SNAPSHOT_COPY_NONE);
		break;
	case SUBVOL_COPY_DONE:
		DMEMIT(DM_SUBVOL_SNAPSHOT_COPY_DONE);
		break;
	case SUBVOL_COPY_FAILED:
		DMEMIT(DM_SUBVOL_SNAPSHOT_COPY_FAILED ":%d",
		       -READ_ONCE(copy->error));
		break;
	default:
		/* Racing a begin or a stop at worst: a passing figure. */
		total = READ_ONCE(copy->size);
		copied = min_t(u64, READ_ONCE(copy->nr_done) <<
			       SUBVOL_COPY_UNIT_SHIFT, total);
		DMEMIT("%llu/%llu", (unsigned long long)copied >> SECTOR_SHIFT,
		       (unsigned long long)total >> SECTOR_SHIFT);
		break;
	}
	*szp = sz;
}
