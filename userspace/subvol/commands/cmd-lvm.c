// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * lvm-filter: keep host LVM away from PVs inside volumes.
 *
 * A volume is often a VM's disk, and the VM's VG on it is the VM's: the
 * host must neither list it nor activate it (its LVs would be opened
 * under the running guest, and a clone's VG would be a duplicate).  On
 * Debian 12 (lvm2 2.03.16) LVM uses no devices file by default
 * (use_devicesfile = 0, no lvmdevices command) and scans every block
 * device, so the way to hide devices from it is devices/global_filter in
 * lvm.conf, which every LVM command and the udev rules' pvscan apply.
 * This command writes one into the devices section, between marker
 * comments, and takes it out again (--remove); it refuses to touch a
 * global_filter of the administrator's and says what to add to it.
 *
 * The filter rejects the names of subvol devices (/dev/mapper/subvol-*,
 * /dev/subvol/...): LVM rejects a device when one of its names matches a
 * reject pattern and none an accept pattern.  Volumes set --host-lvm have
 * one more name, /dev/disk/by-id/host-lvm-<DM name> (udev rules, or the
 * tool without udev), which the first pattern accepts.  Autoactivation
 * by udev is stopped by the tool's udev rules as well: its pvscan runs
 * before the device's names exist.
 */
#include "commands/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARK_BEGIN	"# subvol lvm-filter: begin"
#define MARK_END	"# subvol lvm-filter: end"
#define FILTER_VALUE \
	"[ \"a|^/dev/disk/by-id/host-lvm-subvol-|\", \"r|^/dev/mapper/subvol-|\", " \
	"\"r|^/dev/subvol/|\", \"r|^/dev/disk/by-id/dm-name-subvol-|\" ]"

#define BLOCK_LINES \
	"\t# Host LVM leaves PVs inside dm-subvol volumes alone (a VM's or a\n" \
	"\t# container's disks), but those of volumes set --host-lvm: see\n" \
	"\t# \"LVM inside volumes\" in subvol(8).\n" \
	"\tglobal_filter = " FILTER_VALUE "\n"
#define MARK_HINT " (\"subvol lvm-filter --remove\" takes it out)\n"

/* What goes into the devices section (indented as lvm.conf is)... */
static const char block_text[] =
	"\t" MARK_BEGIN MARK_HINT BLOCK_LINES "\t" MARK_END "\n";
/* ... or at the end, as a devices section of its own, when there is none. */
static const char section_text[] =
	MARK_BEGIN MARK_HINT "devices {\n" BLOCK_LINES "}\n" MARK_END "\n";

struct conf {
	char *text;		/* the whole file, NUL-terminated */
	size_t len;
	/* Offsets of our block (from its begin line to past its end line). */
	long begin, end;
	/* Offset past the "devices {" line, or -1. */
	long devices;
	/* Line of a global_filter setting outside our block, or 0. */
	int other_filter;
	/* Line of use_devicesfile = 1, or 0. */
	int devicesfile;
};

/* The first word of a line (after blanks), and whether it is "key" then "=". */
static bool is_setting(const char *line, const char *key)
{
	size_t n = strlen(key);

	line += strspn(line, " \t");
	if (strncmp(line, key, n))
		return false;
	line += n;
	line += strspn(line, " \t");
	return *line == '=';
}

static bool setting_is_1(const char *line)
{
	line = strchr(line, '=') + 1;
	line += strspn(line, " \t");
	return *line == '1';
}

static int conf_read(const char *path, struct conf *c)
{
	FILE *f = fopen(path, "re");
	char *line, *p, *nl;
	int lineno = 0;
	long off;

	memset(c, 0, sizeof(*c));
	c->begin = c->end = c->devices = -1;
	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) || (off = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return -1;
	}
	c->text = malloc(off + 1);
	if (!c->text || fread(c->text, 1, off, f) != (size_t)off) {
		fclose(f);
		return -1;
	}
	fclose(f);
	c->text[off] = '\0';
	c->len = off;
	for (line = c->text; *line; line = nl ? nl + 1 : line + strlen(line)) {
		nl = strchr(line, '\n');
		lineno++;
		p = line + strspn(line, " \t");
		if (!strncmp(p, MARK_BEGIN, strlen(MARK_BEGIN)) && c->begin < 0) {
			c->begin = line - c->text;
		} else if (!strncmp(p, MARK_END, strlen(MARK_END)) && c->begin >= 0 && c->end < 0) {
			c->end = (nl ? nl + 1 : line + strlen(line)) - c->text;
		} else if (c->begin >= 0 && c->end < 0) {
			continue;	/* inside our block */
		} else if (*p == '#') {
			continue;
		} else if (c->devices < 0 && !strncmp(p, "devices", 7) &&
			   p[7 + strspn(p + 7, " \t")] == '{') {
			c->devices = (nl ? nl + 1 : line + strlen(line)) - c->text;
		} else if (is_setting(p, "global_filter") && !c->other_filter) {
			c->other_filter = lineno;
		} else if (is_setting(p, "use_devicesfile") && setting_is_1(p)) {
			c->devicesfile = lineno;
		}
	}
	if (c->begin >= 0 && c->end < 0)
		c->begin = -1;	/* a begin without an end: not ours to cut */
	return 0;
}

/* Write text to path in place of the file, keeping its mode and owner. */
static int conf_replace(const char *path, const char *const parts[], const size_t lens[],
			int nparts)
{
	char tmp[PATH_MAX];
	struct stat st;
	int fd, i, saved;

	if (stat(path, &st))
		return -1;
	if (snprintf(tmp, sizeof(tmp), "%s.subvol-tmp", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, st.st_mode & 07777);
	if (fd < 0)
		return -1;
	for (i = 0; i < nparts; i++)
		if (lens[i] && write(fd, parts[i], lens[i]) != (ssize_t)lens[i])
			goto fail;
	if (fchmod(fd, st.st_mode & 07777) || (fchown(fd, st.st_uid, st.st_gid) && errno != EPERM) ||
	    fsync(fd) || close(fd)) {
		fd = -1;
		goto fail;
	}
	if (rename(tmp, path))
		goto fail_closed;
	return 0;
fail:
	saved = errno;
	if (fd >= 0)
		close(fd);
	errno = saved;
fail_closed:
	saved = errno;
	unlink(tmp);
	errno = saved;
	return -1;
}

/* What this version writes into c: a block in its devices section, or one. */
static const char *wanted(const struct conf *c)
{
	return c->devices >= 0 ? block_text : section_text;
}

/* Whether our block in c is exactly what this version writes. */
static bool block_current(const struct conf *c)
{
	const char *w = wanted(c);

	return c->begin >= 0 && (size_t)(c->end - c->begin) == strlen(w) &&
	       !memcmp(c->text + c->begin, w, strlen(w));
}

static void devicesfile_note(const char *path, const struct conf *c)
{
	if (c->devicesfile)
		printf("Note: %s sets use_devicesfile = 1 (line %d): LVM then uses only the devices its devices file lists and ignores this filter; a volume is the host's when added to it (lvmdevices --adddev /dev/subvol/POOL/VOLUME)\n",
		       path, c->devicesfile);
}

int cmd_lvm_filter(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "remove", no_argument, NULL, 'r' },
		{ "check", no_argument, NULL, 'c' },
		{ "file", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *cmd = "lvm-filter", *dir = getenv("LVM_SYSTEM_DIR");
	char path[PATH_MAX];
	const char *parts[3];
	size_t lens[3];
	bool remove = false, check = false;
	struct conf c;
	int opt, r = EXIT_REFUSED;

	snprintf(path, sizeof(path), "%s/lvm.conf", dir && *dir ? dir : "/etc/lvm");
	while ((opt = cmd_getopt(argc, argv, "h", opts)) != -1) {
		switch (opt) {
		case 'r':
			remove = true;
			break;
		case 'c':
			check = true;
			break;
		case 'f':
			snprintf(path, sizeof(path), "%s", optarg);
			break;
		case 'h':
			return command_help(cmd);
		default:
			return usage_error(cmd, NULL);
		}
	}
	if (optind != argc)
		return usage_error(cmd, "takes no arguments (--file names the lvm.conf)");
	if (remove && check)
		return usage_error(cmd, "--remove or --check, not both");
	if (conf_read(path, &c)) {
		errmsg("lvm-filter: cannot read %s: %s%s", path, strerror(errno),
		       errno == ENOENT ? " (is lvm2 installed?)" : "");
		free(c.text);
		return EXIT_REFUSED;
	}

	if (check) {
		if (block_current(&c)) {
			printf("%s: host LVM leaves subvol devices alone (but volumes set --host-lvm)\n",
			       path);
			devicesfile_note(path, &c);
			r = 0;
		} else if (c.begin >= 0) {
			printf("%s: holds an older subvol filter; \"subvol lvm-filter\" updates it\n",
			       path);
		} else {
			printf("%s: no subvol filter: host LVM scans subvol devices%s\n", path,
			       c.devicesfile ? " listed in its devices file" : "");
		}
		goto out;
	}

	if (remove) {
		if (c.begin < 0) {
			printf("%s: no subvol filter to remove\n", path);
			r = 0;
			goto out;
		}
		parts[0] = c.text;
		lens[0] = c.begin;
		parts[1] = c.text + c.end;
		lens[1] = c.len - c.end;
		if (conf_replace(path, parts, lens, 2)) {
			errmsg("lvm-filter: cannot rewrite %s: %s", path, strerror(errno));
			goto out;
		}
		printf("%s: subvol filter removed; host LVM scans subvol devices again\n", path);
		r = 0;
		goto out;
	}

	if (block_current(&c)) {
		printf("%s: the subvol filter is there already\n", path);
		devicesfile_note(path, &c);
		r = 0;
		goto out;
	}
	if (c.other_filter) {
		errmsg("lvm-filter: %s sets devices/global_filter already (line %d); put these patterns first in it yourself, and keep no \"a|.*|\" in it: %s",
		       path, c.other_filter, FILTER_VALUE);
		goto out;
	}
	if (c.begin >= 0) {
		/* An older block: replaced where it is. */
		parts[0] = c.text;
		lens[0] = c.begin;
		parts[1] = wanted(&c);
		parts[2] = c.text + c.end;
		lens[2] = c.len - c.end;
	} else if (c.devices >= 0) {
		parts[0] = c.text;
		lens[0] = c.devices;
		parts[1] = block_text;
		parts[2] = c.text + c.devices;
		lens[2] = c.len - c.devices;
	} else {
		/* No devices section: one of ours at the end. */
		parts[0] = c.text;
		lens[0] = c.len;
		parts[1] = c.len && c.text[c.len - 1] != '\n' ? "\n" : "";
		parts[2] = section_text;
		lens[2] = strlen(section_text);
	}
	lens[1] = strlen(parts[1]);
	r = conf_replace(path, parts, lens, 3);
	if (r) {
		errmsg("lvm-filter: cannot rewrite %s: %s", path, strerror(errno));
		r = EXIT_REFUSED;
		goto out;
	}
	printf("%s: subvol filter %s: host LVM leaves subvol devices alone (but volumes set --host-lvm)\n",
	       path, c.begin >= 0 ? "updated" : "installed");
	devicesfile_note(path, &c);
out:
	free(c.text);
	return r;
}
