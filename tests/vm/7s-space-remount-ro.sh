# A remount to read-only detaches the filesystem from the device only
# after its last write (kernel-review-2 section 2, item 11). The metadata
# that the log holds but that is not yet written in place (new inode
# chunks and directory blocks: holes of the device) is written when the
# remount pushes the AIL (xfs_log_clean); detached before that, those
# first writes of new blocks go to holes that no promise covers.
# Kprobes on the target's detach and write paths record the order.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

T=/sys/kernel/debug/tracing
host_xfs
backing "$HOST/img" 1024
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G
subvol_create vol "$HOST/img" 1024
mkfs.xfs -q $DEV
mount $DEV $G
check_eq "the guest attaches" attached "$(status_field vol "$F_CLIENT")"
sync

echo 'p:subvol_detach subvol_provider_detach' >$T/kprobe_events
echo 'p:subvol_write subvol_space_write_begin block=%si:u64 nr=%dx:u64' >>$T/kprobe_events
check "kprobes on the target's detach and write paths" test -d $T/events/kprobes/subvol_write

# New metadata in new blocks: logged at once, written in place later.
for d in $(seq 20); do
	mkdir $G/d$d
	for f in $(seq 100); do : >$G/d$d/f$f; done
done
xfs_io -x -c 'log_force' $G 2>/dev/null || sync -f $G
mapped=$(status_field vol "$F_MAPPED")

echo >$T/trace
echo 1 >$T/events/kprobes/enable
check "remount read-only" mount -o remount,ro $G
echo 0 >$T/events/kprobes/enable
check_eq "the remount detaches" none "$(status_field vol "$F_CLIENT")"
grown=$(($(status_field vol "$F_MAPPED") - mapped))
echo "# the remount wrote $grown sectors into holes"
check "it wrote metadata into holes (else this tests nothing)" test "$grown" -gt 0
after=$(awk '/subvol_detach:/ { d = 1; next } d && /subvol_write:/ { n++ } END { print n + 0 }' $T/trace)
check_eq "the detach came once" 1 "$(grep -c 'subvol_detach:' $T/trace)"
check_eq "no write reached the device after the detach" 0 "$after"
check_eq "nothing uncovered" 0 "$(status_field vol "$F_UNCOVERED")"
no_accounting_errors vol
echo >$T/kprobe_events

umount $G
check "xfs_repair -n is clean" xfs_repair -n $DEV
dmsetup remove vol
nothing_left
finish
