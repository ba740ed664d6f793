// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Who owns a snapshot copy.  The target holds the snapshot's unnamed file
 * from snapshot_begin until snapshot_end or snapshot_cancel; only the
 * subvol process that began the copy can name the file, and that process
 * may die (SIGKILL, the OOM killer) while it waits.  The copy would then
 * hold its file and the copy-on-write reserve it claimed until the device
 * is removed, and refuse every later snapshot of the volume.
 *
 * So the process that begins a copy first takes an exclusive flock on its
 * own open file of the origin's image, and keeps it until after the copy
 * ended (a --no-wait child inherits it).  A copy the device reports while
 * nobody holds that lock has no owner: the next snapshot of the volume
 * and the monitor cancel it, with the lock held so that no new copy can
 * begin meanwhile; status shows it.
 */
#include "devices/devices.h"

#include <linux/dm-subvol.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* How long a lock taker waits out another's brief hold (a status probe). */
#define COPY_LOCK_TRIES		100
#define COPY_LOCK_PAUSE_US	20000

int copy_owner_lock(const char *image)
{
	int fd, i;

	fd = open(image, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (i = 0; flock(fd, LOCK_EX | LOCK_NB); i++) {
		if (errno != EWOULDBLOCK || i == COPY_LOCK_TRIES) {
			int saved = errno;

			close(fd);
			errno = saved;
			return -1;
		}
		usleep(COPY_LOCK_PAUSE_US);
	}
	return fd;
}

bool copy_owned(const char *image)
{
	bool owned;
	int fd;

	fd = open(image, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;	/* cannot tell: do not call it an orphan */
	owned = flock(fd, LOCK_SH | LOCK_NB) && errno == EWOULDBLOCK;
	close(fd);
	return owned;
}

int copy_status(const char *dev, struct subvol_status *st)
{
	char params[4200], err[256];

	if (dm_device_status(dev, params, sizeof(params), NULL))
		return -1;
	if (subvol_status_parse(params, st, err, sizeof(err)) || !st->has_snapshot_copy) {
		trace("status of %s: %s", dev, st->has_snapshot_copy ? err : "no snapshot copy field");
		errno = EPROTO;
		return -1;
	}
	return 0;
}

int copy_cancel_orphan(const char *dev, const char **was)
{
	struct subvol_status st;

	if (copy_status(dev, &st))
		return errno == EPROTO ? 0 : -1;
	if (st.copy == SUBVOL_COPY_NONE)
		return 0;
	if (dm_device_message(dev, DM_SUBVOL_MSG_SNAPSHOT_CANCEL))
		return -1;
	*was = st.copy == SUBVOL_COPY_DONE ? "complete, never named" :
	       st.copy == SUBVOL_COPY_FAILED ? "failed" : "running";
	/* Its file is gone: what the reserve counted as shared no longer is. */
	if (dm_device_message(dev, DM_SUBVOL_MSG_RESCAN_SHARING))
		trace("rescan_sharing on %s: %s", dev, dm_last_error());
	return 1;
}
