#!/bin/bash
# A reservation that no_space:queue holds on a full host waits with none
# of the guest filesystem's locks and no transaction of its own
# (kernel-review-2 section 2, item 6): the wait can last no_space_timeout
# (up to an hour), and what it held would stop every other task that needs
# it for as long.  A page fault waits without the file's MMAPLOCK (an
# extending truncate of the same file goes on meanwhile), an unshare
# without its IOLOCK (a read of the same file goes on), and growfs before
# its transaction (the device warns if a task waits with one open).  Each
# waiter then finishes once the host grows, with its data intact.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 400
backing "$HOST/img" 4096
subvol_create vol "$HOST/img" 4096 no_space:queue no_space_timeout:120
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G
check "mkfs.xfs a 512 MiB guest (80 MiB AGs) on the 4 GiB volume" mkfs.xfs -q -d size=512m,agsize=80m $DEV
check "mount" mount $DEV $G
check_eq "the guest reserves from the device" attached "$(status_field vol $F_CLIENT)"

# waits_in PID FUNCTION: within 10 s, the task PID is seen sleeping in
# FUNCTION (a held fault may go on a little with what the first refusal
# gave back before it waits).
waits_in() {
	local i
	for i in $(seq 1 50); do
		grep -q "$2" "/proc/$1/stack" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# A page fault: 48 MiB written through a shared mapping, 8 MiB free.  No
# writeback meanwhile: the indirect blocks it gives back would let a held
# fault go on for a while, and what waits for its locks with it.
V=/proc/sys/vm
echo $((1 << 30)) >$V/dirty_background_bytes
echo $((1 << 30)) >$V/dirty_bytes
echo 360000 >$V/dirty_expire_centisecs
xfs_io -f -c "truncate 48m" $G/m
fill_host_but 8
kmsg_mark
xfs_io -c "mmap -w 0 48m" -c "mwrite -S 0x5a 0 48m" -c "msync 0 48m" $G/m 2>/tmp/m.err &
writer=$!
check "the mmap writer's reservation is held" wait_held
check "in its page fault" waits_in $writer page_mkwrite
# What the first refusal made the guest give back (its per-CPU grants)
# lets held faults go on a while: wait until that is used up.
sleep 5
truncate -s 64M $G/m &
other=$!
check "an extending truncate of the file (MMAPLOCK) ends meanwhile" ended_within $other 30
check "while the fault is still held" kill -0 $writer
grow_host 200
check_eq "grow the host by 200 MiB" 0 $?
wait $writer
check_eq "the mmap writer finished without an error" "0 " "$? $(cat /tmp/m.err)"
xfs_io -f -c "pwrite -S 0x5a 0 48m" /tmp/z >/dev/null
check_eq "it wrote all 48 MiB" "$(sha /tmp/z)" "$(sha $G/m $((48 << 20)))"
check_eq "the file is 64 MiB" $((64 << 20)) "$(stat -c %s $G/m)"
echo 10 >$V/dirty_background_ratio
echo 20 >$V/dirty_ratio
echo 3000 >$V/dirty_expire_centisecs

# An unshare: 32 MiB of a reflinked copy, 8 MiB free.
dd if=/dev/urandom of=$G/u bs=1M count=32 conv=fsync status=none
check "reflink a copy" cp --reflink=always $G/u $G/u2
fill_host_but 8
kmsg_mark
xfs_io -c "funshare 0 32m" $G/u2 2>/tmp/u.err &
unshare=$!
check "the unshare's reservation is held" wait_held
check "in fallocate" waits_in $unshare xfs_file_fallocate
cat $G/u2 >/dev/null &
other=$!
check "a read of the file (IOLOCK) ends meanwhile" ended_within $other 30
check "while the unshare is still held" kill -0 $unshare
grow_host 200
check_eq "grow the host by 200 MiB" 0 $?
wait $unshare
check_eq "the unshare finished without an error" "0 " "$? $(cat /tmp/u.err)"
check_eq "the copy reads as the original" "$(sha $G/u)" "$(sha $G/u2)"
check_eq "the copy shares no block with it" 0 "$(host_shared_sectors $G/u2)"

# growfs: the headers of 45 new AGs, on a host whose every block is
# taken (a writer got ENOSPC with no_space:error first, and what the
# guest then gave back is taken too).
subvol_reload vol "$HOST/img" 4096
fill_host_but 0
dd if=/dev/zero of=$G/fill bs=1M count=64 conv=fsync status=none 2>/dev/null
fill_host_but 0
subvol_reload vol "$HOST/img" 4096 no_space:queue no_space_timeout:120
kmsg_mark
xfs_growfs -d $G >/tmp/g.out 2>&1 &
grow=$!
check "growfs's reservation is held" wait_held
check "in growfs" waits_in $grow xfs_growfs_data
check_eq "with no transaction open (no warning)" "" "$(kmsg_since_mark | grep -a 'WARNING' || true)"
grow_host 200
check_eq "grow the host by 200 MiB" 0 $?
wait $grow
check_eq "growfs finished without an error" "0 " "$? $(grep -i error /tmp/g.out || true)"
check_eq "the guest is 4 GiB now" 4294967296 \
	"$(xfs_info $G | sed -n 's/^data *= *bsize=\([0-9]*\) *blocks=\([0-9]*\),.*/\1 \2/p' | awk '{ print $1 * $2 }')"

rm -f $G/fill
check "umount" umount $G
no_accounting_errors vol
check_eq "no write reached the host uncovered" 0 "$(status_field vol $F_UNCOVERED)"
check "xfs_repair -n is clean" xfs_repair -n $DEV
check_eq "no kernel I/O error or shutdown" "" "$(kernel_errors)"
dmsetup remove vol
finish
