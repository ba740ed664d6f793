#!/bin/bash
# A frozen host holds up only its own volumes (review 2, section 2, item
# 10).  A volume's last table going away writes its sharing record, an
# xattr of the backing file, which waits for a frozen host's thaw; that
# was done under the target's one global lock, so every table load and
# remove on every host (and every unmount of a space-aware guest) waited
# for that thaw too.  Two hosts: A is frozen while a volume of it is
# removed, and a volume on B is made, used and removed meanwhile; then
# A's device stops answering while a volume of it is made.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

A=/mnt/host B=/mnt/hostb
half=$((1024 * SECTORS_PER_MIB))
dmsetup create hostdev-a --table "0 $half linear $SCRATCH_DEV 0"
dmsetup create hostdev-b --table "0 $half linear $SCRATCH_DEV $half"
mkdir -p $A $B
for h in a b; do mkfs.xfs -q -f /dev/mapper/hostdev-$h; done
mount /dev/mapper/hostdev-a $A
mount /dev/mapper/hostdev-b $B
backing $A/img 64
backing $B/img 64
subvol_create vola $A/img 64
check "write to vola" dd if=/dev/urandom of=/dev/mapper/vola bs=1M count=4 oflag=direct status=none

check "freeze host A" xfs_io -x -c freeze $A
dmsetup remove vola 2>/tmp/remove.err &
remover=$!
sleep 3
echo "# removing vola on the frozen host: $(finished $remover && echo finished || echo waiting)"
# A table load that waits in the kernel cannot be killed: poll for it,
# and thaw A whatever happened, so that the test ends either way.
dmsetup create volb --table "$(subvol_table $B/img 64)" &
creator=$!
if check "a volume on host B is made meanwhile (within 20 s)" ended_within $creator 20; then
	check "and takes writes" timeout 20 dd if=/dev/zero of=/dev/mapper/volb bs=1M count=4 oflag=direct status=none
	check "and is removed (within 20 s)" timeout 20 dmsetup remove volb
fi
check "thaw host A" xfs_io -x -c thaw $A
wait $creator
dmsetup remove volb 2>/dev/null
check "the removal of vola ends after the thaw" ended_within $remover 20
wait $remover
check_eq "and succeeded" "0 " "$? $(cat /tmp/remove.err)"

# A new volume's first scan of its file's allocation map (SEEK_DATA and
# FIEMAP, which read the file's extent btree from the host) was also done
# under that lock.  Host A stops answering I/O (its device suspended
# without flush or freeze) with the extent btree of a fragmented file
# not yet read: making a volume over it waits in the scan, and a volume
# on host B is made and removed meanwhile.  (Read-only: a writable table
# first probes hole punching, which reads the extents before the lock.)
for i in $(seq 0 299); do echo "pwrite $((i * 131072)) 4096"; done | xfs_io -d -f $A/frag >/dev/null
truncate -s 64M $A/frag
check_eq "it has 300 extents (in a btree, not the inode)" 300 "$(xfs_io -c stat $A/frag | sed -n 's/^fsxattr.nextents = //p')"
check "remount host A (its files' extents unread)" sh -c "umount $A && mount /dev/mapper/hostdev-a $A"
stat $A/frag >/dev/null
check "suspend host A's device (I/O waits)" dmsetup suspend --nolockfs --noflush hostdev-a
dmsetup create --readonly volf --table "$(subvol_table $A/frag 64)" 2>/tmp/create.err &
creator=$!
sleep 3
check_eq "making volf waits for host A's I/O" waiting "$(finished $creator && echo finished || echo waiting)"
dmsetup create volb --table "$(subvol_table $B/img 64)" &
other=$!
if check "a volume on host B is made meanwhile (within 20 s)" ended_within $other 20; then
	check "and is removed (within 20 s)" timeout 20 dmsetup remove volb
fi
check "resume host A's device" dmsetup resume hostdev-a
wait $other
dmsetup remove volb 2>/dev/null
check "the making of volf ends after the resume" ended_within $creator 20
wait $creator
check_eq "and succeeded" "0 " "$? $(cat /tmp/create.err)"
check "remove volf" dmsetup remove volf
check "umount host B" umount $B
nothing_left
finish
