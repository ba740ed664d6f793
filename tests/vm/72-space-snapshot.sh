# Sticky snapshots: prepare_snapshot claims the copy-on-write reserve for
# every block a clone will share, or fails with ENOSPC and changes
# nothing; after a clone, every shared block can be overwritten, the
# guest's log included, without an I/O error.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

dd if=/dev/urandom of=/tmp/source bs=1M count=50 status=none
host_xfs 520
# 512 MiB: the snapshot is hashed whole twice, holes and all, at some
# 20 MB/s under TCG.
backing "$HOST/img" 512
subvol_create vol "$HOST/img" 512
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G
mkfs.xfs -q $DEV
mount $DEV $G
# Messages the target refuses, each with its reason in the kernel log.
kmsg_mark
check_fails "prepare_snapshot refused while the device is live" \
	dmsetup message vol 0 prepare_snapshot
check "the kernel log says it must be suspended" \
	sh -c "dmesg | grep -q 'prepare_snapshot: the device must be suspended'"
check_fails "reserve of a non-number refused" dmsetup message vol 0 reserve lots
check_fails "reserve of part of a block refused" dmsetup message vol 0 reserve 3
check "the kernel log names the size" sh -c "dmesg | grep -q \"reserve: '3' is not a whole number of 4096-byte blocks\""
check_fails "unknown message refused" dmsetup message vol 0 frobnicate
check "the kernel log names it" sh -c "dmesg | grep -q \"'frobnicate' is unknown\""
p0=$(status_field vol $F_PROMISED)
check "reserve 8 MiB by message" dmsetup message vol 0 reserve 16384
check_eq "the promise grew by 8 MiB" $((p0 + 16384)) "$(status_field vol $F_PROMISED)"
check "release it" dmsetup message vol 0 release 16384
check_eq "the promise is back" "$p0" "$(status_field vol $F_PROMISED)"

for i in 1 2 3 4 5; do dd if=/tmp/source of=$G/d$i bs=1M conv=fsync status=none; done
sync
kmsg_mark

# 1. More exclusive data than the host has free: the reserve cannot be had.
echo "# mapped $(($(status_field vol $F_MAPPED) / 2048)) MiB, host free $(($(free_bytes $HOST) >> 20)) MiB"
sums=$(sha $G/d1)$(sha $G/d5)
dmsetup suspend vol
before="$(status_field vol $F_SHARED) $(status_field vol $F_COW) $(status_field vol $F_COMMITTED)"
check_fails "prepare_snapshot that the host cannot back fails" \
	dmsetup message vol 0 prepare_snapshot
check "the kernel log says why" sh -c "dmesg | grep -q 'no host space for the copy-on-write reserve'"
check_eq "shared, reserve and pool promises are unchanged" "$before" \
	"$(status_field vol $F_SHARED) $(status_field vol $F_COW) $(status_field vol $F_COMMITTED)"
check "resume after the refusal" dmsetup resume vol
check_eq "the volume's data is unchanged" "$sums" "$(sha $G/d1)$(sha $G/d5)"
check "the guest writes on after the refusal" dd if=/tmp/source of=$G/after bs=1M count=4 conv=fsync status=none

# 2. With space for the reserve: prepare, clone, resume.
rm $G/d2 $G/d3 $G/d4 $G/d5 $G/after
fstrim $G
sync
dmsetup suspend vol
check "prepare_snapshot with space for the reserve" dmsetup message vol 0 prepare_snapshot
check "clone the image while suspended" cp --reflink=always $HOST/img $HOST/snap
check_eq "every mapped block counts as shared" "$(status_field vol $F_MAPPED)" "$(status_field vol $F_SHARED)"
check_eq "the copy-on-write reserve covers every shared block" \
	"$(status_field vol $F_SHARED)" "$(status_field vol $F_COW)"
dmsetup resume vol
snap_sum=$(sha $HOST/snap)

# Overwrite every block of the file, then, unmounted, every mapped block of
# the volume through the device: log, metadata, everything.  (The device
# counts unwritten extents, such as the log mkfs made, as shared too,
# although XFS does not copy them on write.)
check "overwrite every block of the file" \
	dd if=/dev/urandom of=$G/d1 bs=1M count=50 conv=notrunc,fsync status=none
check "umount" umount $G
# fiemap -v lines: "N: [START..END]: BLOCKS AG (AGRANGE) TOTAL FLAGS".
ranges=$(xfs_io -r -c "fiemap -v" $HOST/img | while read -r n off blocks rest; do
	[[ $n == *: && $off == \[* && $blocks != hole ]] || continue
	off=${off#[}; off=${off%]:}
	echo "${off%..*} $((${off#*..} - ${off%..*} + 1))"
done)
echo "# $(echo "$ranges" | wc -l) mapped ranges after the file overwrite"
bad=0
while read -r start len; do
	[ -n "$start" ] || continue
	xfs_io -d -c "pwrite -q -b 1m $((start * 512)) $((len * 512))" $DEV || bad=$((bad + 1))
done <<<"$ranges"
check_eq "every overwrite of a mapped range succeeded" 0 $bad
check_eq "no I/O error in the kernel log" "" "$(kernel_errors)"
check_eq "nothing is shared any more" 0 "$(status_field vol $F_SHARED)"
check_eq "the copy-on-write reserve is used up" 0 "$(status_field vol $F_COW)"
check_eq "the snapshot is unchanged" "$snap_sum" "$(sha $HOST/snap)"
no_accounting_errors vol
dmsetup remove vol
finish
