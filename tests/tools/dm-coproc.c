// SPDX-License-Identifier: GPL-2.0
/*
 * dm-coproc: device-mapper commands for a test script, from one process.
 *
 * Under qemu's software emulation, starting dmsetup costs far more than
 * the ioctl it makes; the oracle fuzz (tests/vm/1b-fuzz-oracle.sh) makes
 * a dozen calls a line.  It runs this as a bash coprocess instead: a
 * command a line on standard input, words separated by tabs, and a reply
 * on standard output:
 *
 *   create NAME ro|rw TABLE   make NAME with the one-target TABLE ("START
 *                             LENGTH TYPE PARAMS", as dmsetup reads it),
 *                             loaded and resumed; a refused table leaves
 *                             no device (as dmsetup create)
 *   remove NAME | suspend NAME | resume NAME
 *   table NAME | status NAME  its table or status line, as dmsetup prints
 *                             them ("START LENGTH TYPE PARAMS")
 *   size NAME                 its block device's size in sectors
 *   message NAME FD MESSAGE   send MESSAGE (words separated by spaces) to
 *                             sector 0; FD is "-" or MODE:PATH, PATH opened
 *                             as descriptor 7 for the message (MODE r, rw
 *                             or a: read-only, read-write, append)
 *
 * The reply: "ok" (with "\tTEXT" for table, status and size) or
 * "error\tWHY" (strerror() of the ioctl's errno, as dmsetup ends its
 * error line), then "log\tLINE" for each kernel log line logged while the
 * command ran, then a line ".".  Every kernel log record this process
 * reads, from the last clear of the ring (dmesg -c), also goes to LOGFILE
 * (the whole run's log: the ring may wrap), and at the end of input the
 * ring is cleared, so that dmesg then shows only what came later.
 *
 *   dm-coproc LOGFILE
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <unistd.h>

#define MSG_FD 7
#define SYSLOG_ACTION_CLEAR 5

static int kmsg_fd = -1;
static int kmsg_mark_fd = -1;
static FILE *log_file;
static char last_error[512];

/* libdevmapper's own log: kept for a reply, not printed. */
static void dm_log(int level, const char *file, int line, int dm_errno,
		   const char *fmt, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	(void)dm_errno;
	if ((level & 7) > 3)	/* _LOG_ERR */
		return;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
}

/*
 * unescape: /dev/kmsg writes a byte below ' ', above '~' or a backslash
 * as \xNN; decode them but the control characters, which would end a
 * reply line.
 */
static void unescape(char *s)
{
	char *out = s;
	unsigned int c;

	while (*s) {
		if (s[0] == '\\' && s[1] == 'x' && sscanf(s + 2, "%2x", &c) == 1 &&
		    c >= ' ' && c != 0x7f) {
			*out++ = (char)c;
			s += 4;
		} else {
			*out++ = *s++;
		}
	}
	*out = '\0';
}

/*
 * drain_kmsg REPLY: every record logged since the last call, to LOGFILE
 * and, if REPLY, to the reply as "log" lines.
 *
 * Reading until there is nothing more is not enough: a reader stops at a
 * record that another CPU has reserved but not yet finished (the copy
 * worker's, say), and the records after it, the call's own among them,
 * would come with the next call (seen once in 100 000 messages).  So the
 * drain writes a mark of its own and reads, waiting if need be, until it
 * has read it back; the mark is at debug level, off the console.
 */
static void drain_kmsg(int reply)
{
	static unsigned long marks;
	char rec[8192], mark[64], line[72];
	struct pollfd pfd = { .fd = kmsg_fd, .events = POLLIN };
	ssize_t n;
	char *text, *end;

	marks++;
	snprintf(mark, sizeof(mark), "dm-coproc: mark %lu", marks);
	/* One write, one record (not dprintf(): it gives up on a device
	 * that cannot seek). */
	n = snprintf(line, sizeof(line), "<7>%s\n", mark);
	if (write(kmsg_mark_fd, line, n) != n) {
		if (reply)
			printf("log\tdm-coproc: cannot write to /dev/kmsg: %s\n", strerror(errno));
		return;
	}
	for (;;) {
		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten before we read it */
		if (n < 0 && errno == EAGAIN) {
			if (poll(&pfd, 1, 10000) > 0)
				continue;
			/* Never seen; the caller sees the reply's line. */
			if (reply)
				printf("log\tdm-coproc: the kernel log never came to %s\n", mark);
			return;
		}
		if (n <= 0)
			return;
		rec[n] = '\0';
		/* "PRIO,SEQ,TIME,FLAGS;TEXT\n", then " KEY=VALUE" lines */
		text = strchr(rec, ';');
		if (!text)
			continue;
		text++;
		end = strchr(text, '\n');
		if (end)
			*end = '\0';
		if (!strcmp(text, mark))
			return;
		unescape(text);
		fprintf(log_file, "%s\n", text);
		if (reply)
			printf("log\t%s\n", text);
	}
}

static void reply_error(struct dm_task *dmt)
{
	int e = dmt ? dm_task_get_errno(dmt) : errno;

	if (e)
		printf("error\t%s\n", strerror(e));
	else
		printf("error\t%s\n", last_error[0] ? last_error : "failed");
}

/* task TYPE NAME: a task for NAME, or NULL with the reply written. */
static struct dm_task *task(int type, const char *name)
{
	struct dm_task *dmt = dm_task_create(type);

	if (!dmt || !dm_task_set_name(dmt, name)) {
		reply_error(NULL);
		if (dmt)
			dm_task_destroy(dmt);
		return NULL;
	}
	return dmt;
}

/* run: run DMT, reply ok or the error, and free it unless KEEP. */
static int run(struct dm_task *dmt, int keep)
{
	int ok = dm_task_run(dmt);

	if (ok) {
		if (!keep)
			printf("ok\n");
	} else {
		reply_error(dmt);
	}
	dm_task_update_nodes();
	if (!ok || !keep)
		dm_task_destroy(dmt);
	return ok;
}

static void cmd_create(const char *name, const char *mode, const char *table)
{
	unsigned long long start, len;
	char type[64];
	int n = 0;
	struct dm_task *dmt;

	if (sscanf(table, "%llu %llu %63s %n", &start, &len, type, &n) < 3) {
		printf("error\tInvalid format of table line\n");
		return;
	}
	dmt = task(DM_DEVICE_CREATE, name);
	if (!dmt)
		return;
	if (!dm_task_add_target(dmt, start, len, type, table + n) ||
	    (!strcmp(mode, "ro") && !dm_task_set_ro(dmt))) {
		reply_error(dmt);
		dm_task_destroy(dmt);
		return;
	}
	run(dmt, 0);
}

static void cmd_table(int type, const char *name)
{
	struct dm_task *dmt = task(type, name);
	void *next = NULL;
	uint64_t start, length;
	char *target, *params;
	const char *sep = "";

	if (!dmt || !run(dmt, 1))
		return;
	printf("ok\t");
	do {
		next = dm_get_next_target(dmt, next, &start, &length, &target, &params);
		if (target) {
			printf("%s%" PRIu64 " %" PRIu64 " %s %s", sep, start, length,
			       target, params ? params : "");
			sep = "; ";
		}
	} while (next);
	printf("\n");
	dm_task_destroy(dmt);
}

static void cmd_size(const char *name)
{
	struct dm_task *dmt = task(DM_DEVICE_INFO, name);
	struct dm_info info;
	char path[64];
	unsigned long long size;
	FILE *f;

	if (!dmt || !run(dmt, 1))
		return;
	if (!dm_task_get_info(dmt, &info) || !info.exists) {
		printf("error\tNo such device or address\n");
		dm_task_destroy(dmt);
		return;
	}
	dm_task_destroy(dmt);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/size", info.major, info.minor);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &size) != 1)
		printf("error\t%s: %s\n", path, strerror(errno));
	else
		printf("ok\t%llu\n", size);
	if (f)
		fclose(f);
}

/* open_fd SPEC: MODE:PATH opened as MSG_FD; 0, or -1 with the reply
 * written. */
static int open_fd(const char *spec)
{
	const char *path = strchr(spec, ':');
	int flags, fd;

	if (!path) {
		printf("error\tdescriptor is not MODE:PATH: %s\n", spec);
		return -1;
	}
	if (!strncmp(spec, "r:", 2))
		flags = O_RDONLY;
	else if (!strncmp(spec, "rw:", 3))
		flags = O_RDWR | O_CREAT;
	else if (!strncmp(spec, "a:", 2))
		flags = O_WRONLY | O_APPEND | O_CREAT;
	else {
		printf("error\tmode is not r, rw or a: %s\n", spec);
		return -1;
	}
	fd = open(path + 1, flags, 0644);
	if (fd < 0 || (fd != MSG_FD && dup2(fd, MSG_FD) < 0)) {
		printf("error\t%s: %s\n", path + 1, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fd != MSG_FD)
		close(fd);
	return 0;
}

static void cmd_message(const char *name, const char *fd, const char *msg)
{
	struct dm_task *dmt;

	if (strcmp(fd, "-") && open_fd(fd))
		return;
	dmt = task(DM_DEVICE_TARGET_MSG, name);
	if (dmt) {
		if (!dm_task_set_sector(dmt, 0) || !dm_task_set_message(dmt, msg)) {
			reply_error(dmt);
			dm_task_destroy(dmt);
		} else {
			run(dmt, 0);
		}
	}
	if (strcmp(fd, "-"))
		close(MSG_FD);
}

/* command WORDS: one command; returns 0 if it is not one. */
static int command(char **w, int n)
{
	const struct {
		const char *word;
		int words, type;
	} simple[] = {
		{ "remove", 2, DM_DEVICE_REMOVE },
		{ "suspend", 2, DM_DEVICE_SUSPEND },
		{ "resume", 2, DM_DEVICE_RESUME },
	};
	unsigned int i;
	struct dm_task *dmt;

	for (i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
		if (n == simple[i].words && !strcmp(w[0], simple[i].word)) {
			dmt = task(simple[i].type, w[1]);
			if (dmt)
				run(dmt, 0);
			return 1;
		}
	if (n == 4 && !strcmp(w[0], "create"))
		cmd_create(w[1], w[2], w[3]);
	else if (n == 2 && !strcmp(w[0], "table"))
		cmd_table(DM_DEVICE_TABLE, w[1]);
	else if (n == 2 && !strcmp(w[0], "status"))
		cmd_table(DM_DEVICE_STATUS, w[1]);
	else if (n == 2 && !strcmp(w[0], "size"))
		cmd_size(w[1]);
	else if (n == 4 && !strcmp(w[0], "message"))
		cmd_message(w[1], w[2], w[3]);
	else
		return 0;
	return 1;
}

int main(int argc, char **argv)
{
	char *line = NULL, *w[8], *p;
	size_t cap = 0;
	ssize_t len;
	int n;

	if (argc != 2) {
		fprintf(stderr, "usage: dm-coproc LOGFILE (commands on standard input)\n");
		return 2;
	}
	log_file = fopen(argv[1], "a");
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	kmsg_mark_fd = open("/dev/kmsg", O_WRONLY);
	if (!log_file || kmsg_fd < 0 || kmsg_mark_fd < 0) {
		fprintf(stderr, "dm-coproc: %s: %s\n", log_file ? "/dev/kmsg" : argv[1],
			strerror(errno));
		return 1;
	}
	/*
	 * From the last clear of the ring (dmesg -c): the caller has the
	 * log before it, and nothing logged since is missed.
	 */
	lseek(kmsg_fd, 0, SEEK_DATA);
	dm_log_with_errno_init(dm_log);
	dm_udev_set_sync_support(0);
	setvbuf(stdout, NULL, _IOLBF, 0);

	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		n = 0;
		for (p = line; p && n < 8; n++)
			w[n] = strsep(&p, "\t");
		last_error[0] = '\0';
		if (!command(w, n))
			printf("error\tunknown command or wrong number of words: %s\n", w[0]);
		drain_kmsg(1);
		printf(".\n");
		fflush(log_file);
	}
	drain_kmsg(0);
	fclose(log_file);
	klogctl(SYSLOG_ACTION_CLEAR, NULL, 0);
	dm_lib_release();
	return 0;
}
