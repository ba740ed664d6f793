#!/bin/bash
# The pool claims host space in its own worker, never in the task of the
# guest writer whose reservation needs it (review 2, section 2, item 5).
# A claim is an fallocate that grows the pool's reserve file: done in the
# writer's task it obeys that task's limits, so a writer whose
# RLIMIT_FSIZE is smaller than the reserve file got SIGXFSZ and EFBIG for
# a reservation the host had room for (and a failed claim's truncate ran
# with the writer's credentials, which may not write the root-owned
# reserve file).  A writer limited to 1 MiB files preallocates 200 MiB
# without changing its file's size (xfs_io falloc -k, which its limit allows):
# the guest reserves it from the device, and the pool claims it.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G
check "mkfs.xfs" mkfs.xfs -q $DEV
check "mount" mount $DEV $G
check_eq "the guest reserves from the device" attached "$(status_field vol $F_CLIENT)"
claimed0=$(status_field vol $F_CLAIMED)

kmsg_mark
check "falloc -k of 200 MiB by a writer limited to 1 MiB files" \
	sh -c "ulimit -f 1024 && exec xfs_io -f -c 'falloc -k 0 200m' $G/pre"
echo "# pool claim: $claimed0 sectors before, $(status_field vol $F_CLAIMED) after"
check "the pool claimed it" test "$(status_field vol $F_CLAIMED)" -ge $((200 * SECTORS_PER_MIB))
check_eq "no claim failed" "" "$(kmsg_since_mark | grep -a 'cannot claim space' || true)"
check "the guest file has its 200 MiB" test "$(du -k $G/pre | cut -f1)" -ge $((200 * 1024))

# And a writer that writes within its limit, file after file, refilling.
check "64 files of 512 KiB with fsync under the same limit" \
	sh -c "ulimit -f 1024 && for i in \$(seq 1 64); do dd if=/dev/zero of=$G/s\$i bs=512K count=1 conv=fsync status=none || exit 1; done"
check_eq "no write reached the host uncovered" 0 "$(status_field vol $F_UNCOVERED)"
check "umount" umount $G
no_accounting_errors vol
check "remove" dmsetup remove vol
nothing_left
finish
