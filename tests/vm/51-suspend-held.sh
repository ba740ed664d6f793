#!/bin/bash
# A suspend ends in bounded time whatever the device holds (review 2,
# section 2, item 9).  dm waits for every request in flight before a
# suspend completes, and the target holds some without end: a promised
# write the host has no room for (retried until the host frees space), a
# write to a frozen host (until the thaw).  A noflush suspend, as lvm2
# and dm-thin use, gives such requests back to dm, which resubmits them
# after the resume; a suspend with flush gives a held promised write the
# no-space policy.  tests/kmod/subvol-fault.ko turns the host's
# completions into ENOSPC, so that a covered overwrite is held as one the
# host ran out of room for.  A suspend whose sync failed refuses a
# snapshot.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

P=/sys/module/subvol_fault/parameters
host_xfs
backing "$HOST/img" 64
subvol_create vol "$HOST/img" 64
DEV=/dev/mapper/vol
dd if=/dev/urandom of=/tmp/data bs=64K count=1 status=none
check "write the range first: its overwrite is covered" \
	dd if=/dev/zero of=$DEV bs=1M count=1 oflag=direct status=none

# overwrite: 64 KiB of /tmp/data at 128 KiB, in the background; its exit
# status goes to /tmp/dd.st, its error to /tmp/dd.err.
overwrite() {
	rm -f /tmp/dd.st
	{
		dd if=/tmp/data of=$DEV bs=64K seek=2 count=1 oflag=direct status=none 2>/tmp/dd.err
		echo $? >/tmp/dd.st
	} &
}
# held: the overwrite has not finished, a second after it started.
held() { sleep 1; [ ! -e /tmp/dd.st ]; }
# done_within SECS: the overwrite finished within SECS seconds.
done_within() {
	local _
	for _ in $(seq 1 $((4 * $1))); do
		[ -e /tmp/dd.st ] && return 0
		sleep 0.25
	done
	return 1
}
suspended() { dmsetup info vol | grep -q '^State: *SUSPENDED'; }

check "load the fault injector (ENOSPC)" modprobe subvol_fault error=-28
echo 1000000 >$P/count

# A held promised write, noflush suspend: the write goes back to dm.
kmsg_mark
overwrite
check "the promised overwrite is held while the host has no room" held
check "the device says it holds it" sh -c "dmesg | sed -n '/$KMSG_MARK/,\$p' | grep -q 'holding promised writes'"
check "dmsetup suspend --noflush ends (within 20 s)" timeout 20 dmsetup suspend --noflush vol
check "the device is suspended" suspended
check "the overwrite has not failed" test ! -e /tmp/dd.st
echo 0 >$P/count
check "resume" timeout 20 dmsetup resume vol
check "the overwrite completes after the resume" done_within 20
check_eq "and succeeds" "0 " "$(cat /tmp/dd.st 2>&1) $(cat /tmp/dd.err)"
check_eq "its data is on the device" "$(sha /tmp/data)" \
	"$(dd if=$DEV bs=64K skip=2 count=1 iflag=direct status=none | sha256sum | cut -d' ' -f1)"

# With flush, no_space:error: the held promised write gets ENOSPC now.
echo 1000000 >$P/count
overwrite
check "held again" held
check "dmsetup suspend (with flush) ends (within 20 s)" timeout 20 dmsetup suspend vol
check "the overwrite ended" done_within 5
check "with ENOSPC (no_space:error)" grep -q 'No space left' /tmp/dd.err
echo 0 >$P/count
check "resume" dmsetup resume vol

# With flush, no_space:queue: ENOSPC after no_space_timeout, counted from
# the suspend, not at once.
subvol_reload vol "$HOST/img" 64 no_space:queue no_space_timeout:6
echo 1000000 >$P/count
overwrite
check "held again (no_space:queue)" held
start=$SECONDS
check "dmsetup suspend (with flush) ends (within 30 s)" timeout 30 dmsetup suspend vol
secs=$((SECONDS - start))
echo "# the suspend took $secs s"
check "not before no_space_timeout (6 s)" test $secs -ge 5
check "the overwrite ended" done_within 5
check "with ENOSPC" grep -q 'No space left' /tmp/dd.err
echo 0 >$P/count
check "resume" dmsetup resume vol
check "the fault injector unloads" rmmod subvol_fault

# A write held by a frozen host, noflush suspend.
check "freeze the host" xfs_io -x -c freeze "$HOST"
overwrite
check "the overwrite is held while the host is frozen" held
check "dmsetup suspend --noflush ends (within 20 s)" timeout 20 dmsetup suspend --noflush vol
check "the overwrite has not failed" test ! -e /tmp/dd.st
check "thaw the host" xfs_io -x -c thaw "$HOST"
check "resume" timeout 20 dmsetup resume vol
check "the overwrite completes after the resume" done_within 20
check_eq "and succeeds" "0 " "$(cat /tmp/dd.st 2>&1) $(cat /tmp/dd.err)"

# With flush, a frozen host: the suspend waits for the thaw, as any
# device's flush waits for its disk, and a signal ends the wait.
check "freeze the host" xfs_io -x -c freeze "$HOST"
overwrite
check "held again" held
check_fails "a suspend with flush waits for the thaw; timeout interrupts it" timeout 5 dmsetup suspend vol
check "the device is not left suspended" sh -c '! dmsetup info vol | grep -q "^State: *SUSPENDED"'
check "thaw the host" xfs_io -x -c thaw "$HOST"
check "the overwrite completes" done_within 20
check_eq "and succeeds" "0 " "$(cat /tmp/dd.st 2>&1) $(cat /tmp/dd.err)"

# A suspend whose sync failed (the host shut down) is no point for a
# snapshot: the device's writes may not be on the host.
check "shut the host down" xfs_io -x -c shutdown "$HOST"
check "dmsetup suspend" timeout 20 dmsetup suspend vol
kmsg_mark
# refused_for MSG: the kernel logged MSG's refusal for the failed sync.
refused_for() { kmsg_since_mark | grep -q "message $1: the suspend could not sync $HOST/img: -5"; }
check_fails "prepare_snapshot refused" dmsetup message vol 0 prepare_snapshot
check "the log names the failed sync" refused_for prepare_snapshot
touch /tmp/snap
check_fails "snapshot_begin refused" sh -c 'dmsetup message vol 0 "snapshot_begin 7" 7<>/tmp/snap'
check "the log names the failed sync" refused_for snapshot_begin
check "remove" dmsetup remove vol
nothing_left
finish
