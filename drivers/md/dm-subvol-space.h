/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * Space accounting of the subvol target: the pool of host space that backs
 * the promises of all volumes on one host filesystem, and each volume's
 * map of which of its blocks are holes, exclusive or shared.
 *
 * All counts are in host filesystem blocks (the device's logical block).
 *
 * The invariant (shared/design/space-model.md): for every pool,
 *
 *	committed = sum over its volumes of (promised + cow_reserve)
 *	committed + margin <= claimed, for every new promise,
 *
 * where claimed is the space held in the pool's reserve file, which no
 * other host writer can take.  Existing promises may use the margin: it
 * covers host space that a writer outside the pool takes between our
 * releasing it and our write using it.
 */
#ifndef DM_SUBVOL_SPACE_H
#define DM_SUBVOL_SPACE_H

#include <linux/blk-space.h>
#include <linux/fs.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "dm-subvol-map.h"

/* Claims and releases move this much host space at a time. */
#define SUBVOL_POOL_CHUNK_BYTES		(4U << 20)

/*
 * A pool: the space of one host filesystem that its subvol volumes have
 * claimed.  Claimed space is allocated to an unlinked file (O_TMPFILE), so
 * the host gets it back by itself if we crash.
 *
 * Locking: @lock protects @claimed, @committed, @loose, @inflight,
 * @submitting and @room, and
 * is taken inside a volume's lock, with interrupts off: write completions
 * update @loose and @inflight in any context.  @resize_lock serialises
 * changes to the reserve file, and the decisions that lead to them; it is
 * never taken under a spinlock.  The reserve file's blocks
 * [0, @claimed) are allocated and it is that long, so the file is a
 * stack: a claim allocates at its top, a release truncates it.
 */
struct subvol_pool {
	struct list_head list;		/* in subvol_pools */
	struct kref kref;
	struct super_block *sb;		/* the host filesystem */
	struct file *reserve;
	unsigned int block_shift;
	u64 chunk;			/* SUBVOL_POOL_CHUNK_BYTES in blocks */
	u64 claim_step;			/* the most one fallocate claims */
	u64 release_step;		/* loose space is released by this */
	u64 write_overhead;		/* host blocks a write may reserve */

	spinlock_t lock;		/* the counters below */
	u64 claimed;			/* blocks allocated to the reserve file */
	u64 committed;			/* blocks promised to volumes */
	/*
	 * Released from the reserve file for our writes and not allocated
	 * by them yet: still ours, as far as claims go, so that balance does
	 * not take it back.  @inflight is what the writes under way may
	 * allocate (their blocks and their transactions' reservations),
	 * which loose space covers, or else the claim (see
	 * subvol_pool_use()).  @submitting: blocks of writes inside their
	 * host call, which may have allocated them without
	 * subvol_pool_allocated() having counted it yet.
	 */
	u64 loose;
	u64 inflight;
	u64 submitting;
	u64 room;			/* host room statfs found, less use */
	unsigned int guaranteed;	/* volumes with the guarantee on */
	unsigned long grow_failed;	/* jiffies of the last failed claim */
	unsigned long refilled;		/* jiffies of the last claim on request */

	struct mutex resize_lock;	/* changes of the reserve file */
	struct delayed_work balance;
};

/*
 * A snapshot copy (dm-subvol-copy.c): the backing file as it was at a
 * suspend, cloned into another file by a worker after the resume, each
 * unit of the file cloned before any write changes it.
 *
 * Locking: @control serialises the messages that start and stop a copy,
 * its teardown and "rescan_sharing", and nests outside @lock and the
 * space's @serial.  @lock protects @done,
 * @next, @run and the changes of @state, and is held across every clone
 * into @dest, so that a unit is cloned once, before any write to it.
 * @state, @nr_done and @error are also read without it, by the status
 * line and by the data path's check for a copy (which takes @lock when
 * it sees one running).  Process context only.
 */
enum subvol_copy_state {
	SUBVOL_COPY_NONE,	/* no copy, no file held */
	SUBVOL_COPY_RUNNING,	/* units left to clone */
	SUBVOL_COPY_SYNCING,	/* all cloned, syncing @dest */
	SUBVOL_COPY_DONE,	/* complete and durable, @dest still held */
	SUBVOL_COPY_FAILED,	/* a clone or the sync failed with @error */
};

struct subvol_copy {
	struct mutex control;		/* see above */
	struct mutex lock;		/* see above */
	enum subvol_copy_state state;
	int error;
	struct file *dest;		/* the snapshot's file, fget() */
	loff_t size;			/* bytes to copy: the file at the suspend */
	unsigned int unit_shift;	/* log2 bytes of one unit */
	u64 nr_units;
	unsigned long *done;		/* units cloned (or found holes) */
	u64 nr_done;
	u64 next;			/* where the worker goes on */
	unsigned int run;		/* units per clone call: adaptive */
	struct workqueue_struct *wq;
	struct delayed_work work;
};

/*
 * The space of one volume: one backing file, shared by the tables of one
 * mapped device that name it (a reload keeps its accounting).  It is also
 * the device's space provider for the filesystem on top (the client).
 *
 * Locking: @lock protects the map and the counters, and nests outside
 * the pool's lock.  Every user is in process context.  @release_pending
 * is the part of @promised that charged frees added ahead of the
 * client's release, which the pool does not back (see
 * subvol_provider_change()).  @serial is taken outside @lock by the
 * operations that change the sharing or the guarantee as a whole (table
 * activation, "prepare_snapshot", "rescan_sharing"), one at a time.
 */
struct subvol_space {
	struct blk_space provider;
	struct kref kref;
	struct list_head list;		/* in subvol_spaces */
	bool registered;		/* provider is in the registry */
	bool dying;			/* released, its record being written */
	struct mutex serial;		/* see above */

	struct file *file;
	struct mapped_device *md;
	dev_t dev;			/* the device's disk */
	struct subvol_pool *pool;
	unsigned int block_shift;

	spinlock_t lock;		/* the map and the counters */
	struct subvol_map map;		/* see dm-subvol-map.c */
	u64 nr_blocks;			/* blocks the map covers */
	u64 backed;			/* blocks not SUBVOL_HOLE */
	u64 shared;			/* blocks SUBVOL_SHARED */
	bool guarantee;			/* promises and cow_reserve count */
	u64 cow_reserve;		/* == shared while committed */
	s64 promised;			/* the client's, see blk-space.h */
	u64 release_pending;		/* of it, not committed (below) */
	u64 refill_credit;		/* committed by refill, for the retry */
	unsigned long refill_expires;	/* jiffies */
	u64 user_promised;		/* by "reserve" messages */
	u64 uncovered;			/* hole writes no promise covered */
	u64 accounting_errors;		/* releases of more than promised */
	bool attached;			/* a client is attached */
	unsigned int client_shift;	/* log2(client block / our block) */
	/*
	 * Seconds a refill waits for the host to grow: the live table's
	 * no_space_timeout under no_space:queue, else 0.  Set at resume.
	 */
	unsigned int hold_timeout;
	/*
	 * The live table's target, whose low-water mark a held reservation
	 * checks: set at resume, cleared by its destructor, both under
	 * @live_lock, which the check holds.
	 */
	struct mutex live_lock;
	struct subvol_c *live;

	/* A snapshot copy: a reload of the same file carries it on. */
	struct subvol_copy copy;
};

/* What a write or discard changed, to undo it if the host call fails. */
struct subvol_space_change {
	u32 holes;		/* holes it filled */
	u32 promised;		/* of which the client's promise covered */
	u32 user_promised;	/* of which a "reserve" message covered */
	u32 shared;		/* shared blocks it overwrote or unmapped */
	u32 used;		/* blocks it took loose space for */
	bool in_pool;		/* counted in the pool's writes in flight */
	bool allocated;		/* @used counted allocated by the host */
};

/* dm-subvol-pool.c */
struct subvol_pool *subvol_pool_get(struct file *backing, unsigned int shift);
void subvol_pool_put(struct subvol_pool *pool);
void subvol_pool_guaranteed(struct subvol_pool *pool, bool on);
bool subvol_pool_try_commit(struct subvol_pool *pool, u64 blocks);
int subvol_pool_commit(struct subvol_pool *pool, u64 blocks);
u64 subvol_pool_commit_some(struct subvol_pool *pool, u64 blocks);
void subvol_pool_force_commit(struct subvol_pool *pool, u64 blocks);
void subvol_pool_uncommit(struct subvol_pool *pool, u64 blocks);
void subvol_pool_use(struct subvol_pool *pool, u64 blocks);
void subvol_pool_submit(struct subvol_pool *pool, u64 blocks);
void subvol_pool_allocated(struct subvol_pool *pool, u64 blocks,
			   bool allocated);
void subvol_pool_unallocated(struct subvol_pool *pool, u64 blocks);
void subvol_pool_used(struct subvol_pool *pool, u64 blocks);
void subvol_pool_lost(struct subvol_pool *pool, bool promised);
u64 subvol_pool_headroom(struct subvol_pool *pool);
void subvol_pool_counters(struct subvol_pool *pool, u64 *claimed,
			  u64 *committed);

/* dm-subvol-extents.c: the host's extent map of a backing file. */
struct fiemap_extent;
int subvol_extents_walk(struct file *file, loff_t start, loff_t end,
			void (*fn)(void *priv, const struct fiemap_extent *fe),
			void *priv);

/* dm-subvol-space.c */
struct subvol_c;
int subvol_space_get(struct subvol_c *sc, char **error);
void subvol_space_put(struct subvol_space *space);
int subvol_space_activate(struct subvol_c *sc);
int subvol_space_resume(struct subvol_space *space);
void subvol_space_set_guarantee(struct subvol_space *space, bool on);
void subvol_space_set_live(struct subvol_space *space, struct subvol_c *sc,
			   bool on);
void subvol_space_write_begin(struct subvol_space *space, u64 block, u64 nr,
			      struct subvol_space_change *change);
void subvol_space_write_failed(struct subvol_space *space, u64 block, u64 nr,
			       const struct subvol_space_change *change);
void subvol_space_unmapped(struct subvol_space *space, u64 block, u64 nr);
void subvol_space_rescan(struct subvol_space *space, u64 block, u64 nr);
int subvol_space_prepare_snapshot(struct subvol_space *space);
int subvol_space_rescan_sharing(struct subvol_space *space);
int subvol_space_user_reserve(struct subvol_space *space, u64 blocks);
u64 subvol_space_promised(struct subvol_space *space);
void subvol_space_user_release(struct subvol_space *space, u64 blocks);

/* dm-subvol-copy.c */
void subvol_copy_init(struct subvol_copy *copy);
void subvol_copy_exit(struct subvol_space *space);
int subvol_copy_begin(struct subvol_c *sc, const char *arg);
int subvol_copy_end(struct subvol_c *sc, bool cancel);
int subvol_copy_before_write(struct subvol_space *space, loff_t pos,
			     loff_t len, bool wait);
void subvol_copy_status(struct subvol_space *space, char *result,
			unsigned int maxlen, unsigned int *szp);
bool subvol_copy_busy(struct subvol_space *space);

/*
 * Inside the space code: dm-subvol-space.c's helpers, the sharing record
 * (dm-subvol-record.c) and the space provider (dm-subvol-provider.c).
 */
#define SUBVOL_FNV_OFFSET	0xcbf29ce484222325ULL
#define SUBVOL_FNV_PRIME	0x100000001b3ULL
void subvol_space_commit_delta(struct subvol_space *space, s64 delta,
			       bool committed);
u64 subvol_space_client_promised(struct subvol_space *space);
void subvol_space_lock_map(struct subvol_space *space, u64 block, u64 nr,
			   unsigned int from_mask,
			   struct subvol_map_stash *stash)
	__acquires(&space->lock);
void subvol_space_unlock_map(struct subvol_space *space,
			     struct subvol_map_stash *stash)
	__releases(&space->lock);
u64 subvol_map_move_all(struct subvol_space *space, u64 block, u64 nr,
			unsigned int from, unsigned int to, u64 *counter);
u64 subvol_map_clamp(struct subvol_space *space, u64 block, u64 nr);
int subvol_layout_walk(struct subvol_space *space, loff_t pos, loff_t end,
		       u64 *hash,
		       void (*fn)(struct subvol_space *space, loff_t hole,
				  loff_t data, loff_t data_end, void *priv),
		       void *priv);
int subvol_record_write(struct subvol_space *space);
int subvol_record_drop(struct subvol_space *space);
void subvol_record_apply(struct subvol_space *space, u64 layout);
extern const struct blk_space_ops subvol_provider_ops;

#endif /* DM_SUBVOL_SPACE_H */
