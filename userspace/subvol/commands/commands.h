/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The commands of the subvol tool (cmd-*.c), main.c and their output
 * (report.c): the top layer, which may call every one below it.
 */
#ifndef SUBVOL_COMMANDS_H
#define SUBVOL_COMMANDS_H

#include <linux/dm-subvol.h>

#include "policy/policy.h"

#define SUBVOL_TOOL_VERSION	"1.1.0"

/* main.c: the command's usage on stdout; returns 0. */
int command_help(const char *cmd);
/*
 * "subvol CMD: <reason>" and a pointer to --help on stderr; returns
 * EXIT_USAGE.  fmt NULL: getopt has said what was wrong already.
 */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * getopt_long for the commands, with the options every command takes
 * besides its own (-v, --verbose, counted here); see main.c.
 */
struct option;
int cmd_getopt(int argc, char **argv, const char *shortopts,
	       const struct option *longopts);

/* cmd-volume.c: the policy options of create, for set too. */
int parse_policy(const char *cmd, int opt, const char *arg, struct volume_meta *m);
/* Usage errors (EXIT_USAGE) for policies that cannot go together. */
int check_policies(const char *cmd, const struct volume_meta *m, uint64_t block);
/* Size rounded up to whole host blocks (said so), a new id, kind, time. */
void new_volume_meta(struct volume_meta *meta, uint64_t block);

/* cmd-pool-set.c: the --autoextend-* options of pool create and pool set. */
enum {
	OPT_AUTOEXTEND_THRESHOLD = 0x1000,
	OPT_AUTOEXTEND_STEP,
	OPT_AUTOEXTEND_MAX,
	OPT_AUTOEXTEND_COMMAND,
};

#define AUTOEXTEND_OPTIONS \
	{ "autoextend-threshold", required_argument, NULL, OPT_AUTOEXTEND_THRESHOLD }, \
	{ "autoextend-step", required_argument, NULL, OPT_AUTOEXTEND_STEP }, \
	{ "autoextend-max", required_argument, NULL, OPT_AUTOEXTEND_MAX }, \
	{ "autoextend-command", required_argument, NULL, OPT_AUTOEXTEND_COMMAND }

/* The options' arguments as given; NULL when not. */
struct autoextend_args {
	const char *threshold, *step, *max, *command;
};

int autoextend_option(int opt, const char *arg, struct autoextend_args *args);
bool autoextend_given(const struct autoextend_args *args);
/*
 * The given options onto a policy: 0, or EXIT_USAGE after a one-line
 * error naming the pool and the cause (a leaves unchanged).
 */
int autoextend_apply(const char *pool, const struct autoextend_args *args,
		     struct autoextend *a);
int cmd_pool_set(int argc, char **argv);

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
/* cmd-monitor.c */
int cmd_monitor(int argc, char **argv);

#endif
