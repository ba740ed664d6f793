// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * subvol monitor: grow the host filesystems of pools before they fill, as
 * dmeventd and lvm2-monitor do for thin pools.
 *
 * The pools are the registered ones and those of the active subvol
 * devices (the directory of a table's backing file).  Each is checked
 * every --interval seconds, and at once when one of the devices raises a
 * device-mapper event: a thread per device waits in DM_DEVICE_WAITEVENT
 * for its event counter to move (the target's low_water event, a table
 * swap, the device's removal) and wakes the main thread with SIGUSR1.
 *
 * A pool whose host filesystem is past its autoextend threshold gets its
 * policy: `lvextend --resizefs` of the LVM logical volume under the host
 * filesystem, by the step, within the VG's free space and the pool's
 * maximum, repeated while it is still past; then the pool's command, if it
 * has one, with the figures in its environment.  Every action and every
 * failure is one line to syslog (and stderr in the foreground), and what
 * was done last is kept in the pool's user.subvol.monitor attribute for
 * pool status.  The same failure is logged again only after ten minutes.
 *
 * A snapshot copy that a device holds while no subvol process owns it
 * (the process was killed during the copy: copy-owner.c) is cancelled at
 * the next check, giving back its copy-on-write reserve.
 */
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <xfs/xfs.h>

#define COMMAND_TIMEOUT		300	/* seconds a pool's command may take */
#define LVM_TIMEOUT		600	/* lvs, lvextend --resizefs */
#define ERROR_REPEAT		600	/* seconds before a failure is logged again */
#define EXTENSIONS_PER_CHECK	16
/*
 * A device event says the space is low, not that a pool is past its
 * threshold (the volume's low_water counts the pool's unpromised claim
 * too): for a minute after one, check every second.
 */
#define FAST_WINDOW		60

static bool to_stderr = true, to_syslog;
static unsigned int interval = MONITOR_INTERVAL_DEFAULT;
static unsigned int failures;	/* logged by this run: --once's exit status */

/* --- logging ------------------------------------------------------------- */

static void log_line(int prio, const char *msg)
{
	struct timespec ts;
	struct tm tm;
	char t[16];

	if (to_syslog)
		syslog(prio, "%s", msg);
	if (to_stderr) {
		clock_gettime(CLOCK_REALTIME, &ts);
		localtime_r(&ts.tv_sec, &tm);
		strftime(t, sizeof(t), "%H:%M:%S", &tm);
		fprintf(stderr, "%s monitor: %s.%03ld %s\n", progname, t, ts.tv_nsec / 1000000, msg);
	}
}

static void mlog(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mlog(int prio, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_line(prio, msg);
}

/*
 * Failures that are not a pool's (the registry, device-mapper): each
 * text once per ERROR_REPEAT seconds.  errmsg() of the code the monitor
 * shares with the commands comes here too.
 */
#define RECENT_ERRORS	32
static struct {
	char text[256];
	double at;
} recent[RECENT_ERRORS];

static void log_failure(const char *msg)
{
	double now = now_seconds(), oldest = now;
	int i, slot = 0;

	for (i = 0; i < RECENT_ERRORS; i++) {
		if (!strncmp(recent[i].text, msg, sizeof(recent[i].text) - 1)) {
			if (now - recent[i].at < ERROR_REPEAT)
				return;
			slot = i;
			break;
		}
		if (recent[i].at < oldest) {
			oldest = recent[i].at;
			slot = i;
		}
	}
	snprintf(recent[slot].text, sizeof(recent[slot].text), "%s", msg);
	recent[slot].at = now;
	failures++;
	log_line(LOG_ERR, msg);
}

/* Whether stderr is the journal already (systemd's JOURNAL_STREAM). */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

/* --- child programs -------------------------------------------------------- */

/* The last non-empty line of text, into out, without its newline. */
static void last_line(const char *text, char *out, size_t len)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	while (*start == ' ' || *start == '\t')
		start++;
	snprintf(out, len, "%.*s", (int)(end - start), start);
}

/*
 * Run argv with env added to the monitor's environment, in a process
 * group of its own, stdin /dev/null.  Its stdout into out, the last line
 * of its stderr into err.  Killed (the group) after timeout seconds.
 * Returns its exit status, or -1 (err says why).
 */
static int run_child(const char *const argv[], char *const env[], unsigned int timeout,
		     char *out, size_t outlen, char *err, size_t errlen)
{
	int opipe[2] = { -1, -1 }, epipe[2] = { -1, -1 }, status, fd, i;
	char ebuf[8192];
	size_t olen = 0, elen = 0;
	struct pollfd pfd[2];
	double deadline;
	bool killed = false;
	sigset_t none;
	pid_t pid;
	ssize_t n;

	out[0] = err[0] = ebuf[0] = '\0';
	if (pipe2(opipe, O_CLOEXEC) || pipe2(epipe, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot make a pipe: %s", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "cannot fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);	/* the monitor ignores it */
		setpgid(0, 0);
		fd = open("/dev/null", O_RDONLY);
		if (fd >= 0)
			dup2(fd, STDIN_FILENO);
		dup2(opipe[1], STDOUT_FILENO);
		dup2(epipe[1], STDERR_FILENO);
		for (i = 0; env && env[i]; i++)
			putenv(env[i]);
		/* The monitor's descriptors are close-on-exec: none leaks. */
		setenv("LVM_SUPPRESS_FD_WARNINGS", "1", 1);
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);	/* as the child does: no race with a kill */
	close(opipe[1]);
	close(epipe[1]);
	opipe[1] = epipe[1] = -1;
	deadline = now_seconds() + timeout;
	pfd[0].fd = opipe[0];
	pfd[1].fd = epipe[0];
	pfd[0].events = pfd[1].events = POLLIN;
	while (pfd[0].fd >= 0 || pfd[1].fd >= 0) {
		double left = deadline - now_seconds();

		if (left <= 0) {
			kill(-pid, SIGKILL);
			killed = true;
			break;
		}
		if (poll(pfd, 2, (int)(left * 1000) + 1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (i = 0; i < 2; i++) {
			char chunk[4096];
			size_t keep;

			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pfd[i].fd, chunk, sizeof(chunk));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				continue;
			}
			if (i == 0) {
				/* stdout: its start. */
				keep = olen + 1 < outlen ? outlen - 1 - olen : 0;
				keep = keep < (size_t)n ? keep : (size_t)n;
				memcpy(out + olen, chunk, keep);
				olen += keep;
				out[olen] = '\0';
			} else {
				/* stderr: its end, where the reason is. */
				if (elen + n >= sizeof(ebuf)) {
					keep = sizeof(ebuf) / 2;
					keep = keep < elen ? keep : elen;
					memmove(ebuf, ebuf + elen - keep, keep);
					elen = keep;
				}
				keep = (size_t)n < sizeof(ebuf) - 1 - elen ? (size_t)n :
				       sizeof(ebuf) - 1 - elen;
				memcpy(ebuf + elen, chunk + n - keep, keep);
				elen += keep;
				ebuf[elen] = '\0';
			}
		}
	}
	for (i = 0; i < 2; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	opipe[0] = epipe[0] = -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	last_line(ebuf, err, errlen);
	if (killed) {
		snprintf(err, errlen, "killed after %u s", timeout);
		return -1;
	}
	if (WIFSIGNALED(status)) {
		snprintf(err, errlen, "killed by signal %d", WTERMSIG(status));
		return -1;
	}
	return WEXITSTATUS(status);
fail:
	for (i = 0; i < 2; i++) {
		if (opipe[i] >= 0)
			close(opipe[i]);
		if (epipe[i] >= 0)
			close(epipe[i]);
	}
	return -1;
}

/* --- pools --------------------------------------------------------------- */

/* What the monitor keeps of a pool between checks. */
struct mpool {
	char path[PATH_MAX];
	struct monitor_state state;
	bool dirty;		/* state not yet written */
	double past_since;	/* since when it is seen past the threshold; 0 */
	double command_at;	/* when its command last ran */
	char error[MONITOR_TEXT_MAX + 1];	/* the last failure logged */
	double error_at;
	struct mpool *next;
};

static struct mpool *mpools;

static struct mpool *mpool_get(struct pool *pool)
{
	struct mpool *mp;
	char err[256];

	for (mp = mpools; mp; mp = mp->next)
		if (!strcmp(mp->path, pool->path))
			return mp;
	mp = calloc(1, sizeof(*mp));
	if (!mp)
		return NULL;
	snprintf(mp->path, sizeof(mp->path), "%s", pool->path);
	if (monitor_state_read(pool->dirfd, &mp->state, err, sizeof(err))) {
		/* Start afresh: the next write replaces what cannot be read. */
		errmsg("pool %s: %s; it is written anew", pool->meta.name, err);
		memset(&mp->state, 0, sizeof(mp->state));
	}
	mp->next = mpools;
	mpools = mp;
	return mp;
}

/* One line, without newlines, into a state text (cut to fit). */
static void set_text(char *dst, const char *src)
{
	size_t n = strnlen(src, MONITOR_TEXT_MAX), i;

	memmove(dst, src, n);
	dst[n] = '\0';
	for (i = 0; i < n; i++)
		if (dst[i] == '\n' || dst[i] == '\r')
			dst[i] = ' ';
}

/* A pool's failure: logged (once per ERROR_REPEAT), kept in its state. */
static void pool_failure(struct pool *pool, struct mpool *mp, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void pool_failure(struct pool *pool, struct mpool *mp, const char *fmt, ...)
{
	char text[1024];
	double now = now_seconds();
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	set_text(text, text);
	if (!strcmp(text, mp->error) && now - mp->error_at < ERROR_REPEAT)
		return;
	set_text(mp->error, text);
	mp->error_at = now;
	failures++;
	mlog(LOG_ERR, "pool %s: %s", pool->meta.name, text);
	set_text(mp->state.last_error, text);
	mp->state.last_error_time = time(NULL);
	mp->dirty = true;
}

static void save_state(struct pool *pool, struct mpool *mp)
{
	if (!mp->dirty)
		return;
	if (monitor_state_write(pool->dirfd, &mp->state)) {
		errmsg("pool %s: cannot record what the monitor did in %s of %s: %s",
		       pool->meta.name, SUBVOL_MONITOR_XATTR, pool->path, strerror(errno));
		return;
	}
	mp->dirty = false;
}

struct host {
	uint64_t size, free;
	unsigned int used;	/* percent, rounded */
};

static int host_figures(struct pool *pool, struct host *h)
{
	struct statvfs sv;

	if (fstatvfs(pool->dirfd, &sv))
		return -1;
	h->size = (uint64_t)sv.f_blocks * sv.f_frsize;
	h->free = (uint64_t)sv.f_bavail * sv.f_frsize;
	h->used = h->size ? (unsigned int)(((h->size - h->free) * 100 + h->size / 2) / h->size) : 0;
	return 0;
}

/* Past the threshold: more than threshold_percent used, or too little free. */
static bool past_threshold(const struct autoextend *a, const struct host *h)
{
	if (a->threshold_percent)
		return (h->size - h->free) * 100 > (uint64_t)a->threshold_percent * h->size;
	return h->free < a->threshold_free;
}

static bool grows_lv(const struct autoextend *a)
{
	return !a->step_set || a->step_percent || a->step_bytes;
}

enum lv_result { LV_NOT, LV_OFF, LV_EXTENDED, LV_MAXIMUM, LV_VG_FULL, LV_FAILED };

static const char *const lv_result_names[] = {
	[LV_NOT] = "not-lv", [LV_OFF] = "off", [LV_EXTENDED] = "extended",
	[LV_MAXIMUM] = "maximum", [LV_VG_FULL] = "vg-full", [LV_FAILED] = "failed",
};

static bool parse_u64(const char **p, uint64_t *v)
{
	char *end;

	while (**p == ' ')
		(*p)++;
	errno = 0;
	*v = strtoull(*p, &end, 10);
	if (errno || end == *p)
		return false;
	*p = end;
	return true;
}

/*
 * An lvextend --resizefs whose resize failed (fsadm) leaves the host
 * filesystem smaller than its LV, and extending the LV again would not
 * help: grow the filesystem to the LV instead, as xfs_growfs does.
 * Returns true if it grew; false, with nothing done, if the filesystem
 * already fills its LV (within an extent) or cannot grow.
 */
static bool grow_fs_to_lv(struct pool *pool, const char *full, uint64_t lv_size,
			  uint64_t extent)
{
	struct xfs_fsop_geom geo;
	struct xfs_growfs_data grow;
	char s_from[32], s_to[32];
	struct host after;

	if (ioctl(pool->dirfd, XFS_IOC_FSGEOMETRY, &geo) || !geo.blocksize)
		return false;
	if (lv_size < (geo.datablocks + 1) * geo.blocksize + extent)
		return false;
	grow.newblocks = lv_size / geo.blocksize;
	grow.imaxpct = geo.imaxpct;
	format_size(s_from, sizeof(s_from), geo.datablocks * geo.blocksize);
	format_size(s_to, sizeof(s_to), lv_size);
	if (ioctl(pool->dirfd, XFS_IOC_FSGROWFSDATA, &grow)) {
		mlog(LOG_ERR, "pool %s: the host filesystem (%s) is smaller than its LV %s (%s), and cannot grow to it: %s",
		     pool->meta.name, s_from, full, s_to, strerror(errno));
		return false;
	}
	if (host_figures(pool, &after))
		return true;
	mlog(LOG_NOTICE, "pool %s: grew the host filesystem from %s to its LV %s (%s), which an earlier resize left larger; %u%% used",
	     pool->meta.name, s_from, full, s_to, after.used);
	return true;
}

/*
 * lvextend --resizefs the LV under the pool's host by its step, within
 * the VG's free space and the pool's maximum.  *added: the bytes.
 */
static enum lv_result extend_lv(struct pool *pool, struct mpool *mp, const char *vg,
				const char *lv, const struct host *before, uint64_t *added)
{
	const struct autoextend *a = &pool->meta.autoextend;
	char full[2 * DM_NAME_LEN + 2], out[512], err[512], amount_arg[40];
	char s_amount[32], s_from[32], s_to[32], s_max[32], s_lv[32];
	const char *lvs[] = { "lvs", "--noheadings", "--nosuffix", "--units", "b",
			      "--separator", ":", "-o", "lv_size,vg_free,vg_extent_size,segtype",
			      full, NULL };
	const char *lvextend[] = { "lvextend", "--resizefs", "-L", amount_arg, full, NULL };
	uint64_t lv_size, vg_free, extent, want, room, amount;
	const char *p = out, *limit = NULL;
	struct host after;
	double t0, took;
	bool thin;
	int r;

	*added = 0;
	snprintf(full, sizeof(full), "%s/%s", vg, lv);
	r = run_child(lvs, NULL, LVM_TIMEOUT, out, sizeof(out), err, sizeof(err));
	if (r || !parse_u64(&p, &lv_size) || *p++ != ':' || !parse_u64(&p, &vg_free) ||
	    *p++ != ':' || !parse_u64(&p, &extent) || !extent || *p++ != ':') {
		pool_failure(pool, mp, "cannot read the size of its host LV %s (lvs exit %d): %s",
			     full, r, err[0] ? err : out[0] ? out : "no output");
		return LV_FAILED;
	}
	if (grow_fs_to_lv(pool, full, lv_size, extent))
		return LV_EXTENDED;
	/* A thin LV grows in its thin pool, not in the VG's free space. */
	thin = !strncmp(p, "thin", 4) && (p[4] == '\0' || p[4] == '\n' || p[4] == ' ');
	if (a->step_bytes)
		want = a->step_bytes;
	else
		want = lv_size / 100 * (a->step_set ? a->step_percent : AUTOEXTEND_STEP_DEFAULT);
	want = (want + extent - 1) / extent * extent;
	if (!want)
		want = extent;
	room = thin ? UINT64_MAX : vg_free / extent * extent;
	amount = want;
	if (amount > room) {
		amount = room;
		limit = "the VG's free space";
	}
	if (a->max) {
		uint64_t to_max = a->max > lv_size ? (a->max - lv_size) / extent * extent : 0;

		if (amount > to_max) {
			amount = to_max;
			limit = "the pool's maximum";
		}
	}
	format_size(s_lv, sizeof(s_lv), lv_size);
	if (!amount) {
		if (limit && !strcmp(limit, "the VG's free space")) {
			pool_failure(pool, mp, "host filesystem %u%% used, but VG %s has no free space to extend %s (%s)",
				     before->used, vg, full, s_lv);
			return LV_VG_FULL;
		}
		format_size(s_max, sizeof(s_max), a->max);
		pool_failure(pool, mp, "host filesystem %u%% used, but its LV %s (%s) is at the pool's --autoextend-max %s",
			     before->used, full, s_lv, s_max);
		return LV_MAXIMUM;
	}
	snprintf(amount_arg, sizeof(amount_arg), "+%" PRIu64 "b", amount);
	format_size(s_amount, sizeof(s_amount), amount);
	trace("pool %s: lvextend --resizefs -L %s %s", pool->meta.name, amount_arg, full);
	t0 = now_seconds();
	r = run_child(lvextend, NULL, LVM_TIMEOUT, out, sizeof(out), err, sizeof(err));
	took = now_seconds() - t0;
	if (r) {
		pool_failure(pool, mp, "lvextend --resizefs -L +%s %s failed (%s%d): %s", s_amount,
			     full, r < 0 ? "" : "exit ", r, err[0] ? err : "no message");
		return LV_FAILED;
	}
	*added = amount;
	if (host_figures(pool, &after))
		after = *before;
	format_size(s_from, sizeof(s_from), before->size);
	format_size(s_to, sizeof(s_to), after.size);
	snprintf(out, sizeof(out), "lvextend --resizefs -L +%s %s%s%s%s: host filesystem %s -> %s, %u%% used; %.1f s, %.1f s after it was seen past the threshold",
		 s_amount, full, limit ? " (limited by " : "", limit ? limit : "",
		 limit ? ")" : "", s_from, s_to, after.used, took,
		 now_seconds() - mp->past_since);
	mlog(LOG_NOTICE, "pool %s: extended: %s", pool->meta.name, out);
	mp->state.extensions++;
	mp->state.last_extension_time = time(NULL);
	set_text(mp->state.last_extension, out);
	mp->dirty = true;
	if (after.size <= before->size)
		pool_failure(pool, mp, "lvextend extended %s, but the host filesystem did not grow (%s): is fsadm there?",
			     full, s_to);
	return LV_EXTENDED;
}

static void percent_or_bytes(char *buf, size_t len, bool set, unsigned int pct, uint64_t bytes,
			     unsigned int dflt)
{
	if (!set)
		snprintf(buf, len, "%u%%", dflt);
	else if (pct)
		snprintf(buf, len, "%u%%", pct);
	else
		snprintf(buf, len, "%" PRIu64, bytes);
}

/* The pool's command, with the figures in its environment. */
static void run_command(struct pool *pool, struct mpool *mp, const char *lv,
			enum lv_result lvr, uint64_t added)
{
	const struct autoextend *a = &pool->meta.autoextend;
	char e[11][PATH_MAX + 64], out[256], err[512], v[32], text[1024];
	const char *sh[] = { "/bin/sh", "-c", a->command, NULL };
	char *env[12];
	struct host h;
	int r, i = 0;

	if (host_figures(pool, &h))
		memset(&h, 0, sizeof(h));
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_POOL=%s", pool->meta.name);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_POOL_PATH=%s", pool->path);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_HOST_SIZE=%" PRIu64, h.size);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_HOST_FREE=%" PRIu64, h.free);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_HOST_USED_PERCENT=%u", h.used);
	percent_or_bytes(v, sizeof(v), true, a->threshold_percent, a->threshold_free, 0);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_THRESHOLD=%s", v);
	percent_or_bytes(v, sizeof(v), a->step_set, a->step_percent, a->step_bytes,
			 AUTOEXTEND_STEP_DEFAULT);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_STEP=%s", v);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_MAX=%" PRIu64, a->max);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_HOST_LV=%s", lv);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_LVEXTEND=%s", lv_result_names[lvr]);
	snprintf(e[i++], sizeof(e[0]), "SUBVOL_EXTENDED=%" PRIu64, added);
	for (r = 0; r < i; r++)
		env[r] = e[r];
	env[i] = NULL;
	mp->command_at = now_seconds();
	r = run_child(sh, env, COMMAND_TIMEOUT, out, sizeof(out), err, sizeof(err));
	mp->state.last_command_time = time(NULL);
	mp->dirty = true;
	if (r) {
		snprintf(text, sizeof(text), "failed (%s%d): %.300s", r < 0 ? "" : "exit ", r,
			 err[0] ? err : "no message");
		set_text(mp->state.last_command, text);
		pool_failure(pool, mp, "--autoextend-command %s", text);
		return;
	}
	snprintf(text, sizeof(text), "exited 0 (host filesystem %u%% used, lvextend %s)", h.used,
		 lv_result_names[lvr]);
	set_text(mp->state.last_command, text);
	mlog(LOG_NOTICE, "pool %s: --autoextend-command %s", pool->meta.name, text);
}

/* Check one pool and act on its policy; why: what woke the monitor. */
static void check_pool(struct pool *pool, const char *why)
{
	const struct autoextend *a = &pool->meta.autoextend;
	char vg[DM_NAME_LEN], lv[DM_NAME_LEN], full[2 * DM_NAME_LEN + 2] = "";
	char t[32], f[32];
	enum lv_result lvr = LV_NOT;
	uint64_t added, total = 0;
	bool on_lv, was_past = false;
	struct mpool *mp;
	struct host h;
	int i;

	mp = mpool_get(pool);
	if (!mp) {
		errmsg("pool %s: out of memory", pool->meta.name);
		return;
	}
	if (!autoextend_on(a)) {
		mp->past_since = 0;
		save_state(pool, mp);
		return;
	}
	on_lv = host_lv(pool->dirfd, vg, sizeof(vg), lv, sizeof(lv));
	if (on_lv)
		snprintf(full, sizeof(full), "%s/%s", vg, lv);
	for (i = 0; i < EXTENSIONS_PER_CHECK; i++) {
		if (host_figures(pool, &h)) {
			pool_failure(pool, mp, "cannot read the host filesystem's space: %s",
				     strerror(errno));
			break;
		}
		trace("pool %s: host filesystem %u%% used, %" PRIu64 " bytes free (%s)",
		      pool->meta.name, h.used, h.free, why);
		if (!past_threshold(a, &h)) {
			if (mp->past_since)
				mlog(LOG_INFO, "pool %s: host filesystem %u%% used, within the threshold again",
				     pool->meta.name, h.used);
			mp->past_since = 0;
			break;
		}
		was_past = true;
		if (!mp->past_since) {
			mp->past_since = now_seconds();
			autoextend_threshold_str(t, sizeof(t), a, false);
			format_size(f, sizeof(f), h.free);
			mlog(LOG_NOTICE, "pool %s: host filesystem %u%% used, %s free: past the threshold %s (%s)",
			     pool->meta.name, h.used, f, t, why);
		}
		if (!on_lv || !grows_lv(a)) {
			lvr = on_lv ? LV_OFF : LV_NOT;
			break;
		}
		lvr = extend_lv(pool, mp, vg, lv, &h, &added);
		if (lvr != LV_EXTENDED)
			break;
		total += added;
	}
	if (total)
		lvr = LV_EXTENDED;
	if (was_past && a->command[0]) {
		if (total || !mp->command_at || now_seconds() - mp->command_at >= interval)
			run_command(pool, mp, full, lvr, total);
	} else if (was_past && (lvr == LV_NOT || lvr == LV_OFF)) {
		pool_failure(pool, mp, "host filesystem %u%% used, past the threshold, and nothing to do: %s and the pool has no --autoextend-command",
			     h.used, on_lv ? "its --autoextend-step is 0" :
			     "it is not on an LVM logical volume");
	}
	save_state(pool, mp);
}

/* --- devices and their events -------------------------------------------- */

struct waiter {
	struct dm_subvol_device dev;
	pthread_t thread;
	atomic_bool done;
	struct waiter *next;
};

static struct waiter *waiters;
static pid_t monitor_pid;

static void *wait_events(void *arg)
{
	struct waiter *w = arg;
	uint32_t nr = w->dev.event_nr, old;

	/* The signal after the new number is read: no event is missed. */
	for (;;) {
		old = nr;
		if (dm_wait_event(&w->dev, nr) || dm_event_nr(&w->dev, &nr))
			break;
		kill(monitor_pid, SIGUSR1);
		if (nr == old)
			usleep(100000);	/* woken without an event: do not spin */
	}
	atomic_store(&w->done, true);
	kill(monitor_pid, SIGUSR1);
	return NULL;
}

static bool same_device(const struct dm_subvol_device *a, const struct dm_subvol_device *b)
{
	return a->major == b->major && a->minor == b->minor && !strcmp(a->name, b->name) &&
	       !strcmp(a->uuid, b->uuid);
}

/* A thread for each device that has none; the ended ones joined. */
static void follow(const struct dm_subvol_device *devs, size_t nr)
{
	struct waiter **pw, *w;
	size_t i;
	int r;

	for (pw = &waiters; (w = *pw);) {
		if (atomic_load(&w->done)) {
			pthread_join(w->thread, NULL);
			trace("no longer following %s", w->dev.name);
			*pw = w->next;
			free(w);
		} else {
			pw = &w->next;
		}
	}
	for (i = 0; i < nr; i++) {
		for (w = waiters; w && !same_device(&w->dev, &devs[i]); w = w->next)
			;
		if (w)
			continue;
		w = calloc(1, sizeof(*w));
		if (!w) {
			errmsg("cannot follow %s: out of memory", devs[i].name);
			continue;
		}
		w->dev = devs[i];
		atomic_init(&w->done, false);
		r = pthread_create(&w->thread, NULL, wait_events, w);
		if (r) {
			errmsg("cannot follow %s: cannot start a thread: %s", devs[i].name,
			       strerror(r));
			free(w);
			continue;
		}
		trace("following %s (event %u)", w->dev.name, w->dev.event_nr);
		w->next = waiters;
		waiters = w;
	}
}

/* --- the checks ------------------------------------------------------------ */

struct seen {
	char **paths;
	size_t nr;
};

static bool seen_before(struct seen *s, const char *path)
{
	char **grown;
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (!strcmp(s->paths[i], path))
			return true;
	grown = realloc(s->paths, (s->nr + 1) * sizeof(*grown));
	if (grown) {
		s->paths = grown;
		s->paths[s->nr] = strdup(path);
		if (s->paths[s->nr])
			s->nr++;
	}
	return false;
}

static void check_spec(struct seen *s, const char *spec, const char *why)
{
	struct pool pool;

	if (pool_open(spec, &pool, false))
		return;
	if (!seen_before(s, pool.path))
		check_pool(&pool, why);
	pool_close(&pool);
}

/*
 * A snapshot copy on dev whose subvol process is gone (copy-owner.c)
 * holds its file and its copy-on-write reserve until cancelled: cancel it.
 */
static void reap_copy(const struct dm_subvol_device *dev, const char *image)
{
	struct subvol_status st;
	const char *was;
	int fd, r;

	if (copy_status(dev->name, &st) || st.copy == SUBVOL_COPY_NONE || copy_owned(image))
		return;
	fd = copy_owner_lock(image);
	if (fd < 0)
		return;		/* owned after all */
	r = copy_cancel_orphan(dev->name, &was);
	close(fd);
	if (r > 0)
		mlog(LOG_WARNING, "%s: cancelled a snapshot copy of %s whose subvol process is gone (it was %s)",
		     dev->name, image, was);
	else if (r < 0)
		errmsg("%s: cannot cancel a snapshot copy of %s whose subvol process is gone: %s",
		       dev->name, image, dm_last_error());
}

/*
 * Every registered pool, and the pool of every active subvol device
 * (its backing file's directory, when that is a pool); and the snapshot
 * copies left without a process.  follow_events: start waiting for the
 * devices' events.
 */
static void check_all(bool dm, bool follow_events, const char *why)
{
	struct dm_subvol_device *devs = NULL;
	struct subvol_features feat;
	char path[4096], err[256], *slash;
	struct pool_meta meta;
	struct seen s = { 0 };
	char **names, **p;
	size_t nr = 0, i;
	int fd;

	if (dm && dm_subvol_devices(&devs, &nr))
		errmsg("cannot list the device-mapper devices: %s", dm_last_error());
	if (follow_events)
		follow(devs, nr);
	names = pool_registered();
	for (p = names; p && *p; p++)
		check_spec(&s, *p, why);
	free_names(names);
	for (i = 0; i < nr; i++) {
		if (subvol_table_parse(devs[i].params, path, sizeof(path), &feat, err, sizeof(err)))
			continue;
		reap_copy(&devs[i], path);
		slash = strrchr(path, '/');
		if (!slash)
			continue;
		*slash = '\0';
		/* Only a pool's directory; a dmsetup device may use any. */
		fd = open(path[0] ? path : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!pool_meta_read(fd, &meta, err, sizeof(err)))
			check_spec(&s, path[0] ? path : "/", why);
		close(fd);
	}
	for (i = 0; i < s.nr; i++)
		free(s.paths[i]);
	free(s.paths);
	free(devs);
}

static int write_pidfile(const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
		errmsg("monitor: cannot write the pid file %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int monitor_run(const struct monitor_opts *o)
{
	const char *pidfile = o->pidfile, *why;
	bool dm;
	double fast_until = 0;
	struct timespec timeout;
	siginfo_t info;
	sigset_t set;
	int lock, sig;

	interval = o->interval;
	lock = pool_registry_lock();
	if (lock < 0)
		return EXIT_REFUSED;
	dm = dm_available();
	if (o->daemonize) {
		/* The lock is the open directory's: the daemon keeps it. */
		if (daemon(0, 0)) {
			errmsg("monitor: cannot become a daemon: %s", strerror(errno));
			return EXIT_REFUSED;
		}
		to_stderr = false;
	} else {
		to_stderr = !stderr_is_journal();
	}
	to_syslog = true;
	openlog("subvol-monitor", LOG_PID, LOG_DAEMON);
	errmsg_sink = log_failure;
	if (pidfile && write_pidfile(pidfile))
		return EXIT_REFUSED;
	monitor_pid = getpid();
	/* A reader of stderr that went away must not end the monitor. */
	signal(SIGPIPE, SIG_IGN);

	if (o->once) {
		check_all(dm, false, "a single check");
		return failures ? EXIT_REFUSED : 0;
	}
	/* Every thread blocks them: the main one takes them in sigtimedwait. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, NULL);
	mlog(LOG_INFO, "started: checking the pools every %u s%s", interval,
	     dm ? " and at their devices' events" : " (device-mapper is not available here: no events)");
	why = "at start";
	for (;;) {
		check_all(dm, dm, why);
		timeout.tv_sec = now_seconds() < fast_until ? 1 : interval;
		timeout.tv_nsec = 0;
		sig = sigtimedwait(&set, &info, &timeout);
		if (sig == SIGTERM || sig == SIGINT)
			break;
		if (sig == SIGUSR1)
			fast_until = now_seconds() + FAST_WINDOW;
		why = sig == SIGUSR1 ? "at a device event" : sig == SIGHUP ? "at SIGHUP" :
		      now_seconds() < fast_until ? "in the minute after a device event" :
		      "at the periodic check";
	}
	mlog(LOG_INFO, "stopped by signal %d", sig);
	if (pidfile)
		unlink(pidfile);
	close(lock);
	return 0;
}
