// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Parsing and building the subvol target's status and table lines.
 */
#include "subvol-status.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/dm-subvol.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* Split params at whitespace; returns the number of words, at most max. */
static size_t split_words(char *buf, char **words, size_t max)
{
	size_t n = 0;
	char *save, *w;

	for (w = strtok_r(buf, " \t\n", &save); w && n < max;
	     w = strtok_r(NULL, " \t\n", &save))
		words[n++] = w;
	return n;
}

static int parse_u64(const char *word, uint64_t *value)
{
	char *end;

	if (!isdigit((unsigned char)word[0]))
		return -1;
	errno = 0;
	*value = strtoull(word, &end, 10);
	return (errno || *end) ? -1 : 0;
}

static const char *const field_names[DM_SUBVOL_STATUS_NR_FIELDS] = {
	[DM_SUBVOL_STATUS_FORMAT_NR] = "format",
	[DM_SUBVOL_STATUS_MODE] = "mode",
	[DM_SUBVOL_STATUS_BLOCK_SECTORS] = "block size",
	[DM_SUBVOL_STATUS_VIRTUAL] = "virtual size",
	[DM_SUBVOL_STATUS_BACKED] = "backed size",
	[DM_SUBVOL_STATUS_HOST_FREE] = "host free space",
	[DM_SUBVOL_STATUS_GUARANTEE] = "guarantee",
	[DM_SUBVOL_STATUS_NO_SPACE] = "no-space policy",
	[DM_SUBVOL_STATUS_MAPPED] = "mapped size",
	[DM_SUBVOL_STATUS_SHARED] = "shared size",
	[DM_SUBVOL_STATUS_PROMISED] = "promised size",
	[DM_SUBVOL_STATUS_COW_RESERVE] = "copy-on-write reserve",
	[DM_SUBVOL_STATUS_POOL_CLAIMED] = "pool claim",
	[DM_SUBVOL_STATUS_POOL_COMMITTED] = "pool promises",
	[DM_SUBVOL_STATUS_UNCOVERED] = "uncovered size",
	[DM_SUBVOL_STATUS_CLIENT] = "client",
	[DM_SUBVOL_STATUS_LOW_WATER] = "low-water state",
	[DM_SUBVOL_STATUS_ACCOUNTING_ERRORS] = "accounting error count",
	[DM_SUBVOL_STATUS_SNAPSHOT_COPY] = "snapshot copy",
};

/* The fields of target version 1.0.0, which every line has. */
#define STATUS_BASE_FIELDS	(DM_SUBVOL_STATUS_HOST_FREE + 1)
/* The fields of version 1.1.0: the space fields. */
#define STATUS_SPACE_FIELDS	(DM_SUBVOL_STATUS_LOW_WATER + 1)

/* The snapshot copy field: "-", "<copied>/<total>", "done", "failed:<errno>". */
static int parse_copy(const char *word, struct subvol_status *st, char *err,
		      size_t errlen)
{
	char num[32];
	const char *slash = strchr(word, '/');
	uint64_t e;

	if (!strcmp(word, DM_SUBVOL_SNAPSHOT_COPY_NONE)) {
		st->copy = SUBVOL_COPY_NONE;
	} else if (!strcmp(word, DM_SUBVOL_SNAPSHOT_COPY_DONE)) {
		st->copy = SUBVOL_COPY_DONE;
	} else if (!strncmp(word, DM_SUBVOL_SNAPSHOT_COPY_FAILED ":",
			    strlen(DM_SUBVOL_SNAPSHOT_COPY_FAILED) + 1) &&
		   !parse_u64(word + strlen(DM_SUBVOL_SNAPSHOT_COPY_FAILED) + 1, &e) &&
		   e > 0 && e < 4096) {
		st->copy = SUBVOL_COPY_FAILED;
		st->copy_errno = (int)e;
	} else if (slash && (size_t)(slash - word) < sizeof(num)) {
		memcpy(num, word, slash - word);
		num[slash - word] = '\0';
		if (parse_u64(num, &st->copy_copied_sectors) ||
		    parse_u64(slash + 1, &st->copy_total_sectors))
			goto bad;
		st->copy = SUBVOL_COPY_RUNNING;
	} else {
		goto bad;
	}
	return 0;
bad:
	return fail(err, errlen, "status: %s \"%s\" is not understood",
		    field_names[DM_SUBVOL_STATUS_SNAPSHOT_COPY], word);
}

/* A word that must be one of two: sets *value, or fails naming the field. */
static int parse_choice(char **words, int field, const char *yes,
			const char *no, bool *value, char *err, size_t errlen)
{
	if (!strcmp(words[field], yes))
		*value = true;
	else if (!strcmp(words[field], no))
		*value = false;
	else
		return fail(err, errlen, "status: unknown %s \"%s\"",
			    field_names[field], words[field]);
	return 0;
}

int subvol_status_parse(const char *params, struct subvol_status *st,
			char *err, size_t errlen)
{
	char *words[DM_SUBVOL_STATUS_NR_FIELDS];
	uint64_t *numbers[DM_SUBVOL_STATUS_NR_FIELDS] = {
		[DM_SUBVOL_STATUS_BLOCK_SECTORS] = &st->block_sectors,
		[DM_SUBVOL_STATUS_VIRTUAL] = &st->virtual_sectors,
		[DM_SUBVOL_STATUS_BACKED] = &st->backed_sectors,
		[DM_SUBVOL_STATUS_MAPPED] = &st->mapped_sectors,
		[DM_SUBVOL_STATUS_SHARED] = &st->shared_sectors,
		[DM_SUBVOL_STATUS_PROMISED] = &st->promised_sectors,
		[DM_SUBVOL_STATUS_COW_RESERVE] = &st->cow_reserve_sectors,
		[DM_SUBVOL_STATUS_POOL_CLAIMED] = &st->pool_claimed_sectors,
		[DM_SUBVOL_STATUS_POOL_COMMITTED] = &st->pool_committed_sectors,
		[DM_SUBVOL_STATUS_UNCOVERED] = &st->uncovered_sectors,
		[DM_SUBVOL_STATUS_ACCOUNTING_ERRORS] = &st->accounting_errors,
	};
	uint64_t format;
	char *buf;
	size_t n;
	int i, r = -1;

	memset(st, 0, sizeof(*st));
	buf = strdup(params);
	if (!buf)
		return fail(err, errlen, "status: %s", strerror(errno));
	n = split_words(buf, words, DM_SUBVOL_STATUS_NR_FIELDS);

	if (n < 1 || parse_u64(words[0], &format)) {
		fail(err, errlen, "status: no format number in \"%s\"", params);
		goto out;
	}
	if (format != DM_SUBVOL_STATUS_FORMAT) {
		fail(err, errlen, "status: format %" PRIu64 ", this tool reads format %d",
		     format, DM_SUBVOL_STATUS_FORMAT);
		goto out;
	}
	st->format = format;
	if (n < STATUS_BASE_FIELDS ||
	    (n > STATUS_BASE_FIELDS && n < STATUS_SPACE_FIELDS)) {
		fail(err, errlen, "status: %zu fields, %d or at least %d expected",
		     n, STATUS_BASE_FIELDS, STATUS_SPACE_FIELDS);
		goto out;
	}
	st->has_space = n >= STATUS_SPACE_FIELDS;
	st->has_accounting_errors = n > DM_SUBVOL_STATUS_ACCOUNTING_ERRORS;

	if (!strcmp(words[DM_SUBVOL_STATUS_MODE], DM_SUBVOL_MODE_RW)) {
		st->writable = true;
	} else if (strcmp(words[DM_SUBVOL_STATUS_MODE], DM_SUBVOL_MODE_RO)) {
		fail(err, errlen, "status: unknown mode \"%s\"",
		     words[DM_SUBVOL_STATUS_MODE]);
		goto out;
	}

	for (i = 0; i < (int)n && i < DM_SUBVOL_STATUS_NR_FIELDS; i++) {
		if (!numbers[i])
			continue;
		if (parse_u64(words[i], numbers[i])) {
			fail(err, errlen, "status: %s \"%s\" is not a number",
			     field_names[i], words[i]);
			goto out;
		}
	}

	if (strcmp(words[DM_SUBVOL_STATUS_HOST_FREE], DM_SUBVOL_STATUS_UNKNOWN)) {
		if (parse_u64(words[DM_SUBVOL_STATUS_HOST_FREE], &st->host_free_sectors)) {
			fail(err, errlen, "status: %s \"%s\" is not a number",
			     field_names[DM_SUBVOL_STATUS_HOST_FREE],
			     words[DM_SUBVOL_STATUS_HOST_FREE]);
			goto out;
		}
		st->host_free_known = true;
	}

	if (st->has_space &&
	    (parse_choice(words, DM_SUBVOL_STATUS_GUARANTEE,
			  DM_SUBVOL_GUARANTEE_FULL, DM_SUBVOL_GUARANTEE_NONE,
			  &st->guarantee, err, errlen) ||
	     parse_choice(words, DM_SUBVOL_STATUS_NO_SPACE,
			  DM_SUBVOL_NO_SPACE_QUEUE, DM_SUBVOL_NO_SPACE_ERROR,
			  &st->no_space_queue, err, errlen) ||
	     parse_choice(words, DM_SUBVOL_STATUS_CLIENT,
			  DM_SUBVOL_CLIENT_ATTACHED, DM_SUBVOL_CLIENT_NONE,
			  &st->client_attached, err, errlen) ||
	     parse_choice(words, DM_SUBVOL_STATUS_LOW_WATER,
			  DM_SUBVOL_LOW_WATER_HIT, DM_SUBVOL_LOW_WATER_OK,
			  &st->low_water_hit, err, errlen)))
		goto out;
	st->has_snapshot_copy = n > DM_SUBVOL_STATUS_SNAPSHOT_COPY;
	if (st->has_snapshot_copy &&
	    parse_copy(words[DM_SUBVOL_STATUS_SNAPSHOT_COPY], st, err, errlen))
		goto out;
	r = 0;
out:
	free(buf);
	return r;
}

int subvol_table_build(char *out, size_t outlen, const char *path,
		       const struct subvol_features *f)
{
	char feat[5][48];
	const char *p;
	size_t len;
	int n = 0, r, i;

	if (path[0] != '/')
		return -1;
	/* libdevmapper passes whitespace through unescaped: it would split. */
	for (p = path; *p; p++)
		if (isspace((unsigned char)*p))
			return -1;
	if (f->no_space_timeout &&
	    (!f->no_space_queue || f->no_space_timeout > DM_SUBVOL_NO_SPACE_TIMEOUT_MAX))
		return -1;

	if (f->ignore_discard)
		strcpy(feat[n++], DM_SUBVOL_FEATURE_IGNORE_DISCARD);
	if (f->no_guarantee)
		strcpy(feat[n++], DM_SUBVOL_FEATURE_GUARANTEE ":" DM_SUBVOL_GUARANTEE_NONE);
	if (f->no_space_queue)
		strcpy(feat[n++], DM_SUBVOL_FEATURE_NO_SPACE ":" DM_SUBVOL_NO_SPACE_QUEUE);
	if (f->no_space_timeout)
		snprintf(feat[n++], sizeof(feat[0]), "%s:%u",
			 DM_SUBVOL_FEATURE_NO_SPACE_TIMEOUT, f->no_space_timeout);
	if (f->low_water_sectors)
		snprintf(feat[n++], sizeof(feat[0]), "%s:%" PRIu64,
			 DM_SUBVOL_FEATURE_LOW_WATER, f->low_water_sectors);

	r = snprintf(out, outlen, "%s", path);
	if (r < 0 || (size_t)r >= outlen)
		return -1;
	len = r;
	if (n) {
		r = snprintf(out + len, outlen - len, " %d", n);
		if (r < 0 || (size_t)r >= outlen - len)
			return -1;
		len += r;
	}
	for (i = 0; i < n; i++) {
		r = snprintf(out + len, outlen - len, " %s", feat[i]);
		if (r < 0 || (size_t)r >= outlen - len)
			return -1;
		len += r;
	}
	return len;
}

/* One "name:value" feature word into f; -1 if it is not one we know. */
static int parse_feature(const char *word, struct subvol_features *f)
{
	const char *colon = strchr(word, ':');
	size_t klen = colon ? (size_t)(colon - word) : strlen(word);
	const char *val = colon ? colon + 1 : NULL;
	uint64_t n;

#define KEY_IS(k) (klen == strlen(k) && !strncmp(word, k, klen))
	if (!val)
		return strcmp(word, DM_SUBVOL_FEATURE_IGNORE_DISCARD) ? -1 :
		       (f->ignore_discard = true, 0);
	if (KEY_IS(DM_SUBVOL_FEATURE_GUARANTEE)) {
		if (!strcmp(val, DM_SUBVOL_GUARANTEE_NONE))
			f->no_guarantee = true;
		else if (!strcmp(val, DM_SUBVOL_GUARANTEE_FULL))
			f->no_guarantee = false;
		else
			return -1;
		return 0;
	}
	if (KEY_IS(DM_SUBVOL_FEATURE_NO_SPACE)) {
		if (!strcmp(val, DM_SUBVOL_NO_SPACE_QUEUE))
			f->no_space_queue = true;
		else if (!strcmp(val, DM_SUBVOL_NO_SPACE_ERROR))
			f->no_space_queue = false;
		else
			return -1;
		return 0;
	}
	if (KEY_IS(DM_SUBVOL_FEATURE_NO_SPACE_TIMEOUT)) {
		if (parse_u64(val, &n) || !n || n > DM_SUBVOL_NO_SPACE_TIMEOUT_MAX)
			return -1;
		f->no_space_timeout = n;
		return 0;
	}
	if (KEY_IS(DM_SUBVOL_FEATURE_LOW_WATER)) {
		if (parse_u64(val, &n))
			return -1;
		f->low_water_sectors = n;
		return 0;
	}
#undef KEY_IS
	return -1;
}

int subvol_table_parse(const char *params, char *path, size_t pathlen,
		       struct subvol_features *f, char *err, size_t errlen)
{
	const char *p = params;
	size_t len = 0;
	uint64_t count, i;
	char word[64];
	int used;

	memset(f, 0, sizeof(*f));
	/* The path: up to the first whitespace. */
	for (; *p && !isspace((unsigned char)*p); p++) {
		if (len + 1 >= pathlen)
			return fail(err, errlen, "table: backing file path too long");
		path[len++] = *p;
	}
	path[len] = '\0';
	if (!len)
		return fail(err, errlen, "table: no backing file");

	while (isspace((unsigned char)*p))
		p++;
	if (!*p)
		return 0;
	if (sscanf(p, "%63s%n", word, &used) != 1 || parse_u64(word, &count))
		return fail(err, errlen, "table: feature count \"%s\" is not a number", p);
	p += used;
	for (i = 0; i < count; i++) {
		if (sscanf(p, "%63s%n", word, &used) != 1)
			return fail(err, errlen, "table: %" PRIu64 " features announced, %" PRIu64 " given",
				    count, i);
		p += used;
		if (parse_feature(word, f))
			return fail(err, errlen, "table: unknown feature \"%s\"", word);
	}
	while (isspace((unsigned char)*p))
		p++;
	if (*p)
		return fail(err, errlen, "table: unexpected \"%s\" after the features", p);
	return 0;
}
