/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Copyright (C) 2026 The dm-subvol authors.
 *
 * The interface between the "subvol" device-mapper target and userspace:
 * target name and version, table-line feature words, and the layout of the
 * INFO status line.  The target's document,
 * Documentation/admin-guide/device-mapper/subvol.rst, describes each item.
 */
#ifndef _UAPI_LINUX_DM_SUBVOL_H
#define _UAPI_LINUX_DM_SUBVOL_H

#define DM_SUBVOL_TARGET_NAME		"subvol"

/* Target version, as `dmsetup targets` lists it. */
#define DM_SUBVOL_VERSION_MAJOR		1
#define DM_SUBVOL_VERSION_MINOR		4
#define DM_SUBVOL_VERSION_PATCH		0

/*
 * Optional features of the table line:
 *   <start> <length> subvol <backing_file> [<#features> <feature>...]
 */
#define DM_SUBVOL_FEATURE_IGNORE_DISCARD	"ignore_discard"

/*
 * Features with a value, written <name>:<value>:
 *   guarantee:full|none	back every promise with claimed host space
 *				(full, the default), or behave as a plain
 *				thin device (none)
 *   no_space:error|queue	a write the host has no space for and no
 *				promise covers fails at once with ENOSPC
 *				(error, the default) or waits for space
 *   no_space_timeout:<s>	how long queue waits, in seconds (default 60,
 *				1 to 3600)
 *   low_water:<sectors>	raise a dm event when the space the volume
 *				can still fill drops below this
 */
#define DM_SUBVOL_FEATURE_GUARANTEE		"guarantee"
#define DM_SUBVOL_FEATURE_NO_SPACE		"no_space"
#define DM_SUBVOL_FEATURE_NO_SPACE_TIMEOUT	"no_space_timeout"
#define DM_SUBVOL_FEATURE_LOW_WATER		"low_water"

#define DM_SUBVOL_GUARANTEE_FULL		"full"
#define DM_SUBVOL_GUARANTEE_NONE		"none"
#define DM_SUBVOL_NO_SPACE_ERROR		"error"
#define DM_SUBVOL_NO_SPACE_QUEUE		"queue"

#define DM_SUBVOL_NO_SPACE_TIMEOUT_DEFAULT	60
#define DM_SUBVOL_NO_SPACE_TIMEOUT_MAX		3600

/*
 * Messages (dmsetup message <device> 0 <message>):
 *   prepare_snapshot	while suspended: claim the copy-on-write reserve
 *			for every block a clone of the backing file will
 *			share, or fail with ENOSPC and change nothing
 *   reserve <sectors>	promise space for writes to holes, for a user of
 *			the device that cannot reserve for itself
 *   release <sectors>	give such a promise back
 *   rescan_sharing	(1.3.0) take which blocks are shared from the
 *			host's extent map again, after sharing changed
 *			outside the target (a clone removed or made);
 *			ENOSPC if blocks became shared whose copy-on-write
 *			reserve the host has no space for; EBUSY while
 *			a snapshot copy is held
 *   snapshot_begin <fd>	(1.4.0) while suspended: claim the copy-on-write
 *			reserve as prepare_snapshot does and start copying
 *			the backing file, as it is now, into the caller's
 *			open file <fd> (a regular file on the same host
 *			filesystem, open for writing, at least as large),
 *			by reflink, after the resume; EBUSY if a copy is
 *			held already
 *   snapshot_end	(1.4.0) let go of a copy whose status is done
 *   snapshot_cancel	(1.4.0) stop a copy in any state and let go of its
 *			file
 */
#define DM_SUBVOL_MSG_PREPARE_SNAPSHOT		"prepare_snapshot"
#define DM_SUBVOL_MSG_RESERVE			"reserve"
#define DM_SUBVOL_MSG_RELEASE			"release"
#define DM_SUBVOL_MSG_RESCAN_SHARING		"rescan_sharing"
#define DM_SUBVOL_MSG_SNAPSHOT_BEGIN		"snapshot_begin"
#define DM_SUBVOL_MSG_SNAPSHOT_END		"snapshot_end"
#define DM_SUBVOL_MSG_SNAPSHOT_CANCEL		"snapshot_cancel"

/*
 * The INFO status line is a list of space-separated fields in the order of
 * enum dm_subvol_status_field.  Its first field is the format number,
 * DM_SUBVOL_STATUS_FORMAT.  Later versions of the target only ever append
 * fields with the same format number; a reader must accept and ignore
 * fields it does not know.  The format number changes only if an existing
 * field changes its meaning.  Sizes are in 512-byte sectors, as everywhere
 * in device-mapper tables, whole host blocks each.
 */
#define DM_SUBVOL_STATUS_FORMAT		1

enum dm_subvol_status_field {
	DM_SUBVOL_STATUS_FORMAT_NR = 0,	/* DM_SUBVOL_STATUS_FORMAT */
	DM_SUBVOL_STATUS_MODE,		/* a DM_SUBVOL_MODE_* word */
	DM_SUBVOL_STATUS_BLOCK_SECTORS,	/* host filesystem block size */
	DM_SUBVOL_STATUS_VIRTUAL,	/* the target's length */
	DM_SUBVOL_STATUS_BACKED,	/* backing file blocks allocated on host */
	DM_SUBVOL_STATUS_HOST_FREE,	/* free space of the host filesystem */
	/* Added in version 1.1.0. */
	DM_SUBVOL_STATUS_GUARANTEE,	/* a DM_SUBVOL_GUARANTEE_* word */
	DM_SUBVOL_STATUS_NO_SPACE,	/* a DM_SUBVOL_NO_SPACE_* word */
	DM_SUBVOL_STATUS_MAPPED,	/* blocks allocated, as the map has them */
	DM_SUBVOL_STATUS_SHARED,	/* of them, shared with another file */
	DM_SUBVOL_STATUS_PROMISED,	/* promised to the filesystem on top */
	DM_SUBVOL_STATUS_COW_RESERVE,	/* held to overwrite shared blocks */
	DM_SUBVOL_STATUS_POOL_CLAIMED,	/* claimed from the host for the pool */
	DM_SUBVOL_STATUS_POOL_COMMITTED, /* promised by all of the pool */
	DM_SUBVOL_STATUS_UNCOVERED,	/* written to holes without a promise */
	DM_SUBVOL_STATUS_CLIENT,	/* a DM_SUBVOL_CLIENT_* word */
	DM_SUBVOL_STATUS_LOW_WATER,	/* a DM_SUBVOL_LOW_WATER_* word */
	/* Added in version 1.2.0. */
	DM_SUBVOL_STATUS_ACCOUNTING_ERRORS, /* inconsistent client calls */
	/* Added in version 1.4.0. */
	DM_SUBVOL_STATUS_SNAPSHOT_COPY,	/* see DM_SUBVOL_SNAPSHOT_COPY_* */
	DM_SUBVOL_STATUS_NR_FIELDS
};

/* Values of the mode field. */
#define DM_SUBVOL_MODE_RW		"rw"	/* read-write table */
#define DM_SUBVOL_MODE_RO		"ro"	/* read-only table */

/* Values of the client field: is a filesystem reserving through the API. */
#define DM_SUBVOL_CLIENT_ATTACHED	"attached"
#define DM_SUBVOL_CLIENT_NONE		"none"

/* Values of the low-water field. */
#define DM_SUBVOL_LOW_WATER_OK		"ok"	/* above, or no mark set */
#define DM_SUBVOL_LOW_WATER_HIT		"low"	/* below; the event was sent */

/*
 * Values of the snapshot copy field: none held, "<copied>/<total>"
 * sectors while copying, done (complete and durable; the target still
 * holds the file until snapshot_end), or "failed:<errno>" (a clone or
 * the sync failed; the copy stopped; snapshot_cancel lets go of it).
 */
#define DM_SUBVOL_SNAPSHOT_COPY_NONE	"-"
#define DM_SUBVOL_SNAPSHOT_COPY_DONE	"done"
#define DM_SUBVOL_SNAPSHOT_COPY_FAILED	"failed"

/* A field whose value the target cannot tell right now. */
#define DM_SUBVOL_STATUS_UNKNOWN	"-"

#endif /* _UAPI_LINUX_DM_SUBVOL_H */
