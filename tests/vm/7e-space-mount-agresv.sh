#!/bin/bash
# A guest XFS whose per-AG metadata reservations the device cannot back
# does not mount read-write: XFS goes on without them on ENOSPC, and then
# meets ENOSPC or a shutdown on a btree split however much free space it
# reports (review item 13).  The mount fails with a message; a read-only
# mount works, and so does the read-write one once the host has space.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 400
backing "$HOST/img" 16384
subvol_create vol "$HOST/img" 16384
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G $HOST/filler
check "mkfs.xfs on a 16 GiB volume" mkfs.xfs -q $DEV
echo "# host free after mkfs: $(($(free_bytes $HOST) >> 20)) MiB"
# Leave the host 8 MiB, less than the reservations need (16 MiB for the
# free inode btrees, 0.1% of the guest; the refcount btrees' are backed
# only as blocks are shared).
dd if=/dev/zero of=$HOST/filler/f bs=1M count=$((($(free_bytes $HOST) >> 20) - 8)) status=none
echo "# host free: $(($(free_bytes $HOST) >> 20)) MiB"
kmsg_mark
check_fails "a read-write mount fails" mount $DEV $G
check "the kernel says why" sh -c "dmesg | grep -q 'cannot back the per-AG metadata reservations'"
check_eq "nothing stays promised" 0 "$(status_field vol $F_PROMISED)"
no_accounting_errors vol
check "a read-only mount works" mount -o ro $DEV $G
check_fails "a remount read-write fails" mount -o remount,rw $G
check "and leaves it read-only" grep -q " $G xfs ro" /proc/mounts
check "umount" umount $G
rm -f $HOST/filler/f
sleep 2
check "with the host's space back, a read-write mount works" mount $DEV $G
check "a file can be written" dd if=/dev/zero of=$G/f bs=1M count=4 conv=fsync status=none
check "umount at the end" umount $G
check "xfs_repair -n is clean" xfs_repair -n $DEV
no_accounting_errors vol
dmsetup remove vol
finish
