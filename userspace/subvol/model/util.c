// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Messages, sizes, names, ids and child programs for the subvol tool.
 */
#include "model/util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *progname = "subvol";
bool verbose;
int verbosity;

const char *running_command;

void (*errmsg_sink)(const char *msg);

/* One line on stderr: "subvol: <what>: <why>"; or to errmsg_sink. */
void errmsg(const char *fmt, ...)
{
	va_list ap;

	if (errmsg_sink) {
		char msg[1024];

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		errmsg_sink(msg);
		return;
	}
	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* What the tool does, on stderr with --verbose. */
void trace(const char *fmt, ...)
{
	va_list ap;

	if (!verbose)
		return;
	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void usage_hint(void)
{
	if (errmsg_sink)	/* subvol monitor's log: no one to try anything */
		return;
	if (running_command)
		fprintf(stderr, "Try '%s %s --help'.\n", progname, running_command);
	else
		fprintf(stderr, "Try '%s --help'.\n", progname);
}

/*
 * "10G", "512M", "4096", "1.5T": bytes, with binary suffixes K M G T P E
 * in either case (an optional "iB" or "B" after them, also in either
 * case) or "s" for 512-byte sectors.  0, or SIZE_INVALID, or SIZE_TOO_LARGE
 * when it does not fit in 64 bits.
 */
int parse_size(const char *s, uint64_t *bytes)
{
	static const char units[] = "KMGTPE";
	unsigned long long whole;
	uint64_t frac = 0, frac_div = 1, mult = 1, v, add;
	const char *p = s, *u;
	char *end;

	if (!isdigit((unsigned char)*p))
		return SIZE_INVALID;
	errno = 0;
	whole = strtoull(p, &end, 10);
	if (errno == ERANGE)
		return SIZE_TOO_LARGE;
	if (errno)
		return SIZE_INVALID;
	p = end;
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++) {
			if (frac_div >= 1000000000ULL)
				return SIZE_INVALID;
			frac = frac * 10 + (*p - '0');
			frac_div *= 10;
		}
	}
	if (*p == 's' && !p[1]) {
		mult = 512;
		p++;
	} else if (*p) {
		u = strchr(units, toupper((unsigned char)*p));
		if (!u)
			return SIZE_INVALID;
		mult = 1ULL << (10 * (u - units + 1));
		p++;
		if (!strcasecmp(p, "iB") || !strcasecmp(p, "B"))
			p += strlen(p);
	}
	if (*p)
		return SIZE_INVALID;
	if (frac && mult == 1)
		return SIZE_INVALID;	/* no fractions of a byte */
	if (whole > UINT64_MAX / mult)
		return SIZE_TOO_LARGE;
	v = whole * mult;
	add = frac * (mult / frac_div) + frac * (mult % frac_div) / frac_div;
	if (v + add < v)
		return SIZE_TOO_LARGE;
	*bytes = v + add;
	return 0;
}

/*
 * @size rounded up to whole @block bytes, if that is at most @max; false
 * when it is not (rounding 2^64 - 1 up must not wrap to 0).
 */
bool size_round_up(uint64_t *size, uint64_t block, uint64_t max)
{
	uint64_t rem = *size % block;

	if (*size > max || (rem && max - *size < block - rem))
		return false;
	if (rem)
		*size += block - rem;
	return true;
}

/*
 * Human-readable, binary units, as lsblk prints them (util-linux's
 * size_to_human_string): "10.5G", "512M", "1G" for 1040M; one decimal,
 * rounded, left out when it is 0.
 */
void format_size(char *buf, size_t len, uint64_t bytes)
{
	static const char units[] = "BKMGTPE";
	uint64_t whole = bytes, frac = 0;
	int exp = 0;

	while (exp < 60 && bytes >= 1ULL << (exp + 10))
		exp += 10;
	if (exp) {
		whole = bytes >> exp;
		frac = bytes & ((1ULL << exp) - 1);
		/* Three digits, rounded to one: what lsblk does. */
		if (frac >= UINT64_MAX / 1000)
			frac = (frac / 1024) * 1000 / (1ULL << (exp - 10));
		else
			frac = frac * 1000 / (1ULL << exp);
		frac = (frac + 50) / 100;
		if (frac == 10) {
			whole++;
			frac = 0;
		}
	}
	if (frac)
		snprintf(buf, len, "%" PRIu64 ".%" PRIu64 "%c", whole, frac, units[exp / 10]);
	else
		snprintf(buf, len, "%" PRIu64 "%c", whole, units[exp / 10]);
}

/*
 * In one unit, as lvs --units prints sizes: b bytes, s sectors (whole
 * numbers), k m g t p e powers of 1024 and K M G T P E of 1000 with two
 * decimals ("1.02g"); the unit after the number unless !suffix.
 */
void format_size_in(char *buf, size_t len, uint64_t bytes, char unit, bool suffix)
{
	static const char units[] = "kmgtpe";
	const char *u = strchr(units, tolower((unsigned char)unit));
	double div = 1;
	int i;

	if (unit == 'b' || unit == 'B') {
		snprintf(buf, len, "%" PRIu64 "%s", bytes, suffix ? "B" : "");
		return;
	}
	if (unit == 's' || unit == 'S') {
		snprintf(buf, len, "%" PRIu64 "%s", bytes >> 9, suffix ? "s" : "");
		return;
	}
	for (i = 0; u && i <= u - units; i++)
		div *= isupper((unsigned char)unit) ? 1000 : 1024;
	snprintf(buf, len, "%.2f%.*s", bytes / div, suffix ? 1 : 0, &unit);
}

/*
 * Pool and volume names: letters, digits and "+_.-", at most
 * SUBVOL_NAME_MAX, not starting with "-" or "." (LVM's rule, so that a
 * name never reads as an option or a hidden file).
 */
bool valid_name(const char *name)
{
	size_t n = strlen(name), i;

	if (!n || n > SUBVOL_NAME_MAX || name[0] == '-' || name[0] == '.')
		return false;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("+_.-", name[i]))
			return false;
	return true;
}

/* A random 128-bit id as 32 hex digits. */
void new_id(char id[SUBVOL_ID_LEN + 1])
{
	unsigned char raw[SUBVOL_ID_LEN / 2];
	size_t got = 0, i;
	ssize_t r;

	while (got < sizeof(raw)) {
		r = getrandom(raw + got, sizeof(raw) - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			/* No getrandom: urandom is as good for ids. */
			int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

			if (fd < 0 || read(fd, raw, sizeof(raw)) != (ssize_t)sizeof(raw)) {
				errmsg("cannot read random bytes for an id: %s",
				       strerror(errno));
				exit(EXIT_REFUSED);
			}
			close(fd);
			break;
		}
		got += r;
	}
	for (i = 0; i < sizeof(raw); i++)
		sprintf(id + 2 * i, "%02x", raw[i]);
}

/* Ask on the terminal; non-zero for "y" or "yes". */
int confirm(const char *question)
{
	char answer[16];

	if (!isatty(STDIN_FILENO))
		return 0;
	fprintf(stderr, "%s [y/N] ", question);
	if (!fgets(answer, sizeof(answer), stdin))
		return 0;
	return !strcasecmp(answer, "y\n") || !strcasecmp(answer, "yes\n");
}

/*
 * Run a program and wait; returns its exit status, or -1 if it could not
 * run or was killed.  quiet: its stdout and stderr go to /dev/null.
 */
int run_program(const char *const argv[], bool quiet)
{
	pid_t pid;
	int status, fd;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (quiet) {
			fd = open("/dev/null", O_WRONLY);
			if (fd >= 0) {
				dup2(fd, STDOUT_FILENO);
				dup2(fd, STDERR_FILENO);
			}
		}
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "%s: cannot run %s: %s\n", progname, argv[0],
			strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Run a program with its standard output (@out_fd STDOUT_FILENO), its
 * standard error (STDERR_FILENO) or both (-1) on a pipe, and read all it
 * writes there, as far as it fits in out (the rest is read and dropped, so
 * that it never blocks on a full pipe).  With one of the two on the pipe,
 * the other goes to /dev/null unless verbose.  Returns its exit status
 * (127: it could not run), or -1.
 */
static int program_read(const char *const argv[], int out_fd, char *out,
			size_t len)
{
	int pipefd[2], status, fd;
	ssize_t n, got = 0;
	char sink[512];
	pid_t pid;

	out[0] = '\0';
	fflush(NULL);
	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	if (pid == 0) {
		if (out_fd != STDERR_FILENO)
			dup2(pipefd[1], STDOUT_FILENO);
		if (out_fd != STDOUT_FILENO)
			dup2(pipefd[1], STDERR_FILENO);
		if (out_fd >= 0 && !verbose) {
			fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, out_fd == STDOUT_FILENO ?
					 STDERR_FILENO : STDOUT_FILENO);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(pipefd[1]);
	for (;;) {
		if (got + 1 < (ssize_t)len)
			n = read(pipefd[0], out + got, len - 1 - got);
		else
			n = read(pipefd[0], sink, sizeof(sink));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (got + 1 < (ssize_t)len)
			got += n;
	}
	out[got] = '\0';
	close(pipefd[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * Run a program and read all it writes on its standard output and error,
 * as far as it fits in out.  Returns its exit status (127: it could not
 * run), or -1.
 */
int program_capture_all(const char *const argv[], char *out, size_t len)
{
	int status = program_read(argv, -1, out, len);

	if (verbose && out[0])
		fprintf(stderr, "%s", out);
	return status;
}

/*
 * Run a program and read the first line of its standard output (or, with
 * errors, of its standard error) into out; the other one goes to
 * /dev/null unless verbose.  Returns its exit status, or -1.
 */
int program_capture(const char *const argv[], bool errors, char *out, size_t len)
{
	int status = program_read(argv, errors ? STDERR_FILENO : STDOUT_FILENO,
				  out, len);

	out[strcspn(out, "\n")] = '\0';
	return status;
}

/*
 * The progress line of send, receive and snapshot on a terminal, one form
 * for all: "\rWHAT: ACTION, 6% of 18 MiB" (the snapshot's form, which
 * tests/vm/89 reads), ended by a newline when final.  Rates and times
 * are pv(1)'s (send | pv | receive).
 */
void progress_line(const char *what, const char *action, uint64_t done,
		   uint64_t total, bool final)
{
	fprintf(stderr, "\r%s: %s, %3.0f%% of %" PRIu64 " MiB%s", what, action,
		total ? 100.0 * done / total : 100.0, (total + (1 << 20) - 1) >> 20,
		final ? "\n" : "  ");
	fflush(stderr);
}

double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}
