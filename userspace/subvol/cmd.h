/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the commands share: help and usage errors (main.c). */
#ifndef SUBVOL_CMD_H
#define SUBVOL_CMD_H

#include <linux/dm-subvol.h>
#include <stdint.h>

/* Print the command's usage on stdout; returns 0. */
int command_help(const char *cmd);
/*
 * "subvol CMD: <reason>" and a pointer to --help on stderr; returns
 * EXIT_USAGE.  fmt NULL: getopt has said what was wrong already.
 */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* cmd-volume.c: the policy options of create, for set too. */
struct volume_meta;
int parse_policy(const char *cmd, int opt, const char *arg, struct volume_meta *m);
/* Usage errors (EXIT_USAGE) for policies that cannot go together. */
int check_policies(const char *cmd, const struct volume_meta *m, uint64_t block);
/* Size rounded up to whole host blocks (said so), a new id, kind, time. */
void new_volume_meta(struct volume_meta *meta, uint64_t block);

#endif
