// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Unit tests of userspace/lib/subvol-status.c: the status and table lines
 * as the kernel prints them, malformed ones, and round trips of paths.
 */
#include "subvol-status.h"

#include <stdio.h>
#include <string.h>

#include "check.h"

static void test_status(void)
{
	struct subvol_status st;
	char err[256];

	CHECK("status: a kernel line parses",
	      subvol_status_parse("1 rw 8 2097152 20480 819200", &st, err, sizeof(err)) == 0);
	CHECK("status: writable", st.writable);
	CHECK("status: block", st.block_sectors == 8);
	CHECK("status: virtual", st.virtual_sectors == 2097152);
	CHECK("status: backed", st.backed_sectors == 20480);
	CHECK("status: host free", st.host_free_known && st.host_free_sectors == 819200);

	CHECK("status: read-only, unknown host free",
	      subvol_status_parse("1 ro 8 16 0 -", &st, err, sizeof(err)) == 0 &&
	      !st.writable && !st.host_free_known);
	CHECK("status: a 1.0.0 line has no space fields",
	      subvol_status_parse("1 rw 8 16 8 4", &st, err, sizeof(err)) == 0 &&
	      !st.has_space);
	CHECK("status: a 1.1.0 line parses",
	      subvol_status_parse("1 rw 8 2097152 131800 707024 full queue 131792 64 22056 64 73920 22120 3 attached low",
				  &st, err, sizeof(err)) == 0 &&
	      st.has_space && st.guarantee && st.no_space_queue &&
	      st.mapped_sectors == 131792 && st.shared_sectors == 64 &&
	      st.promised_sectors == 22056 && st.cow_reserve_sectors == 64 &&
	      st.pool_claimed_sectors == 73920 && st.pool_committed_sectors == 22120 &&
	      st.uncovered_sectors == 3 && st.client_attached && st.low_water_hit);
	CHECK("status: a 1.1.0 line has no accounting error count",
	      !st.has_accounting_errors && st.accounting_errors == 0);
	CHECK("status: a 1.2.0 line parses, with its accounting error count",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 7",
				  &st, err, sizeof(err)) == 0 &&
	      st.has_space && st.has_accounting_errors && st.accounting_errors == 7);
	CHECK("status: non-number accounting error count refused",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok x",
				  &st, err, sizeof(err)) == -1 &&
	      strstr(err, "accounting error count \"x\""));
	CHECK("status: words of the other value",
	      subvol_status_parse("1 ro 8 16 8 4 none error 0 0 0 0 0 0 0 none ok", &st, err,
				  sizeof(err)) == 0 &&
	      !st.guarantee && !st.no_space_queue && !st.client_attached && !st.low_water_hit);
	CHECK("status: a 1.2.0 line has no snapshot copy field",
	      !st.has_snapshot_copy && st.copy == SUBVOL_COPY_NONE);
	CHECK("status: a 1.4.0 line without a copy",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 0 -",
				  &st, err, sizeof(err)) == 0 &&
	      st.has_snapshot_copy && st.copy == SUBVOL_COPY_NONE);
	CHECK("status: a copy under way",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 0 2048/524288",
				  &st, err, sizeof(err)) == 0 &&
	      st.copy == SUBVOL_COPY_RUNNING && st.copy_copied_sectors == 2048 &&
	      st.copy_total_sectors == 524288);
	CHECK("status: a copy done",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 0 done",
				  &st, err, sizeof(err)) == 0 && st.copy == SUBVOL_COPY_DONE);
	CHECK("status: a copy failed, with its errno",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 0 failed:28",
				  &st, err, sizeof(err)) == 0 &&
	      st.copy == SUBVOL_COPY_FAILED && st.copy_errno == 28);
	CHECK("status: a copy field not understood refused",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 0 12/x",
				  &st, err, sizeof(err)) == -1 &&
	      strstr(err, "snapshot copy \"12/x\""));
	CHECK("status: fields appended later are ignored",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0 0 0 0 0 0 0 none ok 99 - extra more",
				  &st, err, sizeof(err)) == 0 &&
	      st.host_free_sectors == 4 && st.has_space);
	CHECK("status: part of the space fields refused",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0", &st, err, sizeof(err)) == -1 &&
	      strstr(err, "9 fields"));
	CHECK("status: unknown guarantee refused, naming the field",
	      subvol_status_parse("1 rw 8 16 8 4 most error 0 0 0 0 0 0 0 none ok", &st, err,
				  sizeof(err)) == -1 &&
	      strstr(err, "guarantee \"most\""));
	CHECK("status: non-number space field refused",
	      subvol_status_parse("1 rw 8 16 8 4 full error 0 0 x 0 0 0 0 none ok", &st, err,
				  sizeof(err)) == -1 &&
	      strstr(err, "promised size \"x\""));

	CHECK("status: other format refused",
	      subvol_status_parse("2 rw 8 16 8 4", &st, err, sizeof(err)) == -1 &&
	      strstr(err, "format 2"));
	CHECK("status: missing fields refused",
	      subvol_status_parse("1 rw 8 16", &st, err, sizeof(err)) == -1 &&
	      strstr(err, "4 fields"));
	CHECK("status: empty refused",
	      subvol_status_parse("", &st, err, sizeof(err)) == -1 &&
	      strstr(err, "no format"));
	CHECK("status: unknown mode refused",
	      subvol_status_parse("1 rx 8 16 8 4", &st, err, sizeof(err)) == -1 &&
	      strstr(err, "mode \"rx\""));
	CHECK("status: non-number refused, naming the field",
	      subvol_status_parse("1 rw 8 16 -3 4", &st, err, sizeof(err)) == -1 &&
	      strstr(err, "backed size \"-3\""));
	CHECK("status: overflow refused",
	      subvol_status_parse("1 rw 8 99999999999999999999 0 4", &st, err,
				  sizeof(err)) == -1);
}

static void test_table(void)
{
	char out[256], path[256], err[256];
	struct subvol_features f = { .ignore_discard = true }, g;
	int len;

	len = subvol_table_build(out, sizeof(out), "/srv/pool/vm\\1", &f);
	CHECK("table: path as is, feature added",
	      len > 0 && !strcmp(out, "/srv/pool/vm\\1 1 ignore_discard"));
	CHECK("table: parses back",
	      subvol_table_parse(out, path, sizeof(path), &g, err, sizeof(err)) == 0 &&
	      !strcmp(path, "/srv/pool/vm\\1") && g.ignore_discard && !g.no_guarantee);
	f = (struct subvol_features){ .no_guarantee = true, .no_space_queue = true,
				      .no_space_timeout = 30, .low_water_sectors = 2048 };
	len = subvol_table_build(out, sizeof(out), "/p/v.img", &f);
	CHECK("table: every feature named",
	      len > 0 && !strcmp(out, "/p/v.img 4 guarantee:none no_space:queue "
				 "no_space_timeout:30 low_water:2048"));
	CHECK("table: every feature parses back",
	      subvol_table_parse(out, path, sizeof(path), &g, err, sizeof(err)) == 0 &&
	      !memcmp(&f, &g, sizeof(f)));
	f = (struct subvol_features){ .no_space_timeout = 30 };
	CHECK("table: timeout without no_space:queue refused",
	      subvol_table_build(out, sizeof(out), "/p/v", &f) == -1);
	f = (struct subvol_features){ .no_space_queue = true, .no_space_timeout = 3601 };
	CHECK("table: timeout out of range refused",
	      subvol_table_build(out, sizeof(out), "/p/v", &f) == -1);
	f = (struct subvol_features){ 0 };
	CHECK("table: path with a space refused",
	      subvol_table_build(out, sizeof(out), "/srv/pool/vm 1", &f) == -1);
	CHECK("table: path with a tab refused",
	      subvol_table_build(out, sizeof(out), "/srv/pool/vm\t1", &f) == -1);
	CHECK("table: plain path without features",
	      subvol_table_parse("/a/b", path, sizeof(path), &g, err, sizeof(err)) == 0 &&
	      !strcmp(path, "/a/b") && !g.ignore_discard);
	CHECK("table: relative path refused",
	      subvol_table_build(out, sizeof(out), "a/b", &f) == -1);
	CHECK("table: output too small refused",
	      subvol_table_build(out, 5, "/a/b/c", &f) == -1);
	CHECK("table: unknown feature refused",
	      subvol_table_parse("/a 1 frob", path, sizeof(path), &g, err, sizeof(err)) == -1 &&
	      strstr(err, "frob"));
	CHECK("table: bad feature value refused",
	      subvol_table_parse("/a 1 guarantee:most", path, sizeof(path), &g, err,
				 sizeof(err)) == -1 && strstr(err, "guarantee:most"));
	CHECK("table: short feature list refused",
	      subvol_table_parse("/a 2 ignore_discard", path, sizeof(path), &g, err,
				 sizeof(err)) == -1 && strstr(err, "2 features announced"));
	CHECK("table: trailing words refused",
	      subvol_table_parse("/a 1 ignore_discard x", path, sizeof(path), &g, err,
				 sizeof(err)) == -1);
	CHECK("table: path too long refused",
	      subvol_table_parse("/abcdef", path, 4, &g, err, sizeof(err)) == -1);
}

int main(void)
{
	test_status();
	test_table();
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
