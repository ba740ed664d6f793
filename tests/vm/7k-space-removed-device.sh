# A device removed with --force while its guest XFS is still mounted (the
# review's item 21, issue 12): the filesystem keeps the old device's space
# until it unmounts, and a new device on the same file gets a space of its
# own, registered for its own disk, which a guest XFS mounting on it
# reserves from.
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
finish
