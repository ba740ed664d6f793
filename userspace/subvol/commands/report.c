// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Tables and field lists through libsmartcols (see report.h).
 */
#include "commands/commands.h"
#include "commands/report.h"

#include <ctype.h>
#include <inttypes.h>
#include <libsmartcols.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A sort key: a column of the table, ascending or not. */
struct sort_key {
	struct libscols_column *cl;
	enum field_type type;
	bool descending;
};

/*
 * The table's columns are the nsel shown, then those sorted by but not
 * shown (hidden); ncol of them, col[] their fields' indexes.
 */
struct report {
	struct libscols_table *tb;
	struct report_opts opts;
	const struct field *cols;
	int col[2 * REPORT_MAX_COLUMNS];
	int nsel, ncol;
	struct sort_key keys[REPORT_MAX_COLUMNS];
	int nkeys;
};

/* What a cell sorts by: a line's values, one per column (its userdata). */
struct sort_value {
	uint64_t num;
	bool null;
};

bool report_add_columns(struct report_opts *o, const char *arg)
{
	size_t n = strlen(o->columns_buf);

	/* After the first, "+" adds nothing: they all add up. */
	if (n && *arg == '+')
		arg++;
	if (n + 1 + strlen(arg) >= sizeof(o->columns_buf))
		return false;
	snprintf(o->columns_buf + n, sizeof(o->columns_buf) - n, "%s%s", n ? "," : "", arg);
	o->columns = o->columns_buf;
	return true;
}

bool report_set_units(struct report_opts *o, const char *arg)
{
	if (strlen(arg) != 1 || !strchr("hbskmgtpeBSKMGTPE", arg[0]))
		return false;
	o->units = arg[0] == 'h' ? 0 : arg[0];
	return true;
}

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
		else if (o->units)
			format_size_in(buf, sizeof(buf), f->num, o->units, !o->nosuffix);
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

/*
 * Lines compared by a column's values: numbers as numbers, text as text,
 * no value first.
 */
static int compare_cells(struct libscols_cell *a, struct libscols_cell *b, void *data)
{
	const struct sort_key *k = data;
	const struct sort_value *x = scols_cell_get_userdata(a);
	const struct sort_value *y = scols_cell_get_userdata(b);
	int r;

	if (x->null || y->null)
		r = x->null == y->null ? 0 : x->null ? -1 : 1;
	else if (k->type == FIELD_STRING)
		r = strcmp(scols_cell_get_data(a), scols_cell_get_data(b));
	else
		r = x->num < y->num ? -1 : x->num > y->num;
	return k->descending ? -r : r;
}

static struct libscols_column *add_column(struct report *r, int field, bool hidden)
{
	const struct field *c = &r->cols[field];
	struct libscols_column *cl;
	char name[64];

	column_name(name, sizeof(name), c->name, r->opts.json);
	cl = scols_table_new_column(r->tb, name, 0,
				    (c->type == FIELD_STRING || c->type == FIELD_BOOL ?
				     0 : SCOLS_FL_RIGHT) | (hidden ? SCOLS_FL_HIDDEN : 0));
	if (!cl)
		return NULL;
	if (c->type == FIELD_SIZE || c->type == FIELD_NUMBER)
		scols_column_set_json_type(cl, SCOLS_JSON_NUMBER);
	else if (c->type == FIELD_BOOL)
		scols_column_set_json_type(cl, SCOLS_JSON_BOOLEAN);
	r->col[r->ncol++] = field;
	return cl;
}

/*
 * -O: the columns to sort by, each added hidden unless shown; EXIT_USAGE
 * (said) for a name it does not know, -1 out of memory.
 */
static int add_sort_keys(struct report *r, const char *cmd, int ncols)
{
	const char *p = r->opts.sort;
	struct sort_key *k;
	bool desc;
	size_t len;
	int i, j;

	while (p && *p) {
		desc = *p == '-';
		p += desc || *p == '+';
		len = strcspn(p, ",");
		i = find_column(r->cols, ncols, p, len);
		if (i < 0 || r->nkeys == REPORT_MAX_COLUMNS)
			return usage_error(cmd, "--sort: unknown column \"%.*s\" (the columns of -o; -NAME sorts descending)",
					   (int)len, p);
		k = &r->keys[r->nkeys++];
		k->type = r->cols[i].type;
		k->descending = desc;
		for (j = 0; j < r->ncol && r->col[j] != i; j++)
			;
		k->cl = j < r->ncol ? scols_table_get_column(r->tb, j) : add_column(r, i, true);
		if (!k->cl || scols_column_set_cmpfunc(k->cl, compare_cells, k))
			return -1;
		p += len + (p[len] == ',');
	}
	return 0;
}

struct report *report_new(const char *cmd, const char *json_name,
			  const struct report_opts *o, const struct field *columns,
			  int ncols, const int *sel, int nsel, bool *usage)
{
	struct report *r = calloc(1, sizeof(*r));
	int i;

	*usage = false;
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
	r->nsel = nsel;
	scols_table_set_name(r->tb, json_name);
	scols_table_enable_json(r->tb, o->json);
	scols_table_enable_noheadings(r->tb, o->noheadings);
	for (i = 0; i < nsel; i++)
		if (!add_column(r, sel[i], false))
			goto fail;
	i = add_sort_keys(r, cmd, ncols);
	if (i) {
		*usage = i == EXIT_USAGE;
		goto fail;
	}
	return r;
fail:
	scols_unref_table(r->tb);
	free(r);
	return NULL;
}

bool report_uses(const struct report *r, int col)
{
	int i;

	for (i = 0; i < r->ncol; i++)
		if (r->col[i] == col)
			return true;
	return false;
}

int report_add(struct report *r, const struct field *row)
{
	struct libscols_line *ln = scols_table_new_line(r->tb, NULL);
	struct sort_value *v = calloc(r->ncol, sizeof(*v));
	const struct field *f;
	char *s;
	int i;

	if (!ln || !v) {
		free(v);
		return -1;
	}
	scols_line_set_userdata(ln, v);
	for (i = 0; i < r->ncol; i++) {
		f = &row[r->col[i]];
		v[i].num = f->num;
		v[i].null = f->null || (f->type == FIELD_STRING && !f->str);
		scols_cell_set_userdata(scols_line_get_cell(ln, i), &v[i]);
		s = cell(f, &r->opts);
		if (!s && !r->opts.json)
			s = strdup("-");
		if (s && scols_line_refer_data(ln, i, s)) {
			free(s);
			return -1;
		}
	}
	return 0;
}

/* Sorted by the last key first: the sort is stable, so the first decides. */
static void sort_lines(struct report *r)
{
	int i;

	for (i = r->nkeys - 1; i >= 0; i--)
		scols_sort_table(r->tb, r->keys[i].cl);
}

static void free_lines(struct libscols_table *tb)
{
	struct libscols_iter *it = scols_new_iter(SCOLS_ITER_FORWARD);
	struct libscols_line *ln;

	while (it && !scols_table_next_line(tb, it, &ln))
		free(scols_line_get_userdata(ln));
	scols_free_iter(it);
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
		if (scols_column_is_hidden(cl))
			continue;
		d = scols_cell_get_data(scols_column_get_header(cl));
		printf("%s%s", i ? sep : "", d ? d : "");
	}
	if (headings && n)
		putchar('\n');
	while (it && !scols_table_next_line(tb, it, &ln)) {
		for (i = 0; i < n; i++) {
			if (scols_column_is_hidden(scols_table_get_column(tb, i)))
				continue;
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

	sort_lines(r);
	/* libsmartcols prints an empty line for a table without lines. */
	if (r->opts.json && !scols_table_get_nlines(r->tb))
		printf("{\n   \"%s\": []\n}\n", scols_table_get_name(r->tb));
	else if (r->opts.separator && !r->opts.json)
		print_separated(r->tb, r->opts.separator, !r->opts.noheadings);
	else
		ret = scols_print_table(r->tb);
	free_lines(r->tb);
	scols_unref_table(r->tb);
	free(r);
	return ret;
}

/*
 * "host_lvm:" as a label: "Host LVM:" (the first letter up, "_" a blank,
 * the abbreviations LV, LVM and ID in capitals, as LVM writes them).
 */
static void field_label(char *label)
{
	static const char *const caps[] = { "lv", "lvm", "id" };
	char *w, *s;
	size_t i, n;

	for (s = label; *s; s++)
		if (*s == '_')
			*s = ' ';
	for (w = label; *w; w += n + (w[n] != '\0')) {
		n = strcspn(w, " :");
		for (i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
			if (n == strlen(caps[i]) && !strncmp(w, caps[i], n))
				for (s = w; s < w + n; s++)
					*s = toupper((unsigned char)*s);
	}
	label[0] = toupper((unsigned char)label[0]);
}

int report_fields(const char *json_name, const struct report_opts *o,
		  const struct field *fields, const int *sel, int nsel)
{
	struct libscols_table *tb;
	struct libscols_line *ln;
	struct report *r;
	char label[64], *s;
	bool usage;
	int i;

	if (o->json) {
		/* A one-row table, its columns the fields (an array of one). */
		r = report_new(NULL, json_name, o, fields, 0, sel, nsel, &usage);
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
		if (!o->separator)
			field_label(label);
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
