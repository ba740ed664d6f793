# Suspend drains the I/O in flight and makes it durable; resume picks up a
# backing file that was cloned or grown meanwhile, and refuses one that was
# cut shorter than the device.  Under load, nothing written is lost.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

# 320 MiB (mkfs.xfs refuses less than 300 MB): the device and its clone
# are hashed whole three times, at some 20 MB/s under TCG.
host_xfs
backing "$HOST/img" 320
subvol_create vol "$HOST/img" 320
DEV=/dev/mapper/vol

# Suspend and resume while fio writes and verifies.
fio --name=load --filename=$DEV --direct=1 --ioengine=libaio --iodepth=32 \
	--size=128M --bsrange=4k-64k --rw=randwrite --randseed=11 \
	--verify=crc32c --verify_fatal=1 --verify_dump=0 --numjobs=2 \
	--offset_increment=128M --output=/tmp/fio.out >/dev/null 2>&1 &
fio_pid=$!
cycles=0
sleep 2
while kill -0 $fio_pid 2>/dev/null && [ $cycles -lt 10 ]; do
	dmsetup suspend vol
	sleep 0.3
	dmsetup resume vol
	cycles=$((cycles + 1))
	sleep 0.5
done
rc=0
wait $fio_pid || rc=$?
check_eq "fio verify through $cycles suspend/resume cycles" 0 $rc
check "at least 3 cycles happened under load" test $cycles -ge 3

# A snapshot by suspend and reflink clone holds exactly what was written.
dd if=/dev/urandom of=$DEV bs=1M count=32 oflag=direct status=none
want=$(sha $DEV)
check "suspend" dmsetup suspend vol
check "reflink clone while suspended" cp --reflink=always "$HOST/img" "$HOST/snap"
check "resume" dmsetup resume vol
dd if=/dev/urandom of=$DEV bs=1M count=8 oflag=direct status=none
check_eq "clone has the content at suspend time" "$want" "$(sha "$HOST/snap")"
check "device differs from the clone after new writes" \
	test "$(sha $DEV $((8 << 20)))" != "$(sha "$HOST/snap" $((8 << 20)))"

# A guest filesystem is frozen by the suspend: its buffered writes are in
# the clone, and the clone mounts cleanly beside the origin.
mkfs.xfs -q -f $DEV
mkdir -p /mnt/guest /mnt/clone
mount $DEV /mnt/guest
head -c $((8 << 20)) /dev/urandom >/mnt/guest/data
want=$(sha /mnt/guest/data)
dmsetup suspend vol
rm -f "$HOST/snap"
cp --reflink=always "$HOST/img" "$HOST/snap"
dmsetup resume vol
echo more >>/mnt/guest/data
dmsetup create snap --readonly --table "0 $((320 * SECTORS_PER_MIB)) subvol $HOST/snap"
check "clone mounts without log recovery" \
	mount -o ro,nouuid,norecovery /dev/mapper/snap /mnt/clone
check_eq "unsynced file written before suspend is in the clone" \
	"$want" "$(sha /mnt/clone/data)"
umount /mnt/clone
dmsetup remove snap
umount /mnt/guest

# Grown while suspended: reload with the new length and resume.
dd if=/dev/urandom of=$DEV bs=1M count=4 oflag=direct status=none
want=$(sha $DEV $((4 << 20)))
dmsetup suspend vol
truncate -s 480M "$HOST/img"
check "reload with a larger length" \
	dmsetup reload vol --table "0 $((480 * SECTORS_PER_MIB)) subvol $HOST/img"
check "resume grown device" dmsetup resume vol
check_eq "grown size" $((480 << 20)) "$(blockdev --getsize64 $DEV)"
check_eq "data intact after growing" "$want" "$(sha $DEV $((4 << 20)))"
check "write to the grown part" \
	dd if=/dev/urandom of=$DEV bs=1M seek=440 count=4 oflag=direct status=none

# Cut shorter while suspended: resume refuses, and works once restored.
dmsetup suspend vol
truncate -s 440M "$HOST/img"
kmsg_mark
check_fails "resume refuses a file shorter than the device" dmsetup resume vol
check "kernel says why" grep -Eq "subvol: [0-9]+:[0-9]+: backing file $HOST/img is .* shorter than the device" \
	<<<"$(kmsg_since_mark)"
truncate -s 480M "$HOST/img"
check "resume after restoring the size" dmsetup resume vol
check_eq "data intact" "$want" "$(sha $DEV $((4 << 20)))"
dmsetup remove vol

finish
