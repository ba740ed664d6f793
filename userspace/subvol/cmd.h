/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the commands share: help and usage errors (main.c). */
#ifndef SUBVOL_CMD_H
#define SUBVOL_CMD_H

#include <linux/dm-subvol.h>

/* Print the command's usage on stdout; returns 0. */
int command_help(const char *cmd);
/*
 * "subvol CMD: <reason>" and a pointer to --help on stderr; returns
 * EXIT_USAGE.  fmt NULL: getopt has said what was wrong already.
 */
int usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
