#!/bin/bash
# Host quotas: the pool's claim is charged to root, whom XFS does not
# limit, and the backing file's writes to its user, group and project.
# A quota limit on any of those would fail writes the claim backs
# (EDQUOT), so guarantee:full refuses a backing file that a host quota
# limits, naming which, and guarantee:none still takes it.  (Review item
# 12: the table was accepted, and the writes over the limit failed.)
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

mkfs.xfs -q -f "$SCRATCH_DEV"
mkdir -p "$HOST"
mount -o usrquota,prjquota "$SCRATCH_DEV" "$HOST"
TABLE="0 $((64 * SECTORS_PER_MIB)) subvol"

# expect_refusal NAME MESSAGE FILE: a guarantee:full table on FILE is
# refused with MESSAGE in the kernel log.
expect_refusal() {
	kmsg_mark
	if dmsetup create q --table "$TABLE $3" 2>/dev/null; then
		check_eq "$1: refused" refused accepted
		dmsetup remove q
		return
	fi
	check "$1: kernel says '$2'" grep -qF "subvol: $2" <<<"$(kmsg_since_mark)"
}

backing "$HOST/root.img" 64
check "a root-owned file under enforced user quotas: accepted" \
	dmsetup create q --table "$TABLE $HOST/root.img"
dmsetup remove q

backing "$HOST/user.img" 64
chown 1000:1000 "$HOST/user.img"
expect_refusal "a file of a user under enforced quotas" \
	"Host quota limits the backing file's user: use guarantee:none" "$HOST/user.img"
check "with guarantee:none it is accepted" \
	dmsetup create q --table "$TABLE $HOST/user.img 1 guarantee:none"
dmsetup remove q

mkdir -p "$HOST/proj"
backing "$HOST/proj/p.img" 64
check "give it a project" xfs_quota -x -c "project -s -p $HOST/proj 42" "$HOST"
expect_refusal "a file of a project under enforced quotas" \
	"Host quota limits the backing file's project: use guarantee:none" "$HOST/proj/p.img"

# With the user's quota off (accounting only), the table is accepted.
check "turn off enforcement of user quotas" xfs_quota -x -c "disable -u" "$HOST"
check "the user's file is accepted then" dmsetup create q --table "$TABLE $HOST/user.img"
dmsetup remove q
umount "$HOST"
finish
