# Snapshot copies made by the target after the resume (target 1.4.0,
# issue 15): snapshot_begin <fd> while suspended, the copy while the
# guest writes, copy-before-write of every range not yet copied (writes,
# discards, write-zeroes), a reload of the same file carrying the copy on,
# the status field, snapshot_end and snapshot_cancel, and every refused
# message with its one-line reason in the kernel log, nothing changed.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

MIB=$((1 << 20))
host_xfs
# 256 MiB: the first 64 MiB written 4 KiB at a time in random order (one
# host extent each, some 16 000: a copy that takes a while under TCG), the
# rest random data written in order (few extents: content to compare).
backing "$HOST/img" 256
subvol_create vol "$HOST/img" 256
DEV=/dev/mapper/vol
copy() { status_field vol $F_COPY; }
# begin FILE [REDIRECTION...]: snapshot_begin with FILE open read-write
# as fd 7 of dmsetup.
begin() { dmsetup message vol 0 "snapshot_begin 7" 7<>"$1"; }
# log_has TEXT: the kernel logged TEXT for vol (dm names it by its
# number) since the last mark.
NR=$(dmsetup info -c --noheadings -o major,minor --separator : vol)
log_has() { kmsg_since_mark | grep -qF "subvol: $NR: message $1"; }

check_eq "the status line has the copy field, none" "-" "$(copy)"
check "fragment the first 64 MiB" xfs_io -d -c "pwrite -q -R -b 4k -S 0x5a 0 64m" $DEV
check "random data in order after it" dd if=/dev/urandom of=$DEV bs=1M seek=64 count=192 oflag=direct status=none
extents=$(xfs_io -r -c 'fiemap' "$HOST/img" | grep -vc hole)
echo "# backing file: $extents extents"
check "the backing file has thousands of extents" test "$extents" -gt 2000

# The copies go at 16 MiB/s at most, so that the writes, the cancel and
# the remove below race them.
copy_rate_mib 16

# --- refusals: each one line naming the device and the cause
truncate -s 256M $HOST/dst
kmsg_mark
check_fails "snapshot_begin refused while the device is live" begin $HOST/dst
check "the log says it must be suspended" log_has "snapshot_begin: the device must be suspended"
dmsetup suspend vol
before="$(status_field vol $F_SHARED) $(status_field vol $F_COW) $(status_field vol $F_COMMITTED)"
check_fails "a word for the fd refused" dmsetup message vol 0 snapshot_begin seven
check "the log says it is not a number" log_has "snapshot_begin: 'seven' is not a file descriptor number"
check_fails "an fd not open refused" dmsetup message vol 0 snapshot_begin 77
check "the log says it is not open" log_has "snapshot_begin: 77 is not an open file descriptor"
check_fails "a directory refused" sh -c "exec 7<$HOST; dmsetup message vol 0 'snapshot_begin 7'"
check "the log says it is not a regular file" log_has "snapshot_begin: file descriptor 7 is not a regular file"
truncate -s 256M /tmp/other
check_fails "a file on another filesystem refused" begin /tmp/other
check "the log says it is not on the host filesystem" log_has "snapshot_begin: file descriptor 7 is not on the filesystem of $HOST/img"
check_fails "a file open read-only refused" sh -c "exec 7<$HOST/dst; dmsetup message vol 0 'snapshot_begin 7'"
check "the log says it is not open for writing" log_has "snapshot_begin: file descriptor 7 is not open for writing"
check_fails "the backing file itself refused" begin $HOST/img
check "the log says so" log_has "snapshot_begin: file descriptor 7 is the backing file itself"
truncate -s 256M $HOST/other.img
subvol_create other "$HOST/other.img" 256
check_fails "another device's backing file refused" begin $HOST/other.img
check "the log says it is in use" log_has "snapshot_begin: file descriptor 7 is the backing file of a subvol device"
dmsetup remove other
rm $HOST/other.img
truncate -s 1M $HOST/small
check_fails "a smaller file refused" begin $HOST/small
check "the log says it is smaller" log_has "snapshot_begin: file descriptor 7 is smaller than $HOST/img"
check_fails "snapshot_end without a copy refused" dmsetup message vol 0 snapshot_end
check "the log says there is none" log_has "snapshot_end: no snapshot copy"
check_fails "snapshot_cancel without a copy refused" dmsetup message vol 0 snapshot_cancel
check "the log says there is none (cancel)" log_has "snapshot_cancel: no snapshot copy"
check_eq "nothing changed: no copy" "-" "$(copy)"
check_eq "nothing changed: shared, reserve, pool" "$before" \
	"$(status_field vol $F_SHARED) $(status_field vol $F_COW) $(status_field vol $F_COMMITTED)"
check_eq "nothing written to the file" 0 "$(allocated_bytes $HOST/dst)"

# --- a copy, cancelled at once; a second one refused while it runs
check "snapshot_begin" begin $HOST/dst
check_eq "every mapped block counts as shared" "$(status_field vol $F_MAPPED)" "$(status_field vol $F_SHARED)"
truncate -s 256M $HOST/dst2
check_fails "a second snapshot_begin refused" begin $HOST/dst2
check "the log says one is held" log_has "snapshot_begin: a snapshot copy is already held"
check "resume" dmsetup resume vol
check_fails "rescan_sharing refused while a copy is held" dmsetup message vol 0 rescan_sharing
check "the log says why" log_has "rescan_sharing: a snapshot copy is held"
check_fails "snapshot_end of a running copy refused" dmsetup message vol 0 snapshot_end
check "the log says it is not complete" log_has "snapshot_end: the snapshot copy is not complete"
check "snapshot_cancel" dmsetup message vol 0 snapshot_cancel
check_eq "no copy held after the cancel" "-" "$(copy)"
check "the kernel log says it was cancelled" sh -c "dmesg | grep -q '$NR: snapshot copy of $HOST/img cancelled'"
check "rescan_sharing works again" dmsetup message vol 0 rescan_sharing
rm -f $HOST/dst $HOST/dst2 $HOST/small /tmp/other

# --- the point in time: writes, discards and write-zeroes racing the copy
sum=$(sha $DEV)
sum60=$(dd if=$DEV bs=1M skip=60 count=2 iflag=direct status=none | sha256sum | cut -d' ' -f1)
events() { dmsetup info vol | awk '/^Event number:/ { print $3 }'; }
truncate -s 256M $HOST/dst
dmsetup suspend vol
t0=$(awk '{ print int($1 * 1000) }' /proc/uptime)
check "snapshot_begin" begin $HOST/dst
dmsetup resume vol
t1=$(awk '{ print int($1 * 1000) }' /proc/uptime)
echo "# suspended for snapshot_begin: $((t1 - t0)) ms (with the dmsetup calls)"
first=$(copy)
echo "# copy right after the resume: $first"
# Units far from where the copier starts, and near it; each unit touched.
xfs_io -d -c "pwrite -q -S 0xa5 -b 64k 60m 2m" -c "pwrite -q -S 0xa5 -b 4k 1m 8k" \
	-c "pwrite -q -S 0xa5 -b 1m 200m 4m" $DEV
blkdiscard -o $((40 * MIB)) -l $((2 * MIB)) $DEV
blkdiscard -z -o $((250 * MIB)) -l $((2 * MIB)) $DEV
# A reload of the same table keeps the copy going.
table=$(dmsetup table vol)
check "reload the same table during the copy" sh -c "dmsetup load vol --table '$table' && dmsetup resume vol"
xfs_io -d -c "pwrite -q -S 0xa5 -b 64k 62m 1m" $DEV
during=$(copy)
echo "# copy after the writes: $during"
ev=$(events)
check "the writes raced the copy (it was still running)" test "${during#*/}" != "$during"
check_eq "the copy completes" done "$(wait_copy vol)"
check "with a dm event" test "$(events)" -gt "$ev"
check "snapshot_end" dmsetup message vol 0 snapshot_end
check_eq "no copy held after snapshot_end" "-" "$(copy)"
check_eq "the copy is the device at the suspend" "$sum" "$(sha $HOST/dst)"
check_eq "an overwritten range holds its old data in the copy" "$sum60" \
	"$(dd if=$HOST/dst bs=1M skip=60 count=2 status=none | sha256sum | cut -d' ' -f1)"
check_eq "and the new data on the device" \
	"$(head -c $((2 * MIB)) /dev/zero | tr '\0' '\245' | sha256sum | cut -d' ' -f1)" \
	"$(dd if=$DEV bs=1M skip=60 count=2 iflag=direct status=none | sha256sum | cut -d' ' -f1)"
check_eq "a discarded range reads zeroes on the device" 0 \
	"$(dd if=$DEV bs=1M skip=40 count=2 iflag=direct status=none | tr -d '\0' | wc -c)"
check "and holds its old data in the copy" test "$(dd if=$HOST/dst bs=1M skip=40 count=2 status=none | tr -d '\0' | wc -c)" -gt 0
check "the copy shares blocks with the image" test "$(host_shared_sectors $HOST/dst)" -gt 0
check "the kernel log says the copy completed" sh -c "dmesg | grep -q '$NR: snapshot copy of img complete'"

# --- a frozen host: a write that must first clone its range is held, as
# any write is then, not left blocking its queue; a read queued behind it
# (same CPU, same queue) completes; the copy waits for the thaw.
sum=$(sha $DEV)
copy_rate_mib 1
truncate -s 256M $HOST/dst4
dmsetup suspend vol
check "snapshot_begin" begin $HOST/dst4
dmsetup resume vol
check "freeze the host filesystem" fsfreeze --freeze $HOST
taskset -c 0 xfs_io -d -c "pwrite -q -S 0xc3 -b 64k 150m 64k" $DEV &
wpid=$!
sleep 1
check "a write to a range not copied yet waits for the thaw" test -d /proc/$wpid
frozen_copy=$(copy)
# In the background: a read that hung would hang the test until the thaw.
rm -f /tmp/read-done
(taskset -c 0 dd if=$DEV of=/dev/null bs=64k skip=$((200 * 16)) count=1 iflag=direct status=none &&
	touch /tmp/read-done) &
for i in $(seq 50); do [ -e /tmp/read-done ] && break; sleep 0.2; done
check "a read queued behind it completes meanwhile" test -e /tmp/read-done
check_eq "the copy does not move while the host is frozen" "$frozen_copy" "$(copy)"
check "thaw the host filesystem" fsfreeze --unfreeze $HOST
wait $wpid
check_eq "the write completes" 0 $?
wait
copy_rate_mib 0
check_eq "the copy completes" done "$(wait_copy vol)"
check "snapshot_end" dmsetup message vol 0 snapshot_end
check_eq "the copy is the device at the suspend, before the held write" "$sum" "$(sha $HOST/dst4)"
check_eq "the device has the write" \
	"$(head -c 65536 /dev/zero | tr '\0' '\303' | sha256sum | cut -d' ' -f1)" \
	"$(dd if=$DEV bs=64k skip=$((150 * 16)) count=1 iflag=direct status=none | sha256sum | cut -d' ' -f1)"
rm -f $HOST/dst4
copy_rate_mib 16

# --- a copy that a table on another target cancels
rm -f $HOST/dst
truncate -s 256M $HOST/dst3
dmsetup suspend vol
check "snapshot_begin" begin $HOST/dst3
dmsetup resume vol
check "replace the table by an error target during the copy" \
	sh -c "dmsetup load vol --table '0 $((256 * SECTORS_PER_MIB)) error' && dmsetup resume vol"
check_eq "the kernel log says the copy was cancelled" 1 \
	"$(kmsg_since_mark | grep -c "$NR: snapshot copy of img cancelled: the device is going away")"
check "load the subvol table again" \
	sh -c "dmsetup load vol --table '$table' && dmsetup resume vol"
check_eq "with no copy" "-" "$(copy)"
rm -f $HOST/dst3
kmsg_mark

# --- a copy the device's removal cancels: the file is let go
truncate -s 256M $HOST/dst2
dmsetup suspend vol
check "snapshot_begin" begin $HOST/dst2
dmsetup resume vol
check "remove the device during the copy" dmsetup remove vol
check "the kernel log says the copy was cancelled" \
	sh -c "dmesg | grep -q '$NR: snapshot copy of img cancelled: the device is going away'"
check "the device activates again" subvol_create vol "$HOST/img" 256
check_eq "with no copy" "-" "$(copy)"
check "its data is the writes' after all" test "$(dd if=$DEV bs=1M skip=60 count=1 iflag=direct status=none | tr -d '\245' | wc -c)" -eq 0
check "remove it" dmsetup remove vol
rm -f $HOST/dst2
check "the host filesystem is clean" sh -c "umount $HOST && xfs_repair -n ${SCRATCH_DEV} >/dev/null 2>&1"
check_eq "no kernel errors" "" "$(kernel_errors)"
finish
