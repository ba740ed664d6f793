#!/bin/bash
# no_space:queue with the space-aware guest (issue 14): the guest reserves
# before it writes, so at host ENOSPC it is its reservation that waits
# for the host to grow, as dm-thin's queue_if_no_space holds writes.  A
# guest writer on a full host sleeps; the host grows (its dm-linear
# reloaded larger and xfs_growfs, as lvextend --resizefs does); the
# writer goes on, with no ENOSPC and every byte intact.  If the host does
# not grow, the writer gets ENOSPC after no_space_timeout, not at once;
# a request larger than the host's free space takes it as it comes, so a
# monitor growing the host by steps smaller than the request meets it;
# with no_space:error at once; and a fatal signal ends the wait.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 400
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024 no_space:queue no_space_timeout:60
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G
check "mkfs.xfs" mkfs.xfs -q $DEV
check "mount" mount $DEV $G
check_eq "the guest reserves from the device" attached "$(status_field vol $F_CLIENT)"
dd if=/dev/urandom of=/tmp/source bs=1M count=96 status=none
# Files the held writers below write, made while the host has room: a
# create reserves its transaction's blocks at once and gets ENOSPC when
# the host cannot back them (creat(2) never waits holding its directory's
# lock; README, "What the guarantee covers"), so whether a writer that
# creates its file on a full host is held or refused at open depends on
# what the pool still holds, and it is the write that must wait.
touch $G/c $G/d

fill_host_but 8
echo "# host free: $(($(free_bytes $HOST) >> 20)) MiB"

# since START: seconds from START ($EPOCHREALTIME) to now.
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }'; }
# timed_write NAME: write /tmp/source to $G/NAME; its error in
# /tmp/NAME.err, its seconds in $secs.
timed_write() {
	local start=$EPOCHREALTIME
	dd if=/tmp/source of="$G/$1" bs=1M conv=fsync status=none 2>"/tmp/$1.err"
	secs=$(since "$start")
}

kmsg_mark
start=$EPOCHREALTIME
dd if=/tmp/source of=$G/a bs=1M conv=fsync status=none 2>/tmp/a.err &
writer=$!
wait_held
check "the writer's reservation is held" reservation_held
sleep 2
check "the writer is still waiting, 2 s later" kill -0 $writer
grow_host 200
check_eq "xfs_growfs the host by 200 MiB" 0 $?
wait $writer
st=$?
secs=$(since "$start")
echo "# the writer finished in $secs s: exit $st $(cat /tmp/a.err)"
check_eq "the writer finished without an error" "0 " "$st $(cat /tmp/a.err)"
check_eq "its data is there" "$(sha /tmp/source)" "$(sha $G/a)"
check_eq "no write reached the host uncovered" 0 "$(status_field vol $F_UNCOVERED)"

# A reservation larger than the host's free space (a 200 MiB fallocate
# with 8 MiB free) takes what the host has as it comes, so the host fills
# up, and a monitor that grows the host by 150 MiB whenever it has less
# than 50 MiB free (as subvol monitor's threshold and step do) grows it
# again until the whole request is backed.  Taken whole or not at all, it
# would wait for a host with 200 MiB free, which such a monitor never
# makes.
subvol_reload vol "$HOST/img" 1024 no_space:queue no_space_timeout:40 low_water:$((100 * SECTORS_PER_MIB))
fill_host_but 8
events0=$(dmsetup info -c --noheadings -o events vol | tr -d ' ')
kmsg_mark
start=$EPOCHREALTIME
fallocate -l 200M $G/pre 2>/tmp/pre.err &
writer=$!
grown=0
while kill -0 $writer 2>/dev/null && [ $grown -lt 4 ]; do
	if [ $(($(free_bytes $HOST) >> 20)) -lt 50 ] && reservation_held; then
		grow_host 150
		grown=$((grown + 1))
	fi
	sleep 0.5
done
wait $writer
st=$?
secs=$(since "$start")
echo "# fallocate of 200 MiB: exit $st in $secs s, the host grown $grown times by 150 MiB; $(cat /tmp/pre.err)"
check_eq "the fallocate succeeded" "0 " "$st $(cat /tmp/pre.err)"
check "the host was grown twice or more, step by step" test $grown -ge 2
check "within the timeout" awk -v s="$secs" 'BEGIN { exit !(s < 40) }'
# No guest write filled a hole meanwhile: the hold itself checks the mark.
check "the held reservation raised the low-water event" \
	test "$(dmsetup info -c --noheadings -o events vol | tr -d ' ')" -gt "$events0"
check "and logged it" sh -c "dmesg | sed -n '/$KMSG_MARK/,\$p' | grep -q 'is below the low-water mark'"
rm -f $G/pre

# The host does not grow: ENOSPC after the timeout, not before.
fill_host_but 8
subvol_reload vol "$HOST/img" 1024 no_space:queue no_space_timeout:8
timed_write b
echo "# with no_space_timeout:8 the writer got: $(cat /tmp/b.err) after $secs s"
check "it got ENOSPC" grep -q "No space left" /tmp/b.err
check "after the timeout (8 s), not at once" awk -v s="$secs" 'BEGIN { exit !(s >= 7.5) }'

# A fatal signal ends the wait.
subvol_reload vol "$HOST/img" 1024 no_space:queue no_space_timeout:600
kmsg_mark
dd if=/tmp/source of=$G/c bs=1M conv=fsync,notrunc status=none 2>/tmp/c.err &
writer=$!
wait_held
sleep 1
check "a writer is held again (no_space_timeout:600)" kill -0 $writer || echo "# the writer: $(cat /tmp/c.err)"
start=$EPOCHREALTIME
kill -9 $writer
wait $writer 2>/dev/null
secs=$(since "$start")
echo "# SIGKILL ended the held writer in $secs s"
check "SIGKILL ends the wait within 5 s" awk -v s="$secs" 'BEGIN { exit !(s < 5) }'

# no_space:error: ENOSPC at once.
subvol_reload vol "$HOST/img" 1024
timed_write d
echo "# with no_space:error: $(cat /tmp/d.err) after $secs s"
check "no_space:error: ENOSPC" grep -q "No space left" /tmp/d.err
check "at once (within 5 s)" awk -v s="$secs" 'BEGIN { exit !(s < 5) }'

rm -f $G/b $G/c $G/d
written=$(stat -c %s $G/a)
check "umount" umount $G
no_accounting_errors vol
check "xfs_repair -n is clean" xfs_repair -n $DEV
check "mount again" mount $DEV $G
check_eq "every acknowledged byte is there" "$(sha /tmp/source)" "$(sha $G/a)"
check_eq "no kernel I/O error or shutdown" "" "$(kernel_errors)"
check "umount at the end" umount $G
dmsetup remove vol
finish
