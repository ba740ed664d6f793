# The space guarantee under competition for the host's last free space:
# a host process outside dm-subvol filling the host filesystem while the
# guest fills its volume, and two volumes on one host filling it at once.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

dd if=/dev/urandom of=/tmp/source bs=1M count=50 status=none
host_xfs 520
mkdir -p /mnt/g1 /mnt/g2 $HOST/filler

# filler: 4 MiB direct writes on the host, going on after ENOSPC, so that
# it takes any host space the pool releases.
filler() {
	local i=0
	while [ $i -lt 300 ] && [ ! -e /tmp/stop-filler ]; do
		i=$((i + 1))
		dd if=/dev/zero of=$HOST/filler/$i bs=1M count=4 oflag=direct status=none 2>/dev/null ||
			rm -f $HOST/filler/$i
	done
}

# 1. A host writer fills the host while the guest fills its volume.
backing "$HOST/img1" 1024
subvol_create vol1 "$HOST/img1" 1024
mkfs.xfs -q /dev/mapper/vol1
mount /dev/mapper/vol1 /mnt/g1
kmsg_mark
rm -f /tmp/stop-filler
filler &
filler_pid=$!
fill /mnt/g1 /tmp/source /tmp/fill1.err
touch /tmp/stop-filler
wait $filler_pid
echo "# guest wrote $(($(bytes_in /mnt/g1) >> 20)) MiB, the host writer $(($(du -sm $HOST/filler | cut -f1))) MiB"
check "host writer: the guest's write(2) failed with ENOSPC" grep -q "No space left on device" /tmp/fill1.err
check "host writer: the host writer got space too (they raced)" test "$(du -sm $HOST/filler | cut -f1)" -gt 0
check_eq "host writer: no write reached the host without a promise" 0 "$(status_field vol1 $F_UNCOVERED)"
guest_checks "host writer" /dev/mapper/vol1 /mnt/g1 /tmp/source
check_eq "host writer: no I/O error, writeback error or shutdown" "" "$(kernel_errors)"
umount /mnt/g1
no_accounting_errors vol1
dmsetup remove vol1
rm -rf $HOST/img1 $HOST/filler

# 2. Two volumes on one host filesystem fill it at the same time.
for i in 1 2; do
	backing "$HOST/img$i" 1024
	subvol_create vol$i "$HOST/img$i" 1024
	mkfs.xfs -q /dev/mapper/vol$i
done
host_free=$(free_bytes $HOST)	# after the guests' logs took their space
for i in 1 2; do mount /dev/mapper/vol$i /mnt/g$i; done
kmsg_mark
fill /mnt/g1 /tmp/source /tmp/fill1.err &
fill /mnt/g2 /tmp/source /tmp/fill2.err &
wait
w1=$(bytes_in /mnt/g1) w2=$(bytes_in /mnt/g2)
echo "# volumes wrote $((w1 >> 20)) and $((w2 >> 20)) MiB of $((host_free >> 20)) MiB the host had free"
# No writer outside the pool took host space here: once the writes are
# over (and balance has claimed back what it released for them), the
# pool's claim covers every promise still held.
pool_backs_promises() {
	local _
	for _ in $(seq 1 20); do
		[ "$(status_field vol1 $F_CLAIMED)" -ge "$(status_field vol1 $F_COMMITTED)" ] && return 0
		sleep 0.25
	done
	echo "claimed $(status_field vol1 $F_CLAIMED), promised $(status_field vol1 $F_COMMITTED) sectors"
	return 1
}
check "two volumes: the pool's claim backs every promise" pool_backs_promises
for i in 1 2; do
	check "two volumes: vol$i's write(2) failed with ENOSPC" grep -q "No space left on device" /tmp/fill$i.err
	check_eq "two volumes: vol$i had no write without a promise" 0 "$(status_field vol$i $F_UNCOVERED)"
	guest_checks "two volumes: vol$i" /dev/mapper/vol$i /mnt/g$i /tmp/source
done
check "two volumes: together they wrote at least 85% of the host's free space" \
	test $(((w1 + w2) * 20)) -ge $((host_free * 17))
check_eq "two volumes: no I/O error, writeback error or shutdown" "" "$(kernel_errors)"
for i in 1 2; do
	umount /mnt/g$i
	no_accounting_errors vol$i
	dmsetup remove vol$i
done
finish
