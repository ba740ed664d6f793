// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The holders of a block device in sysfs: what deactivating a volume
 * would pull from under (an LVM LV on a PV in it, say).
 */
#include "devices/devices.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int device_holders(unsigned int major, unsigned int minor, char *out, size_t len)
{
	char dir[64], path[PATH_MAX], name[NAME_MAX + 1];
	struct dirent *e;
	size_t used = 0;
	int n = 0, fd;
	ssize_t r;
	DIR *d;

	out[0] = '\0';
	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u/holders", major, minor);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(name, sizeof(name), "%s", e->d_name);
		snprintf(path, sizeof(path), "%s/%s/dm/name", dir, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			r = read(fd, name, sizeof(name) - 1);
			if (r > 0) {
				name[r] = '\0';
				name[strcspn(name, "\n")] = '\0';
			} else {
				snprintf(name, sizeof(name), "%s", e->d_name);
			}
			close(fd);
		}
		if (used + strlen(name) + 3 < len)
			used += snprintf(out + used, len - used, "%s%s", n ? ", " : "", name);
		n++;
	}
	closedir(d);
	return n;
}
