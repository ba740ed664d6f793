#!/bin/bash
# A frozen host filesystem gets no writes from the device: writes wait
# for the thaw (the freeze protection that aio takes), reads go on, and
# nothing is lost.  Without it, an overwrite of allocated blocks changed
# the frozen host's data under fsfreeze (snapshots of the host device
# taken while frozen would then be inconsistent).
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

# freeze_host WHAT: freeze the host within 30 s, or end the test.  A write
# that kept the host's freeze protection after it completed would make the
# freeze wait for ever (vfs_iocb_iter_write() takes that protection itself
# since 6.8, so a caller that also takes it holds it twice).
freeze_host() {
	local freezer
	xfs_io -x -c freeze "$HOST" &
	freezer=$!
	if ! check "$1 (within 30 s)" ended_within $freezer 30; then
		finish
		exit
	fi
	wait $freezer
}

host_xfs
backing "$HOST/img" 64
subvol_create vol "$HOST/img" 64
DEV=/dev/mapper/vol
kmsg_mark
check "write 1 MiB of ones (allocates)" sh -c \
	"tr '\\000' '\\001' </dev/zero | dd of=$DEV bs=1M count=1 oflag=direct iflag=fullblock status=none"
before=$(sha "$HOST/img" 1048576)

freeze_host "freeze the host after a write"
dd if=/dev/zero of=$DEV bs=1M count=1 oflag=direct status=none 2>/tmp/dd.err &
writer=$!
sleep 3
check "the overwrite waits while the host is frozen" kill -0 $writer
check_eq "the frozen host's file is unchanged" "$before" "$(sha "$HOST/img" 1048576)"
check "reads go on while frozen" dd if=$DEV of=/dev/null bs=1M count=1 iflag=direct status=none
check "thaw the host" xfs_io -x -c thaw "$HOST"
wait $writer
check_eq "the overwrite completes after the thaw" "0 " "$? $(cat /tmp/dd.err)"
check_eq "and reached the file" 0 "$(nonzero_bytes "$HOST/img" 1048576)"
check "write 8 MiB more" dd if=/dev/zero of=$DEV bs=1M count=8 seek=1 oflag=direct status=none
freeze_host "freeze the host again after those writes"
check "thaw it" xfs_io -x -c thaw "$HOST"
check_eq "no I/O error in the kernel log" "" "$(kernel_errors)"
dmsetup remove vol
finish
