# In-VM half of tests/host/powercut.sh.
#   write: make a host XFS, a subvol device and a guest XFS, write files and
#          raw blocks, fsync them, print their checksums, then cut the power
#          with later writes still unsynced.
#   verify SUMS...: boot on the same disk, recover both filesystems, and
#          compare what was fsync'ed with the checksums.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

DEV=/dev/mapper/vol
GUEST=/mnt/guest
mkdir -p "$HOST" $GUEST

case $1 in
write)
	mkfs.xfs -q -f "$SCRATCH_DEV"
	mount "$SCRATCH_DEV" "$HOST"
	backing "$HOST/img" 512
	backing "$HOST/raw" 64
	# The creation of the files must survive too.
	sync
	subvol_create vol "$HOST/img" 512
	subvol_create raw "$HOST/raw" 64
	mkfs.xfs -q $DEV
	mount $DEV $GUEST
	for i in 1 2 3 4; do
		head -c $((i << 20)) /dev/urandom >$GUEST/f$i
		xfs_io -c fsync $GUEST/f$i
		echo "SUM f$i $(sha $GUEST/f$i)"
	done
	# Raw direct writes to fresh (unallocated) blocks, then a flush: the
	# host's extent allocation must be durable, not only the data.
	dd if=/dev/urandom of=/tmp/chunk bs=1M count=8 status=none
	dd if=/tmp/chunk of=/dev/mapper/raw bs=1M seek=16 oflag=direct status=none
	xfs_io -c fsync /dev/mapper/raw
	echo "SUM raw $(sha /tmp/chunk)"
	# Unsynced work in flight when the power goes.
	head -c $((8 << 20)) /dev/urandom >$GUEST/unsynced &
	sleep 1
	vm-powercut
	;;
verify)
	shift
	check "host XFS mounts after the power cut" mount "$SCRATCH_DEV" "$HOST"
	subvol_create vol "$HOST/img" 512
	subvol_create raw "$HOST/raw" 64
	check "guest XFS mounts (log recovery)" mount $DEV $GUEST
	for entry in "$@"; do
		name=${entry%%=*}
		want=${entry#*=}
		if [ "$name" = raw ]; then
			got=$(dd if=/dev/mapper/raw bs=1M skip=16 count=8 iflag=direct status=none |
				sha256sum | cut -d' ' -f1)
		else
			got=$(sha $GUEST/$name)
		fi
		check_eq "fsync'ed $name intact after the power cut" "$want" "$got"
	done
	umount $GUEST
	check "guest xfs_repair -n after recovery" xfs_repair -n $DEV
	dmsetup remove vol
	dmsetup remove raw
	umount "$HOST"
	finish
	;;
esac
