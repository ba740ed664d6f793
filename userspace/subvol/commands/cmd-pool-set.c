// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The --autoextend-* options of pool create and pool set, after
 * lvmthin(7)'s thin_pool_autoextend_*, and pool set itself.  The policy
 * they set is kept in the pool's metadata (model/autoextend.c); subvol
 * monitor (policy/monitor.c) acts on it.
 */
#include "commands/commands.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
