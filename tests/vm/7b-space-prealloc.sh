#!/bin/bash
# The guest's speculative preallocation beyond EOF is reserved from the
# device like any delayed allocation, and XFS sizes it from its own free
# space, which on a thin device is the whole address space (review item
# 17: it would pin host space that other volumes need).  A log appended
# by open-append-close, the pattern for which XFS keeps preallocation
# past close, on one 4 GiB volume of a host with about 320 MiB free: its
# promise falls back to its base once written back, and the other volume
# gets the rest of the host.  (XFS also retries a delayed allocation
# without preallocation when the device refuses it.)
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 700
mkdir -p /mnt/a /mnt/b
for v in a b; do
	backing "$HOST/$v.img" 4096
	subvol_create $v "$HOST/$v.img" 4096
	mkfs.xfs -q /dev/mapper/$v
	mount /dev/mapper/$v /mnt/$v
done
kmsg_mark
free0=$(free_bytes $HOST)
echo "# host free: $((free0 >> 20)) MiB"

# A log that is appended by open-append-close, as syslog or an NFS server
# writes: XFS keeps the preallocation after the second close.
for _ in $(seq 40); do
	dd if=/dev/zero of=/mnt/a/log bs=1M count=4 oflag=append conv=notrunc status=none
done
a_dirty=$(status_field a $F_PROMISED)
echo "# a: promised before sync $((a_dirty / 2048)) MiB"
sync
a_promised=$(status_field a $F_PROMISED)
a_base=$(($(status_field b $F_PROMISED)))
echo "# a: 160 MiB appended; promised $((a_promised / 2048)) MiB (b, untouched: $((a_base / 2048)) MiB)"

# b fills the rest of the host.
fill /mnt/b /dev/zero /tmp/fill.err
b_written=$(bytes_in /mnt/b)
echo "# b wrote $((b_written >> 20)) MiB before ENOSPC"
check "b's write(2) ended with ENOSPC" grep -q "No space left on device" /tmp/fill.err
check "a's preallocation held at most 32 MiB beyond its own base" \
	test $((a_promised - a_base)) -le $((32 * SECTORS_PER_MIB))
check "b wrote all but 200 MiB of what the host had free after a's log" \
	test $((b_written >> 20)) -ge $(((free0 >> 20) - 160 - 200))
for v in a b; do
	check_eq "$v: no write reached the host without a promise" 0 "$(status_field $v $F_UNCOVERED)"
	no_accounting_errors $v
	umount /mnt/$v
	dmsetup remove $v
done
check_eq "no I/O error in the kernel log" "" "$(kernel_errors)"
finish
