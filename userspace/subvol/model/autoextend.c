// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A pool's autoextend policy, after lvmthin(7)'s thin_pool_autoextend_*,
 * as its metadata holds it: how it reads, the low-water mark it gives a
 * volume, and the check of its maximum against the host.  The options
 * that set it are commands/cmd-pool-set.c's; subvol monitor
 * (policy/monitor.c) acts on it.
 */
#include "model/model.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

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

