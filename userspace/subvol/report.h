/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output through libsmartcols: tables (list) and field lists (status),
 * as text or JSON.  Sizes are human-readable in text unless --bytes, and
 * always numbers of bytes in JSON.  The columns shown are chosen by name
 * (-o, as lvs -o and lsblk -o).
 */
#ifndef SUBVOL_REPORT_H
#define SUBVOL_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#define REPORT_MAX_COLUMNS	64

struct report_opts {
	bool json;
	bool bytes;
	bool noheadings;
	const char *columns;	/* -o: NULL for the defaults, "+A,B" adds */
	const char *separator;	/* --separator: fields apart by it, unaligned */
};

enum field_type { FIELD_STRING, FIELD_SIZE, FIELD_NUMBER, FIELD_BOOL };

struct field {
	const char *name;	/* column name; lower case for JSON */
	enum field_type type;
	const char *str;	/* FIELD_STRING; NULL prints "-" / null */
	uint64_t num;
	bool hidden;		/* not a default column: -o names it */
	bool null;		/* no value ("-" / null), of any type */
};

struct report;

/*
 * The columns to show: those o->columns names (in any case), or the ones
 * not hidden, or those followed by the names after a leading "+".  Fills
 * sel with indexes into cols and returns how many; an unknown name is a
 * usage error of cmd (said on stderr), -1.
 */
int report_select(const char *cmd, const struct report_opts *o,
		  const struct field *cols, int ncols, int sel[REPORT_MAX_COLUMNS]);

struct report *report_new(const char *json_name, const struct report_opts *o,
			  const struct field *columns, const int *sel, int nsel);
/* One row: every field of the columns given to report_new, in their order. */
int report_add(struct report *r, const struct field *row);
int report_print(struct report *r);

/* A single record as "Field: value" lines, or a JSON object. */
int report_fields(const char *json_name, const struct report_opts *o,
		  const struct field *fields, const int *sel, int nsel);

#endif
