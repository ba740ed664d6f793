#!/bin/bash
# The patched guest XFS reserves from the device in per-CPU batches
# (review item 32: every free-block counter change took the volume's and
# the pool's locks).  Small changes are served from a CPU's grant: a
# thousand file creations call the device's reserve and release a few
# times, not twice each.  A grant held on one CPU never makes another
# CPU's reservation fail: ENOSPC on one CPU takes every grant back, so a
# write on the other CPU then fails too, and nothing is left promised
# after umount.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

[ "$(nproc)" -ge 2 ] || { echo "# needs 2 CPUs"; exit 1; }
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
check "a kprobe on the device's reserve" sh -c "echo 'p:subvol/reserve subvol_provider_reserve' >>$TR/kprobe_events"
check "and on its release" sh -c "echo 'p:subvol/release subvol_provider_release' >>$TR/kprobe_events"
echo 0 >$TR/tracing_on
echo 1 >$TR/events/subvol/enable
# calls: the hits of both probes so far.
calls() { awk '$1 == "reserve" || $1 == "release" { n += $2 } END { print n + 0 }' $TR/kprobe_profile; }

mkdir $G/d
sync
before=$(calls)
taskset -c 0 sh -c 'i=0; while [ $i -lt 1000 ]; do : >/mnt/guest/d/f$i; i=$((i + 1)); done; sync'
after=$(calls)
echo "# 1000 creations: $((after - before)) calls of the device's reserve and release"
check "1000 creations call the device fewer than 100 times" test $((after - before)) -lt 100
# A reservation larger than a batch goes to the device: the probes count.
dd if=/dev/zero of=$G/large bs=8M count=1 conv=fsync status=none
rm $G/large
sync
cat $TR/kprobe_profile
check "an 8 MiB write calls the device's reserve" test "$(calls)" -gt "$after"
echo 0 >$TR/events/subvol/enable
echo >$TR/kprobe_events

# Give CPU 1 a grant: small reservations and frees made there.
taskset -c 1 sh -c 'i=0; while [ $i -lt 200 ]; do echo x >/mnt/guest/d/g$i; i=$((i + 1)); done; sync; rm -f /mnt/guest/d/g*; sync'
# Fill the host, then the guest from CPU 0 until ENOSPC.
dd if=/dev/zero of=$HOST/filler/f bs=1M count=$((($(free_bytes $HOST) >> 20) - 64)) status=none
sync
kmsg_mark
# Direct I/O: no speculative preallocation, whose trimming at ENOSPC
# would free blocks (into some CPU's grant) for the write on CPU 1.
taskset -c 0 dd if=/dev/zero of=$G/big bs=64k oflag=direct status=none 2>/tmp/a.err
check "the writer on CPU 0 got ENOSPC" grep -q "No space left" /tmp/a.err
head -c 65536 /dev/zero >/tmp/chunk
check_fails "a write on CPU 1 then fails too: no grant was left there" \
	taskset -c 1 dd if=/tmp/chunk of=$G/small bs=64k conv=fsync status=none
written=$(stat -c %s $G/big)
echo "# the guest wrote $((written >> 20)) MiB; $(dmsetup status vol)"
check_eq "no write reached the host uncovered" 0 "$(status_field vol $F_UNCOVERED)"
check "umount" umount $G
check_eq "nothing stays promised after umount: every grant went back" 0 "$(status_field vol $F_PROMISED)"
no_accounting_errors vol
check "xfs_repair -n is clean" xfs_repair -n $DEV
check "mount again" mount $DEV $G
check_eq "every acknowledged byte is there" "$written" "$(stat -c %s $G/big)"
check_eq "no kernel I/O error or shutdown" "" "$(kernel_errors)"
check "umount at the end" umount $G
dmsetup remove vol
finish
