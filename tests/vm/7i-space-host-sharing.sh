# Sharing comes from the host's extent map (issue 12): an image written
# outside the target activates on a host with less free space than it
# holds; "rescan_sharing" gives the reserve of a removed clone back and
# claims it for a clone made outside the target, also while writes run;
# `subvol remove` of a snapshot gives its origin's reserve back.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

mib() { echo $(($1 * SECTORS_PER_MIB)); }

host_xfs 1024
kmsg_mark

# An image written by dd (no sharing record), with an unwritten extent:
# 600 MiB of data on a host with about 350 MiB left.
truncate -s 1G $HOST/img
dd if=/dev/urandom of=$HOST/img bs=1M count=600 conv=notrunc,fsync status=none
fallocate -o 700M -l 50M $HOST/img
echo "# host free: $(($(free_bytes $HOST) >> 20)) MiB"
check "an image written by dd activates with guarantee:full on a host with less free space" \
	subvol_create vol $HOST/img 1024
check_eq "none of its blocks counts as shared" 0 "$(status_field vol $F_SHARED)"
check_eq "its data and its unwritten extent count as mapped" "$(mib 650)" "$(status_field vol $F_MAPPED)"
check "remove it" dmsetup remove vol
rm $HOST/img

# A live volume with 200 MiB written.
truncate -s 512M $HOST/img
subvol_create vol $HOST/img 512
dd if=/dev/urandom of=/dev/mapper/vol bs=1M count=200 oflag=direct status=none
committed0=$(status_field vol $F_COMMITTED)

dmsetup suspend vol
dmsetup message vol 0 prepare_snapshot
cp --reflink=always $HOST/img $HOST/snap
dmsetup resume vol
check_eq "after a snapshot every mapped block is shared" "$(mib 200)" "$(status_field vol $F_SHARED)"
check_eq "and has its reserve" "$(mib 200)" "$(status_field vol $F_COW)"

truncate -s 0 $HOST/snap
rm $HOST/snap
check "rescan_sharing after the snapshot is removed" dmsetup message vol 0 rescan_sharing
check_eq "no block is shared any more" 0 "$(status_field vol $F_SHARED)"
check_eq "the reserve is given back" 0 "$(status_field vol $F_COW)"
check_eq "the pool's commitment is what it was before the snapshot" "$committed0" \
	"$(status_field vol $F_COMMITTED)"

# A clone made outside the target, without prepare_snapshot.
dmsetup suspend vol
cp --reflink=always $HOST/img $HOST/clone
dmsetup resume vol
check "rescan_sharing after a clone made outside the target" dmsetup message vol 0 rescan_sharing
check_eq "its blocks count as shared" "$(mib 200)" "$(status_field vol $F_SHARED)"
check_eq "with their reserve" "$(mib 200)" "$(status_field vol $F_COW)"

# Rescans racing writes over shared blocks: afterwards the device counts
# what the host reports, and the reserve matches.
(
	for i in $(seq 40); do
		dd if=/dev/urandom of=/dev/mapper/vol bs=4k count=64 seek=$((RANDOM % 51200)) \
			oflag=direct conv=notrunc status=none || echo "write $i failed"
	done
) >/tmp/writes.err 2>&1 &
writer=$!
rescans=0
while kill -0 $writer 2>/dev/null; do
	dmsetup message vol 0 rescan_sharing && rescans=$((rescans + 1))
done
wait $writer
echo "# $rescans rescans raced the writes"
check_eq "no write failed" "" "$(cat /tmp/writes.err)"
check "rescans ran during the writes" test $rescans -gt 0
sync
dmsetup message vol 0 rescan_sharing
check_eq "shared is what the host reports" "$(host_shared_sectors $HOST/img)" \
	"$(status_field vol $F_SHARED)"
check "some blocks were overwritten" test "$(status_field vol $F_SHARED)" -lt "$(mib 200)"
check_eq "the reserve matches" "$(status_field vol $F_SHARED)" "$(status_field vol $F_COW)"

# A clone the host has no space for: counted as shared anyway, and the
# message says so.
rm $HOST/clone
dmsetup message vol 0 rescan_sharing
# Leave the host 60 MiB and the pool no more spare claim than that: the
# pool gives its spare claim back to a host that runs low, a step at a
# time, so fill again until both hold at once (what it gave back after
# the last fill is host space again).
mkdir -p $HOST/filler
for i in $(seq 40); do
	left=$(($(free_bytes $HOST) - (60 << 20)))
	[ $left -le 0 ] || fallocate -l $left $HOST/filler/$i
	sleep 0.5
	spare=$(($(status_field vol $F_CLAIMED) - $(status_field vol $F_COMMITTED)))
	[ $spare -lt "$(mib 60)" ] && [ "$(free_bytes $HOST)" -le $((64 << 20)) ] && break
done
echo "# host free: $(($(free_bytes $HOST) >> 20)) MiB, pool spare: $((spare / SECTORS_PER_MIB)) MiB"
dmsetup suspend vol
cp --reflink=always $HOST/img $HOST/clone
dmsetup resume vol
check_fails "rescan_sharing fails without host space for the new reserve" \
	dmsetup message vol 0 rescan_sharing
check "and says why" sh -c "dmesg | grep -q 'message rescan_sharing: no host space to back newly shared blocks of $HOST/img'"
check_eq "the blocks count as shared all the same" "$(host_shared_sectors $HOST/img)" \
	"$(status_field vol $F_SHARED)"
rm -r $HOST/filler
truncate -s 0 $HOST/clone
rm $HOST/clone
check "with the clone gone, rescan_sharing succeeds" dmsetup message vol 0 rescan_sharing
check_eq "and nothing is shared" 0 "$(status_field vol $F_SHARED)"
check_eq "no write was uncovered" 0 "$(status_field vol $F_UNCOVERED)"
no_accounting_errors vol
check "a wrong argument count is refused" sh -c "! dmsetup message vol 0 rescan_sharing now"
dmsetup remove vol
rm $HOST/img

# The tool: removing a snapshot gives its origin's reserve back.
export SUBVOL_CONFIG_DIR=/tmp/subvol-etc
check "pool create" subvol pool create --name tank $HOST/pool
check "create" subvol create --size 256M tank/vm
dd if=/dev/urandom of=/dev/subvol/tank/vm bs=1M count=100 oflag=direct status=none
check "snapshot" subvol snapshot tank/vm s1
check_eq "the origin's data is shared" "$(mib 100)" "$(status_field subvol-tank-vm $F_SHARED)"
check "remove the snapshot" subvol remove tank/s1
check_eq "the origin's data is no longer shared" 0 "$(status_field subvol-tank-vm $F_SHARED)"
check_eq "and its reserve is given back" 0 "$(status_field subvol-tank-vm $F_COW)"
check "deactivate" subvol deactivate tank/vm
check_eq "no I/O error in the kernel log" "" "$(kernel_errors)"
finish
