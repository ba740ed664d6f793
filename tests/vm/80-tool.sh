# The subvol tool end to end: every command on real devices, every
# refusal with its message, a snapshot taken while a writer runs (what the
# guest had made durable before the freeze is in the snapshot, the rest is
# a consistent prefix), rollback, online growth seen by xfs_growfs, and a
# snapshot refused for lack of host space that leaves the device running.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

export SUBVOL_CONFIG_DIR=/tmp/subvol-etc
dd if=/dev/urandom of=/tmp/source bs=1M count=8 status=none
head -c 1M /tmp/source >/tmp/wsource
host_xfs 1400
P=$HOST/pool G=/mnt/guest
mkdir -p $G /mnt/snap /mnt/clone

# out CMD...: CMD's output and error together, for message checks.
out() { "$@" 2>&1; }
# has TEXT CMD...: CMD fails and its message holds TEXT.
refused() {
	local name=$1 text=$2 o s=0
	shift 2
	o=$("$@" 2>&1) || s=$?
	if [ $s -ne 0 ] && [[ $o == *"$text"* ]]; then
		check_eq "$name" 1 1
	else
		check_eq "$name (exit $s)" "refused, saying \"$text\"" "$o"
	fi
}

# --- pools and creation
check "pool create" subvol pool create --name tank $P
check "the pool is registered" test -L $SUBVOL_CONFIG_DIR/pools/tank
check "create with mkfs" subvol create --size 512M --mkfs tank/vm1
DEV=/dev/mapper/subvol-tank-vm1
check "the device is there" test -b $DEV
check_eq "the /dev/subvol link points to it" "$(readlink -f $DEV)" "$(readlink -f /dev/subvol/tank/vm1)"
check "its dm UUID has the SUBVOL- prefix" \
	sh -c "dmsetup info -c --noheadings -o uuid subvol-tank-vm1 | grep -q '^SUBVOL-[0-9a-f]\{32\}-[0-9a-f]\{32\}\$'"
check_eq "its table names the image" "0 1048576 subvol $P/vm1.img" "$(dmsetup table subvol-tank-vm1)"
check "it holds an XFS" sh -c "xfs_db -r -c 'sb 0' -c 'p magicnum' $DEV | grep -q 0x58465342"
check "create with every policy" subvol create --size 320M --guarantee none \
	--no-space queue --no-space-timeout 5 --low-water 8M --ignore-discard --mkfs tank/vm2
check_eq "the table carries the policies" \
	"0 655360 subvol $P/vm2.img 5 ignore_discard guarantee:none no_space:queue no_space_timeout:5 low_water:16384" \
	"$(dmsetup table subvol-tank-vm2)"
# The space-aware XFS asks a device without the guarantee too (no pool).
check "its XFS mounts" mount /dev/subvol/tank/vm2 $G
check "and takes writes" dd if=/tmp/source of=$G/f bs=1M conv=fsync status=none
check "umount" umount $G
check "a dash in a name is doubled in the device name" subvol create --size 16M tank/a-b
check "subvol-tank-a--b exists" test -b /dev/mapper/subvol-tank-a--b
check "and its link is /dev/subvol/tank/a-b" test -L /dev/subvol/tank/a-b

refused "create of an existing volume refused" "volume tank/vm1: exists already" \
	subvol create --size 16M tank/vm1
refused "create in an unknown pool refused" "pool nopool: no such pool" \
	subvol create --size 16M nopool/x
check_status "a usage error exits 2" 2 subvol create tank/x
check "activate of an active volume says so, and is fine" \
	sh -c "subvol activate tank/vm1 | grep -q 'is already active as /dev/mapper/subvol-tank-vm1'"
check "deactivate" subvol deactivate tank/vm2 tank/a-b
check_fails "the device is gone" test -e /dev/mapper/subvol-tank-vm2
check_fails "and its link" test -e /dev/subvol/tank/vm2
check "deactivate of an inactive volume is fine" subvol deactivate tank/vm2
check "remove of an inactive volume" subvol remove tank/vm2 tank/a-b
check_fails "its image is gone" test -e $P/vm2.img

# --- a mounted volume
mount $DEV $G
for i in 1 2 3; do dd if=/tmp/source of=$G/base$i bs=1M conv=fsync status=none; done
refused "remove of an active volume refused" "active as /dev/mapper/subvol-tank-vm1; deactivate it first" \
	subvol remove tank/vm1
refused "deactivate of a mounted volume refused" "is in use" subvol deactivate tank/vm1
refused "rollback of an active volume refused" "unmount and deactivate it first" \
	subvol rollback tank/vm1 nosnap
refused "shrinking an active volume refused" "shrinking needs the volume inactive" \
	subvol resize --size 256M tank/vm1

# status as the target reports it
check "status" subvol status tank/vm1
backed=$(subvol status --bytes tank/vm1 | awk '/^Backed:/ { print $2 }')
check_eq "status: backed is the target's" $(($(status_field subvol-tank-vm1 $F_BACKED) * 512)) "$backed"
check "status: state active, client attached" \
	sh -c "subvol status tank/vm1 | grep -q '^State: *active\$' && subvol status tank/vm1 | grep -q '^Client: *attached\$'"

# --- a snapshot while a writer runs.  The writer writes numbered 1 MiB
# files and logs each one after its fsync returned.  It stops at 256, so
# what the volume holds does not depend on how long the snapshot's
# background copy takes: the space checks below count on it.
writer() {
	local i=0
	while [ ! -e /tmp/stop ] && [ $i -lt 256 ]; do
		i=$((i + 1))
		dd if=/tmp/wsource of=$G/w$i bs=64k conv=fsync status=none || break
		echo $i >>/tmp/done
	done
}
: >/tmp/done
rm -f /tmp/stop
writer &
wpid=$!
sleep 2
before=$(tail -n 1 /tmp/done)
snap_out=$(out subvol snapshot tank/vm1 snap1)
snap_status=$?
sleep 1
touch /tmp/stop
wait $wpid
check_eq "snapshot while a writer runs" 0 "$snap_status"
echo "# $snap_out"
check "it says how long the device was suspended" grep -q "suspended for [0-9.]* ms" <<<"$snap_out"
check "the writer went on after it" test "$(tail -n 1 /tmp/done)" -gt "${before:-0}"
check_eq "the device is running again" "ACTIVE" \
	"$(dmsetup info subvol-tank-vm1 | awk '/^State:/ { print $2 }')"
check "activate the snapshot" subvol activate tank/snap1
check "it is read-only" sh -c "dmsetup info subvol-tank-snap1 | grep -q 'READ-ONLY'"
check "the snapshot's XFS is clean" sh -c "xfs_repair -n /dev/mapper/subvol-tank-snap1 2>&1 | grep -v '^Phase\|^ *- \|^No modify\|^ *agno\|^ *\*'; exit \$?"
check "mount it beside its origin, as the tool says" \
	mount -o ro,nouuid,norecovery /dev/subvol/tank/snap1 /mnt/snap
missing=0
for i in $(seq 1 "${before:-0}"); do
	[ "$(sha /mnt/snap/w$i 2>/dev/null)" = "$(sha /tmp/wsource)" ] || missing=$((missing + 1))
done
check_eq "every file made durable before the snapshot is in it, whole" 0 "$missing"
check_eq "every file in it is a prefix of what was written" 0 "$(prefixes_mismatch /mnt/snap /tmp/source)"
check_eq "the base files are in it" "$(sha $G/base2)" "$(sha /mnt/snap/base2)"
umount /mnt/snap
refused "snapshot to an existing name refused" "volume tank/snap1: exists already" \
	subvol snapshot tank/vm1 snap1
refused "snapshot into another pool refused" "is not in pool tank" \
	subvol snapshot tank/vm1 other/s
refused "resize of a snapshot refused" "a snapshot is read-only" \
	subvol resize --size 1G tank/snap1

# --- clone: writable, with its own XFS UUID, mounts beside its origin
check "clone" subvol clone --activate tank/snap1 c1
refused "clone of a volume refused" "not a snapshot" subvol clone tank/vm1 c2
check "the clone mounts beside its origin without nouuid" mount /dev/subvol/tank/c1 /mnt/clone
check "it is writable" dd if=/tmp/source of=/mnt/clone/new bs=1M conv=fsync status=none
check_eq "it has the snapshot's files" "$(sha $G/base1)" "$(sha /mnt/clone/base1)"
umount /mnt/clone
check "deactivate the clone and the snapshot" subvol deactivate tank/c1 tank/snap1
# The snapshot is sealed (immutable): the target writes no sharing record
# into it at release, and says nothing about it.
check "the snapshot's image is immutable" sh -c "xfs_io -r -c 'lsattr -v' $P/snap1.img | grep -q immutable"
check_eq "no sharing record written or refused at its release" "0 0" \
	"$(getfattr --absolute-names -n trusted.dm-subvol.shared $P/snap1.img 2>/dev/null | grep -c .) $(dmesg | grep -c 'cannot write the sharing record')"

# --- grow online, seen by xfs_growfs
check "grow online" subvol resize --size 768M tank/vm1
check_eq "the device is 768 MiB" $((768 << 20)) "$(blockdev --getsize64 $DEV)"
check "xfs_growfs" xfs_growfs $G
check "the guest sees more than 700 MiB" test "$(stat -f -c '%b * %S' $G | awk '{ print int($1 * $3 / 1048576) }')" -gt 700
check "the guest writes past the old end" dd if=/dev/zero of=$G/big bs=1M count=300 conv=fsync status=none
rm -f $G/big
# Trimmed, the image no longer holds it, and the snapshot does not need a
# reserve for it.
check "fstrim gives the blocks back to the host" fstrim $G
check "a snapshot of the grown volume" subvol snapshot tank/vm1 snap2

# --- no host space for the copy-on-write reserve: refused, device running
# After snap2 nothing is exclusive: 64 MiB of new data need a reserve.
dd if=/dev/urandom of=$G/fresh bs=1M count=64 conv=fsync status=none
# 40 MiB left: less than the reserve needs, room for the guest's writes
# after the pool keeps its margin and headroom (up to 16 MiB).
fallocate -l $(($(free_bytes $HOST) - (40 << 20))) $HOST/hog
refused "snapshot without host space for the reserve refused" "no space for the copy-on-write reserve" \
	subvol snapshot tank/vm1 snap3
check_fails "it left no image" test -e $P/snap3.img
check_eq "nor any hidden file" "" "$(ls -A $P | grep '^\.' || true)"
check_eq "the device is running" "ACTIVE" "$(dmsetup info subvol-tank-vm1 | awk '/^State:/ { print $2 }')"
check "the guest still writes" dd if=/tmp/source of=$G/after bs=1M conv=fsync status=none
rm -f $HOST/hog

# --- rollback
check "unmount" umount $G
check "deactivate" subvol deactivate tank/vm1
refused "rollback to a snapshot of another volume refused" "snapshot of vm1, not of tank/c1" \
	subvol rollback tank/c1 snap1
check "rollback to snap1" subvol rollback tank/vm1 snap1
check "activate" subvol activate tank/vm1
check_eq "the size is snap1's again" $((512 << 20)) "$(blockdev --getsize64 $DEV)"
check "mount" mount $DEV $G
check "the files written after snap1 are gone" test ! -e $G/after
check_eq "snap1's files are back" "$(sha /tmp/wsource)" "$(sha $G/w1)"
check "the guest writes" dd if=/tmp/source of=$G/x bs=1M conv=fsync status=none
umount $G
check "xfs_repair -n after rollback" xfs_repair -n $DEV

# --- list, shrink, remove
check "list" subvol list
check_eq "list names every volume" "c1 snap1 snap2 vm1" \
	"$(subvol list --noheadings tank | awk '{ print $2 }' | tr '\n' ' ' | sed 's/ $//')"
check "list shows the device of the active one" \
	sh -c "subvol list tank | grep -q '^tank *vm1 .*/dev/mapper/subvol-tank-vm1'"
check "deactivate vm1" subvol deactivate tank/vm1
check "shrink an inactive volume with --yes" subvol resize --size 256M --yes tank/vm1
check_eq "the image is 256 MiB" $((256 << 20)) "$(stat -c %s $P/vm1.img)"
check "remove everything" subvol remove tank/vm1 tank/snap1 tank/snap2 tank/c1
check_eq "the pool is empty" "" "$(ls -A $P)"
check_eq "no subvol device is left" "" "$(dmsetup ls | grep subvol || true)"
finish
