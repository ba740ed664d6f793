/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The subvol tool: volumes and snapshots of the dm-subvol target, kept as
 * image files in a pool directory on a host XFS.
 *
 * A pool is a directory with the xattr user.subvol.pool; its name is
 * registered in $SUBVOL_CONFIG_DIR/pools/ (default /etc/subvol) as a
 * symlink to the directory.  A volume is <name>.img in the pool with its
 * metadata in the xattr user.subvol.volume, so that a copy keeping
 * xattrs (cp -a, rsync -X, tar --xattrs) keeps it too.
 */
#ifndef SUBVOL_H
#define SUBVOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/dm-ioctl.h>	/* DM_NAME_LEN, DM_UUID_LEN */

#include "subvol-status.h"

#define SUBVOL_TOOL_VERSION	"1.1.0"

/* Device-mapper UUIDs: SUBVOL-<pool uuid>-<volume uuid>, hex digits. */
#define SUBVOL_UUID_PREFIX	"SUBVOL-"
#define SUBVOL_NAME_PREFIX	"subvol-"
#define SUBVOL_NAME_MAX		64
#define SUBVOL_ID_LEN		32	/* hex digits of a 128-bit id */

#define SUBVOL_POOL_XATTR	"user.subvol.pool"
#define SUBVOL_VOLUME_XATTR	"user.subvol.volume"
#define SUBVOL_MONITOR_XATTR	"user.subvol.monitor"
/* The target's sharing record (drivers/md/dm-subvol-record.c). */
#define SUBVOL_RECORD_XATTR	"trusted.dm-subvol.shared"
#define SUBVOL_IMAGE_SUFFIX	".img"
/* The largest --extent-size, and extent_size of a volume's metadata. */
#define SUBVOL_EXTENT_SIZE_MAX	(1U << 30)

/* What to load when device-mapper or the target is missing. */
#define DM_LOAD_HINT "modprobe dm_mod; modprobe dm-subvol, or insmod dm-subvol.ko where it is not installed"

/* Exit codes: 0 done, 1 refused or failed, 2 usage error. */
#define EXIT_REFUSED	1
#define EXIT_USAGE	2

/* util.c */
extern const char *progname;
extern bool verbose;
extern int verbosity;	/* -v once: what is done; twice: libdevmapper's debug too */
void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set (by subvol monitor): errmsg's lines go there, not to stderr. */
extern void (*errmsg_sink)(const char *msg);
void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define SIZE_INVALID	(-1)
#define SIZE_TOO_LARGE	(-2)
int parse_size(const char *s, uint64_t *bytes);
bool size_round_up(uint64_t *size, uint64_t block, uint64_t max);
void format_size(char *buf, size_t len, uint64_t bytes);
void format_size_in(char *buf, size_t len, uint64_t bytes, char unit, bool suffix);
bool valid_name(const char *name);
void new_id(char id[SUBVOL_ID_LEN + 1]);
int confirm(const char *question);
int run_program(const char *const argv[], bool quiet);
int program_capture(const char *const argv[], bool errors, char *out, size_t len);
int program_capture_all(const char *const argv[], char *out, size_t len);
void progress_line(const char *what, const char *action, uint64_t done,
		   uint64_t total, bool final);
double now_seconds(void);

/* meta.c: the metadata kept in xattrs, as "key=value" lines. */
#define AUTOEXTEND_COMMAND_MAX	1024

/*
 * A pool's autoextend policy (subvol pool create/set, acted on by subvol
 * monitor): when its host filesystem is more than threshold_percent used,
 * or has less than threshold_free bytes free, grow it by step_percent of
 * the LV's size or step_bytes (both 0: do not grow it), up to max bytes
 * (0: as far as the VG allows), and run command.  Neither threshold: off.
 */
struct autoextend {
	unsigned int threshold_percent;		/* 1-99; 0 when a size or off */
	uint64_t threshold_free;		/* bytes; 0 when a percent or off */
	bool step_set;				/* else AUTOEXTEND_STEP_DEFAULT % */
	unsigned int step_percent;		/* of the LV's size */
	uint64_t step_bytes;
	uint64_t max;				/* bytes; 0: no maximum */
	char command[AUTOEXTEND_COMMAND_MAX + 1];	/* "" for none */
};

#define AUTOEXTEND_STEP_DEFAULT	20	/* percent, as thin_pool_autoextend_percent */
#define AUTOEXTEND_STEP_PERCENT_MAX	1000

struct pool_meta {
	char name[SUBVOL_NAME_MAX + 1];
	char id[SUBVOL_ID_LEN + 1];
	int64_t created;
	struct autoextend autoextend;
};

static inline bool autoextend_on(const struct autoextend *a)
{
	return a->threshold_percent || a->threshold_free;
}

/*
 * What subvol monitor did for a pool, in the xattr SUBVOL_MONITOR_XATTR
 * of its directory (written by the monitor alone).
 */
#define MONITOR_TEXT_MAX	400
struct monitor_state {
	uint64_t extensions;
	int64_t last_extension_time;
	char last_extension[MONITOR_TEXT_MAX + 1];
	int64_t last_command_time;
	char last_command[MONITOR_TEXT_MAX + 1];
	int64_t last_error_time;
	char last_error[MONITOR_TEXT_MAX + 1];
};

enum volume_kind { VOLUME_KIND_VOLUME, VOLUME_KIND_SNAPSHOT };

struct volume_meta {
	char id[SUBVOL_ID_LEN + 1];
	enum volume_kind kind;
	uint64_t size;		/* bytes, whole host blocks */
	struct subvol_features features;
	uint32_t extent_size;	/* bytes of the image's extent size hint */
	char origin_id[SUBVOL_ID_LEN + 1];	/* "" when made from nothing */
	char origin_name[SUBVOL_NAME_MAX + 1];
	int64_t created;
	/*
	 * Host LVM may scan and activate a PV on it (subvol set --host-lvm).
	 * Never a snapshot's: its PVs duplicate its origin's.
	 */
	bool host_lvm;
};

int pool_meta_read(int fd, struct pool_meta *m, char *err, size_t errlen);
int pool_meta_write(int fd, const struct pool_meta *m);
/* A pool without the attribute has an empty state (0). */
int monitor_state_read(int fd, struct monitor_state *s, char *err, size_t errlen);
int monitor_state_write(int fd, const struct monitor_state *s);
int volume_meta_read(int fd, struct volume_meta *m, char *err, size_t errlen);
int volume_meta_write(int fd, const struct volume_meta *m);
/* The same "key=value" text, for a stream header; parse modifies buf. */
int volume_meta_format(char *buf, size_t len, const struct volume_meta *m);
int volume_meta_parse(char *buf, struct volume_meta *m, char *err, size_t errlen);
const char *volume_kind_name(enum volume_kind kind);
/* Whether host LVM is to see the volume's PVs: a volume's choice alone. */
bool volume_host_lvm(const struct volume_meta *m);

/* autoextend.c: the LVM logical volume "VG", "LV" under the pool's host. */
bool host_lv(int dirfd, char *vg, size_t vglen, char *lv, size_t lvlen);

/* pool.c */
struct pool {
	char path[4096];	/* canonical, absolute */
	struct pool_meta meta;
	int dirfd;
	bool locked;
};

/* policy: the autoextend policy to start with (zeroed: off). */
int pool_create(const char *path, const char *name, const struct autoextend *policy);
/* Under its own name, or new_name (written to its metadata); NULL keeps it. */
int pool_import(const char *path, const char *new_name);
int pool_unregister(const struct pool *pool);
int pool_open(const char *name_or_path, struct pool *pool, bool lock);
void pool_unlock(struct pool *pool);
int pool_relock(struct pool *pool);
void pool_close(struct pool *pool);
/* The host's block size: volume sizes and stream records are whole blocks. */
uint32_t pool_block_size(const struct pool *pool);
/* The largest volume: whole blocks, within the host's file size and loff_t. */
uint64_t pool_max_size(const struct pool *pool);
/*
 * autoextend.c: the low-water mark, in sectors, that the pool's autoextend
 * threshold gives a volume setting none; 0 for none.
 */
uint64_t pool_low_water_sectors(const struct pool *pool);
/*
 * The registry's directory, locked for one subvol monitor: its fd, or -1
 * (said why: another monitor holds it, or it cannot be made).
 */
int pool_registry_lock(void);
/* Names of the registered pools, sorted; NULL-terminated, malloc'ed. */
char **pool_registered(void);
void free_names(char **names);
/* Volume names in a pool, sorted; NULL-terminated, malloc'ed. */
char **pool_volumes(struct pool *pool);

/* volume.c: "POOL/VOLUME" and what belongs to one volume. */
struct volume {
	struct pool *pool;
	char name[SUBVOL_NAME_MAX + 1];
	char path[4096 + SUBVOL_NAME_MAX + 8];
	struct volume_meta meta;
	bool exists;
};

/* 0, or the exit status: EXIT_USAGE for a malformed name, else EXIT_REFUSED. */
int volume_spec(const char *spec, struct pool *pool, struct volume *vol,
		bool lock, bool must_exist);
int volume_load(struct pool *pool, const char *name, struct volume *vol,
		bool must_exist);
void volume_dm_name(const struct volume *vol, char *out, size_t len);
void volume_dm_uuid(const struct volume *vol, char *out, size_t len);
uint64_t volume_allocated(const struct volume *vol);
/* extent_usage() of its image; -1 (errno) when it cannot be read. */
int volume_usage(const struct volume *vol, uint64_t *exclusive, uint64_t *shared);

/* image.c: image files; new ones become visible only when complete. */
struct new_image {
	int fd;			/* an O_TMPFILE in the pool directory */
	struct pool *pool;
};

int image_tmp_open(struct pool *pool, struct new_image *img);
int image_set_extent_size(int fd, uint32_t bytes, char *err, size_t errlen);
int image_clone_from(struct new_image *img, int src_fd);
int image_publish(struct new_image *img, const char *name, bool replace);
void image_discard(struct new_image *img);
int image_unlink(struct pool *pool, const char *name);
int image_rename(struct pool *pool, const char *old_name, const char *new_name);
void image_free_blocks(int fd);
int image_forget_sharing(int fd);
/*
 * What libblkid finds at the start of the image (or device) fd: the
 * superblock's TYPE ("xfs", "ext4", "LVM2_member") and UUID, "" when none
 * or more than one; -1 when it cannot probe.
 */
int image_probe(int fd, char *type, size_t typelen, char *uuid, size_t uuidlen);
bool image_is_xfs(int fd);
int image_new_xfs_uuid(struct new_image *img, char *err, size_t errlen);

/* seal.c: snapshots are immutable, and their pool knows they did not change. */
int image_seal(struct pool *pool, int fd, const char *id);
int image_unseal(struct pool *pool, int fd, const char *id);
int image_seal_suspend(struct pool *pool, int fd, const char *id, bool *valid);
int image_seal_resume(struct pool *pool, int fd, const char *id, bool valid);
/* 0 sealed and unchanged; -1 not (why says how). */
int image_check_seal(struct pool *pool, int fd, const char *id, char *why,
		     size_t len);

/* dm.c: libdevmapper, with udev synchronisation as dmsetup does. */
struct dm_info_lite {
	bool exists;
	bool suspended;
	bool read_only;
	int open_count;
	unsigned int major, minor;
};

void dm_setup_logging(void);
const char *dm_last_error(void);
bool dm_available(void);
int dm_device_info(const char *uuid, char *name, size_t namelen,
		   struct dm_info_lite *info);
int dm_device_create(const char *name, const char *uuid, uint64_t sectors,
		     const char *params, bool read_only);
int dm_device_reload(const char *name, uint64_t sectors, const char *params,
		     bool read_only);
int dm_device_suspend(const char *name);
int dm_device_resume(const char *name);
int dm_device_remove(const char *name);
int dm_device_message(const char *name, const char *msg);
int dm_device_status(const char *name, char *params, size_t len,
		     uint64_t *sectors);
int dm_device_table(const char *name, char *params, size_t len);

/* For subvol monitor: the subvol devices, and their events. */
struct dm_subvol_device {
	char name[DM_NAME_LEN];
	char uuid[DM_UUID_LEN];
	char params[4200];
	uint32_t event_nr;
	unsigned int major, minor;
};

int dm_subvol_devices(struct dm_subvol_device **devs, size_t *nr);
int dm_wait_event(const struct dm_subvol_device *dev, uint32_t event_nr);
int dm_event_nr(const struct dm_subvol_device *dev, uint32_t *event_nr);
int dm_device_by_number(unsigned int major, unsigned int minor, char *name,
			size_t namelen, char *uuid, size_t uuidlen);

/*
 * copy-owner.c: the lock a snapshot copy's process holds on its origin's
 * image.  copy_owner_lock: the lock's fd, or -1 (errno EWOULDBLOCK:
 * another process owns a copy of it).  copy_owned: whether some process
 * holds it.  copy_status: the device DEV's status, parsed, with its
 * snapshot copy field (-1 with errno: EPROTO for a target without it).
 * copy_cancel_orphan, with the lock held: cancel the copy the device DEV
 * reports, if any (1, *was saying what state it was in; 0 none; -1 the
 * device could not be asked).
 */
int copy_status(const char *dev, struct subvol_status *st);
int copy_owner_lock(const char *image);
bool copy_owned(const char *image);
int copy_cancel_orphan(const char *dev, const char **was);

/* activation.c */
int volume_activate(struct volume *vol, char *dev, size_t devlen);
/* 1 deactivated, 0 was not active, -1 refused (said why). */
int volume_deactivate(struct volume *vol, bool quiet_if_inactive);
/* 1 active (name set), 0 inactive, -1 unknown (said why). */
int volume_active(const struct volume *vol, char *name, size_t namelen,
		  struct dm_info_lite *info);
/* The table's features: the volume's, with the pool's low-water mark. */
void volume_table_features(const struct volume *vol, struct subvol_features *f);
/*
 * Those of its device: with dm_name (active), the low-water mark of the
 * live table; 0, or -1 said why.
 */
int volume_device_features(const struct volume *v, const char *dm_name,
			   struct subvol_features *f);
int volume_table(const struct volume *vol, char *params, size_t len);
/* After the metadata's host_lvm changed: links and udev (see activation.c). */
void volume_host_lvm_changed(const struct volume *vol, const char *dm_name,
			     const struct dm_info_lite *info);
void pool_rescan_sharing(struct pool *pool);
/* 1 a volume is active (its name in name), 0 none, -1 unknown (said why). */
int pool_active_volume(struct pool *pool, char *name, size_t namelen);

/*
 * lvm.c: volumes that hold LVM physical volumes.
 */
/* Whether the image (or device) holds an LVM2 PV label. */
bool image_holds_pv(int fd);
/*
 * The device names (DM names, else kernel names) holding major:minor,
 * comma-separated in out: an LVM LV active on it, say.  How many, or -1.
 */
int device_holders(unsigned int major, unsigned int minor, char *out, size_t len);
/*
 * A writable copy of a volume holding a PV: new PV and VG UUIDs and a new
 * VG name (vgimportclone), so that LVM can use it beside its origin; or a
 * note saying why not.  Activates the volume for it if it is not active.
 */
void volume_lvm_import_clone(struct volume *vol);

/*
 * cmd-snapshot.c: a new unnamed image in src's pool sharing every block
 * of src, active (suspended for the clone) or not; see its header.
 */
struct clone_result {
	double frozen;		/* seconds the device was suspended; 0 inactive */
	bool was_active;
	bool copying;		/* the target is copying into the image */
	char dev[128];		/* the device doing it */
	int lock_fd;		/* copy_owner_lock's, while copying; else -1 */
};

/* Start the clone, wait for the target's copy, or both. */
int volume_clone_start(struct volume *src, struct new_image *img,
		       struct clone_result *res, uint32_t extent_size);
int volume_clone_wait(struct volume *src, struct clone_result *res, bool show);
int volume_clone(struct volume *src, struct new_image *img,
		 struct clone_result *res, uint32_t extent_size);

/* Commands: argc/argv start at the command's own name. */
int cmd_pool(int argc, char **argv);
int cmd_create(int argc, char **argv);
int cmd_activate(int argc, char **argv);
int cmd_deactivate(int argc, char **argv);
int cmd_remove(int argc, char **argv);
int cmd_resize(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_clone(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_udev_name(int argc, char **argv);
int cmd_lvm_filter(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_send(int argc, char **argv);
int cmd_receive(int argc, char **argv);
/* cmd-admin.c */
int cmd_rename(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_import(int argc, char **argv);
/* pool export and pool remove; argv[0] is sub. */
int cmd_pool_admin(const char *sub, int argc, char **argv);

#endif
