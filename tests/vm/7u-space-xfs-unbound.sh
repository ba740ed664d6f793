# The space-aware xfs.ko replaces the stock module (a DKMS package puts it
# in updates/), so it must load and run as the stock XFS where the space
# registry (blk-space.ko) is not loaded or not installed at all: a root
# filesystem mounted from an initramfs without the registry, or a machine
# where the target's package was removed.  It binds to the registry when
# a filesystem mounts, and holds it only while mounted on a provider.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

kver=$(uname -r)
xfs_ko=$(modinfo -n xfs)
registry_ko=$(modinfo -n blk_space)
case $xfs_ko in
*/updates/*) ;;
*)
	check_eq "the harness loads the space-aware xfs.ko" "updates/xfs/xfs.ko" "$xfs_ko"
	finish
	exit
	;;
esac

# refs MODULE: the module's reference count (lsmod's "Used by"), or
# "absent" when it is not loaded.
refs() {
	awk -v m="$1" '$1 == m { print $3; found = 1 } END { if (!found) print "absent" }' /proc/modules
}

# Unload everything that holds the registry: the target, the test module,
# xfs itself.
for m in subvol_fault dm_subvol xfs blk_space; do
	grep -q "^$m " /proc/modules && rmmod "$m"
done
check_eq "the registry is unloaded" absent "$(refs blk_space)"

# 1. Registry absent from the module tree too: as after removing the
#    target's package.  insmod resolves nothing by itself.
mv "$registry_ko" /tmp/blk-space.ko
depmod "$kver"
check "the space-aware xfs.ko loads without the registry installed" insmod "$xfs_ko"
check_eq "and it did not pull the registry in" absent "$(refs blk_space)"
truncate -s 512M /tmp/plain.img
loopdev=$(losetup -f --show /tmp/plain.img)
mkfs.xfs -q -f "$loopdev"
mkdir -p /mnt/plain
check "an XFS mounts with it" mount "$loopdev" /mnt/plain
check "writes and fsyncs as the stock XFS does" \
	dd if=/dev/urandom of=/mnt/plain/f bs=1M count=64 conv=fsync status=none
check "unmounts" umount /mnt/plain
check "xfs_repair -n is clean" xfs_repair -n "$loopdev"
check "the module unloads" rmmod xfs
mv /tmp/blk-space.ko "$registry_ko"
depmod "$kver"

# 2. Registry installed but not loaded: modprobe xfs must not load it.
check "modprobe xfs" modprobe xfs
check_eq "modprobe xfs does not load the registry" absent "$(refs blk_space)"
check "an XFS mounts without the registry loaded" mount "$loopdev" /mnt/plain
check "and writes" dd if=/dev/urandom of=/mnt/plain/g bs=1M count=16 conv=fsync status=none
umount /mnt/plain
losetup -d "$loopdev"

# 3. The target loads the registry; a guest XFS mounted on a volume then
#    finds its provider, and holds the registry only while it is mounted.
check "modprobe dm-subvol" modprobe dm-subvol
base=$(refs blk_space)
host_xfs 600
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
mkfs.xfs -q /dev/mapper/vol
mkdir -p /mnt/guest
check "the guest XFS mounts on a volume" mount /dev/mapper/vol /mnt/guest
check_eq "and attaches to the volume's provider" attached "$(status_field vol $F_CLIENT)"
check_eq "the mount holds one reference on the registry" $((base + 1)) "$(refs blk_space)"
check "a guest write" dd if=/dev/urandom of=/mnt/guest/f bs=1M count=16 conv=fsync status=none
umount /mnt/guest
check_eq "the unmount drops it" "$base" "$(refs blk_space)"
check_eq "the volume has no client left" none "$(status_field vol $F_CLIENT)"
dmsetup remove vol
umount "$HOST"
dmsetup remove hostdev
check "the target unloads" rmmod dm_subvol
check "the registry unloads while xfs stays loaded" rmmod blk_space
check "xfs unloads" rmmod xfs
finish
