#!/bin/bash
# A guest that removes a large file frees its blocks in transactions
# that tell the device about the free before they release the blocks to
# the guest's free space: the device must not count that as a promise
# the pool backs, or for that moment other volumes' reservations are
# refused (review item 9).  Volume a writes and removes a 240 MiB file,
# three times; meanwhile volume b, with little room left on the host,
# keeps writing and removing small files with fsync, and a sampler
# watches the pool's promises.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 900
mkdir -p /mnt/a /mnt/b
for v in a b; do
	backing "$HOST/$v.img" 1024
	subvol_create $v "$HOST/$v.img" 1024
	mkfs.xfs -q /dev/mapper/$v
	mount /dev/mapper/$v /mnt/$v
done
dd if=/dev/urandom of=/tmp/source bs=1M count=8 status=none
kmsg_mark

# b fills the host but for some 300 MiB (a's file and some room).
b_fill=$((($(free_bytes $HOST) >> 20) - 300))
check "b takes all but 300 MiB of the host" \
	dd if=/dev/zero of=/mnt/b/fill bs=1M count=$b_fill conv=fsync status=none

# sampler: the pool's promised sectors, as often as dmsetup runs, until
# told to stop.
sampler() {
	while [ ! -e /tmp/stop-sampler ]; do status_field b $F_COMMITTED; done >>/tmp/committed
}
# b_writer: 2 MiB files written with fsync and removed, until told to stop.
b_writer() {
	local i=0
	: >/tmp/b.err
	while [ ! -e /tmp/stop ]; do
		i=$((i % 4 + 1))
		dd if=/tmp/source of=/mnt/b/small$i bs=1M count=2 conv=fsync status=none 2>>/tmp/b.err
		rm -f /mnt/b/small$i
	done
}
TR=/sys/kernel/tracing
mount -t tracefs nodev $TR 2>/dev/null
echo 'p:subvol/force subvol_pool_force_commit blocks=%si:u64' >>$TR/kprobe_events
rm -f /tmp/stop /tmp/committed
b_writer &
b_pid=$!
highest=0 highest_forced=0
for round in 1 2 3; do
	dd if=/dev/zero of=/mnt/a/big bs=1M count=160 conv=fsync status=none
	sync
	base=$(status_field b $F_COMMITTED)
	rm -f /tmp/stop-sampler /tmp/committed
	: >$TR/trace
	echo 1 >$TR/events/subvol/force/enable
	sampler &
	sampler_pid=$!
	rm /mnt/a/big
	sync
	touch /tmp/stop-sampler
	wait $sampler_pid
	echo 0 >$TR/events/subvol/force/enable
	max=$(sort -n /tmp/committed | tail -1)
	forced=$(sed -n 's/.*blocks=\([0-9]*\).*/\1/p' $TR/trace | sort -n | tail -1)
	echo "# round $round: pool promised $((base / 2048)) MiB before a's rm, at most $((max / 2048)) MiB in $(wc -l </tmp/committed) samples during it; largest forced commit ${forced:-0} blocks"
	((max - base > highest)) && highest=$((max - base))
	((${forced:-0} > highest_forced)) && highest_forced=$forced
done
touch /tmp/stop
wait $b_pid
check_eq "b's small writes never got ENOSPC" "" "$(sort -u /tmp/b.err)"
check "the pool's sampled promises never rose 32 MiB while a removed its file" \
	test "$highest" -le $((32 * SECTORS_PER_MIB))
check "no forced commit of more than 4 MiB while a removed its file" \
	test "$highest_forced" -le 1024
for v in a b; do
	check_eq "$v: no write reached the host without a promise" 0 "$(status_field $v $F_UNCOVERED)"
	no_accounting_errors $v
done
check_eq "no I/O error in the kernel log" "" "$(kernel_errors)"
for v in a b; do
	umount /mnt/$v
	check "$v: xfs_repair -n is clean" xfs_repair -n /dev/mapper/$v
	dmsetup remove $v
done
finish
