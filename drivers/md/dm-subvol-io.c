// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The data path of the subvol target: every bio becomes a call into the
 * host filesystem on the backing file.  Reads and writes are direct and
 * asynchronous, as the loop driver does them; flushes, discards and
 * write-zeroes are synchronous calls (fsync, fallocate).
 *
 * All of it runs from the target's workqueue, one work item per bio, never
 * from ->map: the submitter of a bio may be inside submit_bio() with
 * current->bio_list set, where any bio that the host filesystem issued and
 * waited for would never be sent.  A work item only submits; completions
 * arrive from the host filesystem, so many requests are in flight at once.
 */

#include "dm-subvol.h"
#include "dm-subvol-compat.h"

#include <linux/bio.h>
#include <linux/falloc.h>
#include <linux/moduleparam.h>
#include <linux/sched/mm.h>

static loff_t subvol_bio_pos(struct subvol_c *sc, struct bio *bio)
{
	return (loff_t)dm_target_offset(sc->ti, bio->bi_iter.bi_sector) <<
		SECTOR_SHIFT;
}

/* The bio's range in blocks: the queue limits keep it aligned. */
static u64 subvol_bio_block(struct subvol_c *sc, struct bio *bio)
{
	return subvol_bio_pos(sc, bio) >> ilog2(sc->block_size);
}

static u64 subvol_bio_blocks(struct subvol_c *sc, struct bio *bio)
{
	return bio->bi_iter.bi_size >> ilog2(sc->block_size);
}

static void subvol_rw_error_work(struct work_struct *work);

/*
 * A host read or write that failed for lack of memory (or with EAGAIN) is
 * retried for this many seconds before its error is passed on.
 */
static unsigned int transient_timeout = 60;
module_param(transient_timeout, uint, 0644);
MODULE_PARM_DESC(transient_timeout,
		 "Seconds to retry host I/O failing with ENOMEM or EAGAIN");

/* A write's host call is about to start: it may allocate from now on. */
static void subvol_write_submit(struct subvol_io *io)
{
	if (io->change.in_pool)
		subvol_pool_submit(io->sc->space->pool, io->change.used);
}

/*
 * The host call returned, and allocated the write's blocks if it took
 * the write (@allocated): they are no longer the pool's loose space.
 */
static void subvol_write_submitted(struct subvol_io *io, bool allocated)
{
	if (!io->change.in_pool)
		return;
	subvol_pool_allocated(io->sc->space->pool, io->change.used,
			      allocated);
	io->change.allocated = allocated;
}

/*
 * The write failed for space after its call returned: it may have
 * allocated only part of its blocks.  Count them in flight again, for a
 * retry.
 */
static void subvol_write_unallocated(struct subvol_io *io)
{
	if (!io->change.in_pool || !io->change.allocated)
		return;
	subvol_pool_unallocated(io->sc->space->pool, io->change.used);
	io->change.allocated = false;
}

/* A write is over: what it reserved on the host is free again. */
static void subvol_write_done(struct subvol_io *io)
{
	if (io->change.in_pool)
		subvol_pool_used(io->sc->space->pool,
				 io->change.allocated ? 0 : io->change.used);
}

/*
 * Out of space on the host must reach the submitter as ENOSPC, not EIO:
 * qemu's werror=enospc and filesystems act on it.
 */
static blk_status_t subvol_errno_to_status(long err)
{
	switch (err) {
	case -ENOSPC:
	case -EDQUOT:
		return BLK_STS_NOSPC;
	case -EOPNOTSUPP:
		return BLK_STS_NOTSUPP;
	default:
		return BLK_STS_IOERR;
	}
}

static const char *subvol_op_name(struct bio *bio)
{
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return "read";
	case REQ_OP_WRITE:
		return bio_sectors(bio) ? "write" : "flush";
	case REQ_OP_DISCARD:
		return "discard";
	case REQ_OP_WRITE_ZEROES:
		return "write-zeroes";
	default:
		return "request";
	}
}

/* Complete @bio with the result @ret of the host call.  Any context. */
static void subvol_io_end(struct subvol_io *io, struct bio *bio, long ret)
{
	if (unlikely(ret < 0)) {
		DMERR_LIMIT("%s: %s of %u bytes at sector %llu failed on %s: %ld",
			    dm_device_name(io->sc->md), subvol_op_name(bio),
			    bio->bi_iter.bi_size,
			    (unsigned long long)bio->bi_iter.bi_sector,
			    io->sc->path, ret);
		bio->bi_status = subvol_errno_to_status(ret);
	}
	bio_endio(bio);
}

/*
 * The host call is over.  May run in interrupt context.  A failed write
 * needs its accounting undone, and either may be retried, all of which
 * sleeps.
 */
static void subvol_rw_finish(struct subvol_io *io, long ret)
{
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(*io));
	bool write = op_is_write(bio_op(bio));

	if (write)
		kiocb_end_write(&io->iocb);
	/* The table checked the file's size: a short transfer is an error. */
	if (ret >= 0 && ret != bio->bi_iter.bi_size)
		ret = -EIO;
	if (unlikely(ret < 0) &&
	    (write || ret == -ENOMEM || ret == -EAGAIN)) {
		io->error = ret;
		INIT_WORK(&io->work, subvol_rw_error_work);
		queue_work(io->sc->wq, &io->work);
		return;
	}
	if (write)
		subvol_write_done(io);
	subvol_io_end(io, bio, ret);
}

static void subvol_rw_put(struct subvol_io *io)
{
	if (atomic_dec_and_test(&io->pending))
		subvol_rw_finish(io, io->result);
}

/*
 * ->ki_complete, or the call's result if it was not queued.  Any context.
 * Not inlined: every host result passes here, where tests/kmod's fault
 * injector probes it.
 */
static noinline void subvol_rw_complete(struct kiocb *iocb, long ret)
{
	struct subvol_io *io = container_of(iocb, struct subvol_io, iocb);

	io->result = ret;
	subvol_rw_put(io);
}

static void subvol_io_hold(struct subvol_io *io, unsigned long deadline,
			   enum subvol_hold why);
static void subvol_write_data(struct subvol_io *io, struct bio *bio);

/*
 * Freeze protection of the host for a write, held until it completes, as
 * aio holds it (kiocb_start_write()): a frozen host gets no writes.  A
 * write that finds the host frozen is held and retried, so that it does
 * not block the reads and writes queued behind it.
 */
static bool subvol_start_write(struct subvol_io *io)
{
	struct super_block *sb = file_inode(io->sc->file)->i_sb;

	if (!sb_start_write_trylock(sb))
		return false;
	/* As kiocb_start_write(): the completion releases it. */
	__sb_writers_release(sb, SB_FREEZE_WRITE);
	return true;
}

/*
 * One bio as one direct, asynchronous call to the host file's ->write_iter
 * or ->read_iter, as the loop driver makes it.  Not vfs_iocb_iter_write():
 * since 6.8 that takes the freeze protection itself (and drops it only if
 * the call was not queued), so with ours a queued write would hold it twice
 * and release it once, and the host could never freeze again.  What else
 * it checks the table checked (a regular file opened for reading and
 * writing, ranges inside it).
 */
static void subvol_rw(struct subvol_io *io, struct bio *bio)
{
	struct file *file = io->sc->file;
	unsigned int dir = op_is_write(bio_op(bio)) ? ITER_SOURCE : ITER_DEST;
	unsigned int nr_bvec = 0;
	struct bvec_iter iter;
	struct iov_iter to;
	struct bio_vec bv;
	ssize_t ret;

	bio_for_each_bvec(bv, bio, iter)
		nr_bvec++;

	/* A split bio may start inside its first bvec. */
	iov_iter_bvec(&to, dir, __bvec_iter_bvec(bio->bi_io_vec, bio->bi_iter),
		      nr_bvec, bio->bi_iter.bi_size);
	to.iov_offset = bio->bi_iter.bi_bvec_done;

	io->iocb = (struct kiocb) {
		.ki_filp = file,
		.ki_pos = subvol_bio_pos(io->sc, bio),
		.ki_complete = subvol_rw_complete,
		.ki_flags = IOCB_DIRECT,
		.ki_ioprio = bio_prio(bio),
	};
	/* FUA: the host filesystem syncs the range before completing. */
	if (bio->bi_opf & REQ_FUA)
		io->iocb.ki_flags |= IOCB_DSYNC;

	/*
	 * Two references: the host call's, dropped by ->ki_complete, and
	 * ours, so that the write's completion, which may come before the
	 * call returns, waits for us to count what the call allocated.
	 */
	atomic_set(&io->pending, 2);
	if (dir == ITER_SOURCE) {
		if (!subvol_start_write(io)) {
			subvol_io_hold(io, 0, SUBVOL_HOLD_FROZEN);
			return;
		}
		subvol_write_submit(io);
		ret = file->f_op->write_iter(&io->iocb, &to);
		subvol_write_submitted(io, ret == -EIOCBQUEUED || ret >= 0);
	} else {
		ret = file->f_op->read_iter(&io->iocb, &to);
	}

	/*
	 * Unless queued, the host completed or refused it and will not call:
	 * its result goes the same way (a test's fault injector hooks it).
	 */
	if (ret != -EIOCBQUEUED)
		subvol_rw_complete(&io->iocb, ret);
	subvol_rw_put(io);
}

/*
 * Make every completed write durable: fdatasync, which persists the data
 * and the metadata needed to read it back (allocations, unwritten extent
 * conversion), and flushes the host device's cache.  That is what a flush
 * promises.
 */
int subvol_io_sync(struct subvol_c *sc)
{
	return vfs_fsync(sc->file, 1);
}

static void subvol_write(struct subvol_io *io, struct bio *bio)
{
	struct subvol_c *sc = io->sc;

	/* dm sends flushes as empty bios; a flush with data is handled too. */
	if (bio->bi_opf & REQ_PREFLUSH) {
		int r = subvol_io_sync(sc);

		if (r || !bio_sectors(bio)) {
			subvol_io_end(io, bio, r);
			return;
		}
	}
	subvol_write_data(io, bio);
}

/*
 * The data of a write, after its flush.  A snapshot being copied gets the
 * range first, as it was; if the host is frozen the write is held (as
 * subvol_rw() holds it) and comes back here.
 */
static void subvol_write_data(struct subvol_io *io, struct bio *bio)
{
	struct subvol_c *sc = io->sc;

	if (subvol_copy_before_write(sc->space, subvol_bio_pos(sc, bio),
				     bio->bi_iter.bi_size, false) == -EAGAIN) {
		subvol_io_hold(io, 0, SUBVOL_HOLD_COPY);
		return;
	}
	subvol_space_write_begin(sc->space, subvol_bio_block(sc, bio),
				 subvol_bio_blocks(sc, bio), &io->change);
	if (io->change.holes)
		subvol_check_low_water(sc);
	if ((io->change.holes || io->change.shared) && sc->guarantee)
		subvol_backing_recheck_hints(sc);
	subvol_rw(io, bio);
}

/* Holes a write fills that no promise covered. */
static u64 subvol_change_uncovered(const struct subvol_space_change *change)
{
	return change->holes - change->promised - change->user_promised;
}

/* Give up on a write: undo its accounting and complete it with @ret. */
static void subvol_write_fail(struct subvol_io *io, struct bio *bio, long ret)
{
	struct subvol_c *sc = io->sc;

	subvol_write_done(io);
	subvol_space_write_failed(sc->space, subvol_bio_block(sc, bio),
				  subvol_bio_blocks(sc, bio), &io->change);
	subvol_io_end(io, bio, ret);
}

/* Give up on a read or write that failed with @ret. */
static void subvol_rw_fail(struct subvol_io *io, struct bio *bio, long ret)
{
	if (op_is_write(bio_op(bio)))
		subvol_write_fail(io, bio, ret);
	else
		subvol_io_end(io, bio, ret);
}

/*
 * Hold a read or write, to retry it every quarter of a second until it
 * succeeds or its deadline passes (none if 0).
 */
static void subvol_io_hold(struct subvol_io *io, unsigned long deadline,
			   enum subvol_hold why)
{
	struct subvol_c *sc = io->sc;

	io->deadline = deadline;
	io->held_for = why;
	if (llist_add(&io->node, &sc->held))
		queue_delayed_work(sc->wq, &sc->held_work, HZ / 4);
}

/* A promise cannot be kept yet: say so, and what the pool holds. */
static void subvol_log_held(struct subvol_io *io)
{
	struct subvol_c *sc = io->sc;
	u64 claimed, committed;

	subvol_pool_counters(sc->space->pool, &claimed, &committed);
	DMWARN_LIMIT("%s: host full: holding promised writes (pool: %llu promised, %llu claimed)",
		     dm_device_name(sc->md), committed, claimed);
}

/* A suspend with flush is under way: dm waits for every request. */
static bool subvol_io_flush_suspending(struct subvol_c *sc)
{
	return READ_ONCE(sc->suspending) && !dm_noflush_suspending(sc->ti);
}

/*
 * dm completes a suspend only when no request is in flight, and a held
 * one may wait for the host without end: a promised write for room the
 * host does not have, a write to a frozen host.  On a noflush suspend
 * (lvm2's, dm-thin's) give it back to dm, which resubmits it after the
 * resume, with what its write counted undone, as if it had not been
 * mapped.  On a suspend with flush, a promised write gets the no-space
 * policy from now on, as a write no promise covers (and back its promise
 * if the suspend is called off); the other holds end by their own
 * timeouts, or at the host's thaw, which is what a flush waits for, and
 * a signal to the suspending process ends dm's wait.  Returns true if
 * @io is over.  Process context.
 */
static bool subvol_io_suspend_held(struct subvol_io *io, struct bio *bio)
{
	struct subvol_c *sc = io->sc;

	if (!READ_ONCE(sc->suspending)) {
		if (io->held_for == SUBVOL_HOLD_NO_SPACE && io->promised) {
			io->held_for = SUBVOL_HOLD_PROMISED;
			io->deadline = 0;
		}
		return false;
	}
	if (dm_noflush_suspending(sc->ti)) {
		if (op_is_write(bio_op(bio)) &&
		    io->held_for != SUBVOL_HOLD_COPY) {
			subvol_write_done(io);
			subvol_space_write_failed(sc->space,
						  subvol_bio_block(sc, bio),
						  subvol_bio_blocks(sc, bio),
						  &io->change);
		}
		bio->bi_status = BLK_STS_DM_REQUEUE;
		bio_endio(bio);
		return true;
	}
	/* Only a write is held as promised: its change is set. */
	if (io->held_for == SUBVOL_HOLD_PROMISED &&
	    !subvol_change_uncovered(&io->change) &&
	    READ_ONCE(sc->space->guarantee)) {
		DMWARN_LIMIT("%s: suspending: held promised write now under the no_space policy",
			     dm_device_name(sc->md));
		io->promised = true;
		io->held_for = SUBVOL_HOLD_NO_SPACE;
		io->deadline = jiffies;
		if (sc->no_space_queue)
			io->deadline += sc->no_space_timeout * HZ;
		io->deadline = io->deadline ?: 1;
	}
	return false;
}

/*
 * A host call failed.  Out of memory (or EAGAIN) is the host's passing
 * state, not a broken disk: retry for a while.  Out of host space for a
 * write that the guarantee backs means that a writer outside the pool
 * took the space released for it, or that the host lent it to other
 * writes in flight: have the pool count what is left and release more,
 * retry at once, then keep retrying; the write's blocks are in the pool's
 * claim, and it must not fail.  A write to holes that no promise covered,
 * or one over a host quota (which the claim cannot help), is up to the
 * no-space policy.  Process context.
 */
static void subvol_rw_error_work(struct work_struct *work)
{
	struct subvol_io *io = container_of(work, struct subvol_io, work);
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(*io));
	struct subvol_c *sc = io->sc;
	unsigned int noio_flags;
	long ret = io->error;

	noio_flags = memalloc_noio_save();
	if (op_is_write(bio_op(bio)) && (ret == -ENOSPC || ret == -EDQUOT))
		subvol_write_unallocated(io);
	if (ret == -ENOMEM || ret == -EAGAIN) {
		if (!io->deadline)
			io->deadline = jiffies +
				       READ_ONCE(transient_timeout) * HZ;
		if (time_before(jiffies, io->deadline)) {
			subvol_io_hold(io, io->deadline,
				       SUBVOL_HOLD_TRANSIENT);
			goto out;
		}
	} else if (op_is_write(bio_op(bio)) &&
		   (ret == -ENOSPC || ret == -EDQUOT)) {
		/*
		 * With the guarantee every block of the write is backed:
		 * written before, promised, or in the copy-on-write reserve.
		 * Even an overwrite may need host blocks for a transaction
		 * (unwritten extent conversion): count it among the writes
		 * in flight, whose needs loose space covers.
		 */
		if (ret == -EDQUOT && READ_ONCE(sc->space->guarantee)) {
			DMERR_LIMIT("%s: host quota of %s exceeded: no claim backs it",
				    dm_device_name(sc->md), sc->path);
		} else if (!subvol_change_uncovered(&io->change) &&
			   READ_ONCE(sc->space->guarantee) &&
			   !subvol_io_flush_suspending(sc)) {
			if (!io->change.in_pool) {
				subvol_pool_use(sc->space->pool, 0);
				io->change.in_pool = true;
			}
			subvol_pool_lost(sc->space->pool, true);
			if (!io->retries++) {
				subvol_rw(io, bio);
				goto out;
			}
			if (io->retries == 2)
				subvol_log_held(io);
			subvol_io_hold(io, 0, SUBVOL_HOLD_PROMISED);
			goto out;
		}
		if (sc->no_space_queue) {
			if (!io->deadline)
				io->deadline = jiffies +
					       sc->no_space_timeout * HZ;
			if (time_before(jiffies, io->deadline)) {
				subvol_io_hold(io, io->deadline,
					       SUBVOL_HOLD_NO_SPACE);
				goto out;
			}
		}
	}
	subvol_rw_fail(io, bio, ret);
out:
	memalloc_noio_restore(noio_flags);
}

/* Retry the held requests; fail those whose time is up.  Process context. */
static void subvol_held_work(struct work_struct *work)
{
	struct subvol_c *sc = container_of(to_delayed_work(work),
					   struct subvol_c, held_work);
	struct subvol_io *io, *next;
	struct llist_node *batch;
	unsigned int noio_flags;
	bool promised = false;

	noio_flags = memalloc_noio_save();
	batch = llist_reverse_order(llist_del_all(&sc->held));
	llist_for_each_entry(io, batch, node)
		promised |= io->held_for == SUBVOL_HOLD_PROMISED;
	/* The space lost since the last round, once for all of them. */
	if (batch && READ_ONCE(sc->space->guarantee))
		subvol_pool_lost(sc->space->pool, promised);
	llist_for_each_entry_safe(io, next, batch, node) {
		struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(*io));

		if (subvol_io_suspend_held(io, bio))
			continue;
		if (io->deadline && time_after_eq(jiffies, io->deadline))
			subvol_rw_fail(io, bio, io->error);
		else if (io->held_for == SUBVOL_HOLD_COPY)
			subvol_write_data(io, bio);
		else
			subvol_rw(io, bio);
	}
	memalloc_noio_restore(noio_flags);
}

/*
 * Discard and write-zeroes.  On XFS, fallocate waits for all direct I/O
 * in flight on the file, so these serialise against the data path.
 */
static void subvol_fallocate(struct subvol_io *io, struct bio *bio, int mode)
{
	struct subvol_c *sc = io->sc;
	u64 block = subvol_bio_block(sc, bio);
	u64 nr = subvol_bio_blocks(sc, bio);
	int r;

	/* Its own work item: it may wait for a frozen host, as fallocate does. */
	subvol_copy_before_write(sc->space, subvol_bio_pos(sc, bio),
				 bio->bi_iter.bi_size, true);

	/* Zeroing without unmapping allocates, as a write does. */
	if (mode == FALLOC_FL_ZERO_RANGE) {
		subvol_space_write_begin(sc->space, block, nr, &io->change);
		subvol_write_submit(io);
	}
	r = vfs_fallocate(sc->file, mode | FALLOC_FL_KEEP_SIZE,
			  subvol_bio_pos(sc, bio), bio->bi_iter.bi_size);

	if (mode == FALLOC_FL_ZERO_RANGE) {
		subvol_write_submitted(io, !r);
		subvol_write_done(io);
		if (r)
			subvol_space_write_failed(sc->space, block, nr,
						  &io->change);
	} else if (r) {
		subvol_space_rescan(sc->space, block, nr);
	} else {
		subvol_space_unmapped(sc->space, block, nr);
	}
	subvol_io_end(io, bio, r);
}

/* Run the host call of one bio.  Process context; may sleep. */
static void subvol_io_dispatch(struct subvol_io *io)
{
	struct bio *bio = dm_bio_from_per_bio_data(io, sizeof(*io));

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		subvol_rw(io, bio);
		break;
	case REQ_OP_WRITE:
		subvol_write(io, bio);
		break;
	case REQ_OP_DISCARD:
		subvol_fallocate(io, bio, FALLOC_FL_PUNCH_HOLE);
		break;
	case REQ_OP_WRITE_ZEROES:
		/* Unmapping is allowed unless the submitter said otherwise. */
		subvol_fallocate(io, bio, (bio->bi_opf & REQ_NOUNMAP) ?
				 FALLOC_FL_ZERO_RANGE : FALLOC_FL_PUNCH_HOLE);
		break;
	default:
		subvol_io_end(io, bio, -EOPNOTSUPP);
		break;
	}
}

/*
 * Memory reclaim entered from the host filesystem must not write to a
 * block device: it could be this one.  The scope covers every allocation
 * the host makes on our behalf, so the backing file's mapping needs no
 * masked gfp flags, unlike loop's buffered path.
 */
static void subvol_queue_work(struct work_struct *work)
{
	struct subvol_queue *q = container_of(work, struct subvol_queue, work);
	struct subvol_io *io, *next;
	struct llist_node *batch;
	unsigned int noio_flags;

	noio_flags = memalloc_noio_save();
	while ((batch = llist_del_all(&q->bios))) {
		/* Oldest first; a completion may free io: fetch next before. */
		batch = llist_reverse_order(batch);
		llist_for_each_entry_safe(io, next, batch, node)
			subvol_io_dispatch(io);
	}
	memalloc_noio_restore(noio_flags);
}

static void subvol_io_work(struct work_struct *work)
{
	struct subvol_io *io = container_of(work, struct subvol_io, work);
	unsigned int noio_flags;

	noio_flags = memalloc_noio_save();
	subvol_io_dispatch(io);
	memalloc_noio_restore(noio_flags);
}

/* ->map: queue the bio for its host call.  Called from submit_bio(). */
int subvol_io_map(struct subvol_c *sc, struct bio *bio)
{
	struct subvol_io *io = dm_per_bio_data(bio, sizeof(*io));
	struct subvol_queue *q;

	/* The block layer only warns about writes to read-only devices. */
	if (unlikely(!sc->writable && op_is_write(bio_op(bio)) &&
		     bio_sectors(bio))) {
		DMERR_LIMIT("%s: %s to a read-only device refused",
			    dm_device_name(sc->md), subvol_op_name(bio));
		return DM_MAPIO_KILL;
	}
	io->sc = sc;
	io->retries = 0;
	io->deadline = 0;
	io->promised = false;

	/*
	 * Flushes, discards and write-zeroes are synchronous host calls that
	 * may take long (an fsync waits for I/O): each gets its own work
	 * item, so that no read or write waits behind one.
	 */
	if (bio_op(bio) != REQ_OP_READ &&
	    (bio_op(bio) != REQ_OP_WRITE || (bio->bi_opf & REQ_PREFLUSH))) {
		INIT_WORK(&io->work, subvol_io_work);
		queue_work(sc->wq, &io->work);
		return DM_MAPIO_SUBMITTED;
	}

	/*
	 * Any CPU's queue will do if we migrate meanwhile: llist_add is safe
	 * against concurrent adds and the worker's llist_del_all.  Only the
	 * add that finds the queue empty needs to kick the worker.
	 */
	q = raw_cpu_ptr(sc->queues);
	if (llist_add(&io->node, &q->bios))
		queue_work(sc->wq, &q->work);
	return DM_MAPIO_SUBMITTED;
}

/* Allocate the workqueue and the per-CPU queues of a new target. */
int subvol_io_init(struct subvol_c *sc)
{
	int cpu;

	/* Reclaim may wait on our I/O, so the workqueue needs a rescuer. */
	sc->wq = alloc_workqueue("dm-subvol-%s", WQ_UNBOUND | WQ_MEM_RECLAIM,
				 0, dm_device_name(sc->md));
	if (!sc->wq)
		return -ENOMEM;

	sc->queues = alloc_percpu(struct subvol_queue);
	if (!sc->queues) {
		destroy_workqueue(sc->wq);
		return -ENOMEM;
	}
	for_each_possible_cpu(cpu) {
		struct subvol_queue *q = per_cpu_ptr(sc->queues, cpu);

		init_llist_head(&q->bios);
		INIT_WORK(&q->work, subvol_queue_work);
		q->sc = sc;
	}
	init_llist_head(&sc->held);
	INIT_DELAYED_WORK(&sc->held_work, subvol_held_work);
	return 0;
}

/* .presuspend: retry the held requests now, for subvol_io_suspend_held(). */
void subvol_io_presuspend(struct subvol_c *sc)
{
	WRITE_ONCE(sc->suspending, true);
	mod_delayed_work(sc->wq, &sc->held_work, 0);
}

/* .resume, .presuspend_undo: holds are as before the suspend. */
void subvol_io_resume(struct subvol_c *sc)
{
	WRITE_ONCE(sc->suspending, false);
}

/*
 * Undo subvol_io_init(); the device is suspended, so no bio is queued or
 * held: dm waited for all of them.
 */
void subvol_io_exit(struct subvol_c *sc)
{
	cancel_delayed_work_sync(&sc->held_work);
	destroy_workqueue(sc->wq);
	free_percpu(sc->queues);
}
