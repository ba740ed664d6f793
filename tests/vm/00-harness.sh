#!/bin/bash
# Proves the VM harness (scripts/vm-run) works: the scratch disk, modules,
# tools, dmsetup without udev, XFS, and $OUT coming back to the host
# (tests/host/harness.sh checks harness.txt).
# shellcheck source=SCRIPTDIR/../lib/vmtest.sh
. /src/tests/lib/vmtest.sh

# zeros DEV SKIP_MIB COUNT_MIB: the MiB range reads back as zeros.
zeros() {
	[[ $(dd if="$1" bs=1M skip="$2" count="$3" 2>/dev/null | tr -d '\0' | wc -c) == 0 ]]
}

check "scratch disk is a block device" test -b "$SCRATCH_DEV"
size_mib=$(($(blockdev --getsize64 "$SCRATCH_DEV") >> 20))
check "scratch disk start reads zeros" zeros "$SCRATCH_DEV" 0 16
check "scratch disk end reads zeros" zeros "$SCRATCH_DEV" $((size_mib - 1)) 1
check_eq "OUT is an empty directory" "" "$(ls -A "$OUT")"
check "process substitution works" test "$(cat <(echo x))" == x

for mod in dm_mod dm_thin_pool dm_snapshot dm_zero xfs ext4 vfat loop; do
	check "module $mod loads" modprobe "$mod"
done
kver=$(uname -r)
for ko in /lib/modules/"$kver"/updates/*/*.ko; do
	[[ -e $ko ]] || continue
	name=$(basename "$ko" .ko)
	# Test-only modules (tests/kmod) are loaded by the tests that use them.
	[[ $ko == */updates/kmod/* ]] ||
		check "project module ${name} is loaded" test -d "/sys/module/${name//-/_}"
	check_eq "modprobe resolves $name to the project's" "$ko" "$(modinfo -n "$name")"
done

# Every program the initramfs carries starts (its libraries are there).
while read -r tool flag; do
	check "$tool runs" "$tool" "$flag"
done <<'TOOLS'
bash --version
dmsetup --version
mkfs.xfs -V
xfs_repair -V
xfs_io -V
xfs_db -V
xfs_admin -V
xfs_growfs -V
fstrim -V
blkdiscard -V
losetup -V
blockdev -V
wipefs -V
fallocate -V
fio --version
thin_check -V
thin_dump -V
thin_delta -V
thin_ls -V
mke2fs -V
e2fsck -V
mkfs.vfat --help
setfattr --version
getfattr --version
stat --version
truncate --version
sync --version
sha256sum /dev/null
md5sum /dev/null
TOOLS

check "dmsetup create zero target" dmsetup create vmtest-zero --table "0 2048 zero"
check "its /dev/mapper node appears" test -b /dev/mapper/vmtest-zero
check_eq "it has 2048 sectors" 2048 "$(blockdev --getsz /dev/mapper/vmtest-zero 2>&1)"
check "it reads zeros" zeros /dev/mapper/vmtest-zero 0 1
check "dmsetup remove" dmsetup remove vmtest-zero
check_fails "its node is gone" test -e /dev/mapper/vmtest-zero

mkdir -p /mnt/scratch
check "mkfs.xfs on the scratch disk" mkfs.xfs -f "$SCRATCH_DEV"
check "mount xfs" mount -t xfs "$SCRATCH_DEV" /mnt/scratch
check "write a file" dd if=/dev/urandom of=/mnt/scratch/file bs=1M count=4
sum=$(sha256sum </mnt/scratch/file)
check "set an xattr" setfattr -n user.vmtest -v hello /mnt/scratch/file
check "fio on xfs" fio --name=vmtest --filename=/mnt/scratch/fio --size=4M --bs=4k \
	--rw=randwrite --ioengine=psync --direct=1
check "umount xfs" umount /mnt/scratch
check "xfs_repair -n finds it clean" xfs_repair -n "$SCRATCH_DEV"
check "mount xfs again" mount -t xfs "$SCRATCH_DEV" /mnt/scratch
check_eq "the file survived" "$sum" "$(sha256sum </mnt/scratch/file)"
check_eq "the xattr survived" hello "$(getfattr --absolute-names --only-values -n user.vmtest /mnt/scratch/file 2>&1)"
check "umount xfs again" umount /mnt/scratch

check "make a loop image" truncate -s 64M /tmp/loop.img
loopdev=$(losetup -f --show /tmp/loop.img 2>&1)
check "losetup" test -b "$loopdev"
check "mkfs.ext4 on loop" mkfs.ext4 -q "$loopdev"
check "mount ext4" mount -t ext4 "$loopdev" /mnt/scratch
check "umount ext4" umount /mnt/scratch
check "mkfs.vfat on loop" mkfs.vfat "$loopdev"
check "mount vfat" mount -t vfat "$loopdev" /mnt/scratch
check "umount vfat" umount /mnt/scratch
check "losetup -d" losetup -d "$loopdev"

echo "harness ok $kver" >"$OUT/harness.txt"
check "write to OUT" test -s "$OUT/harness.txt"
finish
