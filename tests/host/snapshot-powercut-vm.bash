# In-VM half of tests/host/snapshot-powercut.sh.
#   write: a pool on the scratch disk's XFS, a volume with two 128 MiB files;
#          print the host's free space with the volume inactive; then
#          snapshot --no-wait with the copy slowed, overwrite the file
#          (the copy then holds its old data alone), fsync, cut the power.
#   verify FREE SUM: boot on the same disk: no snapshot, the free space of
#          before (the unnamed copy freed), the origin activates and holds
#          the overwritten file.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

# On the host filesystem, so that the pool is known after the reboot.
export SUBVOL_CONFIG_DIR=$HOST/etc
P=$HOST/pool G=/mnt/guest
mkdir -p "$HOST" $G /mnt/snap

case $1 in
write)
	mkfs.xfs -q -f "$SCRATCH_DEV"
	mount "$SCRATCH_DEV" "$HOST"
	subvol pool create --name tank $P
	subvol create --size 512M --mkfs tank/vm
	mount /dev/subvol/tank/vm $G
	dd if=/dev/urandom of=$G/data bs=1M count=128 conv=fsync status=none
	# Not overwritten: the copy's worker clones it, slowly.
	dd if=/dev/urandom of=$G/keep bs=1M count=128 conv=fsync status=none
	umount $G
	subvol deactivate tank/vm
	sync
	echo "FREE $(free_bytes $HOST)"
	subvol activate tank/vm
	mount /dev/subvol/tank/vm $G
	echo 4 >/sys/module/dm_subvol/parameters/copy_rate_mib
	subvol snapshot --no-wait tank/vm s1 | sed 's/^/# /'
	dd if=/dev/urandom of=$G/data bs=1M count=128 conv=notrunc,fsync status=none
	echo "SUM $(sha $G/data)"
	echo "COPY $(dmsetup status subvol-tank-vm | awk '{ print $NF }')"
	echo "# host free during the copy: $(($(free_bytes $HOST) >> 20)) MiB"
	sync
	vm-powercut
	;;
verify)
	check "host XFS mounts after the power cut" mount "$SCRATCH_DEV" "$HOST"
	check_fails "no snapshot was named" test -e $P/s1.img
	check_eq "nor any hidden file" "" "$(ls -A $P | grep '^\.' || true)"
	free=$(free_bytes $HOST)
	echo "# host free: $(($2 >> 20)) MiB before, $((free >> 20)) MiB after"
	check "the host has the copy's space back (within 16 MiB)" test "$free" -gt $(($2 - (16 << 20)))
	check "the origin activates" subvol activate tank/vm
	check "its XFS mounts (log recovery)" mount /dev/subvol/tank/vm $G
	check_eq "the file fsync'ed during the copy is intact" "$3" "$(sha $G/data)"
	umount $G
	check "xfs_repair -n of the origin" xfs_repair -n /dev/subvol/tank/vm
	check "deactivate" subvol deactivate tank/vm
	umount "$HOST"
	finish
	;;
esac
