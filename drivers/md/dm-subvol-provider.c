// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The space provider (include/linux/blk-space.h) of a volume: what the
 * filesystem on top calls to reserve and release space, to refill after
 * ENOSPC, to read the counters, and to tell the device which ranges left
 * or went back to the filesystem's free space.  Each call changes the
 * volume's promise, which the pool backs while the guarantee holds.  The
 * volume's space (dm-subvol-space.c) registers the provider for the
 * device's disk when a table is resumed.
 */

#include "dm-subvol.h"
#include "dm-subvol-space.h"

#include <linux/jiffies.h>
#include <linux/log2.h>
#include <linux/sched/signal.h>
#include <linux/statfs.h>

/*
 *----------------------------------------------------------------
 * The space provider: what the filesystem on top calls
 *----------------------------------------------------------------
 */

static struct subvol_space *to_space(struct blk_space *provider)
{
	return container_of(provider, struct subvol_space, provider);
}

/*
 * From the registry's lookup, which may find a space whose last reference
 * is gone and whose release has not unregistered it yet.
 */
static bool subvol_provider_get(struct blk_space *provider)
{
	return kref_get_unless_zero(&to_space(provider)->kref);
}

static void subvol_provider_put(struct blk_space *provider)
{
	subvol_space_put(to_space(provider));
}

/* Our blocks in @sects sectors (a count, or a position). */
static u64 subvol_sects_to_blocks(struct subvol_space *space, sector_t sects)
{
	return sects >> (space->block_shift - SECTOR_SHIFT);
}

static int subvol_provider_attach(struct blk_space *provider,
				  unsigned int block_size, u64 used_holes)
{
	struct subvol_space *space = to_space(provider);
	u64 holes = subvol_sects_to_blocks(space, used_holes);
	bool guarantee;
	int r;

	if (!is_power_of_2(block_size) || block_size < 1U << space->block_shift)
		return -EINVAL;

	spin_lock(&space->lock);
	if (space->attached) {
		spin_unlock(&space->lock);
		return -EBUSY;
	}
	guarantee = space->guarantee;
	spin_unlock(&space->lock);

	if (guarantee) {
		r = subvol_pool_commit(space->pool, holes);
		if (r)
			return r;
	}

	spin_lock(&space->lock);
	space->client_shift = ilog2(block_size) - space->block_shift;
	space->promised = holes;
	space->attached = true;
	spin_unlock(&space->lock);
	return 0;
}

static void subvol_provider_detach(struct blk_space *provider)
{
	struct subvol_space *space = to_space(provider);
	bool guarantee;
	s64 promised;

	spin_lock(&space->lock);
	promised = subvol_space_client_promised(space) + space->refill_credit;
	space->promised = 0;
	space->release_pending = 0;
	space->refill_credit = 0;
	space->attached = false;
	guarantee = space->guarantee;
	spin_unlock(&space->lock);

	subvol_space_commit_delta(space, -promised, guarantee);
}

/*
 * A refill commits what the client's retry will reserve, as credit that
 * only this volume's reservations take; otherwise another reservation
 * could take it first and the retry fail again while the host has space.
 * Credit not taken within a second goes back to the pool.  Returns the
 * expired credit, for the caller to uncommit.
 */
static u64 subvol_space_expire_credit(struct subvol_space *space)
{
	u64 expired = 0;

	lockdep_assert_held(&space->lock);
	if (space->refill_credit &&
	    time_after(jiffies, space->refill_expires)) {
		expired = space->refill_credit;
		space->refill_credit = 0;
	}
	return expired;
}

static int subvol_provider_reserve(struct blk_space *provider, u64 blocks)
{
	struct subvol_space *space = to_space(provider);
	u64 n, credit, expired = 0;
	int r = 0;

	spin_lock(&space->lock);
	n = blocks << space->client_shift;
	if (space->guarantee) {
		expired = subvol_space_expire_credit(space);
		credit = min(n, space->refill_credit);
		if (n > credit &&
		    !subvol_pool_try_commit(space->pool, n - credit)) {
			r = -ENOSPC;
			goto out;
		}
		space->refill_credit -= credit;
	}
	space->promised += n;
out:
	spin_unlock(&space->lock);
	if (expired)
		subvol_pool_uncommit(space->pool, expired);
	return r;
}

static void subvol_provider_release(struct blk_space *provider, u64 blocks)
{
	struct subvol_space *space = to_space(provider);
	bool guarantee;
	u64 n, pending;

	spin_lock(&space->lock);
	n = blocks << space->client_shift;
	if (unlikely((s64)n > space->promised)) {
		space->accounting_errors++;
		n = max_t(s64, space->promised, 0);
	}
	space->promised -= n;
	/* The release that a charged free announced was never committed. */
	pending = min(n, space->release_pending);
	space->release_pending -= pending;
	n -= pending;
	guarantee = space->guarantee;
	if (guarantee)
		n += subvol_space_expire_credit(space);
	spin_unlock(&space->lock);

	subvol_space_commit_delta(space, -(s64)n, guarantee);
}

/*
 * A held reservation fills the host as writes do: check the live table's
 * low-water mark, which writes check, so that a monitor hears of it.
 */
static void subvol_provider_check_low_water(struct subvol_space *space)
{
	mutex_lock(&space->live_lock);
	if (space->live)
		subvol_check_low_water(space->live);
	mutex_unlock(&space->live_lock);
}

/*
 * The host is full.  Under no_space:queue, a write that no promise covers
 * is held until the host grows (an admin, or subvol monitor extending its
 * LV) or no_space_timeout passes; a space-aware client gets ENOSPC at its
 * reservation instead, before it writes, so the refill it then asks for
 * with blk_space_refill_wait() waits the same way: the client's writer
 * sleeps where it would have failed (a buffered write, a page fault, a
 * fallocate, growfs).  Ten times a second it takes what the host has
 * free, until it has all @n blocks: a request larger than the host's free
 * space fills the host, which is what makes the monitor grow it, step by
 * step.  The caller holds none of its filesystem's locks and no
 * transaction: what it held would stop every other task that needs it for
 * as long.  A fatal signal, or a table that no longer queues, ends the
 * wait; what was taken goes back.
 */
static int subvol_provider_hold(struct subvol_space *space, u64 n)
{
	unsigned int timeout = READ_ONCE(space->hold_timeout);
	unsigned long deadline = jiffies + timeout * HZ;
	u64 got = 0;

	if (!timeout)
		return -ENOSPC;
	/*
	 * A filesystem transaction open in this task (journal_info) would be
	 * held as long as we wait: its log space, its freeze protection.
	 */
	if (WARN_ON_ONCE(current->journal_info))
		return -ENOSPC;
	DMWARN_LIMIT("%s: host full: holding the guest's reservation, up to %u s",
		     dm_device_name(space->md), timeout);
	for (;;) {
		got += subvol_pool_commit_some(space->pool, n - got);
		subvol_provider_check_low_water(space);
		if (got == n)
			return 0;
		if (!READ_ONCE(space->hold_timeout) ||
		    !READ_ONCE(space->guarantee) ||
		    !time_before(jiffies, deadline))
			break;
		schedule_timeout_killable(HZ / 10);
		if (fatal_signal_pending(current))
			break;
	}
	if (got)
		subvol_pool_uncommit(space->pool, got);
	return -ENOSPC;
}

/*
 * Sleeps: claims host space if the pool has too little; with @wait, holds
 * on a full host under no_space:queue (subvol_provider_hold()).
 */
static int subvol_provider_refill(struct blk_space *provider, u64 blocks,
				  bool wait)
{
	struct subvol_space *space = to_space(provider);
	u64 n, credit;
	int r;

	/* Without the guarantee there may be no pool at all. */
	if (!READ_ONCE(space->guarantee))
		return 0;
	n = blocks << space->client_shift;
	spin_lock(&space->lock);
	credit = space->refill_credit;
	spin_unlock(&space->lock);
	if (credit >= n)
		return 0;
	n -= credit;
	r = subvol_pool_commit(space->pool, n);
	/* Only a full host may grow: one that failed fails the refill. */
	if (r == -ENOSPC && wait)
		r = subvol_provider_hold(space, n);
	if (r)
		return r;
	spin_lock(&space->lock);
	if (space->guarantee) {
		space->refill_credit += n;
		space->refill_expires = jiffies + HZ;
		n = 0;
	}
	spin_unlock(&space->lock);
	/* The guarantee went off meanwhile: nothing to hold it for. */
	if (n)
		subvol_pool_uncommit(space->pool, n);
	return 0;
}

static void subvol_provider_query(struct blk_space *provider,
				  struct blk_space_counters *c)
{
	struct subvol_space *space = to_space(provider);
	unsigned int shift;
	struct kstatfs st;
	u64 avail = 0;

	if (!vfs_statfs(&space->file->f_path, &st))
		avail = st.f_bavail * (st.f_bsize >> space->block_shift);
	if (READ_ONCE(space->guarantee))
		avail += subvol_pool_headroom(space->pool);

	spin_lock(&space->lock);
	shift = space->client_shift;
	c->total = space->nr_blocks >> shift;
	c->backed = DIV_ROUND_UP_ULL(space->backed, 1U << shift);
	c->shared = DIV_ROUND_UP_ULL(space->shared, 1U << shift);
	c->promised = DIV_ROUND_UP_ULL(subvol_space_client_promised(space) +
				       space->user_promised, 1U << shift);
	c->cow_reserve = DIV_ROUND_UP_ULL(space->cow_reserve, 1U << shift);
	spin_unlock(&space->lock);
	c->available = avail >> shift;
}

static u64 subvol_provider_count_holes(struct blk_space *provider,
				       sector_t start, sector_t nr_sects)
{
	struct subvol_space *space = to_space(provider);
	u64 block = subvol_sects_to_blocks(space, start);
	u64 nr = subvol_sects_to_blocks(space, nr_sects);
	u64 holes;

	spin_lock(&space->lock);
	nr = subvol_map_clamp(space, block, nr);
	holes = subvol_map_count(&space->map, block, nr, SUBVOL_HOLE);
	spin_unlock(&space->lock);
	return holes << (space->block_shift - SECTOR_SHIFT);
}

/*
 * The promise follows the range: see blk-space.h.  Allocations the client
 * did not reserve for raise the promise without asking; the pool's margin
 * covers them.
 *
 * A charged free raises the promise by its blocks until the client's
 * release of them comes (with the transaction's commit), which lowers it
 * again: only the holes among them are a real change.  Committing that
 * rise to the pool would refuse other volumes' promises meanwhile (an rm
 * of a large file on one guest giving ENOSPC on another), so it is kept
 * as @release_pending instead, which the release uses up first.  Blocks
 * a charged free gave back to the client's transaction may be allocated
 * again before the release (XFS_TRANS_RES_FDBLKS): that allocation uses
 * it up instead.  The counter is for the whole volume, not per
 * transaction: using up another's only commits more, for a while.
 */
static void subvol_provider_change(struct subvol_space *space, sector_t start,
				   sector_t nr_sects, unsigned int flags,
				   int sign)
{
	u64 block = subvol_sects_to_blocks(space, start);
	u64 nr = subvol_sects_to_blocks(space, nr_sects);
	u64 charged = (flags & BLK_SPACE_CHARGED) ? nr : 0;
	s64 holes = 0, delta, commit;
	bool guarantee;
	u64 pending;

	spin_lock(&space->lock);
	if (!(flags & BLK_SPACE_IN_USE))
		holes = subvol_map_count(&space->map, block,
					 subvol_map_clamp(space, block, nr),
					 SUBVOL_HOLE);
	if (sign > 0) {
		delta = holes - charged;
		pending = min(charged, space->release_pending);
		space->release_pending -= pending;
		commit = delta + pending;
	} else {
		delta = charged - holes;
		space->release_pending += charged;
		commit = -holes;
	}
	space->promised += delta;
	guarantee = space->guarantee;
	spin_unlock(&space->lock);

	subvol_space_commit_delta(space, commit, guarantee);
}

static void subvol_provider_allocated(struct blk_space *provider,
				      sector_t start, sector_t nr_sects,
				      unsigned int flags)
{
	subvol_provider_change(to_space(provider), start, nr_sects, flags, 1);
}

static void subvol_provider_freed(struct blk_space *provider, sector_t start,
				  sector_t nr_sects, unsigned int flags)
{
	subvol_provider_change(to_space(provider), start, nr_sects, flags, -1);
}

const struct blk_space_ops subvol_provider_ops = {
	.owner = THIS_MODULE,
	.get = subvol_provider_get,
	.put = subvol_provider_put,
	.attach = subvol_provider_attach,
	.detach = subvol_provider_detach,
	.reserve = subvol_provider_reserve,
	.release = subvol_provider_release,
	.refill = subvol_provider_refill,
	.query = subvol_provider_query,
	.count_holes = subvol_provider_count_holes,
	.allocated = subvol_provider_allocated,
	.freed = subvol_provider_freed,
};
