#!/bin/bash
# The guest XFS keeps buffered data that copy-on-write preallocation maps
# when fallocate(FALLOC_FL_UNSHARE_RANGE) unshares a file's last shared
# block.  Debian's 6.1 XFS cancels the inode's COW fork there, dirty pages
# or not, and writeback then drops those pages silently: fstests' fsx
# (generic/075) read zeros after an unshare.  patches/xfs/6.1/0007 backports
# the upstream fix; Debian's stock 6.1 xfs.ko fails this test, on any device.
# Debian's 6.12 has the fix (its series has no such patch).
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
DEV=/dev/mapper/vol
GUEST=/mnt/guest
F=$GUEST/f
mkdir -p $GUEST
check "mkfs.xfs on the device" mkfs.xfs -q $DEV || { finish; exit; }
check "mount" mount $DEV $GUEST || { finish; exit; }
kmsg_mark

# bytes_at OFFSET: four bytes of $F at OFFSET, as od prints them.
bytes_at() { od -An -tx1 -j "$1" -N 4 "$F" | tr -d ' '; }

# Blocks 0 and 16 written and shared with blocks 256 and 512 of the same
# file; then a copy-on-write of block 0, which preallocates COW blocks for
# [0, 32) (the default cowextsize), and a buffered write to block 5, a hole
# in the data fork that the COW fork now maps.
check "write blocks 0 and 16" xfs_io -f -c "pwrite -q -S 0x11 0 4k" \
	-c "pwrite -q -S 0x22 64k 4k" -c fsync "$F"
check "share them with blocks 256 and 512" \
	xfs_io -c "reflink $F 0 1m 4k" -c "reflink $F 64k 2m 4k" "$F"
check "overwrite shared block 0 (copy-on-write)" \
	xfs_io -c "pwrite -q -S 0x33 0 4k" -c fsync "$F"
check "buffered write to block 5, left dirty" xfs_io -c "pwrite -q -S 0x55 20k 4k" "$F"
check_eq "block 5 reads back from the page cache" 55555555 "$(bytes_at 20480)"

# Unsharing block 512 leaves no shared block in the file.
check "unshare block 512 (the last shared block)" xfs_io -c "funshare 2m 4k" "$F"
check "sync" sync
echo 3 >/proc/sys/vm/drop_caches
check_eq "block 5 is on the disk after unshare and sync" 55555555 "$(bytes_at 20480)"
check_eq "block 0 holds its copy-on-write data" 33333333 "$(bytes_at 0)"
check_eq "block 256 keeps block 0's old data" 11111111 "$(bytes_at $((1 << 20)))"
check_eq "block 512 holds block 16's data" 22222222 "$(bytes_at $((2 << 20)))"

check "umount" umount $GUEST
check "mount again" mount $DEV $GUEST
check_eq "block 5 is there after a remount" 55555555 "$(bytes_at 20480)"
check "umount at the end" umount $GUEST
check "xfs_repair -n is clean" xfs_repair -n $DEV
check_eq "no I/O error or shutdown in the kernel log" "" "$(kernel_errors)"
dmsetup remove vol
finish
