// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The space of a volume: which blocks of the backing file are holes,
 * exclusive or shared, and the promises made to the filesystem on top.
 * The space provider (include/linux/blk-space.h) through which that
 * filesystem reserves is in dm-subvol-provider.c.
 *
 * The map (dm-subvol-map.c) keeps one of three states per block.  It is
 * built when the volume is first used: the host tells holes from data
 * (SEEK_HOLE), and its extent map (FIEMAP, dm-subvol-extents.c) tells
 * which data blocks are shared and which blocks SEEK_HOLE calls holes but
 * are allocated (unwritten extents).
 * The "rescan_sharing" message asks the host again while the volume is
 * in use, after sharing changed outside the target (a snapshot removed,
 * the file cloned).
 *
 * Where the extent map cannot be read, the sharing record that this file
 * keeps in an extended attribute of the backing file stands in for it.
 * Without a valid record every data block counts as shared and every
 * unwritten block as a hole: that may claim too much, never too little.
 * A record is valid while the host's layout of the file is the one it was
 * written for.  The record is written when the volume goes away, and
 * removed before a snapshot shares anything (in the suspend, where
 * writing one would walk the whole extent map): after a crash there is
 * then none, or one that claims more sharing than there is, never less.
 */

#include "dm-subvol.h"
#include "dm-subvol-space.h"

#include <linux/fiemap.h>
#include <linux/file.h>
#include <linux/mount.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/xattr.h>
#include <uapi/linux/dm-subvol.h>

/*
 * Volumes in use, by backing inode, under subvol_spaces_lock, which is
 * never held over host I/O: a frozen host must hold up only its own
 * volumes.  A space being released stays listed, dying, until its file's
 * sharing record is written; a new table on the file waits for that on
 * subvol_spaces_wq, which wakes when subvol_spaces_gen (under the lock)
 * changes.
 */
static DEFINE_MUTEX(subvol_spaces_lock);
static LIST_HEAD(subvol_spaces);
static DECLARE_WAIT_QUEUE_HEAD(subvol_spaces_wq);
static unsigned long subvol_spaces_gen;

/*
 *----------------------------------------------------------------
 * The block map
 *----------------------------------------------------------------
 */

/*
 * A move may split a group of the map, which takes a page: the page is
 * allocated before the lock is taken, into a stash (dm-subvol-map.c).
 * This takes @lock for moves of [@block, @block + @nr) from the states in
 * @from_mask, with the pages they need; subvol_space_unlock_map() drops it
 * and frees what was not used.  Most moves need none: a group already
 * split, or one in another state.
 */
void subvol_space_lock_map(struct subvol_space *space, u64 block, u64 nr,
			   unsigned int from_mask,
			   struct subvol_map_stash *stash)
	__acquires(&space->lock)
{
	spin_lock(&space->lock);
	while (subvol_map_needs_leaves(&space->map, block, nr, from_mask,
				       stash)) {
		spin_unlock(&space->lock);
		subvol_map_stash_fill(stash);
		spin_lock(&space->lock);
	}
}

void subvol_space_unlock_map(struct subvol_space *space,
			     struct subvol_map_stash *stash)
	__releases(&space->lock)
{
	spin_unlock(&space->lock);
	subvol_map_stash_drain(stash);
}

/*
 * Walks of the whole map go a chunk at a time: the lock is dropped and the
 * CPU offered in between, so that a large volume (a TiB is 2^28 blocks)
 * neither stalls the data path nor trips the soft-lockup detector.
 */
#define SUBVOL_MAP_CHUNK	BIT(20)

/*
 * subvol_map_move() over a range of any size, a chunk at a time under
 * @lock, adding what moved to *@counter.  Sleeps.
 */
u64 subvol_map_move_all(struct subvol_space *space, u64 block, u64 nr,
			unsigned int from, unsigned int to, u64 *counter)
{
	struct subvol_map_stash stash = { };
	u64 moved = 0;

	while (nr) {
		u64 n = min_t(u64, nr, SUBVOL_MAP_CHUNK), m;

		subvol_space_lock_map(space, block, n, BIT(from), &stash);
		m = subvol_map_move(&space->map, block, n, from, to, &stash);
		*counter += m;
		spin_unlock(&space->lock);
		moved += m;
		block += n;
		nr -= n;
		cond_resched();
	}
	subvol_map_stash_drain(&stash);
	return moved;
}

/* Clamp a range to the map: a table may be shorter than its file. */
u64 subvol_map_clamp(struct subvol_space *space, u64 block, u64 nr)
{
	if (block >= space->nr_blocks)
		return 0;
	return min(nr, space->nr_blocks - block);
}

/*
 * The host's layout of the file: its data extents, as SEEK_DATA and
 * SEEK_HOLE report them, hashed (FNV-1a).  The sharing record keeps the
 * hash, so that a file written, punched or zeroed outside the target
 * since the record was written is noticed.
 */

static void subvol_layout_hash(u64 *hash, loff_t data, loff_t hole)
{
	u64 v[2] = { data, hole };
	const u8 *p = (const u8 *)v;
	unsigned int i;

	for (i = 0; i < sizeof(v); i++)
		*hash = (*hash ^ p[i]) * SUBVOL_FNV_PRIME;
}

/*
 * Walk the host's data extents of [@pos, @end): @fn gets each, and the
 * hole before it.  Sleeps.
 */
int subvol_layout_walk(struct subvol_space *space, loff_t pos, loff_t end,
		       u64 *hash,
		       void (*fn)(struct subvol_space *space, loff_t hole,
				  loff_t data, loff_t data_end, void *priv),
		       void *priv)
{
	while (pos < end) {
		loff_t data, hole;

		data = vfs_llseek(space->file, pos, SEEK_DATA);
		if (data == -ENXIO || data >= end) {
			fn(space, pos, end, end, priv);
			break;
		}
		if (data < 0)
			return data;
		hole = vfs_llseek(space->file, data, SEEK_HOLE);
		if (hole < 0)
			return hole;
		hole = min(hole, end);
		if (hash)
			subvol_layout_hash(hash, data, hole);
		fn(space, pos, data, hole, priv);
		pos = hole;
		cond_resched();
	}
	return 0;
}

static void subvol_scan_extent(struct subvol_space *space, loff_t hole,
			       loff_t data, loff_t data_end, void *priv)
{
	unsigned int shift = space->block_shift;

	/* The host block size is ours, so the offsets are aligned. */
	subvol_map_move_all(space, data >> shift, (data_end - data) >> shift,
			    SUBVOL_HOLE, SUBVOL_EXCLUSIVE, &space->backed);
}

/*
 * Mark the data ranges of [@block, @block + @nr) exclusive, as the host
 * reports them; the range was all holes in the map, and no table has
 * written it yet.  The host reports blocks allocated but never written
 * (unwritten extents) as holes; the sharing record names them.  Sleeps.
 */
static int subvol_map_scan(struct subvol_space *space, u64 block, u64 nr,
			   u64 *hash)
{
	unsigned int shift = space->block_shift;

	return subvol_layout_walk(space, (loff_t)block << shift,
				  (loff_t)(block + nr) << shift, hash,
				  subvol_scan_extent, NULL);
}

/*
 *----------------------------------------------------------------
 * Promises and the pool
 *----------------------------------------------------------------
 */

/* Promise changes reach the pool only while the guarantee holds. */
void subvol_space_commit_delta(struct subvol_space *space, s64 delta,
			       bool committed)
{
	if (!committed || !delta)
		return;
	if (delta > 0)
		subvol_pool_force_commit(space->pool, delta);
	else
		subvol_pool_uncommit(space->pool, -delta);
}

/*
 * The client's promise, less the blocks of charged frees whose release
 * is to come: what the pool backs for it.  Caller holds lock.
 */
u64 subvol_space_client_promised(struct subvol_space *space)
{
	return max_t(s64, space->promised - (s64)space->release_pending, 0);
}

/* The promise the pool holds for @space.  Caller holds lock. */
static u64 subvol_space_commitment(struct subvol_space *space)
{
	return subvol_space_client_promised(space) + space->user_promised +
	       space->shared + space->refill_credit;
}

/* Promised and not yet written, for the status line. */
u64 subvol_space_promised(struct subvol_space *space)
{
	u64 promised;

	spin_lock(&space->lock);
	promised = subvol_space_client_promised(space) + space->user_promised;
	spin_unlock(&space->lock);
	return promised;
}

/*
 * Turn the guarantee on (claiming every promise and the copy-on-write
 * reserve for the shared blocks) or off.  Sleeps.  @space->pool exists
 * while the guarantee is on.
 */
static int __subvol_space_guarantee(struct subvol_space *space, bool on)
{
	u64 blocks;
	s64 delta;
	int r;

	lockdep_assert_held(&space->serial);
	spin_lock(&space->lock);
	if (space->guarantee == on) {
		spin_unlock(&space->lock);
		return 0;
	}
	blocks = subvol_space_commitment(space);
	spin_unlock(&space->lock);

	if (on) {
		/* The pool is made by the first guarantee and kept. */
		if (!space->pool) {
			struct subvol_pool *pool;

			pool = subvol_pool_get(space->file, space->block_shift);
			if (IS_ERR(pool))
				return PTR_ERR(pool);
			space->pool = pool;
		}
		r = subvol_pool_commit(space->pool, blocks);
		if (r)
			return r;
	}

	spin_lock(&space->lock);
	space->guarantee = on;
	space->cow_reserve = on ? space->shared : 0;
	if (on) {
		/*
		 * A reload of a live device switches on under I/O: what the
		 * writes since the count changed is claimed or given back.
		 */
		space->refill_credit = 0;
		delta = (s64)subvol_space_commitment(space) - (s64)blocks;
	} else {
		delta = -(s64)subvol_space_commitment(space);
		space->refill_credit = 0;
	}
	spin_unlock(&space->lock);

	subvol_pool_guaranteed(space->pool, on);
	subvol_space_commit_delta(space, delta, true);
	return 0;
}

static int subvol_space_guarantee(struct subvol_space *space, bool on)
{
	int r;

	mutex_lock(&space->serial);
	r = __subvol_space_guarantee(space, on);
	mutex_unlock(&space->serial);
	return r;
}

void subvol_space_set_guarantee(struct subvol_space *space, bool on)
{
	/* Only switching off is left for resume, and it cannot fail. */
	WARN_ON_ONCE(subvol_space_guarantee(space, on));
}

/* @sc's table goes live (@on), or is destroyed: see subvol_space.live. */
void subvol_space_set_live(struct subvol_space *space, struct subvol_c *sc,
			   bool on)
{
	mutex_lock(&space->live_lock);
	if (on)
		space->live = sc;
	else if (space->live == sc)
		space->live = NULL;
	mutex_unlock(&space->live_lock);
}

/*
 * A write of [@block, @block + @nr) is about to go to the host: holes it
 * fills use promises, shared blocks it overwrites use the copy-on-write
 * reserve.  Make loose host space ready for what it will allocate.
 * Process context.
 */
void subvol_space_write_begin(struct subvol_space *space, u64 block, u64 nr,
			      struct subvol_space_change *change)
{
	struct subvol_map_stash stash = { };
	u64 covered = 0, user = 0, uncommit = 0;
	bool guarantee;

	memset(change, 0, sizeof(*change));
	subvol_space_lock_map(space, block, nr,
			      BIT(SUBVOL_HOLE) | BIT(SUBVOL_SHARED), &stash);
	nr = subvol_map_clamp(space, block, nr);
	change->holes = subvol_map_move(&space->map, block, nr, SUBVOL_HOLE,
					SUBVOL_EXCLUSIVE, &stash);
	change->shared = subvol_map_move(&space->map, block, nr, SUBVOL_SHARED,
					 SUBVOL_EXCLUSIVE, &stash);
	space->backed += change->holes;
	space->shared -= change->shared;

	if (space->attached) {
		covered = min_t(u64, change->holes,
				subvol_space_client_promised(space));
		space->promised -= covered;
	}
	user = min_t(u64, change->holes - covered, space->user_promised);
	space->user_promised -= user;
	guarantee = space->guarantee;
	if (guarantee) {
		/* Only a client or a reservation makes a promise. */
		if (space->attached || space->user_promised)
			space->uncovered += change->holes - covered - user;
		space->cow_reserve -= change->shared;
		uncommit = covered + user + change->shared;
	}
	change->promised = covered;
	change->user_promised = user;
	change->used = uncommit;
	subvol_space_unlock_map(space, &stash);

	if (uncommit) {
		subvol_pool_uncommit(space->pool, uncommit);
		subvol_pool_use(space->pool, uncommit);
		change->in_pool = true;
	}
}

/*
 * The write failed: the host may or may not have allocated.  Blocks the
 * host still has as holes are holes again, with their promises back;
 * overwritten shared blocks may still be shared, so every data block of
 * the range counts as shared again.  Both err on the side of claiming.
 */
void subvol_space_write_failed(struct subvol_space *space, u64 block, u64 nr,
			       const struct subvol_space_change *change)
{
	struct subvol_map_stash stash = { };
	u64 holes, promised, user, shared = 0;
	bool guarantee;

	if (!change->holes && !change->shared)
		return;

	subvol_space_rescan(space, block, nr);

	subvol_space_lock_map(space, block, nr,
			      change->shared ? BIT(SUBVOL_EXCLUSIVE) : 0, &stash);
	nr = subvol_map_clamp(space, block, nr);
	holes = subvol_map_count(&space->map, block, nr, SUBVOL_HOLE);
	promised = min_t(u64, holes, change->promised);
	user = min_t(u64, holes - promised, change->user_promised);
	space->promised += promised;
	space->user_promised += user;
	if (change->shared) {
		shared = subvol_map_move(&space->map, block, nr, SUBVOL_EXCLUSIVE,
					 SUBVOL_SHARED, &stash);
		space->shared += shared;
	}
	guarantee = space->guarantee;
	if (guarantee)
		space->cow_reserve += shared;
	subvol_space_unlock_map(space, &stash);

	subvol_space_commit_delta(space, promised + user + shared, guarantee);
}

/* The host unmapped [@block, @block + @nr): a discard or punch. */
void subvol_space_unmapped(struct subvol_space *space, u64 block, u64 nr)
{
	struct subvol_map_stash stash = { };
	u64 excl, shared;
	bool guarantee;

	subvol_space_lock_map(space, block, nr,
			      BIT(SUBVOL_EXCLUSIVE) | BIT(SUBVOL_SHARED), &stash);
	nr = subvol_map_clamp(space, block, nr);
	excl = subvol_map_move(&space->map, block, nr, SUBVOL_EXCLUSIVE,
			       SUBVOL_HOLE, &stash);
	shared = subvol_map_move(&space->map, block, nr, SUBVOL_SHARED,
				 SUBVOL_HOLE, &stash);
	space->backed -= excl + shared;
	space->shared -= shared;
	guarantee = space->guarantee;
	if (guarantee)
		space->cow_reserve -= shared;
	subvol_space_unlock_map(space, &stash);

	subvol_space_commit_delta(space, -(s64)shared, guarantee);
}

/*
 * A discard failed part way: ask the host which blocks of the range are
 * holes now.  Counting a hole as data would let a write allocate without
 * a promise; data blocks keep their state.  Sleeps.
 */
static void subvol_rescan_extent(struct subvol_space *space, loff_t hole,
				 loff_t data, loff_t data_end, void *priv)
{
	unsigned int shift = space->block_shift;

	if (data > hole)
		subvol_space_unmapped(space, hole >> shift,
				      (data - hole) >> shift);
}

void subvol_space_rescan(struct subvol_space *space, u64 block, u64 nr)
{
	unsigned int shift = space->block_shift;

	/* A host error leaves the rest of the range as the map has it. */
	subvol_layout_walk(space, (loff_t)block << shift,
			   (loff_t)(block + nr) << shift, NULL,
			   subvol_rescan_extent, NULL);
}

/*
 * Before a snapshot: every data block will be shared once the file is
 * cloned, so claim the copy-on-write reserve for the exclusive ones now,
 * or fail with ENOSPC and change nothing.  The sharing record is removed
 * first, so that a crash after the clone does not find it counting too
 * little.  The device is suspended: no I/O changes the map meanwhile.
 */
int subvol_space_prepare_snapshot(struct subvol_space *space)
{
	u64 excl;
	bool guarantee;
	int r;

	mutex_lock(&space->serial);
	spin_lock(&space->lock);
	excl = space->backed - space->shared;
	guarantee = space->guarantee;
	spin_unlock(&space->lock);

	if (guarantee) {
		r = subvol_pool_commit(space->pool, excl);
		if (r)
			goto out;
	}
	r = subvol_record_drop(space);
	if (r) {
		if (guarantee)
			subvol_pool_uncommit(space->pool, excl);
		goto out;
	}

	subvol_map_move_all(space, 0, space->nr_blocks, SUBVOL_EXCLUSIVE,
			    SUBVOL_SHARED, &space->shared);
	if (guarantee) {
		spin_lock(&space->lock);
		space->cow_reserve = space->shared;
		spin_unlock(&space->lock);
	}
out:
	mutex_unlock(&space->serial);
	return r;
}

/* A "reserve" message: promise @blocks for writes to holes.  Sleeps. */
int subvol_space_user_reserve(struct subvol_space *space, u64 blocks)
{
	bool guarantee;
	int r;

	spin_lock(&space->lock);
	guarantee = space->guarantee;
	spin_unlock(&space->lock);
	if (guarantee) {
		r = subvol_pool_commit(space->pool, blocks);
		if (r)
			return r;
	}
	spin_lock(&space->lock);
	space->user_promised += blocks;
	spin_unlock(&space->lock);
	return 0;
}

void subvol_space_user_release(struct subvol_space *space, u64 blocks)
{
	bool guarantee;

	spin_lock(&space->lock);
	blocks = min(blocks, space->user_promised);
	space->user_promised -= blocks;
	guarantee = space->guarantee;
	spin_unlock(&space->lock);
	subvol_space_commit_delta(space, -(s64)blocks, guarantee);
}

/*
 *----------------------------------------------------------------
 * Sharing from the host's extent map
 *----------------------------------------------------------------
 */

/* An extent's blocks, rounded outwards, within the map. */
static void subvol_extent_blocks(struct subvol_space *space,
				 const struct fiemap_extent *fe, u64 *block,
				 u64 *nr)
{
	unsigned int shift = space->block_shift;
	u64 end = (fe->fe_logical + fe->fe_length + (1ULL << shift) - 1) >>
		  shift;

	*block = fe->fe_logical >> shift;
	*nr = *block < end ? subvol_map_clamp(space, *block, end - *block) : 0;
}

/*
 * While the map is built: unwritten (and, if any are left, delayed)
 * extents are allocated, and shared extents are shared.
 */
static void subvol_sharing_scan_extent(void *priv,
				       const struct fiemap_extent *fe)
{
	struct subvol_map_stash stash = { };
	struct subvol_space *space = priv;
	u64 block, nr;

	subvol_extent_blocks(space, fe, &block, &nr);
	if (!nr)
		return;
	subvol_space_lock_map(space, block, nr,
			      BIT(SUBVOL_HOLE) | BIT(SUBVOL_EXCLUSIVE), &stash);
	if (fe->fe_flags & (FIEMAP_EXTENT_UNWRITTEN | FIEMAP_EXTENT_DELALLOC))
		space->backed += subvol_map_move(&space->map, block, nr,
						 SUBVOL_HOLE, SUBVOL_EXCLUSIVE,
						 &stash);
	if (fe->fe_flags & FIEMAP_EXTENT_SHARED)
		space->shared += subvol_map_move(&space->map, block, nr,
						 SUBVOL_EXCLUSIVE,
						 SUBVOL_SHARED, &stash);
	subvol_space_unlock_map(space, &stash);
}

/* What a rescan changed, for the pool and the caller. */
struct subvol_sharing_rescan {
	struct subvol_space *space;
	u64 unshared;		/* blocks no longer shared */
	u64 shared;		/* blocks newly shared */
	u64 unbacked;		/* of them, reserve the host did not have */
};

/*
 * On a volume in use.  Blocks the host no longer shares give their
 * reserve back.  Blocks it shares now (the file was cloned outside the
 * target) are shared whether or not the host has space for their reserve:
 * it is claimed first, and counted anyway if the claim fails.  A write
 * racing the rescan only ever makes a block exclusive on both sides, so
 * the map at worst counts one it overwrote as shared: more, never less.
 */
static void subvol_sharing_rescan_extent(void *priv,
					 const struct fiemap_extent *fe)
{
	struct subvol_map_stash stash = { };
	struct subvol_sharing_rescan *rs = priv;
	struct subvol_space *space = rs->space;
	u64 block, nr, excl, moved;
	bool guarantee;

	subvol_extent_blocks(space, fe, &block, &nr);
	if (!nr)
		return;

	if (!(fe->fe_flags & FIEMAP_EXTENT_SHARED)) {
		subvol_space_lock_map(space, block, nr, BIT(SUBVOL_SHARED),
				      &stash);
		moved = subvol_map_move(&space->map, block, nr, SUBVOL_SHARED,
					SUBVOL_EXCLUSIVE, &stash);
		space->shared -= moved;
		guarantee = space->guarantee;
		if (guarantee)
			space->cow_reserve -= moved;
		subvol_space_unlock_map(space, &stash);
		subvol_space_commit_delta(space, -(s64)moved, guarantee);
		rs->unshared += moved;
		return;
	}

	spin_lock(&space->lock);
	excl = subvol_map_count(&space->map, block, nr, SUBVOL_EXCLUSIVE);
	guarantee = space->guarantee;
	spin_unlock(&space->lock);
	if (!excl)
		return;
	if (guarantee && subvol_pool_commit(space->pool, excl)) {
		subvol_pool_force_commit(space->pool, excl);
		rs->unbacked += excl;
	}

	subvol_space_lock_map(space, block, nr, BIT(SUBVOL_EXCLUSIVE), &stash);
	moved = subvol_map_move(&space->map, block, nr, SUBVOL_EXCLUSIVE,
				SUBVOL_SHARED, &stash);
	space->shared += moved;
	if (guarantee)
		space->cow_reserve += moved;
	subvol_space_unlock_map(space, &stash);
	/* Writes and discards in between change what there was to move. */
	subvol_space_commit_delta(space, (s64)moved - (s64)excl, guarantee);
	rs->shared += moved;
}

/*
 * The "rescan_sharing" message: take sharing from the host again.
 * -ENOSPC if blocks became shared whose copy-on-write reserve the host
 * could not back; they are counted as shared all the same.  Sleeps.
 */
int subvol_space_rescan_sharing(struct subvol_space *space)
{
	struct subvol_sharing_rescan rs = { .space = space };
	int r;

	mutex_lock(&space->serial);
	r = subvol_extents_walk(space->file, 0,
				(loff_t)space->nr_blocks << space->block_shift,
				subvol_sharing_rescan_extent, &rs);
	mutex_unlock(&space->serial);
	if (rs.unshared || rs.shared)
		DMINFO("%s: %pD: %llu blocks no longer shared, %llu newly shared",
		       dm_device_name(space->md), space->file,
		       (unsigned long long)rs.unshared,
		       (unsigned long long)rs.shared);
	if (!r && rs.unbacked)
		r = -ENOSPC;
	return r;
}

/*
 *----------------------------------------------------------------
 * Volumes
 *----------------------------------------------------------------
 */

/* A space never listed, or off the list with nothing of its own held. */
static void subvol_space_free(struct subvol_space *space)
{
	subvol_map_free(&space->map);
	fput(space->file);
	mutex_destroy(&space->serial);
	kfree(space);
}

/*
 * A new volume's space: reads the backing file's allocation map and its
 * sharing, from the host (FIEMAP) or, failing that, from the file's
 * sharing record (@from_record set).  Slow on a large or fragmented file,
 * and waits for the host's I/O: called without subvol_spaces_lock.
 */
static struct subvol_space *subvol_space_create(struct subvol_c *sc,
						bool *from_record,
						char **error)
{
	struct subvol_space *space;
	u64 nr_blocks, layout;
	int r;

	space = kzalloc(sizeof(*space), GFP_KERNEL);
	if (!space) {
		*error = "Cannot allocate space accounting";
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&space->kref);
	spin_lock_init(&space->lock);
	mutex_init(&space->serial);
	mutex_init(&space->live_lock);
	subvol_copy_init(&space->copy);
	space->file = get_file(sc->file);
	space->md = sc->md;
	space->dev = disk_devt(dm_disk(sc->md));
	space->block_shift = ilog2(sc->block_size);
	nr_blocks = i_size_read(file_inode(sc->file)) >> space->block_shift;

	r = subvol_map_init(&space->map, nr_blocks);
	if (r) {
		*error = "Cannot allocate block map";
		goto bad;
	}
	space->nr_blocks = nr_blocks;

	*from_record = false;
	layout = SUBVOL_FNV_OFFSET;
	r = subvol_map_scan(space, 0, nr_blocks, &layout);
	if (r) {
		*error = "Cannot read the backing file's allocation map";
		goto bad;
	}
	r = subvol_extents_walk(space->file, 0, (loff_t)nr_blocks <<
				space->block_shift, subvol_sharing_scan_extent,
				space);
	if (r) {
		if (r != -EOPNOTSUPP)
			DMWARN("%s: cannot read the extent map of %pD: %d",
			       dm_device_name(space->md), space->file, r);
		subvol_record_apply(space, layout);
		*from_record = true;
	}
	return space;

bad:
	subvol_space_free(space);
	return ERR_PTR(r);
}

/* A reload may grow the file: the map must cover it.  Sleeps. */
static int subvol_space_resize(struct subvol_space *space, struct file *file)
{
	u64 nr_blocks = i_size_read(file_inode(file)) >> space->block_shift;
	u64 old = space->nr_blocks;
	int r;

	if (nr_blocks <= old)
		return 0;

	/* Walks of the whole map (a record, a rescan) read it unlocked. */
	mutex_lock(&space->serial);
	r = subvol_map_grow(&space->map, nr_blocks, &space->lock);
	if (!r) {
		spin_lock(&space->lock);
		space->nr_blocks = nr_blocks;
		spin_unlock(&space->lock);
	}
	mutex_unlock(&space->serial);
	if (r)
		return r;

	/* Blocks past the old end were never mapped by a table: ask. */
	return subvol_map_scan(space, old, nr_blocks - old, NULL);
}

/*
 * The provider is registered for the device's disk when its table is
 * resumed: the filesystem on top finds it at mount.  A table that names
 * another file takes the disk over then, unless a filesystem is attached
 * to the old file's space; a table only loaded (and perhaps cleared, or
 * failing) changes nothing.
 */
static int subvol_space_check_takeover(struct subvol_space *space,
				       bool take, char **error)
{
	struct subvol_space *other;

	lockdep_assert_held(&subvol_spaces_lock);
	list_for_each_entry(other, &subvol_spaces, list) {
		if (other == space || !other->registered ||
		    other->dev != space->dev)
			continue;
		if (READ_ONCE(other->attached)) {
			*error = "Cannot change backing file: a filesystem reserves space";
			return -EBUSY;
		}
		if (take) {
			blk_space_unregister(&other->provider);
			other->registered = false;
		}
	}
	return 0;
}

static int subvol_space_register(struct subvol_space *space, char **error)
{
	int r;

	lockdep_assert_held(&subvol_spaces_lock);
	r = subvol_space_check_takeover(space, true, error);
	if (r)
		return r;
	if (blk_space_register(&space->provider, space->dev,
			       &subvol_provider_ops)) {
		*error = "Another space provider is registered for this device";
		return -EBUSY;
	}
	space->registered = true;
	return 0;
}

/*
 * The listed space of @inode that a new table of @md must use or wait
 * for: one being released (its file's sharing record is being written),
 * or @md's own.  Only a reload of the same device shares a space: after
 * "dmsetup remove --force" a filesystem may still hold the old device's
 * space, and a new device on the file must not inherit it (nor its
 * registration for the old disk).
 */
static struct subvol_space *subvol_space_find(struct inode *inode,
					      struct mapped_device *md)
{
	struct subvol_space *space;

	lockdep_assert_held(&subvol_spaces_lock);
	list_for_each_entry(space, &subvol_spaces, list)
		if (file_inode(space->file) == inode &&
		    (space->dying || space->md == md))
			return space;
	return NULL;
}

/* A reload's table takes @space: the file may have grown.  Sleeps. */
static int subvol_space_reuse(struct subvol_c *sc, struct subvol_space *space,
			      char **error)
{
	int r;

	r = subvol_space_resize(space, sc->file);
	if (r) {
		*error = "Cannot grow the block map";
		goto bad;
	}
	mutex_lock(&subvol_spaces_lock);
	r = space->registered ? 0 :
		subvol_space_check_takeover(space, false, error);
	mutex_unlock(&subvol_spaces_lock);
	if (r)
		goto bad;
	sc->space = space;
	return 0;
bad:
	subvol_space_put(space);
	return r;
}

/*
 * The space of @sc's backing file, shared with other tables of its md.
 * A new one is made without subvol_spaces_lock, as its scan of the file
 * may take long and waits for the host: the lock holds up every volume's
 * table loads and removes, on every host.  If the list changed meanwhile
 * in a way that matters, the new space is dropped and the lookup redone.
 */
int subvol_space_get(struct subvol_c *sc, char **error)
{
	struct inode *inode = file_inode(sc->file);
	struct subvol_space *space, *new = NULL;
	unsigned long gen, scanned_gen = 0;
	bool from_record = false;
	int r;

retry:
	mutex_lock(&subvol_spaces_lock);
	space = subvol_space_find(inode, sc->md);
	/*
	 * The file's record is being written: read it once it is (a scan
	 * made meanwhile is dropped below if it read the old record).
	 */
	if (space && space->dying) {
		gen = subvol_spaces_gen;
		mutex_unlock(&subvol_spaces_lock);
		if (wait_event_killable(subvol_spaces_wq,
					READ_ONCE(subvol_spaces_gen) != gen)) {
			if (new)
				subvol_space_free(new);
			*error = "Interrupted waiting for the file's previous table to go";
			return -EINTR;
		}
		goto retry;
	}
	if (space) {
		kref_get(&space->kref);
		mutex_unlock(&subvol_spaces_lock);
		if (new)
			subvol_space_free(new);
		return subvol_space_reuse(sc, space, error);
	}
	/* A record read before a release rewrote it is stale: read again. */
	if (new && from_record && subvol_spaces_gen != scanned_gen) {
		mutex_unlock(&subvol_spaces_lock);
		subvol_space_free(new);
		new = NULL;
		goto retry;
	}
	if (!new) {
		scanned_gen = subvol_spaces_gen;
		mutex_unlock(&subvol_spaces_lock);
		new = subvol_space_create(sc, &from_record, error);
		if (IS_ERR(new))
			return PTR_ERR(new);
		goto retry;
	}
	list_add(&new->list, &subvol_spaces);
	r = subvol_space_check_takeover(new, false, error);
	mutex_unlock(&subvol_spaces_lock);
	if (r) {
		subvol_space_put(new);
		return r;
	}
	sc->space = new;
	return 0;
}

/* The table is resumed: its space becomes the disk's provider.  Sleeps. */
int subvol_space_resume(struct subvol_space *space)
{
	char *error;
	int r = 0;

	mutex_lock(&subvol_spaces_lock);
	if (!space->registered) {
		r = subvol_space_register(space, &error);
		if (r)
			DMERR("%s: %pD: %s", dm_device_name(space->md),
			      space->file, error);
	}
	mutex_unlock(&subvol_spaces_lock);
	return r;
}

/*
 * The table's policy takes effect: with the guarantee, the promises and
 * the copy-on-write reserve are claimed now, or the table fails with
 * ENOSPC.  Switching the guarantee off waits for resume.  Sleeps.
 */
int subvol_space_activate(struct subvol_c *sc)
{
	bool on = sc->guarantee && sc->writable;

	if (!on)
		return 0;
	return subvol_space_guarantee(sc->space, true);
}

/*
 * The last reference is gone.  Called with subvol_spaces_lock held (by
 * kref_put_mutex()), which it drops before the host I/O: the sharing
 * record's write waits for a frozen host.
 */
static void subvol_space_release(struct kref *kref)
{
	struct subvol_space *space = container_of(kref, struct subvol_space,
						  kref);
	int r;

	if (space->registered) {
		blk_space_unregister(&space->provider);
		space->registered = false;
	}
	space->dying = true;
	mutex_unlock(&subvol_spaces_lock);

	/* The device is gone: a snapshot copy of it never completes. */
	subvol_copy_exit(space);

	/* The next activation starts from what is shared now. */
	r = subvol_record_write(space);
	if (r)
		DMERR("%s: cannot write the sharing record of %pD: %d",
		      dm_device_name(space->md), space->file, r);

	WARN_ON_ONCE(subvol_space_guarantee(space, false));
	if (space->pool)
		subvol_pool_put(space->pool);

	mutex_lock(&subvol_spaces_lock);
	list_del(&space->list);
	subvol_spaces_gen++;
	mutex_unlock(&subvol_spaces_lock);
	wake_up_all(&subvol_spaces_wq);

	subvol_space_free(space);
}

void subvol_space_put(struct subvol_space *space)
{
	kref_put_mutex(&space->kref, subvol_space_release,
		       &subvol_spaces_lock);
}
