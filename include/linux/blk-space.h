/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * Space reservation for filesystems on thinly provisioned block devices.
 *
 * A device whose blocks are backed on demand (a subvol device: a file on a
 * host filesystem) registers a provider for its disk.  A filesystem on the
 * device looks the provider up at mount and, through it, reserves backing
 * space before it commits to a change, so that it gets ENOSPC up front
 * instead of a failed write later.  A filesystem on any other device finds
 * no provider and behaves as before.
 *
 * Units: reservations count blocks of the client's own size, given to
 * blk_space_attach(); block ranges and hole counts are in 512-byte sectors
 * of the device.  attach(), detach(), refill() and query() may sleep; the
 * other calls never do.  Only refill() with @wait may wait for the
 * device's backing store to grow (see blk_space_refill_wait()).
 *
 * The client's side of the accounting (what each call means) is:
 *
 *  - reserve(n): the client took n blocks from its free-block counter
 *    (a transaction reservation, delayed allocation, a reserve pool).
 *    Never sleeps; -ENOSPC means the device cannot back them now.
 *  - release(n): the client returned n blocks to its free-block counter.
 *  - allocated(range, flags): a range left the client's free space.
 *    BLK_SPACE_CHARGED: the blocks came out of an earlier reserve(), so
 *    the device stops counting them as reserved and instead counts the
 *    holes among them as blocks the client will write.
 *    BLK_SPACE_IN_USE: the range was not free space before either (a
 *    block off the client's free list): only the charge changes hands.
 *  - freed(range, flags): a range went back to the client's free space;
 *    the reverse of allocated().  A charged free is followed by a
 *    release() of the same blocks when the client credits its counter,
 *    or stays reserved if the client keeps the blocks in a reserve.
 *
 * The device never expects writes to the client's free space: the holes
 * among the blocks the client uses are what it must be able to back.
 *
 * attach() starts the accounting with the number of holes among the
 * blocks that are in use when the client mounts, which the client
 * computes with count_holes() from its free-space map.
 */
#ifndef _LINUX_BLK_SPACE_H
#define _LINUX_BLK_SPACE_H

#include <linux/bits.h>
#include <linux/blkdev.h>
#include <linux/list.h>
#include <linux/module.h>
#include <linux/types.h>

struct blk_space;

/* Flags of allocated() and freed(). */
#define BLK_SPACE_CHARGED	BIT(0)
#define BLK_SPACE_IN_USE	BIT(1)

/* What query() reports, in blocks of the client's size. */
struct blk_space_counters {
	u64 total;		/* blocks of the device */
	u64 backed;		/* blocks allocated on the host */
	u64 shared;		/* backed blocks shared with another file */
	u64 promised;		/* blocks reserved and not yet written */
	u64 cow_reserve;	/* blocks held to overwrite shared blocks */
	u64 available;		/* blocks the device can still back */
};

struct blk_space_ops {
	struct module *owner;
	/* A reference, unless the provider is already being released. */
	bool (*get)(struct blk_space *space);
	void (*put)(struct blk_space *space);

	int (*attach)(struct blk_space *space, unsigned int block_size,
		      u64 used_holes);
	void (*detach)(struct blk_space *space);

	int (*reserve)(struct blk_space *space, u64 blocks);
	void (*release)(struct blk_space *space, u64 blocks);
	int (*refill)(struct blk_space *space, u64 blocks, bool wait);
	void (*query)(struct blk_space *space, struct blk_space_counters *c);

	u64 (*count_holes)(struct blk_space *space, sector_t start,
			   sector_t nr_sects);
	void (*allocated)(struct blk_space *space, sector_t start,
			  sector_t nr_sects, unsigned int flags);
	void (*freed)(struct blk_space *space, sector_t start,
		      sector_t nr_sects, unsigned int flags);
};

/* Embedded in the provider's per-device object. */
struct blk_space {
	const struct blk_space_ops *ops;
	dev_t dev;		/* the disk it provides for */
	struct list_head list;	/* in the registry, while registered */
};

int blk_space_register(struct blk_space *space, dev_t dev,
		       const struct blk_space_ops *ops);
void blk_space_unregister(struct blk_space *space);

/* The registry's side of blk_space_get() and blk_space_put(). */
struct blk_space *blk_space_lookup(struct block_device *bdev);
void blk_space_drop(struct blk_space *space);

/*
 * A filesystem finds its device's provider at mount with blk_space_get()
 * and lets it go with blk_space_put().  Both bind to the registry when
 * called (symbol_get()), not when the filesystem's module loads: a
 * space-aware xfs.ko replaces the stock one, and must load and run as the
 * stock one where the registry is not loaded or not installed at all (an
 * initramfs, a machine without the target).  No registry, no provider:
 * blk_space_get() returns NULL, as for any other device.  A provider's
 * module links against the registry, so a device with a provider means a
 * loaded registry; the reference symbol_get() takes keeps it loaded until
 * the matching blk_space_put().
 */
static inline struct blk_space *blk_space_get(struct block_device *bdev)
{
	struct blk_space *(*lookup)(struct block_device *bdev);
	struct blk_space *space;

	lookup = symbol_get(blk_space_lookup);
	if (!lookup)
		return NULL;
	space = lookup(bdev);
	if (!space)
		symbol_put(blk_space_lookup);
	return space;
}

static inline void blk_space_put(struct blk_space *space)
{
	void (*drop)(struct blk_space *space) = symbol_get(blk_space_drop);

	/* Our reference on blk_space_lookup() keeps the registry loaded. */
	drop(space);
	symbol_put(blk_space_drop);
	symbol_put(blk_space_lookup);
}

/*
 * The client's calls.  blk_space_get() returned @space with a reference
 * that keeps it, and the provider's module, until blk_space_put().
 */
static inline int blk_space_attach(struct blk_space *space,
				   unsigned int block_size, u64 used_holes)
{
	return space->ops->attach(space, block_size, used_holes);
}

static inline void blk_space_detach(struct blk_space *space)
{
	space->ops->detach(space);
}

static inline int blk_space_reserve(struct blk_space *space, u64 blocks)
{
	return space->ops->reserve(space, blocks);
}

static inline void blk_space_release(struct blk_space *space, u64 blocks)
{
	space->ops->release(space, blocks);
}

/*
 * May sleep: grows what the device holds so that reserve() can succeed.
 * Sleeps only for the device's own I/O: if its backing store is full,
 * -ENOSPC at once.  The caller may hold its filesystem's locks (not a
 * transaction: the device's I/O may need memory, and reclaim the
 * filesystem).
 */
static inline int blk_space_refill(struct blk_space *space, u64 blocks)
{
	might_sleep();
	return space->ops->refill(space, blocks, false);
}

/*
 * As blk_space_refill(), but where the device's policy says so (dm-subvol's
 * no_space:queue), a full backing store is waited for to grow, for up to
 * the policy's timeout (an hour at most) or a fatal signal.  The caller
 * holds none of its filesystem's locks and no transaction open (the
 * provider warns if current->journal_info is set), as whatever it held
 * would stop every task that needs it for as long: only its freeze
 * protection, and in a page fault the mmap_lock, which ->page_mkwrite
 * cannot drop.
 */
static inline int blk_space_refill_wait(struct blk_space *space, u64 blocks)
{
	might_sleep();
	return space->ops->refill(space, blocks, true);
}

static inline void blk_space_query(struct blk_space *space,
				   struct blk_space_counters *c)
{
	space->ops->query(space, c);
}

static inline u64 blk_space_count_holes(struct blk_space *space,
					sector_t start, sector_t nr_sects)
{
	return space->ops->count_holes(space, start, nr_sects);
}

static inline void blk_space_allocated(struct blk_space *space,
				       sector_t start, sector_t nr_sects,
				       unsigned int flags)
{
	space->ops->allocated(space, start, nr_sects, flags);
}

static inline void blk_space_freed(struct blk_space *space, sector_t start,
				   sector_t nr_sects, unsigned int flags)
{
	space->ops->freed(space, start, nr_sects, flags);
}

#endif /* _LINUX_BLK_SPACE_H */
