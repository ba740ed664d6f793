// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * snapshot, clone and rollback: a new image that shares every block of
 * another by reflink.
 *
 * Of an active volume: suspend the device (dm freezes the filesystem on
 * top, which first writes back and flushes everything it acknowledged),
 * hand the target an unnamed file of the image's size (snapshot_begin:
 * it claims the copy-on-write reserve, so that the origin can overwrite
 * every block it will share, or ENOSPC and nothing changed), resume.  The
 * guest is frozen for that alone, whatever the image's extent count: the
 * target clones the image into the file after the resume, each range
 * before the guest changes it, and reports progress and completion in
 * its status.  The tool waits for "done" (in a background child with
 * --no-wait), lets the target go of the file (snapshot_end), and only
 * then gives it its name; until then it is not a snapshot, and a crash,
 * a cancel or the device's removal frees it.  Signals that would kill the
 * tool are held while the device is suspended, so the guest is never left
 * frozen; one while it waits for the copy cancels the copy.
 *
 * Of an inactive one: drop its sharing record first, so that its next
 * activation counts every data block as shared (image_forget_sharing).
 */
#include "commands/commands.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libdevmapper.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static void hold_signals(sigset_t *old)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, old);
}

/* The active device must be ours and use this very image. */
static int check_device(struct volume *src, const char *name,
			const struct dm_info_lite *info)
{
	char params[4200], path[4096], err[256];
	struct subvol_features f;

	if (info->suspended) {
		errmsg("volume %s/%s: %s is suspended; resume it first (dmsetup resume %s)",
		       src->pool->meta.name, src->name, name, name);
		return -1;
	}
	if (dm_device_table(name, params, sizeof(params)) ||
	    subvol_table_parse(params, path, sizeof(path), &f, err, sizeof(err))) {
		errmsg("volume %s/%s: cannot read the table of %s: %s", src->pool->meta.name,
		       src->name, name, dm_last_error());
		return -1;
	}
	if (strcmp(path, src->path)) {
		errmsg("volume %s/%s: its device %s uses %s, not %s", src->pool->meta.name,
		       src->name, name, path, src->path);
		return -1;
	}
	return 0;
}

/* SIGINT, SIGTERM or SIGHUP while waiting for a copy: cancel it. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

/*
 * Become the owner of the volume's next copy (copy-owner.c): take the
 * lock, and cancel a copy that a process now gone left on the device.
 */
static int take_copy(struct volume *src, const char *name, struct clone_result *res)
{
	const char *pn = src->pool->meta.name, *was;
	int r;

	res->lock_fd = copy_owner_lock(src->path);
	if (res->lock_fd < 0) {
		if (errno == EWOULDBLOCK)
			errmsg("volume %s/%s: another subvol process is copying a snapshot of it (snapshot --no-wait?); wait for it to complete",
			       pn, src->name);
		else
			errmsg("volume %s/%s: cannot lock %s: %s", pn, src->name, src->path,
			       strerror(errno));
		return -1;
	}
	r = copy_cancel_orphan(name, &was);
	if (r < 0) {
		errmsg("volume %s/%s: cannot cancel the snapshot copy on %s that no process owns: %s",
		       pn, src->name, name, dm_last_error());
		close(res->lock_fd);
		res->lock_fd = -1;
		return -1;
	}
	if (r)
		errmsg("volume %s/%s: cancelled a snapshot copy on %s whose subvol process is gone (it was %s)",
		       pn, src->name, name, was);
	return 0;
}

/*
 * Suspend, snapshot_begin with our unnamed file, resume: the device is
 * suspended for the flush and the claim of the copy-on-write reserve
 * only.  The target copies the image into the file after the resume.
 */
static int clone_active(struct volume *src, const char *name, int src_fd,
			struct new_image *img, struct clone_result *res)
{
	const char *pn = src->pool->meta.name;
	char msg[64];
	int r = -1, saved = 0;
	struct stat st;
	sigset_t old;
	double t0;

	/* The target wants a file as large as the image. */
	if (fstat(src_fd, &st) || ftruncate(img->fd, st.st_size)) {
		errmsg("volume %s/%s: cannot size the snapshot's file: %s", pn, src->name,
		       strerror(errno));
		return -1;
	}
	r = take_copy(src, name, res);
	if (r)
		return r;
	r = -1;
	snprintf(msg, sizeof(msg), "%s %d", DM_SUBVOL_MSG_SNAPSHOT_BEGIN, img->fd);
	hold_signals(&old);
	t0 = now_seconds();
	if (dm_device_suspend(name)) {
		errmsg("volume %s/%s: cannot suspend %s (the filesystem on it could not freeze?): %s",
		       pn, src->name, name, dm_last_error());
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(res->lock_fd);
		res->lock_fd = -1;
		return -1;
	}
	if (dm_device_message(name, msg))
		saved = errno;
	else
		r = 0;
	if (dm_device_resume(name)) {
		/* Still suspended: say so loudly, the guest is frozen. */
		errmsg("volume %s/%s: CANNOT RESUME %s: %s; run: dmsetup resume %s",
		       pn, src->name, name, dm_last_error(), name);
		if (!r)
			dm_device_message(name, DM_SUBVOL_MSG_SNAPSHOT_CANCEL);
		r = -1;
	}
	res->frozen = now_seconds() - t0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!r) {
		res->copying = true;
		snprintf(res->dev, sizeof(res->dev), "%s", name);
		return 0;
	}
	close(res->lock_fd);
	res->lock_fd = -1;
	if (saved == ENOSPC)
		errmsg("volume %s/%s: the host has no space for the copy-on-write reserve (one block for each block the snapshot would share); free some, or remove snapshots",
		       pn, src->name);
	else if (saved == EBUSY)
		errmsg("volume %s/%s: %s holds a snapshot copy begun outside subvol; cancel it: dmsetup message %s 0 %s",
		       pn, src->name, name, name, DM_SUBVOL_MSG_SNAPSHOT_CANCEL);
	else if (saved)
		errmsg("volume %s/%s: %s refused: %s (dmesg says why)", pn, src->name,
		       DM_SUBVOL_MSG_SNAPSHOT_BEGIN, strerror(saved));
	return -1;
}

/* A "\r"-updated progress line on a terminal, in sectors copied. */
static void progress(bool tty, const char *what, unsigned long long done,
		     unsigned long long total, bool final)
{
	if (tty)
		progress_line(what, "copying", (uint64_t)done << 9, (uint64_t)total << 9, final);
}

/*
 * Wait for the target to complete the copy that clone_active began, then
 * let go of it (snapshot_end) and have the device count the sharing the
 * host has (the reserve claimed counted every mapped block as shared).
 * On failure, on a signal, or if the device went away, the copy is
 * cancelled and the caller discards the unnamed file.
 */
int volume_clone_wait(struct volume *src, struct clone_result *res, bool show)
{
	const char *pn = src->pool->meta.name, *name = res->dev;
	struct sigaction sa = { .sa_handler = on_interrupt }, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	bool tty = show && isatty(STDERR_FILENO), shown = false;
	unsigned long long total = 0;
	struct subvol_status st;
	char what[300];
	int r = -1, i;

	if (!res->copying)
		return 0;
	snprintf(what, sizeof(what), "%s/%s", pn, src->name);
	/* Other commands on the pool need not wait for the copy. */
	pool_unlock(src->pool);
	interrupted = 0;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	for (;;) {
		if (interrupted) {
			errmsg("volume %s/%s: interrupted: snapshot copy cancelled", pn, src->name);
			break;
		}
		if (copy_status(name, &st)) {
			errmsg("volume %s/%s: its device %s went away during the snapshot copy: no snapshot (%s)",
			       pn, src->name, name, dm_last_error()[0] ? dm_last_error() : strerror(errno));
			res->copying = false;
			break;
		}
		if (st.copy == SUBVOL_COPY_DONE) {
			r = 0;
			break;
		}
		if (st.copy == SUBVOL_COPY_FAILED) {
			errmsg("volume %s/%s: the snapshot copy failed: %s (dmesg says why)", pn,
			       src->name, strerror(st.copy_errno));
			break;
		}
		if (st.copy == SUBVOL_COPY_NONE) {
			errmsg("volume %s/%s: the snapshot copy was cancelled", pn, src->name);
			res->copying = false;
			break;
		}
		progress(tty, what, st.copy_copied_sectors, st.copy_total_sectors, false);
		total = st.copy_total_sectors;
		shown = tty;
		usleep(100000);
	}
	if (shown && !r)
		progress(tty, what, total, total, true);
	else if (shown)
		fputc('\n', stderr);
	for (i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);

	if (res->copying &&
	    dm_device_message(name, r ? DM_SUBVOL_MSG_SNAPSHOT_CANCEL : DM_SUBVOL_MSG_SNAPSHOT_END) &&
	    !r) {
		errmsg("volume %s/%s: %s refused: %s", pn, src->name, DM_SUBVOL_MSG_SNAPSHOT_END,
		       strerror(errno));
		r = -1;
	}
	res->copying = false;
	/* The copy has ended: the next may begin. */
	close(res->lock_fd);
	res->lock_fd = -1;
	/*
	 * snapshot_begin counted every mapped block as shared; the host
	 * shares fewer (not its unwritten extents, none if the copy failed):
	 * let the device count what it does, and give the rest back.
	 */
	if (dm_device_message(name, DM_SUBVOL_MSG_RESCAN_SHARING))
		trace("rescan_sharing on %s: %s", name, dm_last_error());
	if (pool_relock(src->pool))
		r = -1;
	return r;
}

static int clone_inactive(struct volume *src, int src_fd, struct new_image *img)
{
	const char *pn = src->pool->meta.name;

	if (image_forget_sharing(src_fd)) {
		errmsg("volume %s/%s: cannot drop the sharing record %s of %s: %s", pn,
		       src->name, SUBVOL_RECORD_XATTR, src->path, strerror(errno));
		return -1;
	}
	if (image_clone_from(img, src_fd)) {
		errmsg("volume %s/%s: cannot reflink %s: %s", pn, src->name, src->path,
		       strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * Clone src, active or not, into a new unnamed image with the extent size
 * hint extent_size (the new volume's; XFS takes it only before the clone).
 * Of an active one, the target is copying it when this returns
 * (res->copying): volume_clone_wait() waits for the copy to complete.
 */
int volume_clone_start(struct volume *src, struct new_image *img,
		       struct clone_result *res, uint32_t extent_size)
{
	const char *pn = src->pool->meta.name;
	char name[DM_NAME_LEN], err[256];
	struct dm_info_lite info;
	int src_fd, active, r = -1;

	memset(res, 0, sizeof(*res));
	res->lock_fd = -1;
	src_fd = open(src->path, O_RDONLY | O_CLOEXEC);
	if (src_fd < 0) {
		errmsg("volume %s/%s: cannot open %s: %s", pn, src->name, src->path,
		       strerror(errno));
		return -1;
	}
	if (image_tmp_open(src->pool, img)) {
		errmsg("volume %s/%s: cannot make a file in %s: %s", pn, src->name,
		       src->pool->path, strerror(errno));
		goto out;
	}
	if (extent_size && image_set_extent_size(img->fd, extent_size, err, sizeof(err))) {
		errmsg("volume %s/%s: %s", pn, src->name, err);
		image_discard(img);
		goto out;
	}
	active = volume_active(src, name, sizeof(name), &info);
	if (active > 0) {
		res->was_active = true;
		if (!check_device(src, name, &info))
			r = clone_active(src, name, src_fd, img, res);
	} else if (active == 0) {
		r = clone_inactive(src, src_fd, img);
	}
	if (r)
		image_discard(img);
out:
	close(src_fd);
	return r;
}

int volume_clone(struct volume *src, struct new_image *img,
		 struct clone_result *res, uint32_t extent_size)
{
	if (volume_clone_start(src, img, res, extent_size))
		return -1;
	if (volume_clone_wait(src, res, true)) {
		image_discard(img);
		return -1;
	}
	return 0;
}

/* Metadata of an image made from src. */
static void derived_meta(const struct volume *src, enum volume_kind kind,
			 struct volume_meta *m)
{
	*m = src->meta;
	new_id(m->id);
	m->kind = kind;
	/* A copy's PVs duplicate its origin's until vgimportclone: not the host's. */
	m->host_lvm = false;
	strcpy(m->origin_id, src->meta.id);
	strcpy(m->origin_name, src->name);
	m->created = time(NULL);
}

/*
 * A writable copy of an XFS must not share its origin's UUID (XFS refuses
 * to mount two at once); a new one, or a word on how to mount it.
 */
static void fresh_uuid(struct volume *vol, struct new_image *img)
{
	char err[256];

	if (!image_is_xfs(img->fd))
		return;
	if (image_new_xfs_uuid(img, err, sizeof(err)))
		printf("Note: %s/%s keeps its origin's XFS UUID (%s); mount it beside its origin with -o nouuid\n",
		       vol->pool->meta.name, vol->name, err);
	else
		trace("volume %s/%s: new XFS UUID", vol->pool->meta.name, vol->name);
}

/*
 * Whether POOL of POOL/NAME in arg (slash at its last "/") is pool: its
 * name, or a path to its directory.  Says why not.
 */
static bool in_pool(const char *cmd, const struct pool *pool, const char *arg,
		    const char *slash)
{
	char spec[PATH_MAX], real[PATH_MAX];
	size_t n = slash - arg;

	if (n == strlen(pool->meta.name) && !strncmp(arg, pool->meta.name, n))
		return true;
	if (n < sizeof(spec)) {
		memcpy(spec, arg, n);
		spec[n] = '\0';
		if (realpath(n ? spec : "/", real) && !strcmp(real, pool->path))
			return true;
	}
	errmsg("%s: %s is not in pool %s: a snapshot lives in its origin's pool", cmd, arg,
	       pool->meta.name);
	return false;
}

/* Parse NAME or POOL/NAME for a new volume in the pool of src. */
static int target_name(const char *cmd, struct volume *src, const char *arg,
		       struct volume *dst)
{
	const char *slash = strrchr(arg, '/');
	const char *name = slash ? slash + 1 : arg;
	int r;

	if (slash && !in_pool(cmd, src->pool, arg, slash))
		return EXIT_REFUSED;
	r = volume_load(src->pool, name, dst, false);
	if (r)
		return r;
	if (dst->exists) {
		errmsg("volume %s/%s: exists already", src->pool->meta.name, name);
		return EXIT_REFUSED;
	}
	return 0;
}

static int finish(struct volume *dst, struct new_image *img, bool replace,
		  bool activate)
{
	char dev[DM_NAME_LEN + 32], file[SUBVOL_NAME_MAX + 8];

	if (volume_meta_write(img->fd, &dst->meta) ||
	    image_publish(img, dst->name, replace)) {
		errmsg("volume %s/%s: cannot make %s: %s", dst->pool->meta.name, dst->name,
		       dst->path, strerror(errno));
		return -1;
	}
	dst->exists = true;
	snprintf(file, sizeof(file), "%s%s", dst->name, SUBVOL_IMAGE_SUFFIX);
	if (dst->meta.kind == VOLUME_KIND_SNAPSHOT &&
	    image_seal(dst->pool, img->fd, dst->meta.id)) {
		errmsg("volume %s/%s: cannot seal the snapshot (make it immutable): %s",
		       dst->pool->meta.name, dst->name, strerror(errno));
		/* Not a snapshot that can be trusted: leave none. */
		image_unseal(dst->pool, img->fd, dst->meta.id);
		if (!unlinkat(dst->pool->dirfd, file, 0))
			dst->exists = false;
		return -1;
	}
	if (activate && volume_activate(dst, dev, sizeof(dev)) < 0)
		return -1;
	if (activate)
		printf("Volume %s/%s active as %s\n", dst->pool->meta.name, dst->name, dev);
	return 0;
}

enum { OPT_WAIT = 1000, OPT_NO_WAIT };

static int parse_common(const char *cmd, int argc, char **argv, bool *writable,
			bool *activate, bool *force, bool *wait)
{
	static const struct option opts[] = {
		{ "wait", no_argument, NULL, OPT_WAIT },
		{ "no-wait", no_argument, NULL, OPT_NO_WAIT },
		{ "writable", no_argument, NULL, 'w' },
		{ "activate", no_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	while ((c = cmd_getopt(argc, argv, "wafh", opts)) != -1) {
		switch (c) {
		case OPT_WAIT:
		case OPT_NO_WAIT:
			if (!wait)
				return usage_error(cmd, "--%s does not apply here",
						   c == OPT_WAIT ? "wait" : "no-wait");
			*wait = c == OPT_WAIT;
			break;
		case 'w':
		case 'a':
		case 'f':
			if (c == 'w' && writable)
				*writable = true;
			else if (c == 'a' && activate)
				*activate = true;
			else if (c == 'f' && force)
				*force = true;
			else
				return usage_error(cmd, "--%s does not apply here",
						   c == 'w' ? "writable" : c == 'a' ? "activate" : "force");
			break;
		case 'h':
			command_help(cmd);
			return -1;
		default:
			return usage_error(cmd, NULL);
		}
	}
	if (optind != argc - 2)
		return usage_error(cmd, "give %s", !strcmp(cmd, "rollback") ?
				   "POOL/VOLUME and the SNAPSHOT to go back to" :
				   "the source POOL/VOLUME and the new NAME");
	/* Refused before anything is made, not after. */
	if (activate && *activate && !dm_available()) {
		errmsg("%s: --activate: device-mapper is not available here (%s; or leave --activate out)",
		       cmd, DM_LOAD_HINT);
		return EXIT_REFUSED;
	}
	return 0;
}

static void log_error(const char *msg)
{
	syslog(LOG_ERR, "%s", msg);
}

/*
 * --no-wait: a child waits for the copy and names the snapshot; the
 * command returns at once.  Returns 1 in the parent, 0 in the child (or
 * if there is none: then this process waits), as lvconvert --background.
 */
static int background(struct volume *src, struct volume *dst, bool writable,
		      struct clone_result *res)
{
	pid_t pid;
	int fd;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		errmsg("volume %s/%s: cannot fork to copy in the background (%s): waiting here",
		       src->pool->meta.name, src->name, strerror(errno));
		return 0;
	}
	if (pid > 0) {
		/* The child owns the copy now, and keeps its lock. */
		close(res->lock_fd);
		res->lock_fd = -1;
		printf("%s %s/%s of %s/%s: copying in the background (device suspended for %.1f ms); it appears when complete\n",
		       writable ? "Writable snapshot" : "Snapshot", src->pool->meta.name,
		       dst->name, src->pool->meta.name, src->name, res->frozen * 1000);
		return 1;
	}
	/*
	 * The child: no terminal, and none of the caller's pipes, which a
	 * shell's $(...) would wait on; failures go to syslog.
	 */
	setsid();
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	openlog("subvol", LOG_PID, LOG_USER);
	errmsg_sink = log_error;
	return 0;
}

int cmd_snapshot(int argc, char **argv)
{
	bool writable = false, activate = false, wait = true, pv;
	struct new_image img = { .fd = -1 };
	struct clone_result res;
	struct volume src, dst;
	struct pool pool;
	int r = EXIT_REFUSED;

	r = parse_common("snapshot", argc, argv, &writable, &activate, NULL, &wait);
	if (r)
		return r < 0 ? 0 : r;
	r = volume_spec(argv[optind], &pool, &src, true, true);
	if (r)
		return r;
	r = EXIT_REFUSED;
	r = target_name("snapshot", &src, argv[optind + 1], &dst);
	if (r)
		goto out;
	r = EXIT_REFUSED;
	derived_meta(&src, writable ? VOLUME_KIND_VOLUME : VOLUME_KIND_SNAPSHOT, &dst.meta);
	if (volume_clone_start(&src, &img, &res, dst.meta.extent_size))
		goto out;
	if (res.copying && !wait && background(&src, &dst, writable, &res)) {
		r = 0;
		goto out;
	}
	if (volume_clone_wait(&src, &res, wait))
		goto out;
	pv = image_holds_pv(img.fd);
	if (writable)
		fresh_uuid(&dst, &img);
	if (finish(&dst, &img, false, activate))
		goto out;
	if (res.was_active)
		printf("%s %s/%s of %s/%s created (device suspended for %.1f ms)\n",
		       writable ? "Writable snapshot" : "Snapshot", pool.meta.name, dst.name,
		       pool.meta.name, src.name, res.frozen * 1000);
	else
		printf("%s %s/%s of %s/%s created\n",
		       writable ? "Writable snapshot" : "Snapshot", pool.meta.name, dst.name,
		       pool.meta.name, src.name);
	if (!writable && image_is_xfs(img.fd))
		printf("To mount it beside its origin: %s%s%s%smount -o ro,nouuid,norecovery /dev/subvol/%s/%s DIR\n",
		       activate ? "" : "subvol activate ", activate ? "" : pool.meta.name,
		       activate ? "" : "/", activate ? "" : dst.name, pool.meta.name, dst.name);
	if (writable && pv)
		volume_lvm_import_clone(&dst);
	else if (pv)
		printf("It holds an LVM PV with its origin's UUIDs: host LVM never uses it; a clone of it gets new ones (vgimportclone)\n");
	r = 0;
out:
	image_discard(&img);
	pool_close(&pool);
	return r;
}

int cmd_clone(int argc, char **argv)
{
	struct new_image img = { .fd = -1 };
	bool activate = false, pv;
	struct clone_result res;
	struct volume src, dst;
	struct pool pool;
	int r;

	r = parse_common("clone", argc, argv, NULL, &activate, NULL, NULL);
	if (r)
		return r < 0 ? 0 : r;
	r = volume_spec(argv[optind], &pool, &src, true, true);
	if (r)
		return r;
	r = EXIT_REFUSED;
	if (src.meta.kind != VOLUME_KIND_SNAPSHOT) {
		errmsg("volume %s/%s: not a snapshot (a writable copy of a volume is subvol snapshot --writable)",
		       pool.meta.name, src.name);
		goto out;
	}
	r = target_name("clone", &src, argv[optind + 1], &dst);
	if (r)
		goto out;
	r = EXIT_REFUSED;
	derived_meta(&src, VOLUME_KIND_VOLUME, &dst.meta);
	if (volume_clone(&src, &img, &res, dst.meta.extent_size))
		goto out;
	pv = image_holds_pv(img.fd);
	fresh_uuid(&dst, &img);
	if (finish(&dst, &img, false, activate))
		goto out;
	printf("Volume %s/%s cloned from %s/%s\n", pool.meta.name, dst.name, pool.meta.name,
	       src.name);
	if (pv)
		volume_lvm_import_clone(&dst);
	r = 0;
out:
	image_discard(&img);
	pool_close(&pool);
	return r;
}

int cmd_rollback(int argc, char **argv)
{
	struct new_image img = { .fd = -1 };
	char name[DM_NAME_LEN], from[32], to[32];
	uint64_t old_size;
	struct clone_result res;
	struct volume vol, snap;
	const char *slash;
	bool force = false;
	struct pool pool;
	int r;

	r = parse_common("rollback", argc, argv, NULL, NULL, &force, NULL);
	if (r)
		return r < 0 ? 0 : r;
	r = volume_spec(argv[optind], &pool, &vol, true, true);
	if (r)
		return r;
	r = volume_active(&vol, name, sizeof(name), NULL);
	if (r) {
		bool unknown = r < 0;

		r = EXIT_REFUSED;
		if (unknown)
			goto out;
		errmsg("volume %s/%s: active as %s/%s; unmount and deactivate it first",
		       pool.meta.name, vol.name, dm_dir(), name);
		goto out;
	}
	r = EXIT_REFUSED;
	if (vol.meta.kind == VOLUME_KIND_SNAPSHOT) {
		errmsg("volume %s/%s: a snapshot cannot be rolled back", pool.meta.name, vol.name);
		goto out;
	}
	slash = strrchr(argv[optind + 1], '/');
	if (slash && !in_pool("rollback", &pool, argv[optind + 1], slash))
		goto out;
	r = volume_load(&pool, slash ? slash + 1 : argv[optind + 1], &snap, true);
	if (r)
		goto out;
	r = EXIT_REFUSED;
	if (snap.meta.kind != VOLUME_KIND_SNAPSHOT) {
		errmsg("volume %s/%s: not a snapshot", pool.meta.name, snap.name);
		goto out;
	}
	if (strcmp(snap.meta.origin_id, vol.meta.id) && !force) {
		errmsg("volume %s/%s: snapshot of %s, not of %s/%s (--force to roll back to it anyway)",
		       pool.meta.name, snap.name,
		       snap.meta.origin_name[0] ? snap.meta.origin_name : "another volume",
		       pool.meta.name, vol.name);
		goto out;
	}
	if (volume_clone(&snap, &img, &res, vol.meta.extent_size))
		goto out;
	/* The volume stays itself (id, policies); its content and size go back. */
	old_size = vol.meta.size;
	vol.meta.size = snap.meta.size;
	if (finish(&vol, &img, true, false))
		goto out;
	printf("Volume %s/%s rolled back to snapshot %s/%s", pool.meta.name, vol.name,
	       pool.meta.name, snap.name);
	/* --force may bring another volume's size: say so. */
	if (old_size != snap.meta.size) {
		format_size(from, sizeof(from), old_size);
		format_size(to, sizeof(to), snap.meta.size);
		printf("; its size went from %s to %s", from, to);
	}
	putchar('\n');
	/* The old image's blocks are free: its clones share less. */
	pool_rescan_sharing(&pool);
	r = 0;
out:
	image_discard(&img);
	pool_close(&pool);
	return r;
}
