#!/bin/bash
# vm-run: --mem 256
# Memory pressure (issue 25, part 4): a VM with about as little memory as
# boots dirties four times its memory through two volumes at once, one
# with the guarantee and one without, while the first one's snapshot is
# being copied.  Writeback through the device to a file on the same
# machine is where the loop driver deadlocked (its host writes needed
# memory that only its own writeback could free); the target does its
# host I/O under memalloc_noio and from a WQ_MEM_RECLAIM workqueue.  No
# write may fail, no allocation failure may turn into an I/O error, no
# task may hang (the hung-task detector is set to 60 s here, and vm-run
# fails the run on its report), and every byte reads back.
#
# The memory is set by the second line (tests/run passes it to vm-run);
# scripts/torture-memory runs this test with other sizes and factors.
#
#   7q-memory-pressure.sh [FACTOR]   FACTOR (default 4): how many times the
#                                    guest's memory is written
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

factor=${1:-4}
mem=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
echo "# guest memory: $mem MiB (MemTotal); writing $factor times that"
echo 60 >/proc/sys/kernel/hung_task_timeout_secs

# Each volume takes half of the writing, in 8 MiB files, with room for
# its filesystem's own metadata.
files=$(((factor * mem / 2 + 7) / 8))
size=$((files * 8 + 256))
host_xfs
backing "$HOST/v1.img" $size
backing "$HOST/v2.img" $size
subvol_create v1 "$HOST/v1.img" $size
subvol_create v2 "$HOST/v2.img" $size guarantee:none
check_eq "v1 has the guarantee" full "$(status_field v1 $F_GUARANTEE)"
check_eq "v2 has none" none "$(status_field v2 $F_GUARANTEE)"
for v in v1 v2; do
	mkdir -p /mnt/$v
	check "mkfs.xfs $v" mkfs.xfs -q /dev/mapper/$v
	check "mount $v" mount /dev/mapper/$v /mnt/$v
done
check_eq "the space-aware guest reserves from v1" attached "$(status_field v1 $F_CLIENT)"
dd if=/dev/urandom of=/tmp/src bs=1M count=8 status=none
src=$(sha /tmp/src)

# What the snapshot must hold: a file written before it.
check "a file on v1 before the snapshot" dd if=/tmp/src of=/mnt/v1/before bs=1M conv=fsync status=none
# The copy goes at 16 MiB/s at most, so that it runs while the writers
# write.
copy_rate_mib 16
truncate -s ${size}M "$HOST/snap.img"
check "suspend v1" dmsetup suspend v1
check "snapshot_begin" dmsetup message v1 0 "snapshot_begin 7" 7<>"$HOST/snap.img"
check "resume v1" dmsetup resume v1

kmsg_mark
# writer VOL: FILES files of /tmp/src into VOL, buffered, then syncfs;
# the first failure's status and message go to /tmp/VOL.err.
writer() {
	local i
	for i in $(seq 1 "$files"); do
		dd if=/tmp/src of="/mnt/$1/f$i" bs=1M status=none 2>"/tmp/$1.err" ||
			{ echo "f$i: exit $?" >>"/tmp/$1.err"; return 1; }
	done
	sync -f "/mnt/$1/f1" 2>"/tmp/$1.err"
}
start=$SECONDS
writer v1 &
w1=$!
writer v2 &
w2=$!
wait $w1
s1=$?
wait $w2
s2=$?
secs=$((SECONDS - start))
written=$((2 * files * 8))
echo "# wrote $written MiB ($((written / mem)) x memory) through two volumes in $secs s; copy: $(status_field v1 $F_COPY)"
check_eq "v1's writer (guarantee) succeeded" "0 " "$s1 $(cat /tmp/v1.err)"
check_eq "v2's writer (no guarantee) succeeded" "0 " "$s2 $(cat /tmp/v2.err)"
check "it dirtied $factor times the memory" test $written -ge $((factor * mem))
check_eq "no allocation failure logged" "" "$(kmsg_since_mark | grep -a 'allocation failure' || true)"
check_eq "no I/O error, no shutdown" "" "$(kernel_errors)"
grep -E '^(MemFree|Dirty|Writeback):' /proc/meminfo | sed 's/^/# /'

# The copy ends, and the snapshot holds the file written before it.
check_eq "the snapshot copy is done" "done" "$(wait_copy v1 300)"
check "snapshot_end" dmsetup message v1 0 snapshot_end

# Every byte back, from the devices, not the page cache.
for v in v1 v2; do
	check "umount $v" umount /mnt/$v
	check "xfs_repair -n $v" xfs_repair -n /dev/mapper/$v
	check "mount $v again" mount /dev/mapper/$v /mnt/$v
	bad=0
	for f in /mnt/$v/f*; do
		[ "$(sha "$f")" = "$src" ] || bad=$((bad + 1))
	done
	check_eq "every file on $v reads back" 0 $bad
done
no_accounting_errors v1
check_eq "no write reached the host uncovered on v1" 0 "$(status_field v1 $F_UNCOVERED)"
for v in v1 v2; do
	umount /mnt/$v
	dmsetup remove $v
done
# Writable: the guest was frozen at the suspend, and its log is replayed.
snapdev=$(losetup -f --show "$HOST/snap.img")
mkdir -p /mnt/snap
check "the snapshot mounts" mount -o ro,nouuid "$snapdev" /mnt/snap ||
	dmesg | tail -n 5 | sed 's/^/# /'
check_eq "it holds the file written before it" "$src" "$(sha /mnt/snap/before)"
check_eq "and none written after" "" "$(find /mnt/snap -name "f*")"
umount /mnt/snap
losetup -d "$snapdev"
nothing_left
finish
