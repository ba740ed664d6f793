// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tables and field lists through libsmartcols (see report.h).
 */
#include "subvol.h"
#include "cmd.h"
#include "report.h"

#include <ctype.h>
#include <inttypes.h>
#include <libsmartcols.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct report {
	struct libscols_table *tb;
	struct report_opts opts;
	const struct field *cols;
	int sel[REPORT_MAX_COLUMNS];
	int nsel;
};

/* The cell text of a field, malloc'ed; NULL for "no value". */
static char *cell(const struct field *f, const struct report_opts *o)
{
	char buf[64];

	if (f->null)
		return NULL;
	switch (f->type) {
	case FIELD_STRING:
		return f->str ? strdup(f->str) : NULL;
	case FIELD_SIZE:
		if (o->json || o->bytes)
			snprintf(buf, sizeof(buf), "%" PRIu64, f->num);
		else
			format_size(buf, sizeof(buf), f->num);
		break;
	case FIELD_BOOL:
		/* libsmartcols makes "yes" true and "no" false in JSON. */
		snprintf(buf, sizeof(buf), "%s", f->num ? "yes" : "no");
		break;
	default:
		snprintf(buf, sizeof(buf), "%" PRIu64, f->num);
	}
	return strdup(buf);
}

/* Column names: upper case in text (as lsblk), lower case in JSON. */
static void column_name(char *out, size_t len, const char *name, bool json)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		out[i] = json ? tolower((unsigned char)name[i]) : toupper((unsigned char)name[i]);
	out[i] = '\0';
}

static int find_column(const struct field *cols, int ncols, const char *name,
		       size_t len)
{
	int i;

	for (i = 0; i < ncols; i++)
		if (strlen(cols[i].name) == len && !strncasecmp(cols[i].name, name, len))
			return i;
	return -1;
}

int report_select(const char *cmd, const struct report_opts *o,
		  const struct field *cols, int ncols, int sel[REPORT_MAX_COLUMNS])
{
	const char *p = o->columns;
	char valid[1024];
	size_t len, vlen = 0;
	int i, n = 0;

	if (!p || *p == '+') {
		for (i = 0; i < ncols && n < REPORT_MAX_COLUMNS; i++)
			if (!cols[i].hidden)
				sel[n++] = i;
		if (!p)
			return n;
		p++;
	}
	for (;;) {
		len = strcspn(p, ",");
		i = find_column(cols, ncols, p, len);
		if (i < 0) {
			for (i = 0; i < ncols; i++)
				vlen += snprintf(valid + vlen, vlen < sizeof(valid) ? sizeof(valid) - vlen : 0,
						 "%s%s", i ? "," : "", cols[i].name);
			usage_error(cmd, "unknown column \"%.*s\" (valid: %s)", (int)len, p, valid);
			return -1;
		}
		if (n == REPORT_MAX_COLUMNS) {
			usage_error(cmd, "more than %d columns", REPORT_MAX_COLUMNS);
			return -1;
		}
		sel[n++] = i;
		if (!p[len])
			break;
		p += len + 1;
	}
	return n;
}

struct report *report_new(const char *json_name, const struct report_opts *o,
			  const struct field *columns, const int *sel, int nsel)
{
	struct report *r = calloc(1, sizeof(*r));
	const struct field *c;
	struct libscols_column *cl;
	char name[64];
	int i;

	if (!r || nsel > REPORT_MAX_COLUMNS) {
		free(r);
		return NULL;
	}
	r->tb = scols_new_table();
	if (!r->tb) {
		free(r);
		return NULL;
	}
	r->opts = *o;
	r->cols = columns;
	memcpy(r->sel, sel, nsel * sizeof(*sel));
	r->nsel = nsel;
	scols_table_set_name(r->tb, json_name);
	scols_table_enable_json(r->tb, o->json);
	scols_table_enable_noheadings(r->tb, o->noheadings);
	for (i = 0; i < nsel; i++) {
		c = &columns[sel[i]];
		column_name(name, sizeof(name), c->name, o->json);
		cl = scols_table_new_column(r->tb, name, 0,
					    c->type == FIELD_STRING || c->type == FIELD_BOOL ?
					    0 : SCOLS_FL_RIGHT);
		if (!cl)
			goto fail;
		if (c->type == FIELD_SIZE || c->type == FIELD_NUMBER)
			scols_column_set_json_type(cl, SCOLS_JSON_NUMBER);
		else if (c->type == FIELD_BOOL)
			scols_column_set_json_type(cl, SCOLS_JSON_BOOLEAN);
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
	for (i = 0; i < r->nsel; i++) {
		s = cell(&row[r->sel[i]], &r->opts);
		if (!s && !r->opts.json)
			s = strdup("-");
		if (s && scols_line_refer_data(ln, i, s)) {
			free(s);
			return -1;
		}
	}
	return 0;
}

/*
 * --separator: the cells apart by it and not aligned, as lvs prints them
 * (libsmartcols' raw mode would escape blanks as \x20).
 */
static void print_separated(struct libscols_table *tb, const char *sep,
			    bool headings)
{
	struct libscols_iter *it = scols_new_iter(SCOLS_ITER_FORWARD);
	struct libscols_column *cl;
	struct libscols_line *ln;
	const char *d;
	size_t i, n = scols_table_get_ncols(tb);

	for (i = 0; headings && i < n; i++) {
		cl = scols_table_get_column(tb, i);
		d = scols_cell_get_data(scols_column_get_header(cl));
		printf("%s%s", i ? sep : "", d ? d : "");
	}
	if (headings && n)
		putchar('\n');
	while (it && !scols_table_next_line(tb, it, &ln)) {
		for (i = 0; i < n; i++) {
			d = scols_cell_get_data(scols_line_get_cell(ln, i));
			printf("%s%s", i ? sep : "", d ? d : "");
		}
		putchar('\n');
	}
	scols_free_iter(it);
}

int report_print(struct report *r)
{
	int ret = 0;

	if (r->opts.separator && !r->opts.json)
		print_separated(r->tb, r->opts.separator, !r->opts.noheadings);
	else
		ret = scols_print_table(r->tb);
	scols_unref_table(r->tb);
	free(r);
	return ret;
}

int report_fields(const char *json_name, const struct report_opts *o,
		  const struct field *fields, const int *sel, int nsel)
{
	struct libscols_table *tb;
	struct libscols_line *ln;
	struct report *r;
	char label[64], *s;
	int i;

	if (o->json) {
		/* A one-row table, its columns the fields (an array of one). */
		r = report_new(json_name, o, fields, sel, nsel);
		if (!r || report_add(r, fields))
			return -1;
		return report_print(r);
	}
	/* Two columns, label and value; --noheadings leaves the labels out. */
	tb = scols_new_table();
	if (!tb)
		return -1;
	scols_table_enable_noheadings(tb, 1);
	if ((!o->noheadings && !scols_table_new_column(tb, "FIELD", 0, 0)) ||
	    !scols_table_new_column(tb, "VALUE", 0, 0))
		goto fail;
	for (i = 0; i < nsel; i++) {
		ln = scols_table_new_line(tb, NULL);
		if (!ln)
			goto fail;
		/* "No space:" to read; no_space, as -o takes it, to parse. */
		snprintf(label, sizeof(label), "%s%s", fields[sel[i]].name,
			 o->separator ? "" : ":");
		if (!o->separator) {
			label[0] = toupper((unsigned char)label[0]);
			for (s = label; *s; s++)
				if (*s == '_')
					*s = ' ';
		}
		if (!o->noheadings)
			scols_line_set_data(ln, 0, label);
		s = cell(&fields[sel[i]], o);
		scols_line_refer_data(ln, o->noheadings ? 0 : 1, s ? s : strdup("-"));
	}
	i = 0;
	if (o->separator)
		print_separated(tb, o->separator, false);
	else
		i = scols_print_table(tb);
	scols_unref_table(tb);
	return i;
fail:
	scols_unref_table(tb);
	return -1;
}
