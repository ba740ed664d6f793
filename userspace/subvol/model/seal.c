// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Sealed snapshots.  A snapshot's image is immutable (FS_IMMUTABLE_FL: no
 * write, truncate, xattr change, rename or unlink, by root too, until the
 * flag is cleared, which takes CAP_LINUX_IMMUTABLE), and the pool directory
 * keeps the image's ctime of the moment it was sealed in the xattr
 * user.subvol.seal.<id>.  Clearing the flag changes the ctime, so an image
 * that is immutable and still has its sealed ctime has not changed since
 * it was sealed: what an incremental stream needs of its base, on both
 * sides.
 */
#include "model/model.h"

#include <errno.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#define SEAL_XATTR_PREFIX "user.subvol.seal."

static void seal_xattr(char *buf, size_t len, const char *id)
{
	snprintf(buf, len, "%s%s", SEAL_XATTR_PREFIX, id);
}

static int set_immutable(int fd, bool on)
{
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		return -1;
	if (!!(flags & FS_IMMUTABLE_FL) == on)
		return 0;
	flags = on ? flags | FS_IMMUTABLE_FL : flags & ~FS_IMMUTABLE_FL;
	return ioctl(fd, FS_IOC_SETFLAGS, &flags);
}

static void ctime_text(char *buf, size_t len, const struct stat *st)
{
	snprintf(buf, len, "ctime=%" PRId64 ".%09ld\n", (int64_t)st->st_ctim.tv_sec,
		 (long)st->st_ctim.tv_nsec);
}

int image_seal(struct pool *pool, int fd, const char *id)
{
	char name[sizeof(SEAL_XATTR_PREFIX) + SUBVOL_ID_LEN], value[64];
	struct stat st;

	if (fsync(fd) || set_immutable(fd, true) || fstat(fd, &st))
		return -1;
	seal_xattr(name, sizeof(name), id);
	ctime_text(value, sizeof(value), &st);
	if (fsetxattr(pool->dirfd, name, value, strlen(value), 0))
		return -1;
	return fsync(pool->dirfd);
}

/*
 * Only an immutable image is the sealed one: a copy with the same id (cp -a
 * of a snapshot) leaves the seal alone.
 */
int image_unseal(struct pool *pool, int fd, const char *id)
{
	char name[sizeof(SEAL_XATTR_PREFIX) + SUBVOL_ID_LEN];
	int flags;

	if (ioctl(fd, FS_IOC_GETFLAGS, &flags))
		return -1;
	if (!(flags & FS_IMMUTABLE_FL))
		return 0;
	if (set_immutable(fd, false))
		return -1;
	seal_xattr(name, sizeof(name), id);
	if (fremovexattr(pool->dirfd, name) && errno != ENODATA)
		return -1;
	return 0;
}

/* Whether a seal's value is "ctime=SECONDS.NANOSECONDS\n", nine digits of them. */
static bool seal_well_formed(const char *v, size_t n)
{
	const char *p = v + 6;
	size_t digits = 0;

	if (strlen(v) != n || strncmp(v, "ctime=", 6))
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		digits++;
	if (!digits || digits > 19 || *p++ != '.')
		return false;
	for (digits = 0; *p >= '0' && *p <= '9'; p++)
		digits++;
	return digits == 9 && p[0] == '\n' && !p[1];
}

int image_check_seal(struct pool *pool, int fd, const char *id, char *why,
		     size_t len)
{
	char name[sizeof(SEAL_XATTR_PREFIX) + SUBVOL_ID_LEN], value[64], now[64];
	struct stat st;
	ssize_t n;
	int flags;

	seal_xattr(name, sizeof(name), id);
	n = fgetxattr(pool->dirfd, name, value, sizeof(value) - 1);
	if (n < 0) {
		if (errno == ENODATA)
			snprintf(why, len, "it was never sealed: no %s (made by a subvol older than 1.1, or its seal was lost)",
				 name);
		else if (errno == ERANGE)
			snprintf(why, len, "its seal %s is longer than a seal (corrupt)", name);
		else
			snprintf(why, len, "its seal %s cannot be read: %s", name, strerror(errno));
		return -1;
	}
	value[n] = '\0';
	if (!seal_well_formed(value, n)) {
		snprintf(why, len, "its seal %s is not ctime=SECONDS.NANOSECONDS (corrupt)", name);
		return -1;
	}
	if (ioctl(fd, FS_IOC_GETFLAGS, &flags) || fstat(fd, &st)) {
		snprintf(why, len, "its flags cannot be read: %s", strerror(errno));
		return -1;
	}
	if (!(flags & FS_IMMUTABLE_FL)) {
		snprintf(why, len, "its immutable flag was cleared: it may have been written");
		return -1;
	}
	ctime_text(now, sizeof(now), &st);
	if (strcmp(now, value)) {
		snprintf(why, len, "it changed since it was sealed (its ctime is not the one in %s)",
			 name);
		return -1;
	}
	return 0;
}

/*
 * Around an operation an immutable file refuses (a rename): the flag is
 * cleared, and set again after, with a new seal only if the old one held,
 * so that a rename never makes a changed snapshot trusted.
 */
int image_seal_suspend(struct pool *pool, int fd, const char *id, bool *valid)
{
	char why[256];

	*valid = !image_check_seal(pool, fd, id, why, sizeof(why));
	return set_immutable(fd, false);
}

int image_seal_resume(struct pool *pool, int fd, const char *id, bool valid)
{
	return valid ? image_seal(pool, fd, id) : set_immutable(fd, true);
}
