#!/bin/bash
# Growing a volume online keeps every promise: the backing file grown, the
# table reloaded to the new size, xfs_growfs with dirty data in the guest.
# The new space enters the device's accounting as free space of the guest
# (holes it may reserve later), not as a release of promises; the new
# allocation groups' headers are promised before growfs writes them.
# (Reproduced before the fix: promised fell from 124896 to 14688 sectors
# with 50 MiB still dirty, and the device counted accounting errors.)
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
DEV=/dev/mapper/vol
GUEST=/mnt/guest
mkdir -p $GUEST
dd if=/dev/urandom of=/tmp/source bs=1M count=50 status=none
check "mkfs.xfs on the device" mkfs.xfs -q $DEV || { finish; exit; }
check "mount" mount $DEV $GUEST || { finish; exit; }
kmsg_mark

# Grow the file and the table first: the resume freezes the guest, which
# writes back what is dirty.
check "grow the backing file to 2 GiB" truncate -s 2G "$HOST/img"
check "reload the table at 2 GiB" dmsetup reload vol --table "0 $((2048 * SECTORS_PER_MIB)) subvol $HOST/img"
check "resume" dmsetup resume vol

# 50 MiB dirty in the guest, then growfs.
check "write 50 MiB, left dirty" dd if=/tmp/source of=$GUEST/dirty bs=1M status=none
promised0=$(status_field vol $F_PROMISED)
echo "# promised with 50 MiB dirty: $promised0 sectors"
check "the dirty data is promised" test "$promised0" -ge $((50 * SECTORS_PER_MIB))
check "xfs_growfs" xfs_growfs $GUEST
promised1=$(status_field vol $F_PROMISED)
echo "# promised after growfs: $promised1 sectors"
check "growfs kept every promise" test "$promised1" -ge "$promised0"
check "growfs promised no more than the new AGs' headers and reservations (64 MiB)" \
	test "$promised1" -le $((promised0 + 64 * SECTORS_PER_MIB))
no_accounting_errors vol
check "the guest sees the new size" test "$(stat -f -c '%b' $GUEST)" -gt $((1536 * 256))

# Writing into the new space, and then everything, is covered.
check "write 200 MiB more" sh -c "for i in 1 2 3 4; do dd if=/tmp/source of=$GUEST/more\$i bs=1M status=none || exit 1; done"
check "sync" sync
check_eq "no write reached the host without a promise" 0 "$(status_field vol $F_UNCOVERED)"
check "umount" umount $GUEST
check "xfs_repair -n is clean" xfs_repair -n $DEV
check "mount again" mount $DEV $GUEST
check_eq "the dirty file is intact" "$(sha /tmp/source)" "$(sha $GUEST/dirty)"
check_eq "the files written after growfs are intact" 0 "$(prefixes_mismatch_fast $GUEST /tmp/source)"
check "umount" umount $GUEST
check_eq "promises return to their base after unmount" 0 "$(status_field vol $F_PROMISED)"
no_accounting_errors vol
check_eq "no I/O error or shutdown in the kernel log" "" "$(kernel_errors)"
dmsetup remove vol

# Growing only the last AG (AGs of 300 MiB on 1000 MiB: the last is 100
# MiB, and growing to 1100 MiB extends it instead of adding one).
backing "$HOST/img2" 1100
subvol_create vol2 "$HOST/img2" 1000
check "mkfs.xfs with a short last AG" mkfs.xfs -q -d agsize=300m /dev/mapper/vol2
check "mount it" mount /dev/mapper/vol2 $GUEST
check "reload at 1100 MiB" dmsetup reload vol2 --table "0 $((1100 * SECTORS_PER_MIB)) subvol $HOST/img2"
check "resume it" dmsetup resume vol2
check "write 50 MiB, left dirty" dd if=/tmp/source of=$GUEST/dirty bs=1M status=none
promised0=$(status_field vol2 $F_PROMISED)
agcount0=$(xfs_growfs -n $GUEST | sed -n 's/.*agcount=\([0-9]*\).*/\1/p')
check "xfs_growfs extends the last AG" xfs_growfs $GUEST
check_eq "no AG was added" "$agcount0" "$(xfs_growfs -n $GUEST | sed -n 's/.*agcount=\([0-9]*\).*/\1/p')"
promised1=$(status_field vol2 $F_PROMISED)
echo "# promised: $promised0 sectors before growfs, $promised1 after"
check "growfs of the last AG kept every promise" test "$promised1" -ge "$promised0"
check "and promised no more than 16 MiB more" test "$promised1" -le $((promised0 + 16 * SECTORS_PER_MIB))
no_accounting_errors vol2
check "fill the new space too (150 MiB)" sh -c "for i in 1 2 3; do dd if=/tmp/source of=$GUEST/x\$i bs=1M status=none || exit 1; done; sync"
check_eq "no write reached the host without a promise" 0 "$(status_field vol2 $F_UNCOVERED)"
check "umount it" umount $GUEST
check "xfs_repair -n is clean after extending the last AG" xfs_repair -n /dev/mapper/vol2
no_accounting_errors vol2
check_eq "no I/O error or shutdown in the kernel log at the end" "" "$(kernel_errors)"
dmsetup remove vol2
finish
