/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Output through libsmartcols: tables (list) and field lists (status),
 * as text or JSON.  Sizes are human-readable in text (as lsblk prints
 * them) unless --bytes or --units, and always numbers of bytes in JSON.
 * The columns shown are chosen by name (-o, as lvs -o and lsblk -o), and
 * a table's lines sorted by columns (-O, as lvs -O).
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
	/*
	 * --units: 0 human-readable; b (bytes), s (sectors), k m g t p e
	 * (powers of 1024) or K M G T P E (of 1000), as lvs --units.
	 */
	char units;
	bool nosuffix;		/* --nosuffix: numbers without the unit */
	const char *columns;	/* -o: NULL for the defaults, "+A,B" adds */
	const char *sort;	/* -O: "A,-B" (B descending); NULL: as added */
	const char *separator;	/* --separator: fields apart by it, unaligned */
	char columns_buf[1024];	/* repeated -o, joined (lvs adds them up) */
};

/*
 * One more -o: added to the ones before, as lvs does ("-o name -o size"
 * is "-o name,size"); false when they get too long.
 */
bool report_add_columns(struct report_opts *o, const char *arg);
/* --units: false for a unit it does not know. */
bool report_set_units(struct report_opts *o, const char *arg);

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

/*
 * A table of the selected columns; o->sort names the columns to sort its
 * lines by, which need not be shown (a usage error of cmd when unknown:
 * NULL, said on stderr, *usage set).
 */
struct report *report_new(const char *cmd, const char *json_name,
			  const struct report_opts *o, const struct field *columns,
			  int ncols, const int *sel, int nsel, bool *usage);
/* Whether the table holds column col (shown or sorted by). */
bool report_uses(const struct report *r, int col);
/* One row: every field of the columns given to report_new, in their order. */
int report_add(struct report *r, const struct field *row);
/* Sorted as o->sort says, printed, and freed. */
int report_print(struct report *r);

/* A single record as "Field: value" lines, or a JSON object. */
int report_fields(const char *json_name, const struct report_opts *o,
		  const struct field *fields, const int *sel, int nsel);

#endif
