// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Commands that only look: list, status, pool status, pool list; and
 * udev-name, the helper of 56-dm-subvol.rules.
 */
#include "commands/commands.h"
#include "commands/report.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

enum { OPT_SEPARATOR = 256, OPT_UNITS, OPT_NOSUFFIX };

/*
 * The options of list, status, pool list and pool status.  types: list's
 * -t, NULL for the others; -O is for the tables (list, pool list), which
 * the caller checks.  0, -1 after --help, or EXIT_USAGE (said).
 */
static int parse_report_opts(const char *cmd, int argc, char **argv,
			     struct report_opts *o, const char **types)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'J' },
		{ "bytes", no_argument, NULL, 'b' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "sort", required_argument, NULL, 'O' },
		{ "type", required_argument, NULL, 't' },
		{ "separator", required_argument, NULL, OPT_SEPARATOR },
		{ "units", required_argument, NULL, OPT_UNITS },
		{ "nosuffix", no_argument, NULL, OPT_NOSUFFIX },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = cmd_getopt(argc, argv, "JbnHo:O:t:h", opts)) != -1) {
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
		case 'H':
			/* zfs's scripted mode: no headings, tabs between fields. */
			o->noheadings = true;
			o->separator = "\t";
			break;
		case 'o':
			if (!report_add_columns(o, optarg))
				return usage_error(cmd, "-o: too many columns");
			break;
		case 'O':
			o->sort = optarg;
			break;
		case 't':
			if (!types)
				return usage_error(cmd, "-t is an option of list");
			*types = optarg;
			break;
		case OPT_SEPARATOR:
			o->separator = optarg;
			break;
		case OPT_UNITS:
			if (!report_set_units(o, optarg))
				return usage_error(cmd, "--units: \"%s\" is not a unit (h, b, s, k, m, g, t, p, e; K..E for powers of 1000)",
						   optarg);
			break;
		case OPT_NOSUFFIX:
			o->nosuffix = true;
			break;
		case 'h':
			command_help(cmd);
			return -1;
		default:
			return usage_error(cmd, NULL);
		}
	}
	if (o->bytes && o->units)
		return usage_error(cmd, "--bytes is --units b --nosuffix: give one of them");
	return 0;
}

/*
 * ISO 8601 local time with its offset from UTC, "2026-12-05T01:02:03+01:00",
 * so that it reads the same whatever TZ the reader has; NULL when unknown.
 */
static const char *iso_time(char *buf, size_t len, int64_t t)
{
	time_t tt = t;
	struct tm tm;
	size_t n;

	if (!t || !localtime_r(&tt, &tm) ||
	    !(n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S%z", &tm)) || n + 2 > len)
		return NULL;
	/* strftime's %z is "+0100": ISO 8601's extended form has the colon. */
	memmove(buf + n - 1, buf + n - 2, 3);
	buf[n - 2] = ':';
	return buf;
}

/*
 * The current name of the volume with the given id in the pool, into
 * out; "" when it is not there (removed, or its name given to another
 * since).  Images that cannot be read are skipped: they are not the
 * asker's concern.
 */
static void origin_by_id(struct pool *pool, const char *id, char *out, size_t len)
{
	struct volume_meta m;
	char path[SUBVOL_NAME_MAX + 8], err[256];
	char **names, **n;
	int fd;

	out[0] = '\0';
	if (!id[0])
		return;
	names = pool_volumes(pool);
	for (n = names; n && *n && !out[0]; n++) {
		snprintf(path, sizeof(path), "%s%s", *n, SUBVOL_IMAGE_SUFFIX);
		fd = openat(pool->dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (!volume_meta_read(fd, &m, err, sizeof(err)) && !strcmp(m.id, id))
			snprintf(out, len, "%s", *n);
		close(fd);
	}
	free_names(names);
}

/*
 * Fields of a volume's metadata, in list and status alike; f: its table's
 * features (the low-water mark may be the pool's).
 */
static void meta_fields(const struct volume_meta *m, const struct subvol_features *f,
			struct field *guarantee, struct field *no_space,
			struct field *timeout, struct field *low_water,
			struct field *ignore_discard, struct field *extent_size)
{

	guarantee->str = f->no_guarantee ? "none" : "full";
	no_space->str = f->no_space_queue ? "queue" : "error";
	/* The timeout is queue's alone; 0 stands for the target's default. */
	timeout->null = !f->no_space_queue;
	timeout->num = f->no_space_timeout ? f->no_space_timeout :
		       DM_SUBVOL_NO_SPACE_TIMEOUT_DEFAULT;
	low_water->null = !f->low_water_sectors;
	low_water->num = f->low_water_sectors << 9;
	ignore_discard->num = f->ignore_discard;
	extent_size->null = !m->extent_size;
	extent_size->num = m->extent_size;
}

enum {
	L_POOL, L_NAME, L_KIND, L_SIZE, L_ALLOC, L_ORIGIN, L_DEVICE, L_CREATED,
	L_ID, L_ORIGIN_ID, L_IMAGE, L_GUARANTEE, L_NO_SPACE, L_NO_SPACE_TIMEOUT,
	L_LOW_WATER_MARK, L_IGNORE_DISCARD, L_EXTENT_SIZE, L_HOST_LVM, L_STATE,
	L_EXCLUSIVE, L_SHARED, L_NR
};

static const struct field list_columns[L_NR] = {
	[L_POOL] = { "pool", FIELD_STRING },
	[L_NAME] = { "name", FIELD_STRING },
	[L_KIND] = { "kind", FIELD_STRING },
	[L_SIZE] = { "size", FIELD_SIZE },
	[L_ALLOC] = { "alloc", FIELD_SIZE },
	[L_ORIGIN] = { "origin", FIELD_STRING },
	[L_DEVICE] = { "device", FIELD_STRING },
	[L_CREATED] = { "created", FIELD_STRING },
	[L_ID] = { "id", FIELD_STRING, .hidden = true },
	[L_ORIGIN_ID] = { "origin_id", FIELD_STRING, .hidden = true },
	[L_IMAGE] = { "image", FIELD_STRING, .hidden = true },
	[L_GUARANTEE] = { "guarantee", FIELD_STRING, .hidden = true },
	[L_NO_SPACE] = { "no_space", FIELD_STRING, .hidden = true },
	[L_NO_SPACE_TIMEOUT] = { "no_space_timeout", FIELD_NUMBER, .hidden = true },
	[L_LOW_WATER_MARK] = { "low_water_mark", FIELD_SIZE, .hidden = true },
	[L_IGNORE_DISCARD] = { "ignore_discard", FIELD_BOOL, .hidden = true },
	[L_EXTENT_SIZE] = { "extent_size", FIELD_SIZE, .hidden = true },
	[L_HOST_LVM] = { "host_lvm", FIELD_BOOL, .hidden = true },
	[L_STATE] = { "state", FIELD_STRING, .hidden = true },
	[L_EXCLUSIVE] = { "exclusive", FIELD_SIZE, .hidden = true },
	[L_SHARED] = { "shared", FIELD_SIZE, .hidden = true },
};

/* What list shows: -t's kinds, and with POOL/VOLUME the volume's own. */
struct list_filter {
	bool volumes, snapshots;
	const char *volume;	/* NULL: every one */
	const char *volume_id;	/* its id: its snapshots too */
};

static bool list_wants(const struct list_filter *lf, const struct volume *v)
{
	bool snap = v->meta.kind == VOLUME_KIND_SNAPSHOT;

	if (!(snap ? lf->snapshots : lf->volumes))
		return false;
	return !lf->volume || !strcmp(v->name, lf->volume) ||
	       (snap && lf->volume_id && !strcmp(v->meta.origin_id, lf->volume_id));
}

/* status's and list's STATE: as the device is, or inactive. */
static const char *state_text(bool active, const struct dm_info_lite *info,
			      bool read_only)
{
	if (!active)
		return "inactive";
	if (info->suspended)
		return "suspended";
	return read_only ? "active (read-only)" : "active";
}

/* EXCLUSIVE and SHARED: from the image's extent map, when shown. */
static int usage_fields(struct report *rep, const struct volume *v, struct field *row)
{
	uint64_t excl, shared;

	if (!report_uses(rep, L_EXCLUSIVE) && !report_uses(rep, L_SHARED))
		return 0;
	if (volume_usage(v, &excl, &shared)) {
		errmsg("volume %s/%s: cannot read the extent map of %s: %s",
		       v->pool->meta.name, v->name, v->path, strerror(errno));
		row[L_EXCLUSIVE].null = row[L_SHARED].null = true;
		return -1;
	}
	row[L_EXCLUSIVE].num = excl;
	row[L_SHARED].num = shared;
	return 0;
}

static int list_pool(struct report *rep, const char *spec,
		     const struct list_filter *filter)
{
	char dev[DM_NAME_LEN + 32], name[DM_NAME_LEN], created[32];
	struct list_filter lf = *filter;
	struct subvol_features feat;
	struct dm_info_lite info;
	struct field row[L_NR];
	struct volume *vols;
	struct pool pool;
	char **names;
	size_t i, j, nr;
	bool active;
	int r = 0;

	if (pool_open(spec, &pool, false))
		return -1;
	names = pool_volumes(&pool);
	if (!names) {
		errmsg("pool %s: cannot read %s", pool.meta.name, pool.path);
		pool_close(&pool);
		return -1;
	}
	/* All of them first: origins are found by id among them. */
	for (nr = 0; names[nr]; nr++)
		;
	vols = calloc(nr ? nr : 1, sizeof(*vols));
	if (!vols) {
		errmsg("pool %s: out of memory", pool.meta.name);
		free_names(names);
		pool_close(&pool);
		return -1;
	}
	for (i = 0; i < nr; i++) {
		if (volume_load(&pool, names[i], &vols[i], true))
			r = -1;
		else if (lf.volume && !strcmp(names[i], lf.volume))
			lf.volume_id = vols[i].meta.id;
	}
	if (lf.volume && !lf.volume_id) {
		errmsg("volume %s/%s: no such volume", pool.meta.name, lf.volume);
		r = -1;
	}
	for (i = 0; i < nr; i++) {
		struct volume *v = &vols[i];

		if (!v->exists || !list_wants(&lf, v))
			continue;
		memcpy(row, list_columns, sizeof(row));
		row[L_POOL].str = pool.meta.name;
		row[L_NAME].str = v->name;
		row[L_KIND].str = volume_kind_name(v->meta.kind);
		row[L_SIZE].num = v->meta.size;
		row[L_ALLOC].num = volume_allocated(v);
		for (j = 0; v->meta.origin_id[0] && j < nr; j++)
			if (vols[j].exists && !strcmp(vols[j].meta.id, v->meta.origin_id))
				row[L_ORIGIN].str = vols[j].name;
		active = volume_active(v, name, sizeof(name), &info) == 1;
		if (active) {
			snprintf(dev, sizeof(dev), "%s/%s", dm_dir(), name);
			row[L_DEVICE].str = dev;
		}
		row[L_STATE].str = state_text(active, &info, info.read_only);
		if (usage_fields(rep, v, row))
			r = -1;
		if (volume_device_features(v, active ? name : NULL, &feat))
			r = -1;
		row[L_CREATED].str = iso_time(created, sizeof(created), v->meta.created);
		row[L_ID].str = v->meta.id;
		row[L_ORIGIN_ID].str = v->meta.origin_id[0] ? v->meta.origin_id : NULL;
		row[L_IMAGE].str = v->path;
		meta_fields(&v->meta, &feat, &row[L_GUARANTEE], &row[L_NO_SPACE],
			    &row[L_NO_SPACE_TIMEOUT], &row[L_LOW_WATER_MARK],
			    &row[L_IGNORE_DISCARD], &row[L_EXTENT_SIZE]);
		row[L_HOST_LVM].num = volume_host_lvm(&v->meta);
		if (report_add(rep, row))
			r = -1;
	}
	free(vols);
	free_names(names);
	pool_close(&pool);
	return r;
}

/* -t: "volume", "snapshot", both comma-separated, or "all". */
static int parse_types(const char *arg, struct list_filter *lf)
{
	const char *p = arg;
	size_t n;

	if (!arg) {
		lf->volumes = lf->snapshots = true;
		return 0;
	}
	for (;;) {
		n = strcspn(p, ",");
		if (n == 3 && !strncmp(p, "all", n))
			lf->volumes = lf->snapshots = true;
		else if ((n == 6 && !strncmp(p, "volume", n)) || (n == 3 && !strncmp(p, "vol", n)))
			lf->volumes = true;
		else if ((n == 8 && !strncmp(p, "snapshot", n)) || (n == 4 && !strncmp(p, "snap", n)))
			lf->snapshots = true;
		else
			return usage_error("list", "-t: \"%.*s\" is not a kind (volume, snapshot or all)",
					   (int)n, p);
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

/*
 * list's argument: a pool (name or directory), or POOL/VOLUME (a slash,
 * and not a directory): the volume and its snapshots, as lvs VG/LV.
 */
static int list_arg(struct report *rep, const char *arg, const struct list_filter *filter)
{
	char pool[4096];
	const char *slash = strrchr(arg, '/');
	struct list_filter lf = *filter;
	struct stat st;

	if (!slash || (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) ||
	    (size_t)(slash - arg) >= sizeof(pool))
		return list_pool(rep, arg, filter);
	if (slash == arg || !slash[1]) {
		errmsg("volume %s: give it as POOL/VOLUME", arg);
		return -1;
	}
	memcpy(pool, arg, slash - arg);
	pool[slash - arg] = '\0';
	lf.volume = slash + 1;
	return list_pool(rep, pool, &lf);
}

int cmd_list(int argc, char **argv)
{
	int sel[REPORT_MAX_COLUMNS], nsel;
	struct list_filter lf = { 0 };
	const char *types = NULL;
	struct report_opts o;
	struct report *rep;
	char **pools = NULL, **p;
	bool usage;
	int i, r = 0;

	i = parse_report_opts("list", argc, argv, &o, &types);
	if (i)
		return i < 0 ? 0 : i;
	if (parse_types(types, &lf))
		return EXIT_USAGE;
	nsel = report_select("list", &o, list_columns, L_NR, sel);
	if (nsel < 0)
		return EXIT_USAGE;
	rep = report_new("list", "volumes", &o, list_columns, L_NR, sel, nsel, &usage);
	if (!rep) {
		if (usage)
			return EXIT_USAGE;
		errmsg("list: out of memory");
		return EXIT_REFUSED;
	}
	if (optind < argc) {
		for (i = optind; i < argc; i++)
			if (list_arg(rep, argv[i], &lf))
				r = EXIT_REFUSED;
	} else {
		pools = pool_registered();
		for (p = pools; p && *p; p++)
			if (list_pool(rep, *p, &lf))
				r = EXIT_REFUSED;
		free_names(pools);
	}
	report_print(rep);
	return r;
}

/*
 * status: every field there is; those without a value in the volume's
 * state (the target's counters of an inactive volume) are hidden, and
 * show as "-" if -o names them.
 */
enum {
	S_POOL, S_VOLUME, S_KIND, S_STATE, S_DEVICE, S_IMAGE, S_SIZE,
	S_GUARANTEE, S_NO_SPACE, S_NO_SPACE_TIMEOUT, S_LOW_WATER_MARK,
	S_IGNORE_DISCARD, S_EXTENT_SIZE, S_HOST_LVM,
	S_BACKED, S_MAPPED, S_SHARED, S_PROMISED, S_COW_RESERVE, S_POOL_CLAIMED,
	S_POOL_COMMITTED, S_UNCOVERED, S_HOST_FREE, S_CLIENT, S_LOW_WATER,
	S_ACCOUNTING_ERRORS, S_SNAPSHOT_COPY, S_ORIGIN, S_ORIGIN_ID, S_CREATED, S_ID, S_NR
};

static const struct field status_fields[S_NR] = {
	[S_POOL] = { "pool", FIELD_STRING },
	[S_VOLUME] = { "volume", FIELD_STRING },
	[S_KIND] = { "kind", FIELD_STRING },
	[S_STATE] = { "state", FIELD_STRING },
	[S_DEVICE] = { "device", FIELD_STRING },
	[S_IMAGE] = { "image", FIELD_STRING },
	[S_SIZE] = { "size", FIELD_SIZE },
	[S_GUARANTEE] = { "guarantee", FIELD_STRING },
	[S_NO_SPACE] = { "no_space", FIELD_STRING },
	[S_NO_SPACE_TIMEOUT] = { "no_space_timeout", FIELD_NUMBER },
	[S_LOW_WATER_MARK] = { "low_water_mark", FIELD_SIZE },
	[S_IGNORE_DISCARD] = { "ignore_discard", FIELD_BOOL },
	[S_EXTENT_SIZE] = { "extent_size", FIELD_SIZE },
	[S_HOST_LVM] = { "host_lvm", FIELD_BOOL },
	[S_BACKED] = { "backed", FIELD_SIZE },
	[S_MAPPED] = { "mapped", FIELD_SIZE },
	[S_SHARED] = { "shared", FIELD_SIZE },
	[S_PROMISED] = { "promised", FIELD_SIZE },
	[S_COW_RESERVE] = { "cow_reserve", FIELD_SIZE },
	[S_POOL_CLAIMED] = { "pool_claimed", FIELD_SIZE },
	[S_POOL_COMMITTED] = { "pool_committed", FIELD_SIZE },
	[S_UNCOVERED] = { "uncovered", FIELD_SIZE },
	[S_HOST_FREE] = { "host_free", FIELD_SIZE },
	[S_CLIENT] = { "client", FIELD_STRING },
	[S_LOW_WATER] = { "low_water", FIELD_STRING },
	[S_ACCOUNTING_ERRORS] = { "accounting_errors", FIELD_NUMBER },
	[S_SNAPSHOT_COPY] = { "snapshot_copy", FIELD_STRING },
	[S_ORIGIN] = { "origin", FIELD_STRING },
	[S_ORIGIN_ID] = { "origin_id", FIELD_STRING },
	[S_CREATED] = { "created", FIELD_STRING },
	[S_ID] = { "id", FIELD_STRING },
};

/*
 * The snapshot copy the device holds: its progress or end, and whether a
 * subvol process still owns it (copy-owner.c).
 */
static void copy_text(const struct subvol_status *st, const char *image, char *buf,
		      size_t len)
{
	int n = 0;

	if (st->copy == SUBVOL_COPY_RUNNING)
		n = snprintf(buf, len, "%.0f%% of %llu MiB",
			     st->copy_total_sectors ?
			     100.0 * st->copy_copied_sectors / st->copy_total_sectors : 100.0,
			     (unsigned long long)(st->copy_total_sectors >> 11));
	else if (st->copy == SUBVOL_COPY_DONE)
		n = snprintf(buf, len, "complete");
	else
		n = snprintf(buf, len, "failed: %s", strerror(st->copy_errno));
	if (n >= 0 && (size_t)n < len && !copy_owned(image))
		snprintf(buf + n, len - n, " (no subvol process owns it: the next snapshot or subvol monitor cancels it)");
}

/* One volume's status fields, and the text they point to. */
struct status_rec {
	struct field f[S_NR];
	bool ok;
	char pool[SUBVOL_NAME_MAX + 1], volume[SUBVOL_NAME_MAX + 1];
	char image[sizeof(((struct volume *)0)->path)], dev[DM_NAME_LEN + 32];
	char created[32], origin[SUBVOL_NAME_MAX + 1], copy[160];
	char id[SUBVOL_ID_LEN + 1], origin_id[SUBVOL_ID_LEN + 1];
};

/* The target's counters of an active volume: shown when it gives them. */
static void status_counters(struct status_rec *s, const struct subvol_status *st)
{
	struct field *f = s->f;
	int i;

	f[S_BACKED].num = st->backed_sectors << 9;
	if (st->has_space) {
		for (i = S_MAPPED; i <= S_UNCOVERED; i++)
			f[i].hidden = f[i].null = false;
		f[S_MAPPED].num = st->mapped_sectors << 9;
		f[S_SHARED].num = st->shared_sectors << 9;
		f[S_PROMISED].num = st->promised_sectors << 9;
		f[S_COW_RESERVE].num = st->cow_reserve_sectors << 9;
		f[S_POOL_CLAIMED].num = st->pool_claimed_sectors << 9;
		f[S_POOL_COMMITTED].num = st->pool_committed_sectors << 9;
		f[S_UNCOVERED].num = st->uncovered_sectors << 9;
		f[S_CLIENT].hidden = f[S_LOW_WATER].hidden = false;
		f[S_CLIENT].null = f[S_LOW_WATER].null = false;
		f[S_CLIENT].str = st->client_attached ? "attached" : "none";
		f[S_LOW_WATER].str = st->low_water_hit ? "low" : "ok";
	}
	f[S_HOST_FREE].hidden = false;
	f[S_HOST_FREE].null = !st->host_free_known;
	f[S_HOST_FREE].num = st->host_free_sectors << 9;
	if (st->has_accounting_errors) {
		f[S_ACCOUNTING_ERRORS].hidden = f[S_ACCOUNTING_ERRORS].null = false;
		f[S_ACCOUNTING_ERRORS].num = st->accounting_errors;
	}
	if (st->has_snapshot_copy && st->copy != SUBVOL_COPY_NONE) {
		copy_text(st, s->image, s->copy, sizeof(s->copy));
		f[S_SNAPSHOT_COPY].str = s->copy;
	}
}

/* The fields of the volume spec names into s: 0, or the exit status (said). */
static int status_read(const char *spec, struct status_rec *s)
{
	char name[DM_NAME_LEN], params[1024], err[256];
	struct subvol_status st = { 0 };
	struct subvol_features feat;
	struct dm_info_lite info;
	struct field *f = s->f;
	struct statvfs sv;
	struct volume vol;
	struct pool pool;
	int i, r;

	r = volume_spec(spec, &pool, &vol, false, true);
	if (r)
		return r;
	r = EXIT_REFUSED;
	i = volume_active(&vol, name, sizeof(name), &info);
	if (i < 0)
		goto out;
	if (i) {
		if (dm_device_status(name, params, sizeof(params), NULL)) {
			errmsg("volume %s/%s: cannot read the status of %s: %s", pool.meta.name,
			       vol.name, name, dm_last_error());
			goto out;
		}
		if (subvol_status_parse(params, &st, err, sizeof(err))) {
			errmsg("volume %s/%s: %s: %s", pool.meta.name, vol.name, name, err);
			goto out;
		}
		snprintf(s->dev, sizeof(s->dev), "%s/%s", dm_dir(), name);
	}
	if (volume_device_features(&vol, i ? name : NULL, &feat))
		goto out;

	memcpy(f, status_fields, sizeof(s->f));
	snprintf(s->pool, sizeof(s->pool), "%s", pool.meta.name);
	snprintf(s->volume, sizeof(s->volume), "%s", vol.name);
	snprintf(s->image, sizeof(s->image), "%s", vol.path);
	snprintf(s->id, sizeof(s->id), "%s", vol.meta.id);
	snprintf(s->origin_id, sizeof(s->origin_id), "%s", vol.meta.origin_id);
	f[S_POOL].str = s->pool;
	f[S_VOLUME].str = s->volume;
	f[S_KIND].str = volume_kind_name(vol.meta.kind);
	f[S_STATE].str = state_text(i, &info, !st.writable);
	f[S_DEVICE].str = i ? s->dev : NULL;
	f[S_IMAGE].str = s->image;
	f[S_SIZE].num = vol.meta.size;
	meta_fields(&vol.meta, &feat, &f[S_GUARANTEE], &f[S_NO_SPACE], &f[S_NO_SPACE_TIMEOUT],
		    &f[S_LOW_WATER_MARK], &f[S_IGNORE_DISCARD], &f[S_EXTENT_SIZE]);
	f[S_HOST_LVM].num = volume_host_lvm(&vol.meta);
	/* The target's counters: hidden, and "-", unless it gives them. */
	for (r = S_MAPPED; r <= S_ACCOUNTING_ERRORS; r++)
		f[r].hidden = f[r].null = true;
	if (i) {
		status_counters(s, &st);
	} else {
		f[S_BACKED].num = volume_allocated(&vol);
		if (!fstatvfs(pool.dirfd, &sv)) {
			f[S_HOST_FREE].hidden = f[S_HOST_FREE].null = false;
			f[S_HOST_FREE].num = (uint64_t)sv.f_bavail * sv.f_frsize;
		}
	}
	origin_by_id(&pool, vol.meta.origin_id, s->origin, sizeof(s->origin));
	f[S_ORIGIN].str = s->origin[0] ? s->origin : NULL;
	f[S_ORIGIN_ID].str = s->origin_id[0] ? s->origin_id : NULL;
	f[S_CREATED].str = iso_time(s->created, sizeof(s->created), vol.meta.created);
	f[S_ID].str = s->id;
	s->ok = true;
	r = 0;
out:
	pool_close(&pool);
	return r;
}

/*
 * Several volumes in JSON: one array, its columns the fields any of them
 * shows (null where one has no value), as a table of volumes.
 */
static int status_json(const struct report_opts *o, struct status_rec *recs, int n)
{
	struct field shown[S_NR];
	int sel[REPORT_MAX_COLUMNS], nsel, i, j;
	struct report *rep;
	bool usage;

	memcpy(shown, status_fields, sizeof(shown));
	for (j = 0; j < S_NR; j++) {
		shown[j].hidden = true;
		for (i = 0; i < n; i++)
			if (recs[i].ok && !recs[i].f[j].hidden)
				shown[j].hidden = false;
	}
	nsel = report_select("status", o, shown, S_NR, sel);
	rep = report_new("status", "volume", o, shown, S_NR, sel, nsel, &usage);
	if (!rep)
		return -1;
	for (i = 0; i < n; i++)
		if (recs[i].ok && report_add(rep, recs[i].f))
			return -1;
	return report_print(rep);
}

int cmd_status(int argc, char **argv)
{
	int sel[REPORT_MAX_COLUMNS], nsel, i, n, r, status = 0;
	struct status_rec *recs;
	struct report_opts o;
	bool first = true;

	r = parse_report_opts("status", argc, argv, &o, NULL);
	if (r)
		return r < 0 ? 0 : r;
	if (o.sort)
		return usage_error("status", "--sort is an option of list and pool list");
	if (report_select("status", &o, status_fields, S_NR, sel) < 0)
		return EXIT_USAGE;
	if (optind >= argc)
		return usage_error("status", "give at least one POOL/VOLUME");
	n = argc - optind;
	recs = calloc(n, sizeof(*recs));
	if (!recs) {
		errmsg("status: out of memory");
		return EXIT_REFUSED;
	}
	/* Each one said, as lvdisplay does; a missing one named, exit 1. */
	for (i = 0; i < n; i++) {
		r = status_read(argv[optind + i], &recs[i]);
		if (r && status != EXIT_USAGE)
			status = r;
	}
	if (o.json) {
		if (status_json(&o, recs, n))
			status = EXIT_REFUSED;
	} else {
		for (i = 0; i < n; i++) {
			if (!recs[i].ok)
				continue;
			if (!first)
				putchar('\n');
			first = false;
			nsel = report_select("status", &o, recs[i].f, S_NR, sel);
			if (report_fields("volume", &o, recs[i].f, sel, nsel))
				status = EXIT_REFUSED;
		}
	}
	free(recs);
	return status;
}

/* pool status and pool list: the same fields, "pool" being list's "name". */
enum {
	P_NAME, P_PATH, P_ID, P_CREATED, P_VOLUMES, P_SNAPSHOTS, P_ACTIVE,
	P_VIRTUAL_SIZE, P_ALLOCATED, P_HOST_SIZE, P_HOST_FREE, P_HOST_LV,
	P_AE_THRESHOLD, P_AE_STEP, P_AE_MAX, P_AE_COMMAND, P_EXTENSIONS,
	P_LAST_EXTENSION, P_LAST_EXTENSION_TIME, P_LAST_COMMAND, P_LAST_COMMAND_TIME,
	P_LAST_ERROR, P_LAST_ERROR_TIME, P_NR
};

/* The text of a pool's fields: its policy and what the monitor did. */
struct pool_texts {
	char created[32], threshold[32], step[32], lv[2 * DM_NAME_LEN + 2];
	char extension_time[32], command_time[32], error_time[32];
	struct monitor_state state;
};

static const struct field pool_status_fields[P_NR] = {
	[P_NAME] = { "pool", FIELD_STRING },
	[P_PATH] = { "path", FIELD_STRING },
	[P_ID] = { "id", FIELD_STRING },
	[P_CREATED] = { "created", FIELD_STRING },
	[P_VOLUMES] = { "volumes", FIELD_NUMBER },
	[P_SNAPSHOTS] = { "snapshots", FIELD_NUMBER },
	[P_ACTIVE] = { "active", FIELD_NUMBER },
	[P_VIRTUAL_SIZE] = { "virtual_size", FIELD_SIZE },
	[P_ALLOCATED] = { "allocated", FIELD_SIZE },
	[P_HOST_SIZE] = { "host_size", FIELD_SIZE },
	[P_HOST_FREE] = { "host_free", FIELD_SIZE },
	[P_HOST_LV] = { "host_lv", FIELD_STRING },
	[P_AE_THRESHOLD] = { "autoextend_threshold", FIELD_STRING },
	[P_AE_STEP] = { "autoextend_step", FIELD_STRING },
	[P_AE_MAX] = { "autoextend_max", FIELD_SIZE },
	[P_AE_COMMAND] = { "autoextend_command", FIELD_STRING },
	[P_EXTENSIONS] = { "extensions", FIELD_NUMBER },
	[P_LAST_EXTENSION] = { "last_extension", FIELD_STRING },
	[P_LAST_EXTENSION_TIME] = { "last_extension_time", FIELD_STRING },
	[P_LAST_COMMAND] = { "last_command", FIELD_STRING },
	[P_LAST_COMMAND_TIME] = { "last_command_time", FIELD_STRING },
	[P_LAST_ERROR] = { "last_error", FIELD_STRING },
	[P_LAST_ERROR_TIME] = { "last_error_time", FIELD_STRING },
};

static const struct field pool_list_columns[P_NR] = {
	[P_NAME] = { "name", FIELD_STRING },
	[P_PATH] = { "path", FIELD_STRING },
	[P_ID] = { "id", FIELD_STRING, .hidden = true },
	[P_CREATED] = { "created", FIELD_STRING, .hidden = true },
	[P_VOLUMES] = { "volumes", FIELD_NUMBER },
	[P_SNAPSHOTS] = { "snapshots", FIELD_NUMBER },
	[P_ACTIVE] = { "active", FIELD_NUMBER, .hidden = true },
	[P_VIRTUAL_SIZE] = { "virtual_size", FIELD_SIZE, .hidden = true },
	[P_ALLOCATED] = { "allocated", FIELD_SIZE, .hidden = true },
	[P_HOST_SIZE] = { "host_size", FIELD_SIZE, .hidden = true },
	[P_HOST_FREE] = { "host_free", FIELD_SIZE },
	[P_HOST_LV] = { "host_lv", FIELD_STRING, .hidden = true },
	[P_AE_THRESHOLD] = { "autoextend_threshold", FIELD_STRING, .hidden = true },
	[P_AE_STEP] = { "autoextend_step", FIELD_STRING, .hidden = true },
	[P_AE_MAX] = { "autoextend_max", FIELD_SIZE, .hidden = true },
	[P_AE_COMMAND] = { "autoextend_command", FIELD_STRING, .hidden = true },
	[P_EXTENSIONS] = { "extensions", FIELD_NUMBER, .hidden = true },
	[P_LAST_EXTENSION] = { "last_extension", FIELD_STRING, .hidden = true },
	[P_LAST_EXTENSION_TIME] = { "last_extension_time", FIELD_STRING, .hidden = true },
	[P_LAST_COMMAND] = { "last_command", FIELD_STRING, .hidden = true },
	[P_LAST_COMMAND_TIME] = { "last_command_time", FIELD_STRING, .hidden = true },
	[P_LAST_ERROR] = { "last_error", FIELD_STRING, .hidden = true },
	[P_LAST_ERROR_TIME] = { "last_error_time", FIELD_STRING, .hidden = true },
};

/* errmsg's first line while counting a pool's images, and how many. */
static char count_error[512];
static unsigned int count_errors;

static void count_error_sink(const char *msg)
{
	if (!count_errors++)
		snprintf(count_error, sizeof(count_error), "%s", msg);
}

/*
 * A pool's fields into f (a copy of one of the tables above); -1 when an
 * image could not be read: then the counts are unknown (null, "-"), never
 * short, and one line says how many images could not be read and why.
 */
static int pool_fields(struct pool *pool, struct field *f, struct pool_texts *t,
		       bool bytes)
{
	const struct autoextend *a = &pool->meta.autoextend;
	char vg[DM_NAME_LEN], lv[DM_NAME_LEN], err[256];
	uint64_t virt = 0, alloc = 0, nvol = 0, nsnap = 0, nactive = 0, n = 0;
	struct statvfs sv;
	struct volume vol;
	char **names, **p;
	void (*saved_sink)(const char *msg);
	bool bad = false;
	int i;

	names = pool_volumes(pool);
	if (!names) {
		errmsg("pool %s: cannot read %s: %s", pool->meta.name, pool->path, strerror(errno));
		bad = true;
	}
	/* An image it cannot read makes the counts wrong: say so once, exit 1. */
	count_errors = 0;
	saved_sink = errmsg_sink;
	errmsg_sink = count_error_sink;
	for (p = names; p && *p; p++, n++) {
		if (volume_load(pool, *p, &vol, true))
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
	errmsg_sink = saved_sink;
	if (count_errors) {
		errmsg("pool %s: %u of its %" PRIu64 " images cannot be read, so its counts are not shown (%s)",
		       pool->meta.name, count_errors, n, count_error);
		bad = true;
	}
	for (i = P_VOLUMES; i <= P_ALLOCATED; i++)
		f[i].null = bad;
	free_names(names);
	if (fstatvfs(pool->dirfd, &sv))
		memset(&sv, 0, sizeof(sv));
	f[P_NAME].str = pool->meta.name;
	f[P_PATH].str = pool->path;
	f[P_ID].str = pool->meta.id;
	f[P_CREATED].str = iso_time(t->created, sizeof(t->created), pool->meta.created);
	f[P_VOLUMES].num = nvol;
	f[P_SNAPSHOTS].num = nsnap;
	f[P_ACTIVE].num = nactive;
	f[P_VIRTUAL_SIZE].num = virt;
	f[P_ALLOCATED].num = alloc;
	f[P_HOST_SIZE].num = (uint64_t)sv.f_blocks * sv.f_frsize;
	f[P_HOST_FREE].num = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (host_lv(pool->dirfd, vg, sizeof(vg), lv, sizeof(lv))) {
		snprintf(t->lv, sizeof(t->lv), "%s/%s", vg, lv);
		f[P_HOST_LV].str = t->lv;
	}
	if (autoextend_on(a)) {
		autoextend_threshold_str(t->threshold, sizeof(t->threshold), a, bytes);
		f[P_AE_THRESHOLD].str = t->threshold;
	}
	autoextend_step_str(t->step, sizeof(t->step), a, bytes);
	f[P_AE_STEP].str = t->step;
	f[P_AE_MAX].num = a->max;
	f[P_AE_MAX].null = !a->max;
	f[P_AE_COMMAND].str = a->command[0] ? a->command : NULL;
	if (monitor_state_read(pool->dirfd, &t->state, err, sizeof(err))) {
		errmsg("pool %s: %s", pool->meta.name, err);
		bad = true;
	}
	f[P_EXTENSIONS].num = t->state.extensions;
	f[P_LAST_EXTENSION].str = t->state.last_extension[0] ? t->state.last_extension : NULL;
	f[P_LAST_EXTENSION_TIME].str = iso_time(t->extension_time, sizeof(t->extension_time),
						t->state.last_extension_time);
	f[P_LAST_COMMAND].str = t->state.last_command[0] ? t->state.last_command : NULL;
	f[P_LAST_COMMAND_TIME].str = iso_time(t->command_time, sizeof(t->command_time),
					      t->state.last_command_time);
	f[P_LAST_ERROR].str = t->state.last_error[0] ? t->state.last_error : NULL;
	f[P_LAST_ERROR_TIME].str = iso_time(t->error_time, sizeof(t->error_time),
					    t->state.last_error_time);
	return bad ? -1 : 0;
}

static int pool_status(const char *spec, const struct report_opts *o,
		       const int *sel, int nsel)
{
	struct field f[P_NR];
	struct pool_texts t;
	struct pool pool;
	int r;

	if (pool_open(spec, &pool, false))
		return EXIT_REFUSED;
	memcpy(f, pool_status_fields, sizeof(f));
	r = pool_fields(&pool, f, &t, o->bytes || o->json);
	r = report_fields("pool", o, f, sel, nsel) || r ? EXIT_REFUSED : 0;
	pool_close(&pool);
	return r;
}

static int pool_list(const struct report_opts *o, const int *sel, int nsel)
{
	struct field row[P_NR];
	struct pool_texts t;
	struct report *rep;
	struct pool pool;
	char **names, **p;
	bool usage;
	int r = 0;

	rep = report_new("pool", "pools", o, pool_list_columns, P_NR, sel, nsel, &usage);
	if (!rep)
		return usage ? EXIT_USAGE : EXIT_REFUSED;
	names = pool_registered();
	for (p = names; p && *p; p++) {
		if (pool_open(*p, &pool, false)) {
			r = EXIT_REFUSED;
			continue;
		}
		memcpy(row, pool_list_columns, sizeof(row));
		if (pool_fields(&pool, row, &t, o->bytes || o->json))
			r = EXIT_REFUSED;
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
		AUTOEXTEND_OPTIONS,
		{ NULL, 0, NULL, 0 }
	};
	int sel[REPORT_MAX_COLUMNS], nsel, c, r;
	const char *sub, *name = NULL;
	struct autoextend_args args = { 0 };
	struct autoextend policy = { 0 };
	struct report_opts o;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		if (argc < 2)
			return usage_error("pool", "give a subcommand: create, import, set, status, list, export or remove");
		return command_help("pool");
	}
	sub = argv[1];
	argc--;
	argv++;
	if (!strcmp(sub, "create") || !strcmp(sub, "import")) {
		while ((c = cmd_getopt(argc, argv, "N:h", opts)) != -1) {
			if (c == 'N')
				name = optarg;
			else if (c == 'h')
				return command_help("pool");
			else if (sub[0] != 'c' || autoextend_option(c, optarg, &args))
				return usage_error("pool", c >= OPT_AUTOEXTEND_THRESHOLD ?
						   "the --autoextend options are for pool create and pool set" :
						   NULL);
		}
		if (optind != argc - 1)
			return usage_error("pool", "pool %s: give one DIRECTORY", sub);
		if (sub[0] == 'c') {
			r = autoextend_apply(name ? name : argv[optind], &args, &policy);
			if (r)
				return r;
			return pool_create(argv[optind], name, &policy) ? EXIT_REFUSED : 0;
		}
		return pool_import(argv[optind], name, pool_active_volume) ? EXIT_REFUSED : 0;
	}
	if (!strcmp(sub, "set"))
		return cmd_pool_set(argc, argv);
	if (!strcmp(sub, "export") || !strcmp(sub, "remove"))
		return cmd_pool_admin(sub, argc, argv);
	if (!strcmp(sub, "status") || !strcmp(sub, "list")) {
		r = parse_report_opts("pool", argc, argv, &o, NULL);
		if (r)
			return r < 0 ? 0 : r;
		if (o.sort && sub[0] != 'l')
			return usage_error("pool", "--sort is an option of pool list");
		nsel = report_select("pool", &o, sub[0] == 'l' ? pool_list_columns :
				     pool_status_fields, P_NR, sel);
		if (nsel < 0)
			return EXIT_USAGE;
		if (sub[0] == 'l')
			return optind == argc ? pool_list(&o, sel, nsel) :
			       usage_error("pool", "pool list takes no arguments");
		if (optind != argc - 1)
			return usage_error("pool", "pool status: give one POOL");
		return pool_status(argv[optind], &o, sel, nsel);
	}
	return usage_error("pool", "unknown subcommand \"%s\" (create, import, set, status, list, export, remove)", sub);
}

/*
 * Whether the volume of a device host LVM may use: the registered pool's
 * volume of that name, with that DM UUID, set --host-lvm.  Anything not
 * found says no.
 */
static bool udev_host_lvm(const char *pool_name, const char *vol_name, const char *uuid)
{
	char want[DM_UUID_LEN];
	struct volume vol;
	struct pool pool;
	bool r = false;

	if (pool_open(pool_name, &pool, false))
		return false;
	if (!volume_load(&pool, vol_name, &vol, true)) {
		volume_dm_uuid(&vol, want, sizeof(want));
		r = !strcmp(want, uuid) && volume_host_lvm(&vol.meta);
	}
	pool_close(&pool);
	return r;
}

/*
 * For udev: DM_NAME "subvol-<pool>-<volume>" (dashes inside names doubled)
 * to SUBVOL_POOL=<pool> and SUBVOL_VOLUME=<volume>, and, given the DM_UUID
 * too, SUBVOL_HOST_LVM=1 for a volume set --host-lvm.  Prints nothing, and
 * exits 1, for any other name.
 */
int cmd_udev_name(int argc, char **argv)
{
	char pool[DM_NAME_LEN], vol[DM_NAME_LEN], *out = pool;
	const char *p;
	size_t n = 0;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		return command_help("udev-name");
	if (argc < 2 || argc > 3 ||
	    strncmp(argv[1], SUBVOL_NAME_PREFIX, strlen(SUBVOL_NAME_PREFIX)))
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
	/* udev logs stderr; a pool it cannot find is no news. */
	if (argc == 3 && freopen("/dev/null", "w", stderr) && udev_host_lvm(pool, vol, argv[2]))
		printf("SUBVOL_HOST_LVM=1\n");
	return 0;
}
