#!/bin/bash
# A frozen host holds up only its own volumes (review 2, section 2, item
# 10).  A volume's last table going away writes its sharing record, an
# xattr of the backing file, which waits for a frozen host's thaw; that
# was done under the target's one global lock, so every table load and
# remove on every host (and every unmount of a space-aware guest) waited
# for that thaw too.  Two hosts: A is frozen while a volume of it is
# removed, and a volume on B is made, used and removed meanwhile.
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

# finished PID: the process has ended (or is a zombie).
finished() {
	[ ! -e "/proc/$1" ] || [ "$(sed -n 's/^[0-9]* (.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)" = Z ]
}
check "freeze host A" xfs_io -x -c freeze $A
dmsetup remove vola 2>/tmp/remove.err &
remover=$!
sleep 3
echo "# removing vola on the frozen host: $(finished $remover && echo finished || echo waiting)"
# A table load that waits in the kernel cannot be killed: poll for it,
# and thaw A whatever happened, so that the test ends either way.
dmsetup create volb --table "$(subvol_table $B/img 64)" &
creator=$!
for _ in $(seq 1 100); do finished $creator && break; sleep 0.2; done
if check "a volume on host B is made meanwhile (within 20 s)" finished $creator; then
	check "and takes writes" timeout 20 dd if=/dev/zero of=/dev/mapper/volb bs=1M count=4 oflag=direct status=none
	check "and is removed (within 20 s)" timeout 20 dmsetup remove volb
fi
check "thaw host A" xfs_io -x -c thaw $A
wait $creator
dmsetup remove volb 2>/dev/null
for _ in $(seq 1 100); do finished $remover && break; sleep 0.2; done
check "the removal of vola ends after the thaw" finished $remover
wait $remover
check_eq "and succeeded" "0 " "$? $(cat /tmp/remove.err)"
check "umount host B" umount $B
nothing_left
finish
