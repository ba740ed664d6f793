/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the commands share: help and usage errors (main.c). */
#ifndef SUBVOL_CMD_H
#define SUBVOL_CMD_H

#include <linux/dm-subvol.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Print the command's usage on stdout; returns 0. */
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

/* "Try 'subvol CMD --help'." for the running command, after a usage error. */
void usage_hint(void);

/* cmd-volume.c: the policy options of create, for set too. */
struct volume_meta;
int parse_policy(const char *cmd, int opt, const char *arg, struct volume_meta *m);
/* Usage errors (EXIT_USAGE) for policies that cannot go together. */
int check_policies(const char *cmd, const struct volume_meta *m, uint64_t block);
/* Size rounded up to whole host blocks (said so), a new id, kind, time. */
void new_volume_meta(struct volume_meta *meta, uint64_t block);

/* autoextend.c: the --autoextend-* options of pool create and pool set. */
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

struct autoextend;
int autoextend_option(int opt, const char *arg, struct autoextend_args *args);
bool autoextend_given(const struct autoextend_args *args);
/*
 * The given options onto a policy: 0, or EXIT_USAGE after a one-line
 * error naming the pool and the cause (a leaves unchanged).
 */
int autoextend_apply(const char *pool, const struct autoextend_args *args,
		     struct autoextend *a);
/* EXIT_REFUSED (said why) when the maximum is below the host's size. */
int autoextend_check_host(const char *pool, int dirfd, const struct autoextend *a);
void autoextend_threshold_str(char *buf, size_t len, const struct autoextend *a, bool bytes);
void autoextend_step_str(char *buf, size_t len, const struct autoextend *a, bool bytes);
/* One line: "autoextend when ... by ..., up to ...; command: ..." */
void autoextend_describe(char *buf, size_t len, const struct autoextend *a);
int cmd_pool_set(int argc, char **argv);
/* monitor.c */
int cmd_monitor(int argc, char **argv);

#endif
