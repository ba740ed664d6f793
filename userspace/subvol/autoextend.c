// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A pool's autoextend policy, after lvmthin(7)'s thin_pool_autoextend_*:
 * the --autoextend-* options of pool create and pool set, how the policy
 * reads, pool set itself, and the LVM logical volume a pool's host
 * filesystem sits on.  subvol monitor (monitor.c) acts on the policy.
 */
#include "subvol.h"
#include "cmd.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define STEP_MIN	(1ULL << 20)

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

/* "80" or "80%": 0-max into *pct; false if it is not one. */
static bool parse_percent(const char *s, unsigned int max, unsigned int *pct)
{
	char num[16];
	size_t n = strlen(s);
	unsigned long v;

	if (n && s[n - 1] == '%')
		n--;
	if (!n || n >= sizeof(num))
		return false;
	memcpy(num, s, n);
	num[n] = '\0';
	if (!all_digits(num))
		return false;
	v = strtoul(num, NULL, 10);
	if (v > max)
		return false;
	*pct = v;
	return true;
}

/* A size with the tool's parser; its error, naming the pool, or 0. */
static int parse_size_opt(const char *pool, const char *opt, const char *arg, uint64_t *v)
{
	int r = parse_size(arg, v);

	if (r == SIZE_TOO_LARGE) {
		errmsg("pool %s: --%s \"%s\" is too large", pool, opt, arg);
		return EXIT_USAGE;
	}
	if (r) {
		errmsg("pool %s: --%s \"%s\" is not a size (e.g. 512M, 10G)", pool, opt, arg);
		return EXIT_USAGE;
	}
	return 0;
}

int autoextend_apply(const char *pool, const struct autoextend_args *args,
		     struct autoextend *a)
{
	struct autoextend n = *a;
	unsigned int pct;
	uint64_t v;
	int r;

	if (args->threshold) {
		const char *t = args->threshold;

		n.threshold_percent = 0;
		n.threshold_free = 0;
		if (!strcmp(t, "off")) {
			/* as 100: off */
		} else if (parse_percent(t, 100, &pct)) {
			if (!pct) {
				errmsg("pool %s: --autoextend-threshold 0%% would act at once, always (100 or off turns it off)",
				       pool);
				return EXIT_USAGE;
			}
			n.threshold_percent = pct < 100 ? pct : 0;
		} else if (strchr(t, '%')) {
			errmsg("pool %s: --autoextend-threshold \"%s\" is not a percent from 1 to 100",
			       pool, t);
			return EXIT_USAGE;
		} else {
			r = parse_size(t, &v);
			if (r || !v || isdigit((unsigned char)t[strlen(t) - 1])) {
				errmsg("pool %s: --autoextend-threshold \"%s\" is not a percent of the host filesystem used (1-100) or a size of free space with a unit (e.g. 80 or 2G)",
				       pool, t);
				return EXIT_USAGE;
			}
			n.threshold_free = v;
		}
	}
	if (args->step) {
		const char *s = args->step;

		n.step_set = true;
		n.step_percent = 0;
		n.step_bytes = 0;
		if (!strcmp(s, "0")) {
			/* grow nothing: the command alone */
		} else if (strchr(s, '%')) {
			if (!parse_percent(s, AUTOEXTEND_STEP_PERCENT_MAX, &pct) || !pct) {
				errmsg("pool %s: --autoextend-step \"%s\" is not a percent from 1 to %d",
				       pool, s, AUTOEXTEND_STEP_PERCENT_MAX);
				return EXIT_USAGE;
			}
			n.step_percent = pct;
		} else {
			r = parse_size_opt(pool, "autoextend-step", s, &v);
			if (r)
				return r;
			if (v < STEP_MIN) {
				errmsg("pool %s: --autoextend-step \"%s\" is %" PRIu64 " bytes, less than 1M (sizes without a unit are bytes: 256M, or 20%%)",
				       pool, s, v);
				return EXIT_USAGE;
			}
			n.step_bytes = v;
		}
	}
	if (args->max) {
		if (!strcmp(args->max, "0") || !strcmp(args->max, "none")) {
			n.max = 0;
		} else {
			r = parse_size_opt(pool, "autoextend-max", args->max, &v);
			if (r)
				return r;
			if (v < STEP_MIN) {
				errmsg("pool %s: --autoextend-max \"%s\" is %" PRIu64 " bytes, less than 1M (sizes without a unit are bytes; none for no maximum)",
				       pool, args->max, v);
				return EXIT_USAGE;
			}
			n.max = v;
		}
	}
	if (args->command) {
		if (strchr(args->command, '\n')) {
			errmsg("pool %s: --autoextend-command holds a newline; give one line (a script's path, say)",
			       pool);
			return EXIT_USAGE;
		}
		if (strlen(args->command) > AUTOEXTEND_COMMAND_MAX) {
			errmsg("pool %s: --autoextend-command is %zu bytes long, more than %d",
			       pool, strlen(args->command), AUTOEXTEND_COMMAND_MAX);
			return EXIT_USAGE;
		}
		strcpy(n.command, args->command);
	}
	*a = n;
	return 0;
}

bool autoextend_given(const struct autoextend_args *args)
{
	return args->threshold || args->step || args->max || args->command;
}

/* 0, or EXIT_USAGE for an option that is not an --autoextend-* one. */
int autoextend_option(int opt, const char *arg, struct autoextend_args *args)
{
	switch (opt) {
	case OPT_AUTOEXTEND_THRESHOLD:
		args->threshold = arg;
		return 0;
	case OPT_AUTOEXTEND_STEP:
		args->step = arg;
		return 0;
	case OPT_AUTOEXTEND_MAX:
		args->max = arg;
		return 0;
	case OPT_AUTOEXTEND_COMMAND:
		args->command = arg;
		return 0;
	}
	return EXIT_USAGE;
}

/*
 * The low-water mark of a volume that sets none: the free space at which
 * the pool is past its threshold, so the device's event wakes subvol
 * monitor at the crossing (the target counts the pool's unpromised claim
 * as space left too, and checks at most ten times a second: the event
 * comes at the crossing or a little after).  A percent is reckoned
 * against the host filesystem's size now.  0: the pool has no policy, or
 * its host cannot be asked.
 */
uint64_t pool_low_water_sectors(const struct pool *pool)
{
	const struct autoextend *a = &pool->meta.autoextend;
	struct statvfs sv;
	uint64_t size;

	if (a->threshold_free)
		return a->threshold_free >> 9;
	if (!a->threshold_percent || fstatvfs(pool->dirfd, &sv))
		return 0;
	size = (uint64_t)sv.f_blocks * sv.f_frsize;
	return size / 100 * (100 - a->threshold_percent) >> 9;
}

void autoextend_threshold_str(char *buf, size_t len, const struct autoextend *a, bool bytes)
{
	if (a->threshold_percent)
		snprintf(buf, len, "%u%%", a->threshold_percent);
	else if (bytes)
		snprintf(buf, len, "%" PRIu64, a->threshold_free);
	else
		format_size(buf, len, a->threshold_free);
}

void autoextend_step_str(char *buf, size_t len, const struct autoextend *a, bool bytes)
{
	if (!a->step_set)
		snprintf(buf, len, "%u%%", AUTOEXTEND_STEP_DEFAULT);
	else if (a->step_percent)
		snprintf(buf, len, "%u%%", a->step_percent);
	else if (bytes)
		snprintf(buf, len, "%" PRIu64, a->step_bytes);
	else if (!a->step_bytes)
		snprintf(buf, len, "0");
	else
		format_size(buf, len, a->step_bytes);
}

void autoextend_describe(char *buf, size_t len, const struct autoextend *a)
{
	char t[32], s[32], m[32];
	size_t n;

	if (!autoextend_on(a)) {
		snprintf(buf, len, "autoextend off");
		return;
	}
	autoextend_threshold_str(t, sizeof(t), a, false);
	autoextend_step_str(s, sizeof(s), a, false);
	format_size(m, sizeof(m), a->max);
	if (a->threshold_percent)
		n = snprintf(buf, len, "autoextend when the host filesystem is over %s used", t);
	else
		n = snprintf(buf, len, "autoextend when the host filesystem has less than %s free", t);
	if (n >= len)
		return;
	if (!strcmp(s, "0"))
		n += snprintf(buf + n, len - n, ", by the command alone");
	else
		n += snprintf(buf + n, len - n, ", by %s%s, up to %s", s,
			      strchr(s, '%') ? " of its LV" : "", a->max ? m : "the VG's free space");
	if (n < len && a->command[0])
		snprintf(buf + n, len - n, "; command: %s", a->command);
}

/*
 * A maximum below the host's size now would never let it grow: refused
 * (1, said why).  Only where the host can be measured.
 */
int autoextend_check_host(const char *pool, int dirfd, const struct autoextend *a)
{
	char m[32], h[32];
	struct statvfs sv;
	uint64_t size;

	if (!a->max || fstatvfs(dirfd, &sv))
		return 0;
	size = (uint64_t)sv.f_blocks * sv.f_frsize;
	if (a->max < size) {
		format_size(m, sizeof(m), a->max);
		format_size(h, sizeof(h), size);
		errmsg("pool %s: --autoextend-max %s is below the host filesystem's size now (%s)",
		       pool, m, h);
		return EXIT_REFUSED;
	}
	return 0;
}

/*
 * The LVM logical volume under the filesystem of dirfd: "VG/LV" in out,
 * or false (not a device-mapper device of LVM's, or no device-mapper).
 */
bool host_lv(int dirfd, char *vg, size_t vglen, char *lv, size_t lvlen)
{
	char name[DM_NAME_LEN], uuid[DM_UUID_LEN];
	char *v = NULL, *l = NULL, *layer = NULL;
	struct dm_pool *mem;
	struct stat st;
	bool r = false;

	if (fstat(dirfd, &st) || !dm_is_dm_major(major(st.st_dev)) || !dm_available())
		return false;
	if (dm_device_by_number(major(st.st_dev), minor(st.st_dev), name, sizeof(name),
				uuid, sizeof(uuid)))
		return false;
	if (strncmp(uuid, "LVM-", 4))
		return false;
	mem = dm_pool_create("subvol", 256);
	if (!mem)
		return false;
	if (dm_split_lvm_name(mem, name, &v, &l, &layer) && v && *v && l && *l && !(layer && *layer)) {
		snprintf(vg, vglen, "%s", v);
		snprintf(lv, lvlen, "%s", l);
		r = true;
	}
	dm_pool_destroy(mem);
	return r;
}

/* --- pool set ------------------------------------------------------------ */

/* A mark for a message: its size, or "none". */
static const char *fmt_mark(char *buf, size_t len, uint64_t sectors)
{
	if (!sectors)
		return "none";
	format_size(buf, len, sectors << 9);
	return buf;
}

/*
 * An active volume's table keeps the low-water mark its activation gave
 * it (volume_table_features()), as lvm2's thin pools keep theirs until
 * a reload: say which no longer match the threshold (a new one, or a
 * percent of a host that grew since).
 */
static void stale_marks(struct pool *pool)
{
	struct subvol_features want, live;
	char had[32], now[32];
	char name[DM_NAME_LEN];
	struct volume vol;
	char **names, **n;

	names = pool_volumes(pool);
	for (n = names; n && *n; n++) {
		if (volume_load(pool, *n, &vol, true) ||
		    volume_active(&vol, name, sizeof(name), NULL) != 1)
			continue;
		volume_table_features(&vol, &want);
		if (!volume_device_features(&vol, name, &live) &&
		    live.low_water_sectors != want.low_water_sectors)
			printf("Volume %s/%s: its device keeps its low-water mark, %s, not the threshold's %s, until it is activated again or subvol set --low-water 0 %s/%s reloads its table\n",
			       pool->meta.name, vol.name, fmt_mark(had, sizeof(had), live.low_water_sectors),
			       fmt_mark(now, sizeof(now), want.low_water_sectors), pool->meta.name, vol.name);
	}
	free_names(names);
}

int cmd_pool_set(int argc, char **argv)
{
	static const struct option opts[] = {
		AUTOEXTEND_OPTIONS,
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct autoextend_args args = { 0 };
	struct pool_meta meta;
	char desc[AUTOEXTEND_COMMAND_MAX + 256];
	struct pool pool;
	int c, r;

	while ((c = cmd_getopt(argc, argv, "h", opts)) != -1) {
		if (c == 'h')
			return command_help("pool");
		if (autoextend_option(c, optarg, &args))
			return usage_error("pool", NULL);
	}
	if (optind != argc - 1)
		return usage_error("pool", "pool set: give one POOL");
	if (!autoextend_given(&args))
		return usage_error("pool", "pool set: give an option to change (--autoextend-threshold, --autoextend-step, --autoextend-max, --autoextend-command)");
	/* The values first, named by the pool as given: a usage error. */
	meta.autoextend = (struct autoextend){ 0 };
	r = autoextend_apply(argv[optind], &args, &meta.autoextend);
	if (r)
		return r;
	if (pool_open(argv[optind], &pool, true))
		return EXIT_REFUSED;
	meta = pool.meta;
	r = autoextend_apply(meta.name, &args, &meta.autoextend);
	if (!r)
		r = autoextend_check_host(meta.name, pool.dirfd, &meta.autoextend);
	if (r)
		goto out;
	r = EXIT_REFUSED;
	if (pool_meta_write(pool.dirfd, &meta) || fsync(pool.dirfd)) {
		errmsg("pool %s: cannot write %s: %s", meta.name, SUBVOL_POOL_XATTR,
		       strerror(errno));
		goto out;
	}
	autoextend_describe(desc, sizeof(desc), &meta.autoextend);
	printf("Pool %s: %s\n", meta.name, desc);
	pool.meta = meta;
	stale_marks(&pool);
	r = 0;
out:
	pool_close(&pool);
	return r;
}
