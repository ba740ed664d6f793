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
#define DM_SUBVOL_VERSION_MINOR		0
#define DM_SUBVOL_VERSION_PATCH		0

/*
 * Optional features of the table line:
 *   <start> <length> subvol <backing_file> [<#features> <feature>...]
 */
#define DM_SUBVOL_FEATURE_IGNORE_DISCARD	"ignore_discard"

/*
 * The INFO status line is a list of space-separated fields in the order of
 * enum dm_subvol_status_field.  Its first field is the format number,
 * DM_SUBVOL_STATUS_FORMAT.  Later versions of the target only ever append
 * fields with the same format number; a reader must accept and ignore
 * fields it does not know.  The format number changes only if an existing
 * field changes its meaning.  Sizes are in 512-byte sectors, as everywhere
 * in device-mapper tables.
 */
#define DM_SUBVOL_STATUS_FORMAT		1

enum dm_subvol_status_field {
	DM_SUBVOL_STATUS_FORMAT_NR = 0,	/* DM_SUBVOL_STATUS_FORMAT */
	DM_SUBVOL_STATUS_MODE,		/* a DM_SUBVOL_MODE_* word */
	DM_SUBVOL_STATUS_BLOCK_SECTORS,	/* host filesystem block size */
	DM_SUBVOL_STATUS_VIRTUAL,	/* the target's length */
	DM_SUBVOL_STATUS_BACKED,	/* backing file blocks allocated on host */
	DM_SUBVOL_STATUS_HOST_FREE,	/* free space of the host filesystem */
	DM_SUBVOL_STATUS_NR_FIELDS
};

/* Values of the mode field. */
#define DM_SUBVOL_MODE_RW		"rw"	/* read-write table */
#define DM_SUBVOL_MODE_RO		"ro"	/* read-only table */

/* A field whose value the target cannot tell right now. */
#define DM_SUBVOL_STATUS_UNKNOWN	"-"

#endif /* _UAPI_LINUX_DM_SUBVOL_H */
