// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pool and volume metadata, kept in extended attributes as "key=value"
 * lines that start with "format=1".  Readers ignore keys they do not know,
 * so later formats can add keys; a different format number is refused.
 */
#include "model/model.h"

#include <errno.h>
#include <linux/dm-subvol.h>
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

/*
 * The reason, in one line: a control byte quoted from the attribute (a
 * newline, a vertical tab, an escape) is written as \xNN.
 */
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	char text[512];
	size_t i, n = 0;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	for (i = 0; text[i] && n + 5 < errlen; i++) {
		unsigned char c = text[i];

		if (c < 0x20 || c == 0x7f)
			n += snprintf(err + n, errlen - n, "\\x%02x", c);
		else
			err[n++] = c;
	}
	if (errlen)
		err[n < errlen ? n : errlen - 1] = '\0';
	return -1;
}

static int read_xattr(int fd, const char *name, char *buf, size_t len,
		      char *err, size_t errlen)
{
	ssize_t r = fgetxattr(fd, name, buf, len - 1);

	if (r < 0) {
		if (errno == ENODATA)
			return fail(err, errlen, "no %s attribute", name);
		if (errno == ERANGE)
			return fail(err, errlen, "%s is longer than %zu bytes", name, len - 1);
		return fail(err, errlen, "cannot read %s: %s", name, strerror(errno));
	}
	buf[r] = '\0';
	if (strlen(buf) != (size_t)r)
		return fail(err, errlen, "%s holds a NUL byte", name);
	return 0;
}

/* Decimal digits alone, within 64 bits: no sign, space or base prefix. */
static bool parse_u64_str(const char *s, uint64_t *v)
{
	uint64_t n = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || n > (UINT64_MAX - (*s - '0')) / 10)
			return false;
		n = n * 10 + (*s - '0');
	}
	*v = n;
	return true;
}

/* A number up to max into *v, or the reason in err. */
static int parse_num(const char *key, const char *val, uint64_t max, uint64_t *v,
		     char *err, size_t errlen)
{
	if (!parse_u64_str(val, v))
		return fail(err, errlen, "%s \"%.24s\" is not a number", key, val);
	if (*v > max)
		return fail(err, errlen, "%s %" PRIu64 " is more than %" PRIu64, key, *v, max);
	return 0;
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

static bool valid_key(const char *key)
{
	if (!*key)
		return false;
	for (; *key; key++)
		if (!strchr("abcdefghijklmnopqrstuvwxyz0123456789_", *key))
			return false;
	return true;
}

/*
 * Walk the lines of buf, calling fn(key, value) for each.  The grammar:
 * "format=1", then key=value lines, every line ending in a newline (a
 * value cut short lacks it), no blank line, keys of [a-z0-9_] each once;
 * fn ignores the keys it does not know (later formats add keys); every
 * key of required (NULL-terminated) must be there, which finds a value
 * cut at the end of a line.  Errors name what.
 */
static int parse_lines(char *buf, const char *what, const char *const *required,
		       int (*fn)(const char *key, const char *val, void *m,
				 char *err, size_t errlen),
		       void *m, char *err, size_t errlen)
{
	const char *keys[META_MAX / 2];
	char why[256], *line, *next, *eq;
	size_t nkeys = 0, i, n = strlen(buf);
	bool newline = n && buf[n - 1] == '\n';
	unsigned int nr = 0;

	if (!n)
		return fail(err, errlen, "%s is empty", what);
	for (line = buf; *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		nr++;
		if (!*line)
			return fail(err, errlen, "%s: line %u is empty", what, nr);
		eq = strchr(line, '=');
		if (!eq)
			return fail(err, errlen, "%s: line %u \"%.40s\" is not key=value",
				    what, nr, line);
		*eq = '\0';
		if (!valid_key(line))
			return fail(err, errlen, "%s: line %u: \"%.40s\" is not a key (a-z, 0-9, _)",
				    what, nr, line);
		for (i = 0; i < nkeys; i++)
			if (!strcmp(keys[i], line))
				return fail(err, errlen, "%s: key %s is there twice", what, line);
		/*
		 * Distinct keys take 3 bytes a line at least ("a=\n"): a stream
		 * header's 8192 bytes hold under 2000 of them; but say so.
		 */
		if (nkeys == sizeof(keys) / sizeof(keys[0]))
			return fail(err, errlen, "%s has more than %zu lines", what, nkeys);
		keys[nkeys++] = line;
		if (nr == 1 && strcmp(line, "format"))
			return fail(err, errlen, "%s: line 1 \"%.20s\" is not format=%d",
				    what, line, META_FORMAT);
		if (nr == 1 && strcmp(eq + 1, "1"))
			return fail(err, errlen, "%s: format \"%.20s\" is not %d", what, eq + 1,
				    META_FORMAT);
		if (nr > 1 && fn(line, eq + 1, m, why, sizeof(why)))
			return fail(err, errlen, "%s: %s", what, why);
	}
	if (!newline)
		return fail(err, errlen, "%s does not end in a newline (cut short?)", what);
	for (; *required; required++) {
		for (i = 0; i < nkeys && strcmp(keys[i], *required); i++)
			;
		if (i == nkeys)
			return fail(err, errlen, "%s lacks the key %s", what, *required);
	}
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
		if (parse_num(key, val, UINT64_MAX, &a->max, err, errlen))
			return -1;
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
		if (parse_num(key, val, INT64_MAX, &v, err, errlen))
			return -1;
		m->created = v;
	}
	return 0;
}

static const char *const pool_required[] = { "name", "id", "created", NULL };

int pool_meta_read(int fd, struct pool_meta *m, char *err, size_t errlen)
{
	char buf[META_MAX];

	memset(m, 0, sizeof(*m));
	if (read_xattr(fd, SUBVOL_POOL_XATTR, buf, sizeof(buf), err, errlen) ||
	    parse_lines(buf, SUBVOL_POOL_XATTR, pool_required, pool_key, m, err, errlen))
		return -1;
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

	if (!strcmp(key, "extensions"))
		return parse_num(key, val, UINT64_MAX, &s->extensions, err, errlen);
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
		if (parse_num(key, val, INT64_MAX, &v, err, errlen))
			return -1;
		*time = v;
	} else if (text) {
		/* The monitor writes them cut to fit: a longer one is not its own. */
		if (strlen(val) > MONITOR_TEXT_MAX)
			return fail(err, errlen, "%s is longer than %d bytes", key,
				    MONITOR_TEXT_MAX);
		strcpy(text, val);
	}
	return 0;
}

/* The monitor writes them all, every time. */
static const char *const monitor_required[] = {
	"extensions", "last_extension_time", "last_extension", "last_command_time",
	"last_command", "last_error_time", "last_error", NULL
};

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
	if (parse_lines(buf, SUBVOL_MONITOR_XATTR, monitor_required, monitor_key, s, err,
			errlen)) {
		/* Nothing of it shown as if it were so. */
		memset(s, 0, sizeof(*s));
		return -1;
	}
	return 0;
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
	uint64_t v = 0, max;

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
		/* Each within what its field holds and the tool writes. */
		if (key[0] == 'i' || key[0] == 'h')
			max = 1;
		else if (key[0] == 'n')
			max = DM_SUBVOL_NO_SPACE_TIMEOUT_MAX;
		else if (key[0] == 'e')
			max = SUBVOL_EXTENT_SIZE_MAX;
		else if (key[0] == 'l')
			max = UINT64_MAX >> 9;
		else
			max = INT64_MAX;
		if (parse_num(key, val, max, &v, err, errlen))
			return -1;
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

/*
 * What every version wrote; host_lvm came with 1.1, and a volume without
 * it is not set --host-lvm.
 */
static const char *const volume_required[] = {
	"id", "kind", "size", "guarantee", "no_space", "no_space_timeout", "low_water",
	"ignore_discard", "extent_size", "origin_id", "origin_name", "created", NULL
};

int volume_meta_parse(char *buf, struct volume_meta *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	if (parse_lines(buf, SUBVOL_VOLUME_XATTR, volume_required, volume_key, m, err, errlen))
		return -1;
	if (!m->size || m->size % 512)
		return fail(err, errlen, "%s: size %" PRIu64 " is not a whole number of sectors",
			    SUBVOL_VOLUME_XATTR, m->size);
	/* As create, set and resize keep it: a mark the size does not pass. */
	if (m->features.low_water_sectors && m->features.low_water_sectors >= m->size >> 9)
		return fail(err, errlen, "%s: low_water %" PRIu64 " is not below the size (%" PRIu64 " sectors)",
			    SUBVOL_VOLUME_XATTR, m->features.low_water_sectors, m->size >> 9);
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
