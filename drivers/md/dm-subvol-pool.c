// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * Pools: the host space claimed for the promises of the subvol volumes on
 * one host filesystem.
 *
 * Free space that statfs reports is not ours: any process on the host can
 * take it.  So a promise is backed by blocks really allocated, to a
 * hidden reserve file of the pool.  A write into holes uses promises:
 * while it is in flight the claim still backs what it may allocate.  If
 * the host has room beyond the claim for all the writes in flight, the
 * write takes its blocks from that room, and balance later gives the
 * claim no promise needs back, a chunk at a time, off the I/O path.  If
 * not, the pool first truncates what the writes may allocate off that
 * file ("loose" space); the writes then find free blocks on the host.
 * A writer outside the pool may take the room or the loose space first,
 * or the host may give it to its own reserve pool: our write then fails
 * with ENOSPC, the pool learns from statfs how much loose space is really
 * left, releases more and the write is retried, for as long as it takes
 * (see subvol_pool_lost()).  The margin kept above the promises pays for
 * such losses; loose space is released in small steps, so that little of
 * it is ever exposed.
 *
 * A write in flight may need more host blocks than it writes, for the
 * host's transaction reservations (extent and refcount btree splits);
 * those come back when the transaction commits, so loose space covers
 * them too, while the write is in flight.
 *
 * Claims are file operations that sleep, so they are done in chunks by a
 * work item (balance), off the path of every I/O.
 */

#include "dm-subvol.h"
#include "dm-subvol-compat.h"
#include "dm-subvol-space.h"

#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/namei.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/statfs.h>

/* Pools by host superblock, under subvol_pools_lock. */
static DEFINE_MUTEX(subvol_pools_lock);
static LIST_HEAD(subvol_pools);

/* Claims that found the host full are not retried more often. */
#define SUBVOL_POOL_GROW_BACKOFF	(HZ / 10)

/* The most one fallocate of the reserve file claims. */
#define SUBVOL_POOL_CLAIM_BYTES		(256U << 20)

/* Loose space is released in steps of this much. */
#define SUBVOL_POOL_RELEASE_BYTES	(256U << 10)

/*
 * Host blocks a write in flight may reserve beyond the blocks it writes:
 * XFS reserves for a worst-case extent btree split in each of the two
 * transactions of a direct write (allocation and conversion, or CoW and
 * remap), one after the other: XFS_DIOSTRAT_SPACE_RES() is 5 blocks of 4
 * KiB for a file of a few TiB; rounded up.
 */
#define SUBVOL_POOL_WRITE_OVERHEAD_BYTES (32U << 10)

static loff_t subvol_pool_bytes(struct subvol_pool *pool, u64 blocks)
{
	return (loff_t)blocks << pool->block_shift;
}

/* Claimed, counting loose space: what the pool holds for its promises. */
static u64 subvol_pool_held(struct subvol_pool *pool)
{
	return pool->claimed + pool->loose;
}

/* What the writes in flight may allocate beyond the loose space. */
static u64 subvol_pool_uncovered(struct subvol_pool *pool)
{
	return pool->inflight > pool->loose ? pool->inflight - pool->loose : 0;
}

/*
 * What the claim and the loose space must back: the promises, and what
 * the writes in flight may still allocate (they took their promises with
 * them).  Loose space is held for those writes: counted in what the pool
 * holds, it is not also taken off what they need.
 */
static u64 subvol_pool_needed(struct subvol_pool *pool)
{
	return pool->committed + pool->inflight;
}

/* Blocks a new promise may still take: above what is needed and the margin. */
static u64 subvol_pool_headroom_locked(struct subvol_pool *pool)
{
	u64 used = subvol_pool_needed(pool) + pool->chunk;
	u64 held = subvol_pool_held(pool);

	return held > used ? held - used : 0;
}

u64 subvol_pool_headroom(struct subvol_pool *pool)
{
	unsigned long flags;
	u64 headroom;

	spin_lock_irqsave(&pool->lock, flags);
	headroom = subvol_pool_headroom_locked(pool);
	spin_unlock_irqrestore(&pool->lock, flags);
	return headroom;
}

void subvol_pool_counters(struct subvol_pool *pool, u64 *claimed,
			  u64 *committed)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	*claimed = subvol_pool_held(pool);
	*committed = pool->committed;
	spin_unlock_irqrestore(&pool->lock, flags);
}

/* Free blocks on the host for ordinary writers, as statfs has them. */
static u64 subvol_pool_host_free(struct subvol_pool *pool)
{
	struct kstatfs st;

	if (vfs_statfs(&pool->reserve->f_path, &st))
		return 0;
	return st.f_bavail * (st.f_bsize >> pool->block_shift);
}

/*
 * Loose space that no write is waiting for is just free host space, which
 * a writer outside the pool may take: it is claimed anew if needed, not
 * counted on.  And loose space is never more than the host has free,
 * and the blocks of writes inside their host call, which may have taken
 * some of it a moment ago: counting those as lost would release more of
 * the claim for them, for a writer outside the pool to take.
 */
static void subvol_pool_settle_loose(struct subvol_pool *pool, u64 host_free)
{
	lockdep_assert_held(&pool->lock);
	if (!pool->inflight)
		pool->loose = 0;
	pool->loose = min(pool->loose, host_free + pool->submitting);
}

/*
 * Allocate up to @blocks more to the reserve file, and only what the host
 * has free; if @all, nothing unless the host has all of it free.  A claim
 * must not fill the host on its way to failing, which would fail other
 * writers meanwhile.  One fallocate does up to SUBVOL_POOL_CLAIM_BYTES:
 * a large promise (a guest's fallocate) is claimed in a few host
 * transactions, not one a chunk, and the reserve file's lock is not held
 * for long.  Returns the blocks claimed; if @err, sets it to the error of
 * a fallocate that failed other than for lack of space (a host that
 * failed: -EIO), else to 0.  Called with resize_lock held.
 */
static u64 subvol_pool_grow_locked(struct subvol_pool *pool, u64 blocks,
				   bool all, int *err)
{
	unsigned long flags;
	u64 got = 0, free;

	lockdep_assert_held(&pool->resize_lock);
	if (err)
		*err = 0;
	/* What is free beyond our loose space, which our writes will take. */
	free = subvol_pool_host_free(pool);
	spin_lock_irqsave(&pool->lock, flags);
	subvol_pool_settle_loose(pool, free);
	free -= pool->loose;
	spin_unlock_irqrestore(&pool->lock, flags);
	if (all && free < blocks)
		blocks = 0;
	blocks = min(blocks, free);
	while (got < blocks) {
		loff_t top = subvol_pool_bytes(pool, pool->claimed);
		u64 step = min(blocks - got, pool->claim_step);
		int r;

		r = vfs_fallocate(pool->reserve, 0, top,
				  subvol_pool_bytes(pool, step));
		if (r) {
			/* A failed fallocate may leave part of it allocated. */
			vfs_truncate(&pool->reserve->f_path, top);
			if (r != -ENOSPC && r != -EDQUOT) {
				DMERR_LIMIT("cannot claim space on %s: %d",
					    pool->sb->s_id, r);
				if (err)
					*err = r;
			}
			break;
		}
		spin_lock_irqsave(&pool->lock, flags);
		pool->claimed += step;
		pool->room -= min(pool->room, step);
		spin_unlock_irqrestore(&pool->lock, flags);
		got += step;
	}
	if (got < blocks || !blocks)
		WRITE_ONCE(pool->grow_failed, jiffies);
	return got;
}

/* Only from a worker of the pool's own: see subvol_pool_grow_wait(). */
static u64 subvol_pool_grow(struct subvol_pool *pool, u64 blocks, bool all,
			    int *err)
{
	unsigned int noio_flags;
	u64 got;

	noio_flags = memalloc_noio_save();
	mutex_lock(&pool->resize_lock);
	got = subvol_pool_grow_locked(pool, blocks, all, err);
	mutex_unlock(&pool->resize_lock);
	memalloc_noio_restore(noio_flags);
	return got;
}

/* A claim that a caller waits for, done by a kernel worker. */
struct subvol_pool_claim {
	struct work_struct work;
	struct subvol_pool *pool;
	u64 blocks;
	bool all;
	u64 got;
	int err;
	struct completion done;
};

static void subvol_pool_claim_work(struct work_struct *work)
{
	struct subvol_pool_claim *claim =
		container_of(work, struct subvol_pool_claim, work);

	claim->got = subvol_pool_grow(claim->pool, claim->blocks, claim->all,
				      &claim->err);
	complete(&claim->done);
}

/*
 * subvol_pool_grow() for a caller that reserves: a guest writer, or the
 * process loading a table.  The fallocate and truncate of the reserve
 * file must not run in that task: they would obey its RLIMIT_FSIZE
 * (SIGXFSZ and EFBIG for a claim the host has room for) and its
 * credentials (a truncate of the root-owned file refused, the blocks of a
 * failed claim left allocated).  A worker does them; the caller sleeps
 * until it is done, uninterruptibly, as the claim is on its stack: one
 * claim takes a few fallocate calls of at most SUBVOL_POOL_CLAIM_BYTES.
 */
static u64 subvol_pool_grow_wait(struct subvol_pool *pool, u64 blocks,
				 bool all, int *err)
{
	struct subvol_pool_claim claim = {
		.pool = pool,
		.blocks = blocks,
		.all = all,
	};

	might_sleep();
	INIT_WORK_ONSTACK(&claim.work, subvol_pool_claim_work);
	init_completion(&claim.done);
	queue_work(system_unbound_wq, &claim.work);
	wait_for_completion(&claim.done);
	destroy_work_on_stack(&claim.work);
	if (err)
		*err = claim.err;
	return claim.got;
}

/*
 * Truncate the reserve file down to the claim.  Truncate, not punch: a
 * punch reserves blocks for the extent tree and fails with ENOSPC on a
 * full host, which is when we need it.  Called with resize_lock held.
 */
static void subvol_pool_truncate(struct subvol_pool *pool)
{
	int r;

	lockdep_assert_held(&pool->resize_lock);
	r = vfs_truncate(&pool->reserve->f_path,
			 subvol_pool_bytes(pool, READ_ONCE(pool->claimed)));
	/* Blocks left allocated only make the claim look smaller. */
	if (r)
		DMERR_LIMIT("cannot release space on %s: %d", pool->sb->s_id,
			    r);
}

/*
 * Give up to @blocks of claimed space that no promise needs to the host,
 * keeping @keep blocks above what is needed.  Balance decided @blocks a
 * moment ago: writes may have taken loose space off the claim since.
 */
static void subvol_pool_shrink(struct subvol_pool *pool, u64 blocks,
			       u64 keep)
{
	unsigned long flags;
	unsigned int noio_flags;
	u64 held, needed;

	noio_flags = memalloc_noio_save();
	mutex_lock(&pool->resize_lock);
	spin_lock_irqsave(&pool->lock, flags);
	held = subvol_pool_held(pool);
	needed = subvol_pool_needed(pool) + keep;
	blocks = min3(blocks, held > needed ? held - needed : 0,
		      pool->claimed);
	/* Lower the claim first: a new promise must not count on it. */
	pool->claimed -= blocks;
	spin_unlock_irqrestore(&pool->lock, flags);
	if (blocks)
		subvol_pool_truncate(pool);
	mutex_unlock(&pool->resize_lock);
	memalloc_noio_restore(noio_flags);
}

/*
 * Keep the claim between one and three chunks above what is committed and
 * the margin: enough for promises to be granted without waiting, without
 * holding much more host space than they need.  A claim grown on request
 * stays for a second, for the reservations that asked for it.  What has
 * to wait (a claim after a failed one, a shrink after a request) is done
 * when the wait is over.
 */
static void subvol_pool_balance(struct work_struct *work)
{
	unsigned long flags, now = jiffies, later = 0;
	struct subvol_pool *pool = container_of(to_delayed_work(work),
						struct subvol_pool, balance);
	unsigned long grow_at = READ_ONCE(pool->grow_failed) +
				SUBVOL_POOL_GROW_BACKOFF;
	unsigned long shrink_at = READ_ONCE(pool->refilled) + HZ;
	u64 headroom, host_free, held, grow = 0, shrink = 0, keep = 0;

	/*
	 * Nothing to claim or release on a frozen host (fallocate and
	 * truncate would wait for the thaw): try after a while.
	 */
	if (subvol_host_frozen(pool->sb)) {
		queue_delayed_work(system_unbound_wq, &pool->balance, HZ);
		return;
	}
	host_free = subvol_pool_host_free(pool);
	spin_lock_irqsave(&pool->lock, flags);
	subvol_pool_settle_loose(pool, host_free);
	headroom = subvol_pool_headroom_locked(pool);
	held = subvol_pool_held(pool);
	if (!pool->guaranteed) {
		shrink = pool->claimed;
	} else if (headroom < pool->chunk) {
		/* Up to two chunks of headroom, below committed or not. */
		if (time_before(now, grow_at))
			later = grow_at - now;
		else
			grow = subvol_pool_needed(pool) + 3 * pool->chunk -
			       held;
	} else if (headroom > 3 * pool->chunk) {
		if (time_before_eq(now, shrink_at))
			later = shrink_at - now + 1;
		else
			shrink = headroom - 2 * pool->chunk;
		/* The margin, and the two chunks of headroom. */
		keep = 3 * pool->chunk;
	}
	spin_unlock_irqrestore(&pool->lock, flags);

	if (grow && subvol_pool_grow(pool, grow, false, NULL) < grow)
		later = SUBVOL_POOL_GROW_BACKOFF;
	else if (shrink)
		subvol_pool_shrink(pool, shrink, keep);
	if (later)
		queue_delayed_work(system_unbound_wq, &pool->balance, later);
}

static void subvol_pool_kick(struct subvol_pool *pool)
{
	mod_delayed_work(system_unbound_wq, &pool->balance, 0);
}

/* Balance soon, but not sooner than it has planned: a shrink can wait. */
static void subvol_pool_nudge(struct subvol_pool *pool)
{
	queue_delayed_work(system_unbound_wq, &pool->balance, 0);
}

/* Count volumes whose promises the pool backs; without any it holds none. */
void subvol_pool_guaranteed(struct subvol_pool *pool, bool on)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	if (on)
		pool->guaranteed++;
	else if (!WARN_ON_ONCE(!pool->guaranteed))
		pool->guaranteed--;
	spin_unlock_irqrestore(&pool->lock, flags);
	subvol_pool_kick(pool);
}

/*
 * Take @blocks of promise if the claim covers them.  Never sleeps: the
 * claim grows in the background, and subvol_pool_commit() waits for it.
 */
bool subvol_pool_try_commit(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;
	bool ok;
	u64 headroom;

	spin_lock_irqsave(&pool->lock, flags);
	headroom = subvol_pool_headroom_locked(pool);
	ok = blocks <= headroom;
	if (ok) {
		pool->committed += blocks;
		headroom -= blocks;
	}
	spin_unlock_irqrestore(&pool->lock, flags);

	if (headroom < pool->chunk)
		subvol_pool_kick(pool);
	return ok;
}

/*
 * As subvol_pool_try_commit(), but claims more space if needed: -ENOSPC
 * if the host cannot back it, or the error of a host that failed (-EIO:
 * a host shut down is not a full one).  Sleeps.
 */
int subvol_pool_commit(struct subvol_pool *pool, u64 blocks)
{
	u64 headroom;
	int err = 0;

	might_sleep();
	/* A client refilling is about to reserve: keep the claim a while. */
	WRITE_ONCE(pool->refilled, jiffies);
	for (;;) {
		if (subvol_pool_try_commit(pool, blocks))
			return 0;
		/*
		 * Claim the shortfall whole or not at all, then up to a
		 * chunk more if the host has it, for the reservations racing
		 * this one (which may take the caller's refill credit).
		 */
		headroom = subvol_pool_headroom(pool);
		if (headroom < blocks) {
			if (!subvol_pool_grow_wait(pool, blocks - headroom,
						   true, &err))
				break;
			subvol_pool_grow_wait(pool, pool->chunk, false, NULL);
		}
	}
	return err ?: -ENOSPC;
}

/*
 * Take what the claim can back of @blocks of promise, claiming what the
 * host has free first, for a promise that waits for the host to grow
 * (see subvol_provider_hold()): it gathers its blocks as they come, and
 * the host filling up is what makes a monitor grow it.  Returns the
 * blocks committed, at most @blocks.  Sleeps.
 */
u64 subvol_pool_commit_some(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;
	u64 headroom, got;

	might_sleep();
	WRITE_ONCE(pool->refilled, jiffies);
	headroom = subvol_pool_headroom(pool);
	if (headroom < blocks)
		subvol_pool_grow_wait(pool, blocks - headroom, false, NULL);
	spin_lock_irqsave(&pool->lock, flags);
	got = min(blocks, subvol_pool_headroom_locked(pool));
	pool->committed += got;
	spin_unlock_irqrestore(&pool->lock, flags);
	if (got)
		subvol_pool_kick(pool);
	return got;
}

/*
 * Count @blocks as committed whatever the claim: for the few blocks a
 * client cannot refuse to take (its free-space btrees' own blocks).  The
 * margin covers them until the claim catches up.
 */
void subvol_pool_force_commit(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	pool->committed += blocks;
	spin_unlock_irqrestore(&pool->lock, flags);
	subvol_pool_kick(pool);
}

void subvol_pool_uncommit(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;
	u64 headroom;

	spin_lock_irqsave(&pool->lock, flags);
	if (WARN_ON_ONCE(blocks > pool->committed))
		blocks = pool->committed;
	pool->committed -= blocks;
	headroom = subvol_pool_headroom_locked(pool);
	spin_unlock_irqrestore(&pool->lock, flags);

	if (headroom > 3 * pool->chunk)
		subvol_pool_nudge(pool);
}

/*
 * Make loose space cover what the writes in flight may allocate, taking
 * it off the claim, in steps of release_step unless @exact; a step more
 * if one of them @failed for space although loose space covers them.
 * Decided and done under resize_lock, so that writers racing here
 * release once for their common need, not once each.  The claim may go
 * below what is committed: the writes in flight are promises being kept,
 * and the pool is then short until balance claims again.  On a frozen
 * host nothing is released: no write of ours proceeds before the thaw,
 * and one that then finds the host full comes back here.  Returns the
 * blocks released.  Process context.
 */
static u64 subvol_pool_cover(struct subvol_pool *pool, bool exact,
			     bool failed)
{
	unsigned long flags;
	unsigned int noio_flags;
	u64 need;

	/*
	 * A release (truncate of the reserve file) would wait for the thaw
	 * holding resize_lock and the caller, a held write's retry; while
	 * the host is frozen no write of ours allocates, so none is needed.
	 */
	if (subvol_host_frozen(pool->sb))
		return 0;
	noio_flags = memalloc_noio_save();
	mutex_lock(&pool->resize_lock);
	spin_lock_irqsave(&pool->lock, flags);
	need = subvol_pool_uncovered(pool);
	/*
	 * The host wants more for the writes' transactions than we count
	 * (a deeper btree split, the blocks it keeps back for its own
	 * btrees): without more, the write would be retried against the
	 * same free space for ever.
	 */
	if (!need && failed && pool->inflight)
		need = pool->release_step;
	if (need) {
		if (!exact)
			need = max(need, pool->release_step);
		need = min(need, pool->claimed);
		pool->claimed -= need;
		pool->loose += need;
	}
	spin_unlock_irqrestore(&pool->lock, flags);
	if (need)
		subvol_pool_truncate(pool);
	mutex_unlock(&pool->resize_lock);
	memalloc_noio_restore(noio_flags);
	return need;
}

/* Blocks a write of @blocks may need on the host while in flight. */
static u64 subvol_pool_write_need(struct subvol_pool *pool, u64 blocks)
{
	return blocks + pool->write_overhead;
}

/*
 * A write is about to allocate @blocks on the host for promises that
 * subvol_pool_uncommit() has just given up: until the host allocates
 * them (subvol_pool_allocated()) and the write is over
 * (subvol_pool_used()), the claim backs them and the write's
 * transactions.  If the host lacks room beyond the claim and the loose
 * space for all the writes in flight, and a chunk more for its own
 * writers' reservations, release loose space for them now.  The room
 * statfs found is counted down by the writes that take it (@room), so
 * that statfs is asked again only when it is used up, not for every
 * write; a writer outside the pool taking it first only makes our write
 * fail with ENOSPC and go through subvol_pool_lost(), as it would between
 * statfs and the write.  Process context.
 */
void subvol_pool_use(struct subvol_pool *pool, u64 blocks)
{
	u64 need = subvol_pool_write_need(pool, blocks);
	u64 inflight, uncovered, free;
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	pool->inflight += need;
	inflight = pool->inflight;
	uncovered = subvol_pool_uncovered(pool);
	if (uncovered && pool->room >= need) {
		pool->room -= need;
		uncovered = 0;
	}
	spin_unlock_irqrestore(&pool->lock, flags);
	if (!uncovered)
		return;

	free = subvol_pool_host_free(pool);
	if (free < inflight + pool->chunk) {
		subvol_pool_cover(pool, false, false);
		return;
	}
	spin_lock_irqsave(&pool->lock, flags);
	pool->room = free - inflight - pool->chunk;
	spin_unlock_irqrestore(&pool->lock, flags);
}

/*
 * The write of subvol_pool_use() is about to make its host call, which
 * may allocate its @blocks at any moment from now on.  Process context.
 */
void subvol_pool_submit(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	pool->submitting += blocks;
	spin_unlock_irqrestore(&pool->lock, flags);
}

/*
 * The host call of subvol_pool_submit() returned.  If the host took the
 * write (@allocated), it has allocated its @blocks, out of loose space:
 * XFS allocates a direct write's blocks, and a zeroing's, before the call
 * returns, long before the write completes.  Only the write's
 * transaction reservations stay in flight until subvol_pool_used().  A
 * write counted as in flight once its blocks are allocated would make
 * settling count them as loose space lost to another writer, and release
 * more of the claim for them.  Process context.
 */
void subvol_pool_allocated(struct subvol_pool *pool, u64 blocks,
			   bool allocated)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	pool->submitting -= min(blocks, pool->submitting);
	if (allocated) {
		pool->inflight -= min(blocks, pool->inflight);
		pool->loose -= min(blocks, pool->loose);
	}
	spin_unlock_irqrestore(&pool->lock, flags);
}

/*
 * A write that subvol_pool_allocated() counted failed after all: an
 * asynchronous host call queues what it allocated before an allocation
 * that fails, and reports the failure at completion.  Its @blocks are in
 * flight again, and what they took of loose space is loose again, as far
 * as the host has it free: the next settle counts what it really has.
 * Process context.
 */
void subvol_pool_unallocated(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	pool->inflight += blocks;
	pool->loose += blocks;
	spin_unlock_irqrestore(&pool->lock, flags);
}

/*
 * The write of subvol_pool_use() is over; @blocks of it were never
 * counted allocated (subvol_pool_allocated()), and are not: what it
 * reserved is free again, and what was loose still is.  Any context.
 */
void subvol_pool_used(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;
	bool settle;

	spin_lock_irqsave(&pool->lock, flags);
	pool->inflight -= min(subvol_pool_write_need(pool, blocks),
			      pool->inflight);
	settle = !pool->inflight &&
		 (pool->loose ||
		  subvol_pool_headroom_locked(pool) < pool->chunk);
	spin_unlock_irqrestore(&pool->lock, flags);

	/*
	 * The last write in flight is over: claim what is left loose, and
	 * what the writes took beyond it, back now, before a writer outside
	 * the pool takes it.
	 */
	if (settle)
		subvol_pool_kick(pool);
}

/*
 * A write of ours found the host full: a writer outside the pool took
 * loose space, or the host gave it to its own reserve pool, or lent it
 * to the transactions of other writes in flight.  Count as loose only
 * what the host still has free, and release more for the writes in
 * flight, no more than they need (a step, if a @promised write, one of
 * them, failed although by our count loose space covers them; never for
 * a write no promise covers, which the claim is not for): what is
 * released now is what a writer racing us for the host's last blocks may
 * take next.  The write is then retried, for as long as it takes: its
 * promise was kept in the pool's claim.  Process context.
 */
void subvol_pool_lost(struct subvol_pool *pool, bool promised)
{
	u64 host_free = subvol_pool_host_free(pool);
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	subvol_pool_settle_loose(pool, host_free);
	pool->room = 0;
	spin_unlock_irqrestore(&pool->lock, flags);
	subvol_pool_cover(pool, true, promised);
	subvol_pool_kick(pool);
}

/*
 * The reserve file lives in the backing file's directory: an O_TMPFILE
 * has no name, so nothing can open it, and it is freed on our last fput
 * or by log recovery after a crash.
 */
static struct file *subvol_pool_open_reserve(struct file *backing)
{
	struct path dir = {
		.mnt = backing->f_path.mnt,
		.dentry = dget_parent(backing->f_path.dentry),
	};
	struct file *file;

	file = subvol_tmpfile_open(subvol_file_idmap(backing), &dir, S_IFREG | 0600,
				   O_RDWR | O_LARGEFILE, current_cred());
	dput(dir.dentry);
	return file;
}

static struct subvol_pool *subvol_pool_create(struct file *backing,
					      unsigned int shift)
{
	struct subvol_pool *pool;

	pool = kzalloc(sizeof(*pool), GFP_KERNEL);
	if (!pool)
		return ERR_PTR(-ENOMEM);

	pool->reserve = subvol_pool_open_reserve(backing);
	if (IS_ERR(pool->reserve)) {
		struct subvol_pool *err = ERR_CAST(pool->reserve);

		kfree(pool);
		return err;
	}
	kref_init(&pool->kref);
	pool->sb = file_inode(backing)->i_sb;
	pool->block_shift = shift;
	pool->chunk = SUBVOL_POOL_CHUNK_BYTES >> shift;
	pool->claim_step = SUBVOL_POOL_CLAIM_BYTES >> shift;
	pool->release_step = SUBVOL_POOL_RELEASE_BYTES >> shift;
	pool->write_overhead = SUBVOL_POOL_WRITE_OVERHEAD_BYTES >> shift;
	spin_lock_init(&pool->lock);
	mutex_init(&pool->resize_lock);
	INIT_DELAYED_WORK(&pool->balance, subvol_pool_balance);
	return pool;
}

/* The pool of @backing's host filesystem, made if it is the first. */
struct subvol_pool *subvol_pool_get(struct file *backing, unsigned int shift)
{
	struct super_block *sb = file_inode(backing)->i_sb;
	struct subvol_pool *pool;

	mutex_lock(&subvol_pools_lock);
	list_for_each_entry(pool, &subvol_pools, list) {
		if (pool->sb == sb) {
			kref_get(&pool->kref);
			goto out;
		}
	}
	pool = subvol_pool_create(backing, shift);
	if (!IS_ERR(pool))
		list_add(&pool->list, &subvol_pools);
out:
	mutex_unlock(&subvol_pools_lock);
	return pool;
}

static void subvol_pool_release(struct kref *kref)
{
	struct subvol_pool *pool = container_of(kref, struct subvol_pool,
						kref);

	list_del(&pool->list);
	WARN_ON_ONCE(pool->committed);
	cancel_delayed_work_sync(&pool->balance);
	fput(pool->reserve);
	kfree(pool);
}

void subvol_pool_put(struct subvol_pool *pool)
{
	mutex_lock(&subvol_pools_lock);
	kref_put(&pool->kref, subvol_pool_release);
	mutex_unlock(&subvol_pools_lock);
}
