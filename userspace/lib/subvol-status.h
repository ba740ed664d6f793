/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Parsing the subvol target's status and table lines, and building table
 * lines, for the tool and the tests.  The layout is defined by
 * include/uapi/linux/dm-subvol.h.
 */
#ifndef SUBVOL_STATUS_H
#define SUBVOL_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct subvol_status {
	unsigned int format;
	bool writable;
	uint64_t block_sectors;
	uint64_t virtual_sectors;
	uint64_t backed_sectors;
	bool host_free_known;
	uint64_t host_free_sectors;

	/* The space fields, from target version 1.1.0 on (has_space). */
	bool has_space;
	bool guarantee;		/* guarantee:full */
	bool no_space_queue;	/* no_space:queue */
	uint64_t mapped_sectors;
	uint64_t shared_sectors;
	uint64_t promised_sectors;
	uint64_t cow_reserve_sectors;
	uint64_t pool_claimed_sectors;
	uint64_t pool_committed_sectors;
	uint64_t uncovered_sectors;
	bool client_attached;
	bool low_water_hit;

	/* From target version 1.2.0 on (has_accounting_errors). */
	bool has_accounting_errors;
	uint64_t accounting_errors;

	/* From target version 1.4.0 on (has_snapshot_copy). */
	bool has_snapshot_copy;
	enum subvol_copy {
		SUBVOL_COPY_NONE,	/* "-" */
		SUBVOL_COPY_RUNNING,	/* "<copied>/<total>" */
		SUBVOL_COPY_DONE,	/* "done" */
		SUBVOL_COPY_FAILED,	/* "failed:<errno>" */
	} copy;
	uint64_t copy_copied_sectors;	/* while running */
	uint64_t copy_total_sectors;
	int copy_errno;			/* when failed */
};

/*
 * Parse the target's INFO status parameters (what follows "<start>
 * <length> subvol").  Fields after the known ones are ignored, as the
 * uapi header requires; a line of target version 1.0.0 has no space
 * fields (has_space is false).  Returns 0, or -1 with a one-line reason
 * in err.
 */
int subvol_status_parse(const char *params, struct subvol_status *st,
			char *err, size_t errlen);

/* The table line's features; zeroed means the target's defaults. */
struct subvol_features {
	bool ignore_discard;
	bool no_guarantee;		/* guarantee:none */
	bool no_space_queue;		/* no_space:queue */
	unsigned int no_space_timeout;	/* seconds; 0: the default */
	uint64_t low_water_sectors;	/* 0: no mark */
};

/*
 * Write "<backing_file> [<#features> <feature>...]" to out, naming only
 * the features that differ from the defaults.  Returns the length, or -1
 * if out is too small, the path is not absolute or holds whitespace
 * (which no device-mapper table loaded through libdevmapper can carry:
 * libdevmapper escapes backslashes, not spaces), or the features do not
 * go together (a timeout without no_space:queue, or out of range).
 */
int subvol_table_build(char *out, size_t outlen, const char *path,
		       const struct subvol_features *f);

/*
 * Parse the TABLE parameters back: the path into path, and the features.
 * Returns 0, or -1 with a reason in err.
 */
int subvol_table_parse(const char *params, char *path, size_t pathlen,
		       struct subvol_features *f, char *err, size_t errlen);

#endif
