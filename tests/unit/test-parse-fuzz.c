// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Random mutations of status and table lines for userspace/lib's parsers,
 * seeded: words dropped, repeated or swapped, numbers made extreme, bytes
 * changed, lines cut, into output buffers of every size.  No parse may
 * read or write out of bounds (tests/host/fuzz-receive.sh runs this with
 * ASan and UBSan too), a refusal always says why, and a table line that
 * parses must build back into one that parses to the same path and
 * features.
 *
 *   test-parse-fuzz [ITERATIONS [SEED]]     (default 100000, 1)
 */
#include "subvol-status.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define LINE_MAX_LEN	1024

static uint64_t state;

/* xorshift64*: the same sequence for a seed on every machine. */
static uint64_t rnd(void)
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return state * 2685821657736338717ULL;
}

static unsigned int below(unsigned int n)
{
	return rnd() % n;
}

static const char *const statuses[] = {
	"1 rw 8 2097152 20480 819200",
	"1 ro 8 16 0 -",
	"1 rw 8 2097152 131800 707024 full queue 131792 64 22056 64 73920 22120 3 attached low",
	"1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 7",
	"1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 0 -",
	"1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 0 running:2048/8192",
	"1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 0 done:8192",
	"1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 0 failed:28",
};

static const char *const tables[] = {
	"/srv/pool/vm.img",
	"/srv/pool/vm\\1 1 ignore_discard",
	"/p/v.img 4 guarantee:none no_space:queue no_space_timeout:30 low_water:2048",
	"/p/v.img 2 no_space:queue no_space_timeout:3600",
	"/p/v.img 1 low_water:18446744073709551615",
};

static const char *const words[] = {
	"0", "1", "-1", "-", "18446744073709551615", "18446744073709551616",
	"4294967295", "4294967296", "99999999999999999999999", "x", "", ":",
	"full", "none", "queue", "error", "attached", "low", "ok", "running:",
	"running:1/0", "running:9/3", "done:", "failed:-5", "ignore_discard",
	"guarantee:", "low_water:", "no_space_timeout:0", "no_space_timeout:3601",
	"no_space_timeout:4294967296", "rw", "ro", "4", "99",
};

/* One mutation of line, in place. */
static void mutate(char *line)
{
	size_t n = strlen(line), p, q, len;
	char tmp[LINE_MAX_LEN];
	const char *w;

	p = n ? below(n) : 0;
	switch (below(7)) {
	case 0:		/* a byte changed */
		if (n)
			line[p] = below(2) ? (char)below(256) : " :-/0123456789x"[below(15)];
		if (!line[p] && p < n)
			line[p] = ' ';
		break;
	case 1:		/* cut */
		line[p] = '\0';
		break;
	case 2:		/* a word inserted */
	case 3:
		w = words[below(sizeof(words) / sizeof(words[0]))];
		while (p && line[p - 1] != ' ')
			p--;
		if (n + strlen(w) + 2 >= LINE_MAX_LEN)
			break;
		snprintf(tmp, sizeof(tmp), "%.*s%s %s", (int)p, line, w, line + p);
		strcpy(line, tmp);
		break;
	case 4:		/* a word dropped */
		q = p;
		while (line[q] && line[q] != ' ')
			q++;
		while (line[q] == ' ')
			q++;
		while (p && line[p - 1] != ' ')
			p--;
		memmove(line + p, line + q, n - q + 1);
		break;
	case 5:		/* a stretch repeated */
		len = below(32) + 1;
		if (p + len > n)
			len = n - p;
		if (n + len + 1 >= LINE_MAX_LEN)
			break;
		memmove(line + p + len, line + p, n - p + 1);
		break;
	default:	/* spaces doubled, or a tab */
		if (n + 2 >= LINE_MAX_LEN)
			break;
		memmove(line + p + 1, line + p, n - p + 1);
		line[p] = below(2) ? ' ' : '\t';
		break;
	}
}

int main(int argc, char **argv)
{
	unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	unsigned long seed = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
	unsigned long i, st_ok = 0, st_bad = 0, tb_ok = 0, tb_bad = 0, built = 0;
	unsigned long silent = 0, mismatched = 0;
	char line[LINE_MAX_LEN], out[LINE_MAX_LEN + 64], path[LINE_MAX_LEN], path2[LINE_MAX_LEN];
	struct subvol_features f, g;
	struct subvol_status st;
	char err[256], name[128];
	size_t errlen, pathlen;
	int k, n;

	state = seed * 0x9E3779B97F4A7C15ULL + 1;
	for (i = 0; i < iterations; i++) {
		/* An error buffer of 1 to 256 bytes: every refusal fits or is cut. */
		errlen = below(256) + 1;
		if (i % 2) {
			strcpy(line, statuses[below(sizeof(statuses) / sizeof(statuses[0]))]);
			for (n = below(4) + 1, k = 0; k < n; k++)
				mutate(line);
			err[0] = '\0';
			if (!subvol_status_parse(line, &st, err, errlen)) {
				st_ok++;
			} else {
				st_bad++;
				if (errlen > 1 && !err[0] && silent++ < 5)
					printf("# status refused without a reason: \"%s\"\n", line);
			}
			continue;
		}
		strcpy(line, tables[below(sizeof(tables) / sizeof(tables[0]))]);
		for (n = below(4) + 1, k = 0; k < n; k++)
			mutate(line);
		pathlen = below(2) ? sizeof(path) : below(64) + 1;
		err[0] = '\0';
		if (subvol_table_parse(line, path, pathlen, &f, err, errlen)) {
			tb_bad++;
			if (errlen > 1 && !err[0] && silent++ < 5)
				printf("# table refused without a reason: \"%s\"\n", line);
			continue;
		}
		tb_ok++;
		/* What parses must build back to itself (if it can be built). */
		if (path[0] != '/' || subvol_table_build(out, sizeof(out), path, &f) < 0)
			continue;
		built++;
		if (subvol_table_parse(out, path2, sizeof(path2), &g, err, sizeof(err)) ||
		    strcmp(path, path2) || memcmp(&f, &g, sizeof(f))) {
			if (mismatched++ < 5)
				printf("# \"%s\" parsed, built \"%s\", which parses otherwise\n",
				       line, out);
		}
	}
	printf("# %lu mutated lines, seed %lu: status %lu parsed, %lu refused; table %lu parsed (%lu built back), %lu refused\n",
	       iterations, seed, st_ok, st_bad, tb_ok, built, tb_bad);
	snprintf(name, sizeof(name), "%lu status and table mutations: no crash", iterations);
	CHECK(name, 1);
	CHECK("some mutated lines parse, some are refused",
	      st_ok && st_bad && tb_ok && tb_bad && built);
	CHECK("every refusal says why", silent == 0);
	CHECK("every table line that parses builds back to the same path and features",
	      mismatched == 0);
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
