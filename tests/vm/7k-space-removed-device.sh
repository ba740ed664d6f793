# Which space a device's filesystem reserves from (issue 12).  Item 21: a
# device removed with --force while its guest XFS is still mounted keeps
# its space for that filesystem, and a new device on the same file gets a
# space of its own, registered for its own disk.  Item 6: a table naming
# another file that is loaded and cleared leaves the live table's space
# registered; one that is resumed takes over.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 1024
backing $HOST/img 512
mkdir -p /mnt/old /mnt/new
subvol_create vol $HOST/img 512
mkfs.xfs -q /dev/mapper/vol
mount /dev/mapper/vol /mnt/old
check_eq "the guest XFS reserves from the device" attached "$(status_field vol $F_CLIENT)"
# --force swaps in a table that fails every I/O; the device stays while
# the filesystem has it open.
dmsetup remove --force vol 2>/dev/null
check_eq "the old device now has an error table" error "$(dmsetup table vol | awk '{ print $3 }')"

kmsg_mark
check "a new device on the same file" subvol_create vol2 $HOST/img 512
check_eq "its space has no client" none "$(status_field vol2 $F_CLIENT)"
check "mount it (nouuid: the old mount has the same UUID)" mount -o nouuid /dev/mapper/vol2 /mnt/new
minor=$(dmsetup info -c --noheadings -o minor vol2)
check "the guest XFS on the new device reserves from it" \
	sh -c "dmesg | sed -n '/$KMSG_MARK/,\$p' | grep -q 'XFS (dm-$minor): reserving space from the data device'"
check_eq "and the new device counts it attached" attached "$(status_field vol2 $F_CLIENT)"
check "it writes" dd if=/dev/urandom of=/mnt/new/f bs=1M count=8 conv=fsync status=none
check_eq "with nothing uncovered" 0 "$(status_field vol2 $F_UNCOVERED)"
no_accounting_errors vol2
umount /mnt/new
dmsetup remove vol2
# The old filesystem cannot write its log to the error table: shut down.
umount /mnt/old 2>/dev/null
dmsetup remove vol

# reserving_since_mark NAME: the guest XFS on device NAME logged, since the
# last mark, that it reserves from it.
reserving_since_mark() {
	local minor
	minor=$(dmsetup info -c --noheadings -o minor "$1")
	kmsg_since_mark | grep -q "XFS (dm-$minor): reserving space from the data device"
}
backing $HOST/img3 512
backing $HOST/img4 512
subvol_create vol3 $HOST/img3 512
mkfs.xfs -q /dev/mapper/vol3
check "load a table naming another file" \
	dmsetup load vol3 --table "0 $((512 * SECTORS_PER_MIB)) subvol $HOST/img4"
check "clear it" dmsetup clear vol3
kmsg_mark
check "mount the device" mount /dev/mapper/vol3 /mnt/new
check "its XFS reserves from the live table's space" reserving_since_mark vol3
check_eq "which counts it attached" attached "$(status_field vol3 $F_CLIENT)"
umount /mnt/new
a3=$(allocated_bytes $HOST/img3)
check "load a table naming another file, and resume it" sh -c "
	dmsetup load vol3 --table '0 $((512 * SECTORS_PER_MIB)) subvol $HOST/img4' &&
	dmsetup resume vol3"
mkfs.xfs -q /dev/mapper/vol3
kmsg_mark
check "mount the device on the new file" mount /dev/mapper/vol3 /mnt/new
check "its XFS reserves from the new file's space" reserving_since_mark vol3
check "it writes" dd if=/dev/urandom of=/mnt/new/f bs=1M count=8 conv=fsync status=none
check_eq "with nothing uncovered" 0 "$(status_field vol3 $F_UNCOVERED)"
check_eq "the old file was not written after the switch" "$a3" "$(allocated_bytes $HOST/img3)"
check "the new one was" test "$(allocated_bytes $HOST/img4)" -ge $((8 << 20))
umount /mnt/new
dmsetup remove vol3
finish
