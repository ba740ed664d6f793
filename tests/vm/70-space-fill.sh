# The space guarantee with the space-aware guest XFS: a guest that fills a
# 1 GiB volume on a host with about 400 MiB free gets ENOSPC from write(2),
# loses no acknowledged byte, sees no I/O error, and gets its space back
# after deleting and trimming.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 520
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
DEV=/dev/mapper/vol
GUEST=/mnt/guest
mkdir -p $GUEST
dd if=/dev/urandom of=/tmp/source bs=1M count=50 status=none

check "mkfs.xfs on the device" mkfs.xfs -q $DEV || { finish; exit; }
host_free=$(free_bytes $HOST)
echo "# host free after mkfs: $((host_free >> 20)) MiB"
kmsg_mark
check "mount the patched guest XFS" mount $DEV $GUEST || { finish; exit; }
check "the guest XFS attached to the device's space API" \
	sh -c "dmesg | grep -q 'reserving space from the data device'"
check_eq "status: client attached" attached "$(status_field vol $F_CLIENT)"
promised0=$(status_field vol $F_PROMISED)
mapped0=$(status_field vol $F_MAPPED)
echo "# after mount: promised $promised0 mapped $mapped0 claimed $(status_field vol $F_CLAIMED) sectors"

fill $GUEST /tmp/source
written=$(bytes_in $GUEST)
echo "# written before ENOSPC: $((written >> 20)) MiB; dd said: $(cat /tmp/fill.err)"
check "the guest's write(2) failed with ENOSPC" grep -q "No space left on device" /tmp/fill.err
check "written before ENOSPC is at least 90% of the host's free space" \
	test $((written * 10)) -ge $((host_free * 9))
check_eq "no write reached the host without a promise" 0 "$(status_field vol $F_UNCOVERED)"
check "metadata still works at the limit: rm of the last file" rm -f "$GUEST/f$(ls $GUEST | wc -l)"
written=$(bytes_in $GUEST)
check "umount" umount $GUEST
check_eq "no I/O error, writeback error or shutdown in the kernel log" "" "$(kernel_errors)"
check "xfs_repair -n is clean" xfs_repair -n $DEV
check "mount again" mount $DEV $GUEST
check_eq "every acknowledged byte is there" "$written" "$(bytes_in $GUEST)"
check_eq "every file reads back as written" 0 "$(prefixes_mismatch_fast $GUEST /tmp/source)"

rm -f $GUEST/f*
check "fstrim after deleting everything" fstrim $GUEST
sync
promised=$(status_field vol $F_PROMISED)
mapped=$(status_field vol $F_MAPPED)
echo "# after delete and trim: promised $promised mapped $mapped sectors"
check "promises are back to what they were after mount (within 1 MiB)" \
	test $((promised - promised0)) -le 2048 -a $((promised0 - promised)) -le 2048
check "mapped blocks are back to what they were (within 1 MiB)" \
	test $((mapped - mapped0)) -le 2048
check "writing succeeds again after trimming" \
	dd if=/tmp/source of=$GUEST/again bs=1M conv=fsync status=none
check "umount at the end" umount $GUEST
check_eq "no I/O error in the whole run" "" "$(kernel_errors)"
no_accounting_errors vol
dmsetup remove vol
finish
