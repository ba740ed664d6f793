/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What every layer of the tool uses: its messages, exit codes, sizes,
 * names, ids and child programs (util.c).  The layers, each including
 * only the headers of its own and lower ones (tests/host/tool-layers.sh):
 *
 *   commands/  the commands, main.c and their output
 *   policy/    autoextend by subvol monitor, LVM inside and under pools
 *   devices/   device-mapper and block devices: activation
 *   model/     pools, volumes, their metadata, images and streams
 */
#ifndef SUBVOL_MODEL_UTIL_H
#define SUBVOL_MODEL_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit codes: 0 done, 1 refused or failed, 2 usage error. */
#define EXIT_REFUSED	1
#define EXIT_USAGE	2

extern const char *progname;
extern bool verbose;
extern int verbosity;	/* -v once: what is done; twice: libdevmapper's debug too */
/* The command being run (main.c sets it), for usage_hint; NULL before. */
extern const char *running_command;
void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Set (by subvol monitor): errmsg's lines go there, not to stderr. */
extern void (*errmsg_sink)(const char *msg);
void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "Try 'subvol CMD --help'." for the running command, after a usage error. */
void usage_hint(void);
#define SIZE_INVALID	(-1)
#define SIZE_TOO_LARGE	(-2)
int parse_size(const char *s, uint64_t *bytes);
bool size_round_up(uint64_t *size, uint64_t block, uint64_t max);
void format_size(char *buf, size_t len, uint64_t bytes);
void format_size_in(char *buf, size_t len, uint64_t bytes, char unit, bool suffix);
/* Pool and volume names: letters, digits, +_.-; no leading - or . */
#define SUBVOL_NAME_MAX		64
bool valid_name(const char *name);
#define SUBVOL_ID_LEN		32	/* hex digits of a 128-bit id */
void new_id(char id[SUBVOL_ID_LEN + 1]);
int confirm(const char *question);
int run_program(const char *const argv[], bool quiet);
int program_capture(const char *const argv[], bool errors, char *out, size_t len);
int program_capture_all(const char *const argv[], char *out, size_t len);
void progress_line(const char *what, const char *action, uint64_t done,
		   uint64_t total, bool final);
double now_seconds(void);

#endif
