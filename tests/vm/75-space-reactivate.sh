# Counters across deactivation, activation and remount: promises and
# sharing are the same afterwards, and after deleting everything and
# trimming nothing stays promised beyond what the guest reserves itself.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

dd if=/dev/urandom of=/tmp/source bs=1M count=50 status=none
host_xfs 1024
backing "$HOST/img" 1024
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G
subvol_create vol "$HOST/img" 1024
mkfs.xfs -q $DEV
mount $DEV $G
# The guest's per-CPU grants (blocks reserved ahead of need) go back to
# the device at sync: promises are compared without them.
sync
base=$(status_field vol $F_PROMISED)
for i in 1 2; do dd if=/tmp/source of=$G/f$i bs=1M conv=fsync status=none; done
sync
counters() { echo "$(status_field vol $F_MAPPED) $(status_field vol $F_SHARED) $(status_field vol $F_PROMISED)"; }
c1=$(counters)
echo "# mapped shared promised: $c1"

umount $G
dmsetup remove vol
subvol_create vol "$HOST/img" 1024
check_eq "after activation: mapped and shared as before" "$(echo $c1 | cut -d' ' -f1-2)" \
	"$(status_field vol $F_MAPPED) $(status_field vol $F_SHARED)"
check "mount read-only" mount -o ro $DEV $G
check_eq "a read-only mount does not reserve" none "$(status_field vol $F_CLIENT)"
check "remount read-write" mount -o remount,rw $G
check_eq "the remount attaches" attached "$(status_field vol $F_CLIENT)"
# A sync gives the guest's per-CPU grants back (patch 0011): promised is
# then what the guest holds, as it was when c1 was taken.
sync
check_eq "after remount: mapped, shared and promised as before" "$c1" "$(counters)"
check "remount read-only" mount -o remount,ro $G
check_eq "the remount detaches" none "$(status_field vol $F_CLIENT)"
check_eq "and gives every promise back" 0 "$(status_field vol $F_PROMISED)"
check "remount read-write again" mount -o remount,rw $G

# A snapshot: everything shared, which stays known across reactivation.
record() { getfattr --absolute-names -n trusted.dm-subvol.shared $HOST/img >/dev/null 2>&1; }
check "the last removal wrote a sharing record" record
dmsetup suspend vol
check "prepare_snapshot" dmsetup message vol 0 prepare_snapshot
# Writing one in the suspend walks the whole extent map; an old one would
# count too little sharing after a crash.
check_fails "prepare_snapshot removed it" record
cp --reflink=always $HOST/img $HOST/snap
check_eq "after the snapshot: every mapped block shared" "$(status_field vol $F_MAPPED)" "$(status_field vol $F_SHARED)"
dmsetup resume vol
umount $G
c2=$(counters)
dmsetup remove vol
check "the removal wrote it again" record
subvol_create vol "$HOST/img" 1024
# The host shares no unwritten extent (mkfs's zeroed log): the map
# counted them shared, the host's extent map does not.
check_eq "after activation: shared is what the host reports" "$(host_shared_sectors $HOST/img)" \
	"$(status_field vol $F_SHARED)"
check "and no more than before" test "$(status_field vol $F_SHARED)" -le "$(echo $c2 | cut -d' ' -f2)"
check_eq "the copy-on-write reserve is claimed again" "$(status_field vol $F_SHARED)" "$(status_field vol $F_COW)"
check "a clone's copied sharing record is not trusted" sh -c "
	cp -a --reflink=always $HOST/img $HOST/copy &&
	dmsetup create copy --readonly --table '0 2097152 subvol $HOST/copy' &&
	test \$(dmsetup status copy | awk '{ print \$13 }') -eq \$(dmsetup status copy | awk '{ print \$12 }') &&
	dmsetup remove copy"
check "mount after the snapshot" mount $DEV $G

# Delete and trim: the shared blocks the guest freed are unmapped and
# their reserve is given back; nothing stays promised.
rm $G/f1 $G/f2
fstrim $G
sync
umount $G
dmsetup remove vol
subvol_create vol "$HOST/img" 1024
mount $DEV $G
# Frees the mount does in the background are promised until their
# transactions release them: wait up to 5 s for the promise to settle
# (and the grants to go back at each sync).
for _ in $(seq 50); do
	sync
	[ "$(status_field vol $F_PROMISED)" = "$base" ] && break
	sleep 0.1
done
check_eq "after delete, trim, reactivation and remount: promises back to the base" "$base" \
	"$(status_field vol $F_PROMISED)"
check "the freed blocks are no longer shared" \
	test "$(status_field vol $F_SHARED)" -lt $(($(echo $c2 | cut -d' ' -f2) - 100 * 2048))
check_eq "the reserve covers what is still shared" "$(status_field vol $F_SHARED)" "$(status_field vol $F_COW)"
no_accounting_errors vol
umount $G
dmsetup remove vol
finish
