// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Commands that only look: list, status, pool status, pool list; and
 * udev-name, the helper of 56-dm-subvol.rules.
 */
#include "subvol.h"
#include "cmd.h"
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <libdevmapper.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

static int parse_report_opts(const char *cmd, int argc, char **argv,
			     struct report_opts *o)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "+Jbnh", opts, NULL)) != -1) {
		switch (c) {
		case 'J':
			o->json = true;
			break;
		case 'b':
			o->bytes = true;
			break;
		case 'n':
			o->noheadings = true;
			break;
		case 'h':
			command_help(cmd);
			return -1;
		default:
			return usage_error(cmd, NULL);
		}
	}
	return 0;
}

static void iso_time(char *buf, size_t len, int64_t t)
{
	time_t tt = t;
	struct tm tm;

	if (!t || !localtime_r(&tt, &tm))
		snprintf(buf, len, "-");
	else
		strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

enum { L_POOL, L_NAME, L_KIND, L_SIZE, L_ALLOC, L_ORIGIN, L_DEVICE, L_CREATED, L_NR };

static const struct field list_columns[L_NR] = {
	[L_POOL] = { "pool", FIELD_STRING },
	[L_NAME] = { "name", FIELD_STRING },
	[L_KIND] = { "kind", FIELD_STRING },
	[L_SIZE] = { "size", FIELD_SIZE },
	[L_ALLOC] = { "alloc", FIELD_SIZE },
	[L_ORIGIN] = { "origin", FIELD_STRING },
	[L_DEVICE] = { "device", FIELD_STRING },
	[L_CREATED] = { "created", FIELD_STRING },
};

static int list_pool(struct report *rep, const char *spec)
{
	char dev[DM_NAME_LEN + 32], name[DM_NAME_LEN], created[32];
	struct field row[L_NR];
	struct volume vol;
	struct pool pool;
	char **names, **n;
	int r = 0;

	if (pool_open(spec, &pool, false))
		return -1;
	names = pool_volumes(&pool);
	if (!names) {
		errmsg("pool %s: cannot read %s", pool.meta.name, pool.path);
		pool_close(&pool);
		return -1;
	}
	for (n = names; *n; n++) {
		if (volume_load(&pool, *n, &vol, true)) {
			r = -1;
			continue;
		}
		memcpy(row, list_columns, sizeof(row));
		row[L_POOL].str = pool.meta.name;
		row[L_NAME].str = vol.name;
		row[L_KIND].str = volume_kind_name(vol.meta.kind);
		row[L_SIZE].num = vol.meta.size;
		row[L_ALLOC].num = volume_allocated(&vol);
		row[L_ORIGIN].str = vol.meta.origin_name[0] ? vol.meta.origin_name : NULL;
		if (volume_active(&vol, name, sizeof(name), NULL) == 1) {
			snprintf(dev, sizeof(dev), "%s/%s", dm_dir(), name);
			row[L_DEVICE].str = dev;
		}
		iso_time(created, sizeof(created), vol.meta.created);
		row[L_CREATED].str = created;
		if (report_add(rep, row))
			r = -1;
	}
	free_names(names);
	pool_close(&pool);
	return r;
}

int cmd_list(int argc, char **argv)
{
	struct report_opts o;
	struct report *rep;
	char **pools = NULL, **p;
	int i, r = 0;

	i = parse_report_opts("list", argc, argv, &o);
	if (i)
		return i < 0 ? 0 : i;
	rep = report_new("volumes", &o, list_columns, L_NR);
	if (!rep) {
		errmsg("list: out of memory");
		return EXIT_REFUSED;
	}
	if (optind < argc) {
		for (i = optind; i < argc; i++)
			if (list_pool(rep, argv[i]))
				r = EXIT_REFUSED;
	} else {
		pools = pool_registered();
		for (p = pools; p && *p; p++)
			if (list_pool(rep, *p))
				r = EXIT_REFUSED;
		free_names(pools);
	}
	report_print(rep);
	return r;
}

int cmd_status(int argc, char **argv)
{
	char name[DM_NAME_LEN], dev[DM_NAME_LEN + 32], params[1024], err[256];
	char created[32];
	struct subvol_status st = { 0 };
	struct dm_info_lite info;
	struct report_opts o;
	struct field f[32];
	struct statvfs sv;
	struct volume vol;
	struct pool pool;
	bool active;
	int n = 0, r;

	r = parse_report_opts("status", argc, argv, &o);
	if (r)
		return r < 0 ? 0 : r;
	if (optind != argc - 1)
		return usage_error("status", "give one POOL/VOLUME");
	if (volume_spec(argv[optind], &pool, &vol, false, true))
		return EXIT_REFUSED;
	r = EXIT_REFUSED;
	r = volume_active(&vol, name, sizeof(name), &info);
	if (r < 0)
		goto fail;
	active = r;
	r = EXIT_REFUSED;
	if (active) {
		if (dm_device_status(name, params, sizeof(params), NULL)) {
			errmsg("volume %s/%s: cannot read the status of %s: %s", pool.meta.name,
			       vol.name, name, dm_last_error());
			goto out;
		}
		if (subvol_status_parse(params, &st, err, sizeof(err))) {
			errmsg("volume %s/%s: %s: %s", pool.meta.name, vol.name, name, err);
			goto out;
		}
		snprintf(dev, sizeof(dev), "%s/%s", dm_dir(), name);
	}

#define STR(k, v) (f[n++] = (struct field){ k, FIELD_STRING, v })
#define SIZE(k, v) (f[n++] = (struct field){ k, FIELD_SIZE, NULL, v })
	STR("pool", pool.meta.name);
	STR("volume", vol.name);
	STR("kind", volume_kind_name(vol.meta.kind));
	STR("state", !active ? "inactive" : info.suspended ? "suspended" :
	    st.writable ? "active" : "active (read-only)");
	STR("device", active ? dev : NULL);
	STR("image", vol.path);
	SIZE("size", vol.meta.size);
	STR("guarantee", vol.meta.features.no_guarantee ? "none" : "full");
	STR("no_space", vol.meta.features.no_space_queue ? "queue" : "error");
	if (active) {
		SIZE("backed", st.backed_sectors << 9);
		if (st.has_space) {
			SIZE("mapped", st.mapped_sectors << 9);
			SIZE("shared", st.shared_sectors << 9);
			SIZE("promised", st.promised_sectors << 9);
			SIZE("cow_reserve", st.cow_reserve_sectors << 9);
			SIZE("pool_claimed", st.pool_claimed_sectors << 9);
			SIZE("pool_committed", st.pool_committed_sectors << 9);
			SIZE("uncovered", st.uncovered_sectors << 9);
		}
		if (st.host_free_known)
			SIZE("host_free", st.host_free_sectors << 9);
		else
			STR("host_free", NULL);
		if (st.has_space) {
			STR("client", st.client_attached ? "attached" : "none");
			STR("low_water", st.low_water_hit ? "low" : "ok");
		}
		if (st.has_accounting_errors)
			f[n++] = (struct field){ "accounting_errors", FIELD_NUMBER,
						 NULL, st.accounting_errors };
	} else {
		SIZE("backed", volume_allocated(&vol));
		if (!fstatvfs(pool.dirfd, &sv))
			SIZE("host_free", (uint64_t)sv.f_bavail * sv.f_frsize);
	}
	STR("origin", vol.meta.origin_name[0] ? vol.meta.origin_name : NULL);
	iso_time(created, sizeof(created), vol.meta.created);
	STR("created", created);
	STR("id", vol.meta.id);
#undef STR
#undef SIZE
	r = report_fields("volume", &o, f, n) ? EXIT_REFUSED : 0;
out:
	pool_close(&pool);
	return r;
fail:
	pool_close(&pool);
	return EXIT_REFUSED;
}

static int pool_status(const char *spec, const struct report_opts *o)
{
	uint64_t virt = 0, alloc = 0, nvol = 0, nsnap = 0, nactive = 0;
	char created[32];
	struct field f[16];
	struct statvfs sv;
	struct volume vol;
	struct pool pool;
	char **names, **p;
	int n = 0, r;

	if (pool_open(spec, &pool, false))
		return EXIT_REFUSED;
	names = pool_volumes(&pool);
	for (p = names; p && *p; p++) {
		if (volume_load(&pool, *p, &vol, true))
			continue;
		if (vol.meta.kind == VOLUME_KIND_SNAPSHOT)
			nsnap++;
		else
			nvol++;
		virt += vol.meta.size;
		alloc += volume_allocated(&vol);
		if (volume_active(&vol, NULL, 0, NULL) == 1)
			nactive++;
	}
	free_names(names);
	if (fstatvfs(pool.dirfd, &sv))
		memset(&sv, 0, sizeof(sv));
	iso_time(created, sizeof(created), pool.meta.created);
	f[n++] = (struct field){ "pool", FIELD_STRING, pool.meta.name };
	f[n++] = (struct field){ "path", FIELD_STRING, pool.path };
	f[n++] = (struct field){ "id", FIELD_STRING, pool.meta.id };
	f[n++] = (struct field){ "created", FIELD_STRING, created };
	f[n++] = (struct field){ "volumes", FIELD_NUMBER, NULL, nvol };
	f[n++] = (struct field){ "snapshots", FIELD_NUMBER, NULL, nsnap };
	f[n++] = (struct field){ "active", FIELD_NUMBER, NULL, nactive };
	f[n++] = (struct field){ "virtual_size", FIELD_SIZE, NULL, virt };
	f[n++] = (struct field){ "allocated", FIELD_SIZE, NULL, alloc };
	f[n++] = (struct field){ "host_size", FIELD_SIZE, NULL,
				 (uint64_t)sv.f_blocks * sv.f_frsize };
	f[n++] = (struct field){ "host_free", FIELD_SIZE, NULL,
				 (uint64_t)sv.f_bavail * sv.f_frsize };
	r = report_fields("pool", o, f, n) ? EXIT_REFUSED : 0;
	pool_close(&pool);
	return r;
}

static int pool_list(const struct report_opts *o)
{
	static const struct field cols[] = {
		{ "name", FIELD_STRING }, { "path", FIELD_STRING },
		{ "volumes", FIELD_NUMBER }, { "snapshots", FIELD_NUMBER },
		{ "host_free", FIELD_SIZE },
	};
	struct field row[5];
	struct volume vol;
	struct statvfs sv;
	struct report *rep;
	struct pool pool;
	char **names, **p, **vols, **v;
	uint64_t nvol, nsnap;
	int r = 0;

	rep = report_new("pools", o, cols, 5);
	if (!rep)
		return EXIT_REFUSED;
	names = pool_registered();
	for (p = names; p && *p; p++) {
		if (pool_open(*p, &pool, false)) {
			r = EXIT_REFUSED;
			continue;
		}
		vols = pool_volumes(&pool);
		for (nvol = nsnap = 0, v = vols; v && *v; v++) {
			if (volume_load(&pool, *v, &vol, true))
				continue;
			if (vol.meta.kind == VOLUME_KIND_SNAPSHOT)
				nsnap++;
			else
				nvol++;
		}
		free_names(vols);
		memcpy(row, cols, sizeof(row));
		row[0].str = pool.meta.name;
		row[1].str = pool.path;
		row[2].num = nvol;
		row[3].num = nsnap;
		row[4].num = fstatvfs(pool.dirfd, &sv) ? 0 : (uint64_t)sv.f_bavail * sv.f_frsize;
		report_add(rep, row);
		pool_close(&pool);
	}
	free_names(names);
	report_print(rep);
	return r;
}

int cmd_pool(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *sub, *name = NULL;
	struct report_opts o;
	int c, r;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		if (argc < 2)
			return usage_error("pool", "give a subcommand: create, import, status, list, export or remove");
		return command_help("pool");
	}
	sub = argv[1];
	argc--;
	argv++;
	if (!strcmp(sub, "create") || !strcmp(sub, "import")) {
		while ((c = getopt_long(argc, argv, "+N:h", opts, NULL)) != -1) {
			if (c == 'N')
				name = optarg;
			else if (c == 'h')
				return command_help("pool");
			else
				return usage_error("pool", NULL);
		}
		if (optind != argc - 1)
			return usage_error("pool", "pool %s: give one DIRECTORY", sub);
		if (sub[0] == 'c')
			return pool_create(argv[optind], name) ? EXIT_REFUSED : 0;
		return pool_import(argv[optind], name) ? EXIT_REFUSED : 0;
	}
	if (!strcmp(sub, "export") || !strcmp(sub, "remove"))
		return cmd_pool_admin(sub, argc, argv);
	if (!strcmp(sub, "status") || !strcmp(sub, "list")) {
		r = parse_report_opts("pool", argc, argv, &o);
		if (r)
			return r < 0 ? 0 : r;
		if (sub[0] == 'l')
			return optind == argc ? pool_list(&o) :
			       usage_error("pool", "pool list takes no arguments");
		if (optind != argc - 1)
			return usage_error("pool", "pool status: give one POOL");
		return pool_status(argv[optind], &o);
	}
	return usage_error("pool", "unknown subcommand \"%s\" (create, import, status, list, export, remove)", sub);
}

/*
 * For udev: DM_NAME "subvol-<pool>-<volume>" (dashes inside names doubled)
 * to SUBVOL_POOL=<pool> and SUBVOL_VOLUME=<volume>.  Prints nothing, and
 * exits 1, for any other name.
 */
int cmd_udev_name(int argc, char **argv)
{
	char pool[DM_NAME_LEN], vol[DM_NAME_LEN], *out = pool;
	const char *p;
	size_t n = 0;

	if (argc != 2 || strncmp(argv[1], SUBVOL_NAME_PREFIX, strlen(SUBVOL_NAME_PREFIX)))
		return EXIT_REFUSED;
	for (p = argv[1] + strlen(SUBVOL_NAME_PREFIX); *p; p++) {
		if (n + 1 >= sizeof(pool))
			return EXIT_REFUSED;
		if (*p == '-' && p[1] == '-') {
			out[n++] = '-';
			p++;
		} else if (*p == '-' && out == pool) {
			out[n] = '\0';
			out = vol;
			n = 0;
		} else if (*p == '-') {
			return EXIT_REFUSED;	/* not a name the tool makes */
		} else {
			out[n++] = *p;
		}
	}
	out[n] = '\0';
	if (out != vol || !valid_name(pool) || !valid_name(vol))
		return EXIT_REFUSED;
	printf("SUBVOL_POOL=%s\nSUBVOL_VOLUME=%s\n", pool, vol);
	return 0;
}
