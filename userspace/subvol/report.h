/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output through libsmartcols: tables (list) and field lists (status),
 * as text or JSON.  Sizes are human-readable in text unless --bytes, and
 * always numbers of bytes in JSON.
 */
#ifndef SUBVOL_REPORT_H
#define SUBVOL_REPORT_H

#include <stdbool.h>
#include <stdint.h>

struct report_opts {
	bool json;
	bool bytes;
	bool noheadings;
};

enum field_type { FIELD_STRING, FIELD_SIZE, FIELD_NUMBER };

struct field {
	const char *name;	/* column name; lower case for JSON */
	enum field_type type;
	const char *str;	/* FIELD_STRING; NULL prints "-" / null */
	uint64_t num;
};

struct report;

struct report *report_new(const char *json_name, const struct report_opts *o,
			  const struct field *columns, int ncols);
/* One row: the fields in column order. */
int report_add(struct report *r, const struct field *row);
int report_print(struct report *r);

/* A single record as "Field: value" lines, or a JSON object. */
int report_fields(const char *json_name, const struct report_opts *o,
		  const struct field *fields, int n);

#endif
