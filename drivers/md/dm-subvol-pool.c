// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * Pools: the host space claimed for the promises of the subvol volumes on
 * one host filesystem.
 *
 * Free space that statfs reports is not ours: any process on the host can
 * take it.  So a promise is backed by blocks really allocated, to a
 * hidden reserve file of the pool.  Just before our writes need new host
 * blocks, the pool truncates a chunk off that file ("loose" space); the
 * writes then find free blocks on the host.  A chunk that another host
 * writer takes first makes our write fail with ENOSPC; the data path then
 * asks for more room (subvol_pool_make_room()) and retries.  The margin
 * kept above the promises pays for such losses.
 *
 * Claims and releases are file operations that sleep, so they are done in
 * chunks by a work item (balance), off the path of every I/O; only a
 * write that finds no loose space left releases a chunk itself.
 */

#include "dm-subvol.h"
#include "dm-subvol-space.h"

#include <linux/cred.h>
#include <linux/falloc.h>
#include <linux/file.h>
#include <linux/namei.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

/* Pools by host superblock, under subvol_pools_lock. */
static DEFINE_MUTEX(subvol_pools_lock);
static LIST_HEAD(subvol_pools);

/* Claims that found the host full are not retried more often. */
#define SUBVOL_POOL_GROW_BACKOFF	(HZ / 10)

static loff_t subvol_pool_bytes(struct subvol_pool *pool, u64 blocks)
{
	return (loff_t)blocks << pool->block_shift;
}

/* Claimed, counting loose space: what the pool holds for its promises. */
static u64 subvol_pool_held(struct subvol_pool *pool)
{
	return pool->claimed + pool->loose;
}

/* Blocks a new promise may still take: above committed and the margin. */
static u64 subvol_pool_headroom_locked(struct subvol_pool *pool)
{
	u64 used = pool->committed + pool->chunk;
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

/*
 * Allocate up to @blocks more to the reserve file, halving the request
 * while the host is out of space.  Returns the blocks claimed.
 */
static u64 subvol_pool_grow(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;
	unsigned int noio_flags;
	u64 got = 0;

	noio_flags = memalloc_noio_save();
	mutex_lock(&pool->resize_lock);
	while (blocks) {
		loff_t top = subvol_pool_bytes(pool, pool->claimed);
		loff_t len = subvol_pool_bytes(pool, blocks);
		int r;

		r = vfs_fallocate(pool->reserve, 0, top, len);
		if (!r) {
			spin_lock_irqsave(&pool->lock, flags);
			pool->claimed += blocks;
			spin_unlock_irqrestore(&pool->lock, flags);
			got += blocks;
			break;
		}
		/* A failed fallocate may leave part of the range allocated. */
		vfs_truncate(&pool->reserve->f_path, top);
		if (r != -ENOSPC && r != -EDQUOT) {
			pr_err_ratelimited(DM_NAME ": " DM_MSG_PREFIX
					   ": cannot claim space on %s: %d\n",
					   pool->sb->s_id, r);
			break;
		}
		blocks >>= 1;
	}
	if (!got)
		WRITE_ONCE(pool->grow_failed, jiffies);
	mutex_unlock(&pool->resize_lock);
	memalloc_noio_restore(noio_flags);
	return got;
}

/*
 * Give back up to @blocks of claimed space that no promise needs: to the
 * host, or as loose space (@loose) for our writes.  Returns the blocks
 * released.
 */
static u64 subvol_pool_shrink(struct subvol_pool *pool, u64 blocks,
			      bool loose)
{
	unsigned long flags;
	unsigned int noio_flags;
	u64 held;
	loff_t top;
	int r;

	noio_flags = memalloc_noio_save();
	mutex_lock(&pool->resize_lock);
	spin_lock_irqsave(&pool->lock, flags);
	held = subvol_pool_held(pool);
	if (!loose)
		blocks = min(blocks, held > pool->committed ?
			     held - pool->committed : 0);
	blocks = min(blocks, pool->claimed);
	/* Lower the claim first: a new promise must not count on it. */
	pool->claimed -= blocks;
	if (loose)
		pool->loose += blocks;
	spin_unlock_irqrestore(&pool->lock, flags);
	top = subvol_pool_bytes(pool, pool->claimed);

	/*
	 * Truncate, not punch: a punch reserves blocks for the extent tree
	 * and fails with ENOSPC on a full host, which is when we need it.
	 */
	if (blocks) {
		r = vfs_truncate(&pool->reserve->f_path, top);
		/* Blocks left allocated only make the claim look smaller. */
		if (r)
			pr_err_ratelimited(DM_NAME ": " DM_MSG_PREFIX
					   ": cannot release space on %s: %d\n",
					   pool->sb->s_id, r);
	}
	mutex_unlock(&pool->resize_lock);
	memalloc_noio_restore(noio_flags);
	return blocks;
}

/*
 * Keep the claim between one and three chunks above what is committed and
 * the margin: enough for promises to be granted without waiting, without
 * holding much more host space than they need.  A claim grown on request
 * stays for a second, for the reservations that asked for it.
 */
static void subvol_pool_balance(struct work_struct *work)
{
	unsigned long flags;
	struct subvol_pool *pool = container_of(work, struct subvol_pool,
						balance);
	u64 headroom, grow = 0, shrink = 0;
	bool backoff;

	spin_lock_irqsave(&pool->lock, flags);
	/*
	 * Loose space no write is waiting for is just free host space, which
	 * a writer outside the pool may have taken: claim it anew, if needed.
	 */
	if (!pool->inflight)
		pool->loose = 0;
	headroom = subvol_pool_headroom_locked(pool);
	backoff = time_before(jiffies, READ_ONCE(pool->grow_failed) +
			      SUBVOL_POOL_GROW_BACKOFF);
	if (!pool->guaranteed)
		shrink = pool->claimed;
	else if (headroom < pool->chunk && !backoff)
		grow = 2 * pool->chunk - headroom;
	else if (headroom > 3 * pool->chunk &&
		 time_after(jiffies, READ_ONCE(pool->refilled) + HZ))
		shrink = headroom - 2 * pool->chunk;
	spin_unlock_irqrestore(&pool->lock, flags);

	if (grow)
		subvol_pool_grow(pool, grow);
	else if (shrink)
		subvol_pool_shrink(pool, shrink, false);
}

static void subvol_pool_kick(struct subvol_pool *pool)
{
	queue_work(system_unbound_wq, &pool->balance);
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

/* As subvol_pool_try_commit(), but claims more space if needed.  Sleeps. */
int subvol_pool_commit(struct subvol_pool *pool, u64 blocks)
{
	u64 headroom;

	might_sleep();
	/* A client refilling is about to reserve: keep the claim a while. */
	WRITE_ONCE(pool->refilled, jiffies);
	for (;;) {
		if (subvol_pool_try_commit(pool, blocks))
			return 0;
		headroom = subvol_pool_headroom(pool);
		if (!subvol_pool_grow(pool, blocks - headroom + pool->chunk))
			break;
	}
	/* A partial claim stays for later promises; balance trims it. */
	subvol_pool_kick(pool);
	return -ENOSPC;
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
		subvol_pool_kick(pool);
}

/*
 * Our writes are about to allocate @blocks on the host for promises that
 * subvol_pool_uncommit() has just given up: make sure loose space is
 * there for them, releasing a chunk of the reserve file if not.  The
 * blocks stay loose until subvol_pool_used().  Process context.
 */
void subvol_pool_use(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;
	u64 need = 0;

	spin_lock_irqsave(&pool->lock, flags);
	pool->inflight += blocks;
	if (pool->loose < pool->inflight)
		need = pool->inflight - pool->loose;
	spin_unlock_irqrestore(&pool->lock, flags);

	if (need)
		subvol_pool_shrink(pool, max(need, pool->chunk), true);
}

/* The writes of subvol_pool_use() are done: allocated, or given up. */
void subvol_pool_used(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;

	spin_lock_irqsave(&pool->lock, flags);
	pool->inflight -= min(blocks, pool->inflight);
	pool->loose -= min(blocks, pool->loose);
	spin_unlock_irqrestore(&pool->lock, flags);
	subvol_pool_kick(pool);
}

/*
 * A write of ours found the host full: a writer outside the pool took our
 * loose space, or the host lent it to other writes.  Release more of the
 * claim, as loose space, down into the margin if need be.  Returns 0 if
 * some space was released, -ENOSPC if none is left.
 */
int subvol_pool_make_room(struct subvol_pool *pool, u64 blocks)
{
	unsigned long flags;
	u64 got, surplus;

	spin_lock_irqsave(&pool->lock, flags);
	surplus = subvol_pool_held(pool) > pool->committed ?
		  subvol_pool_held(pool) - pool->committed : 0;
	spin_unlock_irqrestore(&pool->lock, flags);
	got = subvol_pool_shrink(pool, min(max(blocks, pool->chunk), surplus),
				 true);
	subvol_pool_kick(pool);
	return got ? 0 : -ENOSPC;
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

	file = vfs_tmpfile_open(file_mnt_user_ns(backing), &dir, S_IFREG | 0600,
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
	spin_lock_init(&pool->lock);
	mutex_init(&pool->resize_lock);
	INIT_WORK(&pool->balance, subvol_pool_balance);
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
	cancel_work_sync(&pool->balance);
	fput(pool->reserve);
	kfree(pool);
}

void subvol_pool_put(struct subvol_pool *pool)
{
	mutex_lock(&subvol_pools_lock);
	kref_put(&pool->kref, subvol_pool_release);
	mutex_unlock(&subvol_pools_lock);
}
