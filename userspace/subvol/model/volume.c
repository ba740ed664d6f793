// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Volumes: "POOL/VOLUME" on the command line, <VOLUME>.img in the pool,
 * and the device-mapper name and UUID of its device.
 */
#include "model/model.h"
#include "model/extents.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int volume_load(struct pool *pool, const char *name, struct volume *vol,
		bool must_exist)
{
	char err[256], dm_name[4 * SUBVOL_NAME_MAX + 16];
	int fd;

	memset(vol, 0, sizeof(*vol));
	vol->pool = pool;
	if (!valid_name(name)) {
		errmsg("volume %s/%s: not a valid name (letters, digits, +_.-; at most %d; no leading - or .)",
		       pool->meta.name, name, SUBVOL_NAME_MAX);
		usage_hint();
		return EXIT_USAGE;
	}
	strcpy(vol->name, name);
	volume_dm_name(vol, dm_name, sizeof(dm_name));
	if (strlen(dm_name) >= DM_NAME_LEN) {
		errmsg("volume %s/%s: its device name would be %zu characters; device-mapper takes %d (shorter pool or volume names)",
		       pool->meta.name, name, strlen(dm_name), DM_NAME_LEN - 1);
		usage_hint();
		return EXIT_USAGE;
	}
	snprintf(vol->path, sizeof(vol->path), "%s/%s%s", pool->path, name,
		 SUBVOL_IMAGE_SUFFIX);
	fd = openat(pool->dirfd, vol->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT && !must_exist)
			return 0;
		if (errno == ENOENT)
			errmsg("volume %s/%s: no such volume", pool->meta.name, name);
		else
			errmsg("volume %s/%s: cannot open %s: %s", pool->meta.name, name,
			       vol->path, strerror(errno));
		return EXIT_REFUSED;
	}
	if (volume_meta_read(fd, &vol->meta, err, sizeof(err))) {
		errmsg("volume %s/%s: %s is not a subvol image (%s)", pool->meta.name,
		       name, vol->path, err);
		close(fd);
		return EXIT_REFUSED;
	}
	close(fd);
	vol->exists = true;
	return 0;
}

int volume_spec(const char *spec, struct pool *pool, struct volume *vol,
		bool lock, bool must_exist)
{
	char pool_spec[4096];
	const char *slash = strrchr(spec, '/');
	size_t n;
	int r;

	if (!slash || slash == spec || !slash[1]) {
		errmsg("volume %s: give it as POOL/VOLUME", spec);
		usage_hint();
		return EXIT_USAGE;
	}
	n = slash - spec;
	if (n >= sizeof(pool_spec)) {
		errmsg("volume %s: the pool's path is too long", spec);
		usage_hint();
		return EXIT_USAGE;
	}
	memcpy(pool_spec, spec, n);
	pool_spec[n] = '\0';
	if (pool_open(pool_spec, pool, lock))
		return EXIT_REFUSED;
	r = volume_load(pool, slash + 1, vol, must_exist);
	if (r) {
		pool_close(pool);
		return r;
	}
	return 0;
}

/* LVM's escaping: a "-" inside a name is doubled, so "-" separates. */
static size_t escape_dashes(char *out, const char *name)
{
	size_t n = 0;

	for (; *name; name++) {
		out[n++] = *name;
		if (*name == '-')
			out[n++] = '-';
	}
	out[n] = '\0';
	return n;
}

void volume_dm_name(const struct volume *vol, char *out, size_t len)
{
	char pool[2 * SUBVOL_NAME_MAX + 1], name[2 * SUBVOL_NAME_MAX + 1];

	escape_dashes(pool, vol->pool->meta.name);
	escape_dashes(name, vol->name);
	snprintf(out, len, "%s%s-%s", SUBVOL_NAME_PREFIX, pool, name);
}

void volume_dm_uuid(const struct volume *vol, char *out, size_t len)
{
	snprintf(out, len, "%s%s-%s", SUBVOL_UUID_PREFIX, vol->pool->meta.id,
		 vol->meta.id);
}

uint64_t volume_allocated(const struct volume *vol)
{
	struct stat st;

	if (stat(vol->path, &st))
		return 0;
	return (uint64_t)st.st_blocks * 512;
}

int volume_usage(const struct volume *vol, uint64_t *exclusive, uint64_t *shared)
{
	int fd = open(vol->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW), r, saved;

	if (fd < 0)
		return -1;
	r = extent_usage(fd, exclusive, shared);
	saved = errno;
	close(fd);
	errno = saved;
	return r;
}
