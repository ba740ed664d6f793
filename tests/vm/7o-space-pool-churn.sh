#!/bin/bash
# A write into holes uses a promise that the pool's claim (its reserve
# file) backs.  While the host has room beyond the claim, the write takes
# its blocks from that room, and the pool gives the claim it no longer
# needs back to the host later, in chunks, off the I/O path: 64 direct
# writes of 1 MiB do not truncate and fallocate the reserve file once
# each (issue 12: that churn cost a third of the direct-write
# throughput).  When the host has no room beyond the claim, each write
# still has its blocks released from the claim first, and every
# acknowledged byte lands.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 600
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G $HOST/filler
check "mkfs.xfs" mkfs.xfs -q $DEV
check "mount" mount $DEV $G
check_eq "the guest reserves from the device" attached "$(status_field vol $F_CLIENT)"

TR=/sys/kernel/tracing
mount -t tracefs nodev $TR 2>/dev/null
check "a kprobe on vfs_truncate" sh -c "echo 'p:subvol/truncate vfs_truncate' >>$TR/kprobe_events"
check "and on vfs_fallocate" sh -c "echo 'p:subvol/fallocate vfs_fallocate' >>$TR/kprobe_events"
echo 0 >$TR/tracing_on
echo 1 >$TR/events/subvol/enable
# hits NAME: the probe's hits so far.
hits() { awk -v p="$1" '$1 == p { print $2 }' $TR/kprobe_profile; }

dd if=/dev/urandom of=/tmp/source bs=1M count=64 status=none
sync
sleep 2
t0=$(hits truncate) f0=$(hits fallocate)
check "64 direct writes of 1 MiB into holes" \
	dd if=/tmp/source of=$G/a bs=1M oflag=direct status=none
truncates=$(($(hits truncate) - t0)) fallocates=$(($(hits fallocate) - f0))
echo "# 64 MiB in 1 MiB direct writes: $truncates truncates, $fallocates fallocates of the host"
check "fewer than one truncate of the reserve file per 4 writes" test "$truncates" -lt 16
check "fewer than one fallocate of the reserve file per 4 writes" test "$fallocates" -lt 16
check_eq "the data is there" "$(sha /tmp/source)" "$(sha $G/a)"

# No room on the host beyond the claim: the writes take their blocks
# from it, released just before they go.
sync
dd if=/dev/zero of=$HOST/filler/f bs=1M status=none 2>/dev/null
sync
echo "# host free after the filler: $(($(free_bytes $HOST) >> 10)) KiB"
t0=$(hits truncate)
kmsg_mark
dd if=/tmp/source of=$G/b bs=1M oflag=direct status=none 2>/tmp/b.err
written=$(stat -c %s $G/b)
echo "# the guest wrote $((written >> 20)) MiB on the full host; dd: $(cat /tmp/b.err)"
check "the guest wrote on the full host, from its promises" test "$written" -gt 0
check "those writes released claim for themselves" test $(($(hits truncate) - t0)) -gt 0
check_eq "no write reached the host uncovered" 0 "$(status_field vol $F_UNCOVERED)"
echo 0 >$TR/events/subvol/enable
echo >$TR/kprobe_events
check "umount" umount $G
no_accounting_errors vol
check "xfs_repair -n is clean" xfs_repair -n $DEV
check "mount again" mount $DEV $G
check_eq "every acknowledged byte is there" "$written" "$(stat -c %s $G/b)"
check_eq "and reads back as written" "$(sha /tmp/source "$written")" "$(sha $G/b)"
check_eq "no kernel I/O error or shutdown" "" "$(kernel_errors)"
check "umount at the end" umount $G
dmsetup remove vol
finish
