// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tables and field lists through libsmartcols (see report.h).
 */
#include "subvol.h"
#include "report.h"

#include <ctype.h>
#include <inttypes.h>
#include <libsmartcols.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct report {
	struct libscols_table *tb;
	struct report_opts opts;
	const struct field *cols;
	int ncols;
};

/* The cell text of a field, malloc'ed; NULL for "no value". */
static char *cell(const struct field *f, const struct report_opts *o)
{
	char buf[64], *s;

	switch (f->type) {
	case FIELD_STRING:
		return f->str ? strdup(f->str) : NULL;
	case FIELD_SIZE:
		if (o->json || o->bytes)
			snprintf(buf, sizeof(buf), "%" PRIu64, f->num);
		else
			format_size(buf, sizeof(buf), f->num);
		break;
	default:
		snprintf(buf, sizeof(buf), "%" PRIu64, f->num);
	}
	s = strdup(buf);
	return s;
}

/* Column names: upper case in text (as lsblk), lower case in JSON. */
static void column_name(char *out, size_t len, const char *name, bool json)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		out[i] = json ? tolower((unsigned char)name[i]) : toupper((unsigned char)name[i]);
	out[i] = '\0';
}

struct report *report_new(const char *json_name, const struct report_opts *o,
			  const struct field *columns, int ncols)
{
	struct report *r = calloc(1, sizeof(*r));
	struct libscols_column *cl;
	char name[64];
	int i;

	if (!r)
		return NULL;
	r->tb = scols_new_table();
	if (!r->tb) {
		free(r);
		return NULL;
	}
	r->opts = *o;
	r->cols = columns;
	r->ncols = ncols;
	scols_table_set_name(r->tb, json_name);
	scols_table_enable_json(r->tb, o->json);
	scols_table_enable_noheadings(r->tb, o->noheadings);
	for (i = 0; i < ncols; i++) {
		column_name(name, sizeof(name), columns[i].name, o->json);
		cl = scols_table_new_column(r->tb, name, 0,
					    columns[i].type == FIELD_STRING ? 0 : SCOLS_FL_RIGHT);
		if (!cl)
			goto fail;
		if (columns[i].type != FIELD_STRING)
			scols_column_set_json_type(cl, SCOLS_JSON_NUMBER);
	}
	return r;
fail:
	scols_unref_table(r->tb);
	free(r);
	return NULL;
}

int report_add(struct report *r, const struct field *row)
{
	struct libscols_line *ln = scols_table_new_line(r->tb, NULL);
	char *s;
	int i;

	if (!ln)
		return -1;
	for (i = 0; i < r->ncols; i++) {
		s = cell(&row[i], &r->opts);
		if (!s && !r->opts.json)
			s = strdup("-");
		if (s && scols_line_refer_data(ln, i, s)) {
			free(s);
			return -1;
		}
	}
	return 0;
}

int report_print(struct report *r)
{
	int ret = scols_print_table(r->tb);

	scols_unref_table(r->tb);
	free(r);
	return ret;
}

int report_fields(const char *json_name, const struct report_opts *o,
		  const struct field *fields, int n)
{
	struct libscols_table *tb;
	struct libscols_line *ln;
	struct report *r;
	char label[64], *s;
	int i;

	if (o->json) {
		/* A one-row table, its columns the fields (an array of one). */
		r = report_new(json_name, o, fields, n);
		if (!r || report_add(r, fields))
			return -1;
		return report_print(r);
	}
	tb = scols_new_table();
	if (!tb)
		return -1;
	scols_table_enable_noheadings(tb, 1);
	if (!scols_table_new_column(tb, "FIELD", 0, 0) ||
	    !scols_table_new_column(tb, "VALUE", 0, 0))
		goto fail;
	for (i = 0; i < n; i++) {
		ln = scols_table_new_line(tb, NULL);
		if (!ln)
			goto fail;
		snprintf(label, sizeof(label), "%s:", fields[i].name);
		label[0] = toupper((unsigned char)label[0]);
		for (s = label; *s; s++)
			if (*s == '_')
				*s = ' ';
		scols_line_set_data(ln, 0, label);
		s = cell(&fields[i], o);
		scols_line_refer_data(ln, 1, s ? s : strdup("-"));
	}
	i = scols_print_table(tb);
	scols_unref_table(tb);
	return i;
fail:
	scols_unref_table(tb);
	return -1;
}
