// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Pools: a directory on a host XFS with reflink, its metadata, the
 * registry of pool names, and the lock that serialises changes to a pool
 * (flock on the directory, taken by every command that changes it).
 */
#include "model/model.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static const char *config_dir(void)
{
	const char *d = getenv("SUBVOL_CONFIG_DIR");

	return d && *d ? d : "/etc/subvol";
}

static void registry_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/pools%s%s", config_dir(), name ? "/" : "",
		 name ? name : "");
}

static const char *fs_name(long type)
{
	switch (type) {
	case EXT4_SUPER_MAGIC:
		return "ext2/3/4";
	case BTRFS_SUPER_MAGIC:
		return "btrfs";
	case TMPFS_MAGIC:
		return "tmpfs";
	case 0x6969:
		return "nfs";
	default:
		return "not XFS";
	}
}

/*
 * The host must be XFS with reflink: clone a written block from one
 * unnamed file to another.  Returns 0 or -1 after saying why.
 */
static int check_host(const char *path, int dirfd)
{
	char block[4096] = { 1 };
	struct statfs sfs;
	int a = -1, b = -1, r = -1;
	const char *p;

	for (p = path; *p; p++) {
		/* The kernel's table parser splits at whitespace and takes "\\" as an escape. */
		if (isspace((unsigned char)*p) || *p == '\\' || iscntrl((unsigned char)*p)) {
			errmsg("pool %s: the path holds whitespace, a backslash or a control character, which no device-mapper table can carry",
			       path);
			return -1;
		}
	}
	if (fstatfs(dirfd, &sfs)) {
		errmsg("pool %s: cannot stat the filesystem: %s", path, strerror(errno));
		return -1;
	}
	if (sfs.f_type != XFS_SUPER_MAGIC) {
		errmsg("pool %s: the host filesystem is %s (0x%lx), not XFS",
		       path, fs_name(sfs.f_type), (long)sfs.f_type);
		return -1;
	}
	a = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	b = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (a < 0 || b < 0) {
		errmsg("pool %s: cannot make a file there: %s", path, strerror(errno));
		goto out;
	}
	if (pwrite(a, block, sizeof(block), 0) != (ssize_t)sizeof(block)) {
		errmsg("pool %s: cannot write a test block: %s", path, strerror(errno));
		goto out;
	}
	if (ioctl(b, FICLONE, a)) {
		if (errno == EOPNOTSUPP || errno == EINVAL || errno == ENOTTY)
			errmsg("pool %s: the host XFS has no reflink support (make it with mkfs.xfs -m reflink=1)",
			       path);
		else
			errmsg("pool %s: cannot reflink a test block: %s", path,
			       strerror(errno));
		goto out;
	}
	r = 0;
out:
	if (a >= 0)
		close(a);
	if (b >= 0)
		close(b);
	return r;
}

/*
 * A registry entry is stale when its directory is gone or holds no pool
 * of that name (the pool was moved or renamed): import may replace it.
 */
static bool registry_stale(const char *link, const char *name)
{
	struct pool_meta m;
	char err[256];
	bool stale;
	int fd;

	fd = open(link, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT || errno == ENOTDIR;
	stale = pool_meta_read(fd, &m, err, sizeof(err)) || strcmp(m.name, name);
	close(fd);
	return stale;
}

/*
 * Register name -> path; fine if it is already registered to path, and
 * a stale entry is replaced (in one step, by rename).
 */
static int registry_add(const char *name, const char *path)
{
	char link[PATH_MAX], target[PATH_MAX], tmp[PATH_MAX];
	ssize_t n;

	registry_path(link, sizeof(link), NULL);
	if (mkdir(config_dir(), 0755) && errno != EEXIST) {
		errmsg("pool %s: cannot make %s: %s", name, config_dir(), strerror(errno));
		return -1;
	}
	if (mkdir(link, 0755) && errno != EEXIST) {
		errmsg("pool %s: cannot make %s: %s", name, link, strerror(errno));
		return -1;
	}
	registry_path(link, sizeof(link), name);
	if (!symlink(path, link))
		return 0;
	if (errno == EEXIST) {
		n = readlink(link, target, sizeof(target) - 1);
		if (n >= 0) {
			target[n] = '\0';
			if (!strcmp(target, path))
				return 0;
			if (registry_stale(link, name)) {
				snprintf(tmp, sizeof(tmp), "%s/pools/.%s.new-%d", config_dir(),
					 name, (int)getpid());
				unlink(tmp);
				if (!symlink(path, tmp) && !rename(tmp, link)) {
					trace("pool %s: replaced the stale registration for %s",
					      name, target);
					return 0;
				}
				unlink(tmp);
				errmsg("pool %s: cannot replace the stale registration for %s: %s",
				       name, target, strerror(errno));
				return -1;
			}
			errmsg("pool %s: the name is already registered for %s", name, target);
			return -1;
		}
	}
	errmsg("pool %s: cannot register it in %s: %s", name, link, strerror(errno));
	return -1;
}

int pool_create(const char *path, const char *name, const struct autoextend *policy)
{
	char real[PATH_MAX], link[PATH_MAX];
	struct pool_meta m = { 0 };
	struct stat st;
	char err[256];
	bool made = false;
	int fd, r = -1;

	if (mkdir(path, 0700) == 0)
		made = true;
	else if (errno != EEXIST) {
		errmsg("pool %s: cannot make the directory: %s", path, strerror(errno));
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		errmsg("pool %s: cannot open the directory: %s", path, strerror(errno));
		goto out;
	}
	if (!realpath(path, real)) {
		errmsg("pool %s: %s", path, strerror(errno));
		goto out;
	}
	if (!pool_meta_read(fd, &m, err, sizeof(err))) {
		errmsg("pool %s: already a pool, named %s (subvol pool import registers it)",
		       real, m.name);
		goto out;
	}
	/* A pool whose metadata is damaged is not made anew over its volumes. */
	if (fgetxattr(fd, SUBVOL_POOL_XATTR, NULL, 0) >= 0 || errno != ENODATA) {
		errmsg("pool %s: holds a pool's metadata that cannot be read (%s); repair or remove it first",
		       real, err);
		goto out;
	}
	if (!name) {
		name = strrchr(real, '/') + 1;
		if (!valid_name(name)) {
			errmsg("pool %s: \"%s\" cannot be a pool name; give one with --name",
			       real, name);
			goto out;
		}
	} else if (!valid_name(name)) {
		errmsg("pool %s: \"%s\" is not a valid name (letters, digits, +_.-; at most %d)",
		       real, name, SUBVOL_NAME_MAX);
		goto out;
	}
	registry_path(link, sizeof(link), name);
	if (!lstat(link, &st)) {
		errmsg("pool %s: the name is already registered (%s)", name, link);
		goto out;
	}
	if (check_host(real, fd) || autoextend_check_host(name, fd, policy))
		goto out;

	memset(&m, 0, sizeof(m));
	m.autoextend = *policy;
	strcpy(m.name, name);
	new_id(m.id);
	m.created = time(NULL);
	if (pool_meta_write(fd, &m)) {
		errmsg("pool %s: cannot write %s: %s", real, SUBVOL_POOL_XATTR,
		       strerror(errno));
		goto out;
	}
	if (fsync(fd)) {
		errmsg("pool %s: cannot make it durable: %s", real, strerror(errno));
		fremovexattr(fd, SUBVOL_POOL_XATTR);
		goto out;
	}
	if (registry_add(name, real)) {
		fremovexattr(fd, SUBVOL_POOL_XATTR);
		goto out;
	}
	printf("Pool %s created at %s\n", name, real);
	if (autoextend_on(policy) || policy->command[0]) {
		char desc[AUTOEXTEND_COMMAND_MAX + 256];

		autoextend_describe(desc, sizeof(desc), policy);
		printf("Pool %s: %s\n", name, desc);
	}
	r = 0;
out:
	if (fd >= 0)
		close(fd);
	if (r && made)
		rmdir(path);
	return r;
}

/* Whether name is registered to path (the link holds the canonical path). */
static bool registered_at(const char *name, const char *path)
{
	char link[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	registry_path(link, sizeof(link), name);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = '\0';
	return !strcmp(target, path);
}

/*
 * The registered pool, other than the one at path, whose id is id: a
 * copy (cp -a) keeps the id, and two pools with one id would give their
 * volumes the same device-mapper UUIDs.  Its name in out, or false.
 */
static bool id_registered(const char *id, const char *path, char *out, size_t len)
{
	char **names = pool_registered(), **p, link[PATH_MAX], real[PATH_MAX], err[256];
	struct pool_meta m;
	bool found = false;
	int fd;

	for (p = names; p && *p && !found; p++) {
		registry_path(link, sizeof(link), *p);
		if (!realpath(link, real) || !strcmp(real, path))
			continue;
		fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!pool_meta_read(fd, &m, err, sizeof(err)) && !strcmp(m.name, *p) &&
		    !strcmp(m.id, id)) {
			snprintf(out, len, "%s", *p);
			found = true;
		}
		close(fd);
	}
	free_names(names);
	return found;
}

/*
 * Register a pool directory under the name in its metadata, or under
 * new_name, which is then written to the metadata first.  A copy of a
 * registered pool gets a new id.  A changed name or id is undone if the
 * registration fails.
 */
int pool_import(const char *path, const char *new_name,
		int (*active_volume)(struct pool *pool, char *name, size_t namelen))
{
	char other[SUBVOL_NAME_MAX + 1], link[PATH_MAX], target[PATH_MAX], active[DM_NAME_LEN];
	struct pool_meta m;
	struct pool pool;
	bool renamed, new_pool_id;
	ssize_t n;
	int r = -1;

	if (pool_open(path, &pool, true))
		return -1;
	if (check_host(pool.path, pool.dirfd))
		goto out;
	m = pool.meta;
	if (new_name && !valid_name(new_name)) {
		errmsg("pool %s: \"%s\" is not a valid name (letters, digits, +_.-; at most %d)",
		       pool.path, new_name, SUBVOL_NAME_MAX);
		goto out;
	}
	if (registered_at(m.name, pool.path)) {
		if (!new_name || !strcmp(new_name, m.name)) {
			printf("Pool %s at %s is already registered as %s\n", m.name, pool.path,
			       m.name);
			r = 0;
		} else {
			errmsg("pool %s: already registered as %s; subvol pool export %s first to import it as %s",
			       pool.path, m.name, m.name, new_name);
		}
		goto out;
	}
	if (new_name)
		strcpy(m.name, new_name);
	registry_path(link, sizeof(link), m.name);
	n = readlink(link, target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = '\0';
	if (n > 0 && strcmp(target, pool.path) && !registry_stale(link, m.name)) {
		errmsg("pool %s: the name is already registered for %s (import it under another with --name)",
		       m.name, target);
		goto out;
	}
	new_pool_id = id_registered(m.id, pool.path, other, sizeof(other));
	renamed = strcmp(m.name, pool.meta.name);
	/* Devices keep the old name in theirs; a new id means none are ours. */
	if (renamed && !new_pool_id) {
		int a = active_volume(&pool, active, sizeof(active));

		if (a < 0)
			goto out;
		if (a) {
			errmsg("pool %s: volume %s is active; deactivate its volumes to import it under another name",
			       pool.meta.name, active);
			goto out;
		}
	}
	if (new_pool_id)
		new_id(m.id);
	if ((renamed || new_pool_id) && (pool_meta_write(pool.dirfd, &m) || fsync(pool.dirfd))) {
		errmsg("pool %s: cannot write %s: %s", pool.path, SUBVOL_POOL_XATTR,
		       strerror(errno));
		goto out;
	}
	if (registry_add(m.name, pool.path)) {
		if ((renamed || new_pool_id) && !pool_meta_write(pool.dirfd, &pool.meta))
			fsync(pool.dirfd);
		goto out;
	}
	if (renamed)
		printf("Pool %s at %s registered (renamed from %s)\n", m.name, pool.path,
		       pool.meta.name);
	else
		printf("Pool %s at %s registered\n", m.name, pool.path);
	if (new_pool_id)
		printf("Pool %s has a new id: pool %s has its old one (a copy of it), and device-mapper UUIDs must differ\n",
		       m.name, other);
	r = 0;
out:
	pool_close(&pool);
	return r;
}

/*
 * Forget the pool's name, if it is registered to this directory: 1 done,
 * 0 not registered here, -1 failed (said why).
 */
int pool_unregister(const struct pool *pool)
{
	char link[PATH_MAX], dir[PATH_MAX];
	int fd;

	if (!registered_at(pool->meta.name, pool->path))
		return 0;
	registry_path(link, sizeof(link), pool->meta.name);
	if (unlink(link)) {
		errmsg("pool %s: cannot remove %s: %s", pool->meta.name, link, strerror(errno));
		return -1;
	}
	registry_path(dir, sizeof(dir), NULL);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 1;
}

/*
 * A spec is a path if it has a slash or is "." or ".."; otherwise a
 * registered name, or else a directory here.
 */
static bool spec_is_path(const char *spec, const char *link)
{
	struct stat st;

	if (strchr(spec, '/') || !strcmp(spec, ".") || !strcmp(spec, ".."))
		return true;
	return lstat(link, &st) != 0;
}

/*
 * Another command holds the pool: say so, and wait for it at most
 * SUBVOL_LOCK_TIMEOUT seconds (default 300; 0 waits for ever).
 */
static int lock_pool(struct pool *pool)
{
	const char *env = getenv("SUBVOL_LOCK_TIMEOUT");
	double limit = env && *env ? atof(env) : 300, start;

	if (!flock(pool->dirfd, LOCK_EX | LOCK_NB))
		return 0;
	if (errno != EWOULDBLOCK) {
		errmsg("pool %s: cannot lock it: %s", pool->meta.name, strerror(errno));
		return -1;
	}
	fprintf(stderr, "%s: pool %s: waiting for another subvol command to finish with it\n",
		progname, pool->meta.name);
	start = now_seconds();
	while (flock(pool->dirfd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK) {
			errmsg("pool %s: cannot lock it: %s", pool->meta.name, strerror(errno));
			return -1;
		}
		if (limit > 0 && now_seconds() - start >= limit) {
			errmsg("pool %s: another subvol command still holds it after %.0f s (SUBVOL_LOCK_TIMEOUT)",
			       pool->meta.name, limit);
			return -1;
		}
		usleep(50000);
	}
	return 0;
}

/*
 * Let other commands have the pool while this one waits for something
 * long (a snapshot copy), and take it back: 0, or -1 having said why.
 */
void pool_unlock(struct pool *pool)
{
	if (pool->locked)
		flock(pool->dirfd, LOCK_UN);
}

int pool_relock(struct pool *pool)
{
	return pool->locked ? lock_pool(pool) : 0;
}

int pool_open(const char *spec, struct pool *pool, bool lock)
{
	char link[PATH_MAX], err[256];
	const char *path = spec;
	bool by_name = false;

	memset(pool, 0, sizeof(*pool));
	pool->dirfd = -1;
	if (valid_name(spec))
		registry_path(link, sizeof(link), spec);
	else
		link[0] = '\0';
	if (!spec_is_path(spec, link)) {
		if (!realpath(link, pool->path)) {
			char target[PATH_MAX];
			ssize_t n = readlink(link, target, sizeof(target) - 1);

			target[n > 0 ? n : 0] = '\0';
			errmsg("pool %s: its directory %s is gone: %s", spec, target,
			       strerror(errno));
			return -1;
		}
		by_name = true;
		path = pool->path;
	} else if (!realpath(spec, pool->path)) {
		if (errno == ENOENT && !strchr(spec, '/'))
			errmsg("pool %s: no such pool (not registered in %s/pools, no such directory)",
			       spec, config_dir());
		else if (errno == ENOENT)
			errmsg("pool %s: no such directory", spec);
		else
			errmsg("pool %s: %s", spec, strerror(errno));
		return -1;
	}
	pool->dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pool->dirfd < 0) {
		errmsg("pool %s: cannot open %s: %s", spec, path, strerror(errno));
		return -1;
	}
	if (pool_meta_read(pool->dirfd, &pool->meta, err, sizeof(err))) {
		errmsg("pool %s: %s is not a pool (%s)", spec, pool->path, err);
		goto fail;
	}
	if (by_name && strcmp(pool->meta.name, spec)) {
		errmsg("pool %s: registered at %s, which holds pool %s", spec,
		       pool->path, pool->meta.name);
		goto fail;
	}
	if (lock) {
		if (lock_pool(pool))
			goto fail;
		pool->locked = true;
	}
	return 0;
fail:
	close(pool->dirfd);
	pool->dirfd = -1;
	return -1;
}

uint32_t pool_block_size(const struct pool *pool)
{
	struct statvfs sv;

	if (fstatvfs(pool->dirfd, &sv) || !sv.f_bsize)
		return 4096;
	return sv.f_bsize;
}

uint64_t pool_max_size(const struct pool *pool)
{
	uint64_t max = INT64_MAX, block = pool_block_size(pool);
	long bits = fpathconf(pool->dirfd, _PC_FILESIZEBITS);

	/* A file of FILESIZEBITS bits holds at most 2^(bits - 1) - 1 bytes. */
	if (bits > 1 && bits < 64)
		max = (1ULL << (bits - 1)) - 1;
	return max - max % block;
}

void pool_close(struct pool *pool)
{
	if (pool->dirfd >= 0)
		close(pool->dirfd);	/* drops the lock */
	pool->dirfd = -1;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void free_names(char **names)
{
	char **p;

	if (!names)
		return;
	for (p = names; *p; p++)
		free(*p);
	free(names);
}

/* Entries of dir whose names pass keep(), sorted; NULL on no memory. */
static char **list_dir(DIR *dir, bool (*keep)(const char *name, char *out))
{
	char **names = NULL, **grown, stem[NAME_MAX + 1];
	size_t n = 0, cap = 0;
	struct dirent *de;

	names = calloc(1, sizeof(*names));
	if (!names)
		return NULL;
	while (dir && (de = readdir(dir))) {
		if (!keep(de->d_name, stem))
			continue;
		if (n + 2 > cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown)
				goto nomem;
			names = grown;
		}
		names[n] = strdup(stem);
		if (!names[n])
			goto nomem;
		names[++n] = NULL;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	return names;
nomem:
	free_names(names);
	return NULL;
}

static bool keep_pool(const char *name, char *out)
{
	if (!valid_name(name))
		return false;
	strcpy(out, name);
	return true;
}

int pool_registry_lock(void)
{
	char path[PATH_MAX];
	int fd;

	registry_path(path, sizeof(path), NULL);
	if ((mkdir(config_dir(), 0755) && errno != EEXIST) ||
	    (mkdir(path, 0755) && errno != EEXIST)) {
		errmsg("monitor: cannot make %s: %s", path, strerror(errno));
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		errmsg("monitor: cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			errmsg("monitor: another subvol monitor is running for the pools registered in %s",
			       path);
		else
			errmsg("monitor: cannot lock %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

char **pool_registered(void)
{
	char path[PATH_MAX];
	char **names;
	DIR *dir;

	registry_path(path, sizeof(path), NULL);
	dir = opendir(path);
	names = list_dir(dir, keep_pool);
	if (dir)
		closedir(dir);
	return names;
}

static bool keep_image(const char *name, char *out)
{
	size_t n = strlen(name), s = strlen(SUBVOL_IMAGE_SUFFIX);

	if (n <= s || strcmp(name + n - s, SUBVOL_IMAGE_SUFFIX) || n - s > SUBVOL_NAME_MAX)
		return false;
	memcpy(out, name, n - s);
	out[n - s] = '\0';
	return valid_name(out);
}

char **pool_volumes(struct pool *pool)
{
	char **names;
	DIR *dir;
	int fd;

	fd = openat(pool->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = fd >= 0 ? fdopendir(fd) : NULL;
	names = list_dir(dir, keep_image);
	if (dir)
		closedir(dir);
	return names;
}
