/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * Internal interfaces of the subvol target: a device whose data lives in a
 * regular file on a host filesystem, with every request's I/O done through
 * that filesystem.
 */
#ifndef DM_SUBVOL_H
#define DM_SUBVOL_H

#include <linux/device-mapper.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/workqueue.h>

#include "dm-subvol-space.h"

#define DM_MSG_PREFIX "subvol"

/*
 * Largest discard or write-zeroes passed to the host in one fallocate call:
 * a punch holds the file's locks, and with them all other I/O to the file.
 */
#define SUBVOL_MAX_FALLOC_SECTORS	(1U << (30 - SECTOR_SHIFT))

/*
 * One instance of the target: one table entry.
 *
 * Locking: every field is set by the constructor and read-only afterwards,
 * except in_use, which belongs to subvol_in_use_lock (dm-subvol-backing.c),
 * the held queue, which is lock-free, suspending, which dm's suspend and
 * resume hooks set (serialised by dm) and the workqueue reads with
 * READ_ONCE, and low_water_hit, low_water_checked and hints_checked, which
 * only the workqueue's items change, with atomic operations and plain
 * stores that may race harmlessly.  So ->map,
 * ->status and I/O completions, which run concurrently, need no lock of
 * their own; the host filesystem serialises access to the file, and the
 * space accounting has its own locks (dm-subvol-space.h).
 */
struct subvol_c {
	struct dm_target *ti;
	struct mapped_device *md;

	/* The backing file, opened by the constructor, and its table path. */
	struct file *file;
	char *path;

	/* Host filesystem block size in bytes: our logical block size. */
	unsigned int block_size;

	bool writable;
	bool ignore_discard;

	/* Policies, from the table's features. */
	bool guarantee;			/* promises are backed (default) */
	bool no_space_queue;		/* else fail uncovered ENOSPC at once */
	unsigned int no_space_timeout;	/* seconds a write may be held */
	u64 low_water;			/* sectors; 0: no event */

	struct subvol_space *space;

	/* Requests held for the host (enum subvol_hold), retried. */
	struct llist_head held;
	struct delayed_work held_work;
	/*
	 * From .presuspend to .resume (or .presuspend_undo): held requests
	 * must not keep dm's suspend waiting (subvol_io_suspend_held()).
	 */
	bool suspending;
	/*
	 * The result of the sync that ended the last suspend, or
	 * -EINPROGRESS from .presuspend until it is known (set by dm's
	 * suspend hooks, read by messages): a snapshot of the backing file
	 * needs 0 (subvol_snapshot_point()).
	 */
	int suspend_sync;

	unsigned long low_water_hit;	/* bit 0: event sent, not re-armed */
	unsigned long hints_checked;	/* jiffies; see dm-subvol-backing.c */
	unsigned long low_water_checked; /* jiffies */

	/*
	 * Runs the host calls: reads and writes through the per-CPU queues,
	 * flushes, discards and write-zeroes as one work item each.
	 */
	struct workqueue_struct *wq;
	struct subvol_queue __percpu *queues;

	/* In the list of backing files in use; see dm-subvol-backing.c. */
	struct list_head in_use;
};

/*
 * Reads and writes queued on one CPU, submitted by one work item in a
 * batch: one worker wake-up for many requests, as loop does, but one
 * queue per CPU, so a submission that blocks holds up only its CPU's.
 */
struct subvol_queue {
	struct llist_head bios;
	struct work_struct work;
	struct subvol_c *sc;
};

/*
 * Is the host filesystem @sb frozen?  For work that must not wait for a
 * thaw in sb_start_write() (a worker others queue behind): only a hint, a
 * freeze that begins right after it is waited for.
 */
static inline bool subvol_host_frozen(struct super_block *sb)
{
	if (!sb_start_write_trylock(sb))
		return true;
	sb_end_write(sb);
	return false;
}

/* Why a request is held, and so what ends the hold. */
enum subvol_hold {
	SUBVOL_HOLD_TRANSIENT,	/* host ENOMEM or EAGAIN: transient_timeout */
	SUBVOL_HOLD_FROZEN,	/* the host is frozen: its thaw */
	SUBVOL_HOLD_COPY,	/* frozen, before its copy-before-write */
	SUBVOL_HOLD_NO_SPACE,	/* no promise covers it: no_space_timeout */
	SUBVOL_HOLD_PROMISED,	/* promised, the host has no room yet: none */
};

/* Per-bio state, in the bio's dm per-bio data. */
struct subvol_io {
	struct subvol_c *sc;
	union {
		struct llist_node node;		/* queued, or held */
		struct work_struct work;	/* everything else */
	};
	struct kiocb iocb;
	/* The host call's reference and the submitter's: see subvol_rw(). */
	atomic_t pending;
	long result;			/* of the host call */
	struct subvol_space_change change;	/* what a write changed */
	long error;			/* of a failed call, for its work */
	unsigned int retries;		/* after the host ran out of space */
	unsigned long deadline;		/* jiffies, while held; 0: none */
	enum subvol_hold held_for;	/* while held */
	bool promised;			/* its promise waits out a suspend */
};

/* dm-subvol-backing.c: opening, checking and sharing backing files. */
int subvol_backing_open(struct subvol_c *sc, const char *path, char **error);
void subvol_backing_close(struct subvol_c *sc);
int subvol_backing_check_size(struct subvol_c *sc);
int subvol_backing_guarantee_check(struct subvol_c *sc, char **error);
void subvol_backing_recheck_hints(struct subvol_c *sc);
int subvol_backing_allocated(struct subvol_c *sc, u64 *sectors);
int subvol_backing_host_free(struct subvol_c *sc, u64 *sectors);
bool subvol_backing_in_use(struct inode *inode);

/* dm-subvol-target.c */
void subvol_check_low_water(struct subvol_c *sc);
int subvol_snapshot_point(struct subvol_c *sc, const char *msg);

/* dm-subvol-io.c: the data path. */
int subvol_io_init(struct subvol_c *sc);
void subvol_io_exit(struct subvol_c *sc);
int subvol_io_map(struct subvol_c *sc, struct bio *bio);
void subvol_io_presuspend(struct subvol_c *sc);
void subvol_io_resume(struct subvol_c *sc);
int subvol_io_sync(struct subvol_c *sc);

#endif /* DM_SUBVOL_H */
