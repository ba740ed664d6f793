// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Device-mapper through libdevmapper, as dmsetup uses it: every call that
 * makes, renames or removes a node carries a udev cookie and waits for
 * udev (or, without udev, lets libdevmapper make the nodes itself).
 * libdevmapper's own messages are kept, not printed: the caller says
 * what failed in one line and adds the library's last error to it.
 */
#include "devices/devices.h"

#include <errno.h>
#include <libdevmapper.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Per thread: subvol monitor waits for events in threads of its own. */
static __thread char last_error[512];

static void dm_log(int level, const char *file, int line, int dm_errno,
		   const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	(void)file;
	(void)line;
	(void)dm_errno;
	/* Debug (level 7) is libdevmapper's backtrace: only with -vv. */
	if (((level & 7) > 3 && !verbose) || ((level & 7) > 6 && verbosity < 2))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((level & 7) <= 3)
		snprintf(last_error, sizeof(last_error), "%s", msg);
	if (verbose)
		fprintf(stderr, "%s: libdevmapper: %s\n", progname, msg);
}

void dm_setup_logging(void)
{
	dm_log_with_errno_init(dm_log);
}

const char *dm_last_error(void)
{
	return last_error[0] ? last_error : "no reason given";
}

bool dm_available(void)
{
	char version[64];

	if (access("/dev/mapper/control", R_OK | W_OK) &&
	    access(dm_dir(), F_OK))
		return false;
	return dm_driver_version(version, sizeof(version)) != 0;
}

/* Run a task and keep errno from the kernel's answer. */
static int run(struct dm_task *dmt)
{
	int ok;

	last_error[0] = '\0';
	ok = dm_task_run(dmt);
	if (!ok) {
		errno = dm_task_get_errno(dmt);
		if (!errno)
			errno = EIO;
	}
	dm_task_destroy(dmt);
	return ok ? 0 : -1;
}

static struct dm_task *task(int type, const char *name)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt) {
		errno = ENOMEM;
		return NULL;
	}
	if (name && !dm_task_set_name(dmt, name)) {
		dm_task_destroy(dmt);
		errno = EINVAL;
		return NULL;
	}
	return dmt;
}

/* Run a task that changes nodes, then wait for udev to be done with it. */
static int run_udev(struct dm_task *dmt)
{
	uint32_t cookie = 0;
	int r, saved;

	if (!dm_task_set_cookie(dmt, &cookie, 0)) {
		dm_task_destroy(dmt);
		errno = EIO;
		return -1;
	}
	r = run(dmt);
	saved = errno;
	dm_udev_wait(cookie);
	errno = saved;
	return r;
}

int dm_device_info(const char *uuid, char *name, size_t namelen,
		   struct dm_info_lite *out)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO, NULL);
	struct dm_info info;
	const char *n;

	memset(out, 0, sizeof(*out));
	if (!dmt)
		return -1;
	if (!dm_task_set_uuid(dmt, uuid)) {
		dm_task_destroy(dmt);
		return -1;
	}
	last_error[0] = '\0';
	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &info)) {
		errno = dm_task_get_errno(dmt) ?: EIO;
		dm_task_destroy(dmt);
		return -1;
	}
	if (info.exists) {
		out->exists = true;
		out->suspended = info.suspended;
		out->read_only = info.read_only;
		out->open_count = info.open_count;
		out->major = info.major;
		out->minor = info.minor;
		n = dm_task_get_name(dmt);
		if (name)
			snprintf(name, namelen, "%s", n ? n : "");
	}
	dm_task_destroy(dmt);
	return 0;
}

static int load(struct dm_task *dmt, uint64_t sectors, const char *params,
		bool read_only)
{
	if (!dm_task_add_target(dmt, 0, sectors, "subvol", params) ||
	    (read_only && !dm_task_set_ro(dmt))) {
		dm_task_destroy(dmt);
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int dm_device_create(const char *name, const char *uuid, uint64_t sectors,
		     const char *params, bool read_only)
{
	struct dm_task *dmt = task(DM_DEVICE_CREATE, name);

	if (!dmt)
		return -1;
	if (!dm_task_set_uuid(dmt, uuid)) {
		dm_task_destroy(dmt);
		errno = EINVAL;
		return -1;
	}
	if (load(dmt, sectors, params, read_only))
		return -1;
	return run_udev(dmt);
}

int dm_device_reload(const char *name, uint64_t sectors, const char *params,
		     bool read_only)
{
	struct dm_task *dmt = task(DM_DEVICE_RELOAD, name);

	if (!dmt || load(dmt, sectors, params, read_only))
		return -1;
	return run(dmt);
}

/* Suspend with the filesystem on top frozen (dm's default: lockfs). */
int dm_device_suspend(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_SUSPEND, name);

	return dmt ? run(dmt) : -1;
}

int dm_device_resume(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_RESUME, name);

	return dmt ? run_udev(dmt) : -1;
}

int dm_device_remove(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_REMOVE, name);

	if (!dmt)
		return -1;
	/* udev may hold the device open a moment after a change. */
	dm_task_retry_remove(dmt);
	return run_udev(dmt);
}

int dm_device_message(const char *name, const char *msg)
{
	struct dm_task *dmt = task(DM_DEVICE_TARGET_MSG, name);

	if (!dmt)
		return -1;
	if (!dm_task_set_sector(dmt, 0) || !dm_task_set_message(dmt, msg)) {
		dm_task_destroy(dmt);
		errno = EINVAL;
		return -1;
	}
	return run(dmt);
}

/* The params of the device's only target, for a STATUS or TABLE task. */
static int target_params(int type, const char *name, char *params, size_t len,
			 uint64_t *sectors)
{
	struct dm_task *dmt = task(type, name);
	uint64_t start, length;
	char *ttype = NULL, *p = NULL;
	int r = -1;

	if (!dmt)
		return -1;
	last_error[0] = '\0';
	if (!dm_task_run(dmt)) {
		errno = dm_task_get_errno(dmt) ?: EIO;
		goto out;
	}
	dm_get_next_target(dmt, NULL, &start, &length, &ttype, &p);
	if (!ttype || strcmp(ttype, "subvol")) {
		snprintf(last_error, sizeof(last_error), "%s is not a subvol device", name);
		errno = EINVAL;
		goto out;
	}
	snprintf(params, len, "%s", p ? p : "");
	if (sectors)
		*sectors = length;
	r = 0;
out:
	dm_task_destroy(dmt);
	return r;
}

int dm_device_status(const char *name, char *params, size_t len,
		     uint64_t *sectors)
{
	return target_params(DM_DEVICE_STATUS, name, params, len, sectors);
}

int dm_device_table(const char *name, char *params, size_t len)
{
	return target_params(DM_DEVICE_TABLE, name, params, len, NULL);
}

/*
 * The device-mapper devices whose table is one subvol target: name,
 * UUID, event number and the table's parameters, malloc'ed; -1 when the
 * list cannot be read.  Devices that go away meanwhile are left out.
 */
int dm_subvol_devices(struct dm_subvol_device **out, size_t *nr)
{
	struct dm_task *dmt = task(DM_DEVICE_LIST, NULL), *t;
	struct dm_subvol_device *devs = NULL, *grown, *d;
	struct dm_names *names;
	uint64_t start, length;
	char *ttype, *params;
	struct dm_info info;
	const char *uuid;
	size_t n = 0, cap = 0;
	unsigned int next = 0;

	*out = NULL;
	*nr = 0;
	if (!dmt)
		return -1;
	last_error[0] = '\0';
	if (!dm_task_run(dmt)) {
		errno = dm_task_get_errno(dmt) ?: EIO;
		dm_task_destroy(dmt);
		return -1;
	}
	names = dm_task_get_names(dmt);
	if (!names || !names->dev) {
		dm_task_destroy(dmt);
		return 0;
	}
	do {
		names = (struct dm_names *)((char *)names + next);
		next = names->next;
		t = task(DM_DEVICE_TABLE, names->name);
		if (!t)
			continue;
		ttype = params = NULL;
		if (!dm_task_run(t) || !dm_task_get_info(t, &info) || !info.exists) {
			dm_task_destroy(t);
			continue;
		}
		/* One target, of type subvol: the tool's and dmsetup's alike. */
		if (dm_get_next_target(t, NULL, &start, &length, &ttype, &params) ||
		    !ttype || strcmp(ttype, "subvol")) {
			dm_task_destroy(t);
			continue;
		}
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			grown = realloc(devs, cap * sizeof(*devs));
			if (!grown) {
				dm_task_destroy(t);
				break;
			}
			devs = grown;
		}
		d = &devs[n++];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%s", names->name);
		uuid = dm_task_get_uuid(t);
		snprintf(d->uuid, sizeof(d->uuid), "%s", uuid ? uuid : "");
		snprintf(d->params, sizeof(d->params), "%s", params ? params : "");
		d->event_nr = info.event_nr;
		d->major = info.major;
		d->minor = info.minor;
		dm_task_destroy(t);
	} while (next);
	dm_task_destroy(dmt);
	*out = devs;
	*nr = n;
	return 0;
}

/*
 * Wait until the device's event counter is past event_nr (DM_DEV_WAIT):
 * an event (such as the target's low_water), a table swap, or the
 * device's removal.  0, or -1 when the device is gone or the wait failed.
 */
int dm_wait_event(const struct dm_subvol_device *dev, uint32_t event_nr)
{
	struct dm_task *dmt = task(DM_DEVICE_WAITEVENT, NULL);

	if (!dmt)
		return -1;
	if (!dm_task_set_major_minor(dmt, dev->major, dev->minor, 0) ||
	    !dm_task_set_event_nr(dmt, event_nr)) {
		dm_task_destroy(dmt);
		errno = EINVAL;
		return -1;
	}
	return run(dmt);
}

/* The event number of a device now; -1 when it is gone. */
int dm_event_nr(const struct dm_subvol_device *dev, uint32_t *event_nr)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO, NULL);
	struct dm_info info;
	const char *uuid;
	int r = -1;

	if (!dmt)
		return -1;
	if (!dm_task_set_major_minor(dmt, dev->major, dev->minor, 0))
		goto out;
	if (!dm_task_run(dmt) || !dm_task_get_info(dmt, &info) || !info.exists)
		goto out;
	/* The same number may be another device by now. */
	uuid = dm_task_get_uuid(dmt);
	if (strcmp(uuid ? uuid : "", dev->uuid) || strcmp(dm_task_get_name(dmt), dev->name))
		goto out;
	*event_nr = info.event_nr;
	r = 0;
out:
	dm_task_destroy(dmt);
	return r;
}

/* The name and UUID of the device-mapper device major:minor; -1 if none. */
int dm_device_by_number(unsigned int major, unsigned int minor, char *name,
			size_t namelen, char *uuid, size_t uuidlen)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO, NULL);
	struct dm_info info;
	const char *n, *u;
	int r = -1;

	if (!dmt)
		return -1;
	if (dm_task_set_major_minor(dmt, major, minor, 0) && dm_task_run(dmt) &&
	    dm_task_get_info(dmt, &info) && info.exists) {
		n = dm_task_get_name(dmt);
		u = dm_task_get_uuid(dmt);
		snprintf(name, namelen, "%s", n ? n : "");
		snprintf(uuid, uuidlen, "%s", u ? u : "");
		r = 0;
	}
	dm_task_destroy(dmt);
	return r;
}
