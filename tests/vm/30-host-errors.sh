# Host errors reach the submitter with the right status and are not
# retried: out of space on the host is ENOSPC (BLK_STS_NOSPC), any other
# host failure is EIO; the kernel log names the device and the file.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

# A 320 MiB host (mkfs.xfs refuses less than 300 MB) under a 1 GiB volume.
host_xfs 320
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
DEV=/dev/mapper/vol

kmsg_mark
rc=0
dd if=/dev/zero of=$DEV bs=1M count=1024 oflag=direct status=none 2>/tmp/dd.err || rc=$?
check_eq "direct write beyond host space fails" 1 "$rc"
check "the error is ENOSPC, not EIO" grep -q "No space left on device" /tmp/dd.err
log=$(kmsg_since_mark)
check "kernel log names device, file and errno -28" \
	grep -Eq "subvol: [0-9]+:[0-9]+: write of .* failed on $HOST/img: -28" <<<"$log"
check "no I/O error logged for ENOSPC" test -z "$(grep -i 'I/O error' <<<"$log")"

# Buffered writes: writeback fails with ENOSPC and fsync reports it.  (At
# 512 MiB, past what the direct write got backed: every block of it needs
# host space, and the page cache need not take a whole GiB first.)
check_fails "buffered write + fsync beyond host space fails" \
	dd if=/dev/zero of=$DEV bs=1M seek=512 count=64 conv=fsync status=none
check "the device still works for what is backed" \
	dd if=$DEV of=/dev/null bs=1M count=16 iflag=direct status=none

# Free host space and the same write succeeds: nothing is stuck.
dmsetup remove vol
rm "$HOST/img"
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
check "write within host space succeeds" \
	dd if=/dev/urandom of=$DEV bs=1M count=64 oflag=direct status=none

# Any other host failure is an I/O error: shut the host filesystem down.
# (First let the rate limit of the ENOSPC messages above run out.)
sleep 6
kmsg_mark
xfs_io -x -c "shutdown" "$HOST"
dd if=$DEV of=/dev/null bs=4k count=1 iflag=direct status=none 2>/tmp/dd.err || true
check "read after host shutdown fails with EIO" grep -q "Input/output error" /tmp/dd.err
dd if=/dev/zero of=$DEV bs=4k count=1 oflag=direct status=none 2>/tmp/dd.err || true
check "write after host shutdown fails with EIO" grep -q "Input/output error" /tmp/dd.err
check "kernel log names the failed read" \
	grep -Eq "subvol: [0-9]+:[0-9]+: read of 4096 bytes at sector 0 failed on $HOST/img: -5" <<<"$(kmsg_since_mark)"
dmsetup remove vol
umount "$HOST"
dmsetup remove hostdev

finish
