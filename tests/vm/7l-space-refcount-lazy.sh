#!/bin/bash
# The refcount btree's per-AG reservation is a worst case (a record for
# every block of the AG, about 0.6% of the guest) that a device backing
# all of it holds away from everyone for the life of the mount.  The
# device backs what the tree may grow to from the blocks that are shared,
# and more as the guest shares blocks (patches/xfs/6.1/0010, 6.12/0009).
# Checked here: a fresh 16 GiB guest asks for far less than the worst case
# (the space efficiency goal of issue 11: at most 0.5% held back at
# 16 GiB); and a guest that shares a file three ways and splits its
# refcount records by overwriting every other block, direct, buffered and
# through mmap, grows its refcount btrees past what was backed at mount,
# and then fills the volume on a host filled from outside: ENOSPC, no I/O
# error, nothing uncovered, every byte as written.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 1200
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G $HOST/filler

# refcount_blocks DEV: blocks of the refcount btrees of all AGs.
refcount_blocks() {
	local ag n=0 agcount
	agcount=$(xfs_db -r -c 'sb 0' -c 'print agcount' "$1" | awk '{ print $3 }')
	for ((ag = 0; ag < agcount; ag++)); do
		n=$((n + $(xfs_db -r -c "agf $ag" -c 'print refcntblocks' "$1" | awk '{ print $3 }')))
	done
	echo $n
}

# 1. What a fresh 16 GiB guest holds back: the reserve pool and the per-AG
# reservations; with the refcount btrees' worst case (about 100 MiB) it
# was 0.72% of the guest.
backing "$HOST/big" 16384
subvol_create big "$HOST/big" 16384
check "mkfs.xfs on a 16 GiB volume" mkfs.xfs -q /dev/mapper/big
check "mount it" mount /dev/mapper/big $G
sleep 1
promised=$(status_field big $F_PROMISED)
echo "# promised after mount: $((promised / SECTORS_PER_MIB)) MiB"
check "a fresh 16 GiB guest holds back less than 0.25% of its size" \
	test "$promised" -lt $((16384 * SECTORS_PER_MIB / 400))
check "umount it" umount $G
no_accounting_errors big
dmsetup remove big
rm -f "$HOST/big"

# 2. Sharing and splitting the refcount records.
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
check "mkfs.xfs on a 1 GiB volume" mkfs.xfs -q $DEV || { finish; exit; }
check "mount" mount $DEV $G || { finish; exit; }
kmsg_mark
# frozen_refcount_blocks: refcount_blocks of the mounted guest, frozen so
# that its metadata is on the disk.
frozen_refcount_blocks() {
	xfs_io -x -c freeze $G
	refcount_blocks $DEV
	xfs_io -x -c thaw $G
}
refc0=$(frozen_refcount_blocks)

dd if=/dev/urandom of=/tmp/src bs=1M count=128 status=none
check "write a 128 MiB file" dd if=/tmp/src of=$G/a bs=1M conv=fsync status=none
check "share it three ways" sh -c "cp --reflink=always $G/a $G/b && cp --reflink=always $G/a $G/c"

# split ENGINE DIRECT OFFSET FILE: overwrite every other 4 KiB block of a
# third of FILE, starting at OFFSET, with 0x5a.
split() {
	fio --name=split --filename="$4" --rw=write:4k --bs=4k --offset="$3" \
		--size=$((128 / 3))m --ioengine="$1" --direct="$2" \
		--buffer_pattern=0x5a --scramble_buffers=0 --fsync=64 --end_fsync=1 --output=/tmp/split.out --eta=never
}
cp /tmp/src /tmp/expected
for args in "psync 1 0" "psync 0 $((128 / 3))m" "mmap 0 $((256 / 3))m"; do
	# shellcheck disable=SC2086
	check "split the records of a's blocks: ${args% *}" split $args $G/a
	# shellcheck disable=SC2086
	split ${args/ 1 / 0 } /tmp/expected
done
check "a reads back as written" test "$(sha $G/a)" = "$(sha /tmp/expected)"
check "b is the old a" test "$(sha $G/b)" = "$(sha /tmp/src)"
rm -f /tmp/expected
refc=$(frozen_refcount_blocks)
echo "# refcount btree blocks: $refc0 at mount, $refc after the splits"
# The device backed 2 blocks per level of each AG's tree at mount.
check "the refcount btrees grew past what the device backed at mount" \
	test $((refc - refc0)) -gt $((2 * 3 * 4))

# Unsharing b's blocks changes the records again; then the guest fills
# what is left while the host is full.
rm -f $G/b
filler_free=48
dd if=/dev/zero of=$HOST/filler/f bs=1M count=$((($(free_bytes $HOST) >> 20) - filler_free)) status=none 2>/dev/null
echo "# host free: $(($(free_bytes $HOST) >> 20)) MiB"
fill $G /tmp/src /tmp/fill.err
check "the fill ends with ENOSPC" grep -q 'No space left' /tmp/fill.err
check "sync" sync
check_eq "no write reached the host uncovered" 0 "$(status_field vol $F_UNCOVERED)"
check "c is the old a" test "$(sha $G/c)" = "$(sha /tmp/src)"
rm -f /tmp/src
check "umount" umount $G
check "xfs_repair -n is clean" xfs_repair -n $DEV
no_accounting_errors vol
check_eq "no I/O error or shutdown in the kernel log" "" "$(kernel_errors)"
check_eq "nothing promised after umount" 0 "$(status_field vol $F_PROMISED)"
dmsetup remove vol
finish
