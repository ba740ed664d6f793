# A guest XFS on a subvol device: files written read back after unmount and
# mount, xfs_repair -n finds nothing, and deleting files gives the space
# back to the host, by fstrim and by online discard.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
DEV=/dev/mapper/vol
GUEST=/mnt/guest
mkdir -p $GUEST

check "mkfs.xfs on the device" mkfs.xfs -q $DEV
check "mkfs discarded the device: only the log and headers are allocated" \
	test "$(allocated_bytes "$HOST/img")" -lt $((96 << 20))
check "mount guest XFS" mount $DEV $GUEST

# 24 files of 1-16 MiB from a fixed seed, each fsync'ed.  Each starts with
# its name; dd copies the rest from the source in 1 MiB blocks (a pipe
# through sed, 4 KiB at a time, took a third of this test under TCG).
dd if=/dev/urandom of=/tmp/source bs=1M count=16 status=none
: >/tmp/sums
for i in $(seq 1 24); do
	size=$(( (i * 7 % 16 + 1) << 20 ))
	{ printf 'file %s ' "$i"; dd if=/tmp/source bs=1M count=$size iflag=count_bytes status=none; } >$GUEST/f$i
	xfs_io -c fsync $GUEST/f$i
	echo "$(sha $GUEST/f$i) $GUEST/f$i" >>/tmp/sums
done
mkdir -p $GUEST/dir/sub
for i in $(seq 1 200); do echo "small $i" >$GUEST/dir/sub/s$i; done
setfattr -n user.test -v subvol $GUEST/dir
written=$(du -sb $GUEST | cut -f1)

check "umount" umount $GUEST
check "xfs_repair -n after writing" xfs_repair -n $DEV
check "mount again" mount $DEV $GUEST
bad=0
while read -r sum file; do
	[ "$(sha "$file")" = "$sum" ] || bad=$((bad + 1))
done </tmp/sums
check_eq "every file reads back identical" 0 $bad
check_eq "small files intact" "small 137" "$(cat $GUEST/dir/sub/s137)"
check_eq "xattr intact" subvol "$(getfattr --absolute-names --only-values -n user.test $GUEST/dir)"

# fstrim after deleting gives the blocks back to the host.
alloc_full=$(allocated_bytes "$HOST/img")
freed=0
for i in $(seq 1 16); do
	freed=$((freed + $(stat -c %s $GUEST/f$i)))
	rm $GUEST/f$i
done
sync
check "fstrim" fstrim $GUEST
alloc_trimmed=$(allocated_bytes "$HOST/img")
check "fstrim shrank the image by at least 90% of what was deleted ($alloc_full -> $alloc_trimmed, deleted $freed)" \
	test $((alloc_full - alloc_trimmed)) -ge $((freed * 9 / 10))
check "status backed follows the image" \
	test "$(status_field vol 4)" -eq "$(stat -c %b "$HOST/img")"
umount $GUEST

# Online discard: deleting alone returns the space.
check "mount -o discard" mount -o discard $DEV $GUEST
for _ in 1 2 3 4; do cat /tmp/source; done >$GUEST/big
sync
alloc_full=$(allocated_bytes "$HOST/img")
rm $GUEST/big
sync
# The CIL sends discards after the commit; a log force pushes them out.
xfs_io -c fsync $GUEST
sleep 2
alloc_after=$(allocated_bytes "$HOST/img")
check "online discard returned the space ($alloc_full -> $alloc_after)" \
	test $((alloc_full - alloc_after)) -ge $((60 << 20))
umount $GUEST
check "xfs_repair -n at the end" xfs_repair -n $DEV
dmsetup remove vol
check "host xfs_repair -n" sh -c "umount $HOST && xfs_repair -n $SCRATCH_DEV"

finish
