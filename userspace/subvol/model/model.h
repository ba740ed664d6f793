/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model of the subvol tool: volumes and snapshots of the dm-subvol
 * target, kept as image files in a pool directory on a host XFS.  It
 * knows files and xattrs, not devices (devices/), and calls nothing above
 * it: what it needs from them comes as a parameter.
 *
 * A pool is a directory with the xattr user.subvol.pool; its name is
 * registered in $SUBVOL_CONFIG_DIR/pools/ (default /etc/subvol) as a
 * symlink to the directory.  A volume is <name>.img in the pool with its
 * metadata in the xattr user.subvol.volume, so that a copy keeping
 * xattrs (cp -a, rsync -X, tar --xattrs) keeps it too.
 */
#ifndef SUBVOL_MODEL_H
#define SUBVOL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/dm-ioctl.h>	/* DM_NAME_LEN, DM_UUID_LEN */

#include "subvol-status.h"
#include "model/util.h"

/* Device-mapper UUIDs: SUBVOL-<pool uuid>-<volume uuid>, hex digits. */
#define SUBVOL_UUID_PREFIX	"SUBVOL-"
#define SUBVOL_NAME_PREFIX	"subvol-"

#define SUBVOL_POOL_XATTR	"user.subvol.pool"
#define SUBVOL_VOLUME_XATTR	"user.subvol.volume"
#define SUBVOL_MONITOR_XATTR	"user.subvol.monitor"
/* The target's sharing record (drivers/md/dm-subvol-record.c). */
#define SUBVOL_RECORD_XATTR	"trusted.dm-subvol.shared"
#define SUBVOL_IMAGE_SUFFIX	".img"
/* The largest --extent-size, and extent_size of a volume's metadata. */
#define SUBVOL_EXTENT_SIZE_MAX	(1U << 30)

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

/* autoextend.c: the policy in words, as pool status and pool set print it. */
void autoextend_threshold_str(char *buf, size_t len, const struct autoextend *a, bool bytes);
void autoextend_step_str(char *buf, size_t len, const struct autoextend *a, bool bytes);
/* One line: "autoextend when ... by ..., up to ...; command: ..." */
void autoextend_describe(char *buf, size_t len, const struct autoextend *a);
/* EXIT_REFUSED (said why) when the maximum is below the host's size. */
int autoextend_check_host(const char *pool, int dirfd, const struct autoextend *a);

/* pool.c */
struct pool {
	char path[4096];	/* canonical, absolute */
	struct pool_meta meta;
	int dirfd;
	bool locked;
};

/* policy: the autoextend policy to start with (zeroed: off). */
int pool_create(const char *path, const char *name, const struct autoextend *policy);
/*
 * Under its own name, or new_name (written to its metadata); NULL keeps it.
 * A pool renamed must have no active volume, which the model cannot see:
 * active_volume tells (pool_active_volume() of devices/).
 */
int pool_import(const char *path, const char *new_name,
		int (*active_volume)(struct pool *pool, char *name, size_t namelen));
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

/*
 * 0, or the exit status: EXIT_USAGE for a malformed name (usage_hint()
 * said how to ask for help), else EXIT_REFUSED.
 */
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

#endif
