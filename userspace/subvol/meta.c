// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pool and volume metadata, kept in extended attributes as "key=value"
 * lines that start with "format=1".  Readers ignore keys they do not know,
 * so later formats can add keys; a different format number is refused.
 */
#include "subvol.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#define META_FORMAT	1
#define META_MAX	4096

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int read_xattr(int fd, const char *name, char *buf, size_t len,
		      char *err, size_t errlen)
{
	ssize_t r = fgetxattr(fd, name, buf, len - 1);

	if (r < 0) {
		if (errno == ENODATA)
			return fail(err, errlen, "no %s attribute", name);
		return fail(err, errlen, "cannot read %s: %s", name, strerror(errno));
	}
	buf[r] = '\0';
	if (strlen(buf) != (size_t)r)
		return fail(err, errlen, "%s holds a NUL byte", name);
	return 0;
}

static bool parse_u64_str(const char *s, uint64_t *v)
{
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

static bool valid_id(const char *s)
{
	size_t i;

	if (strlen(s) != SUBVOL_ID_LEN)
		return false;
	for (i = 0; i < SUBVOL_ID_LEN; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return false;
	return true;
}

/*
 * Walk the lines of buf, calling fn(key, value) for each; the first line
 * must be "format=1".
 */
static int parse_lines(char *buf, const char *what,
		       int (*fn)(const char *key, const char *val, void *m,
				 char *err, size_t errlen),
		       void *m, char *err, size_t errlen)
{
	char *save, *line, *eq;
	bool first = true;

	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		eq = strchr(line, '=');
		if (!eq)
			return fail(err, errlen, "%s: line \"%.40s\" is not key=value",
				    what, line);
		*eq = '\0';
		if (first) {
			if (strcmp(line, "format") || strcmp(eq + 1, "1"))
				return fail(err, errlen, "%s: format \"%.20s\" is not %d",
					    what, eq + 1, META_FORMAT);
			first = false;
			continue;
		}
		if (fn(line, eq + 1, m, err, errlen))
			return -1;
	}
	if (first)
		return fail(err, errlen, "%s is empty", what);
	return 0;
}

/* "80%" (1-max) into *pct, or a number of bytes into *bytes. */
static bool parse_percent_or_bytes(const char *val, unsigned int max, unsigned int *pct,
				   uint64_t *bytes)
{
	size_t n = strlen(val);
	char num[24];
	uint64_t v;

	*pct = 0;
	*bytes = 0;
	if (n && val[n - 1] == '%') {
		if (n - 1 >= sizeof(num))
			return false;
		memcpy(num, val, n - 1);
		num[n - 1] = '\0';
		if (!parse_u64_str(num, &v) || !v || v > max)
			return false;
		*pct = v;
		return true;
	}
	return parse_u64_str(val, bytes);
}

static int autoextend_key(const char *key, const char *val, struct autoextend *a,
			  char *err, size_t errlen)
{
	if (!strcmp(key, "autoextend_threshold")) {
		if (!parse_percent_or_bytes(val, 99, &a->threshold_percent, &a->threshold_free))
			return fail(err, errlen, "autoextend_threshold \"%.20s\" is not a percent (1-99%%) or bytes",
				    val);
	} else if (!strcmp(key, "autoextend_step")) {
		if (!parse_percent_or_bytes(val, AUTOEXTEND_STEP_PERCENT_MAX, &a->step_percent,
					    &a->step_bytes))
			return fail(err, errlen, "autoextend_step \"%.20s\" is not a percent or bytes",
				    val);
		a->step_set = true;
	} else if (!strcmp(key, "autoextend_max")) {
		if (!parse_u64_str(val, &a->max))
			return fail(err, errlen, "autoextend_max \"%.20s\" is not a number", val);
	} else if (!strcmp(key, "autoextend_command")) {
		if (strlen(val) > AUTOEXTEND_COMMAND_MAX)
			return fail(err, errlen, "autoextend_command is longer than %d bytes",
				    AUTOEXTEND_COMMAND_MAX);
		strcpy(a->command, val);
	}
	return 0;
}

static int pool_key(const char *key, const char *val, void *p, char *err,
		    size_t errlen)
{
	struct pool_meta *m = p;
	uint64_t v;

	if (!strncmp(key, "autoextend_", 11)) {
		return autoextend_key(key, val, &m->autoextend, err, errlen);
	} else if (!strcmp(key, "name")) {
		if (!valid_name(val))
			return fail(err, errlen, "pool name \"%.70s\" is not valid", val);
		strcpy(m->name, val);
	} else if (!strcmp(key, "id")) {
		if (!valid_id(val))
			return fail(err, errlen, "pool id \"%.40s\" is not valid", val);
		strcpy(m->id, val);
	} else if (!strcmp(key, "created")) {
		if (!parse_u64_str(val, &v))
			return fail(err, errlen, "pool creation time \"%.20s\" is not a number", val);
		m->created = v;
	}
	return 0;
}

int pool_meta_read(int fd, struct pool_meta *m, char *err, size_t errlen)
{
	char buf[META_MAX];

	memset(m, 0, sizeof(*m));
	if (read_xattr(fd, SUBVOL_POOL_XATTR, buf, sizeof(buf), err, errlen) ||
	    parse_lines(buf, SUBVOL_POOL_XATTR, pool_key, m, err, errlen))
		return -1;
	if (!m->name[0] || !m->id[0])
		return fail(err, errlen, "%s lacks the pool's name or id",
			    SUBVOL_POOL_XATTR);
	return 0;
}

/* "N%" or the bytes, as the keys hold them. */
static void percent_or_bytes(char *buf, size_t len, unsigned int pct, uint64_t bytes)
{
	if (pct)
		snprintf(buf, len, "%u%%", pct);
	else
		snprintf(buf, len, "%" PRIu64, bytes);
}

int pool_meta_write(int fd, const struct pool_meta *m)
{
	const struct autoextend *a = &m->autoextend;
	char buf[META_MAX], v[32];
	size_t n;

	n = snprintf(buf, sizeof(buf), "format=%d\nname=%s\nid=%s\ncreated=%" PRId64 "\n",
		     META_FORMAT, m->name, m->id, m->created);
	/* Only what was set: a pool without a policy keeps its old attribute. */
	if (autoextend_on(a)) {
		percent_or_bytes(v, sizeof(v), a->threshold_percent, a->threshold_free);
		n += snprintf(buf + n, sizeof(buf) - n, "autoextend_threshold=%s\n", v);
	}
	if (a->step_set) {
		percent_or_bytes(v, sizeof(v), a->step_percent, a->step_bytes);
		n += snprintf(buf + n, sizeof(buf) - n, "autoextend_step=%s\n", v);
	}
	if (a->max)
		n += snprintf(buf + n, sizeof(buf) - n, "autoextend_max=%" PRIu64 "\n", a->max);
	if (a->command[0])
		n += snprintf(buf + n, sizeof(buf) - n, "autoextend_command=%s\n", a->command);
	if (n >= sizeof(buf)) {
		errno = E2BIG;
		return -1;
	}
	return fsetxattr(fd, SUBVOL_POOL_XATTR, buf, n, 0);
}

static int monitor_key(const char *key, const char *val, void *p, char *err,
		       size_t errlen)
{
	struct monitor_state *s = p;
	int64_t *time = NULL;
	char *text = NULL;
	uint64_t v;

	if (!strcmp(key, "extensions")) {
		if (!parse_u64_str(val, &s->extensions))
			return fail(err, errlen, "extensions \"%.20s\" is not a number", val);
		return 0;
	}
	if (!strcmp(key, "last_extension_time"))
		time = &s->last_extension_time;
	else if (!strcmp(key, "last_command_time"))
		time = &s->last_command_time;
	else if (!strcmp(key, "last_error_time"))
		time = &s->last_error_time;
	else if (!strcmp(key, "last_extension"))
		text = s->last_extension;
	else if (!strcmp(key, "last_command"))
		text = s->last_command;
	else if (!strcmp(key, "last_error"))
		text = s->last_error;
	if (time) {
		if (!parse_u64_str(val, &v))
			return fail(err, errlen, "%s \"%.20s\" is not a number", key, val);
		*time = v;
	} else if (text) {
		snprintf(text, MONITOR_TEXT_MAX + 1, "%s", val);
	}
	return 0;
}

int monitor_state_read(int fd, struct monitor_state *s, char *err, size_t errlen)
{
	char buf[META_MAX];
	ssize_t r;

	memset(s, 0, sizeof(*s));
	r = fgetxattr(fd, SUBVOL_MONITOR_XATTR, buf, sizeof(buf) - 1);
	if (r < 0 && errno == ENODATA)
		return 0;
	if (read_xattr(fd, SUBVOL_MONITOR_XATTR, buf, sizeof(buf), err, errlen))
		return -1;
	return parse_lines(buf, SUBVOL_MONITOR_XATTR, monitor_key, s, err, errlen);
}

int monitor_state_write(int fd, const struct monitor_state *s)
{
	char buf[META_MAX];
	int n;

	n = snprintf(buf, sizeof(buf),
		     "format=%d\nextensions=%" PRIu64 "\n"
		     "last_extension_time=%" PRId64 "\nlast_extension=%s\n"
		     "last_command_time=%" PRId64 "\nlast_command=%s\n"
		     "last_error_time=%" PRId64 "\nlast_error=%s\n",
		     META_FORMAT, s->extensions, s->last_extension_time, s->last_extension,
		     s->last_command_time, s->last_command, s->last_error_time, s->last_error);
	return fsetxattr(fd, SUBVOL_MONITOR_XATTR, buf, n, 0);
}

const char *volume_kind_name(enum volume_kind kind)
{
	return kind == VOLUME_KIND_SNAPSHOT ? "snapshot" : "volume";
}

bool volume_host_lvm(const struct volume_meta *m)
{
	return m->host_lvm && m->kind == VOLUME_KIND_VOLUME;
}

static int volume_key(const char *key, const char *val, void *p, char *err,
		      size_t errlen)
{
	struct volume_meta *m = p;
	struct subvol_features *f = &m->features;
	uint64_t v = 0;
	bool num = parse_u64_str(val, &v);

	if (!strcmp(key, "id") || !strcmp(key, "origin_id")) {
		if (!valid_id(val) && !(*val == '\0' && key[0] == 'o'))
			return fail(err, errlen, "%s \"%.40s\" is not valid", key, val);
		strcpy(key[0] == 'i' ? m->id : m->origin_id, val);
	} else if (!strcmp(key, "origin_name")) {
		if (*val && !valid_name(val))
			return fail(err, errlen, "origin name \"%.70s\" is not valid", val);
		strcpy(m->origin_name, val);
	} else if (!strcmp(key, "kind")) {
		if (!strcmp(val, "volume"))
			m->kind = VOLUME_KIND_VOLUME;
		else if (!strcmp(val, "snapshot"))
			m->kind = VOLUME_KIND_SNAPSHOT;
		else
			return fail(err, errlen, "kind \"%.20s\" is not volume or snapshot", val);
	} else if (!strcmp(key, "guarantee")) {
		if (strcmp(val, "full") && strcmp(val, "none"))
			return fail(err, errlen, "guarantee \"%.20s\" is not full or none", val);
		f->no_guarantee = !strcmp(val, "none");
	} else if (!strcmp(key, "no_space")) {
		if (strcmp(val, "error") && strcmp(val, "queue"))
			return fail(err, errlen, "no_space \"%.20s\" is not error or queue", val);
		f->no_space_queue = !strcmp(val, "queue");
	} else if (!strcmp(key, "size") || !strcmp(key, "created") ||
		   !strcmp(key, "no_space_timeout") || !strcmp(key, "low_water") ||
		   !strcmp(key, "ignore_discard") || !strcmp(key, "extent_size") ||
		   !strcmp(key, "host_lvm")) {
		if (!num)
			return fail(err, errlen, "%s \"%.20s\" is not a number", key, val);
		if (key[0] == 's')
			m->size = v;
		else if (key[0] == 'c')
			m->created = v;
		else if (key[0] == 'n')
			f->no_space_timeout = v;
		else if (key[0] == 'l')
			f->low_water_sectors = v;
		else if (key[0] == 'i')
			f->ignore_discard = v != 0;
		else if (key[0] == 'h')
			m->host_lvm = v != 0;
		else
			m->extent_size = v;
	}
	return 0;
}

int volume_meta_parse(char *buf, struct volume_meta *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	if (parse_lines(buf, SUBVOL_VOLUME_XATTR, volume_key, m, err, errlen))
		return -1;
	if (!m->id[0] || !m->size)
		return fail(err, errlen, "%s lacks the volume's id or size",
			    SUBVOL_VOLUME_XATTR);
	if (m->size % 512)
		return fail(err, errlen, "size %" PRIu64 " is not a whole number of sectors",
			    m->size);
	return 0;
}

int volume_meta_read(int fd, struct volume_meta *m, char *err, size_t errlen)
{
	char buf[META_MAX];

	memset(m, 0, sizeof(*m));
	if (read_xattr(fd, SUBVOL_VOLUME_XATTR, buf, sizeof(buf), err, errlen))
		return -1;
	return volume_meta_parse(buf, m, err, errlen);
}

int volume_meta_format(char *buf, size_t len, const struct volume_meta *m)
{
	const struct subvol_features *f = &m->features;

	return snprintf(buf, len,
		     "format=%d\nid=%s\nkind=%s\nsize=%" PRIu64 "\n"
		     "guarantee=%s\nno_space=%s\nno_space_timeout=%u\n"
		     "low_water=%" PRIu64 "\nignore_discard=%d\nextent_size=%u\n"
		     "origin_id=%s\norigin_name=%s\ncreated=%" PRId64 "\nhost_lvm=%d\n",
		     META_FORMAT, m->id, volume_kind_name(m->kind), m->size,
		     f->no_guarantee ? "none" : "full",
		     f->no_space_queue ? "queue" : "error", f->no_space_timeout,
		     f->low_water_sectors, f->ignore_discard, m->extent_size,
		     m->origin_id, m->origin_name, m->created, volume_host_lvm(m));
}

int volume_meta_write(int fd, const struct volume_meta *m)
{
	char buf[META_MAX];
	int n = volume_meta_format(buf, sizeof(buf), m);

	return fsetxattr(fd, SUBVOL_VOLUME_XATTR, buf, n, 0);
}
