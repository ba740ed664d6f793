# Races on one volume's space (the review's items 4, 5, 7 and 8, issue 12):
# two prepare_snapshot at once; a reload that grows the map against
# prepare_snapshot; a reload that switches the guarantee on while writes
# run; mounts racing the removal of the device.  Afterwards the pool
# backs exactly what the volume counts, and the kernel logged no warning.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

mib() { echo $(($1 * SECTORS_PER_MIB)); }
host_xfs 2048
kmsg_mark

# Item 7: the second prepare_snapshot must not commit the reserve again.
bad=0
for i in 1 2 3 4 5; do
	truncate -s 256M $HOST/img
	subvol_create vol $HOST/img 256
	dd if=/dev/urandom of=/dev/mapper/vol bs=1M count=64 oflag=direct status=none
	dmsetup suspend vol
	dmsetup message vol 0 prepare_snapshot &
	dmsetup message vol 0 prepare_snapshot &
	wait
	dmsetup resume vol
	c="$(status_field vol $F_COW) $(status_field vol $F_COMMITTED)"
	[ "$c" = "$(mib 64) $(mib 64)" ] || { echo "# round $i: cow, committed: $c"; bad=$((bad + 1)); }
	dmsetup remove vol
	rm $HOST/img
done
check_eq "two prepare_snapshot at once commit the reserve once (5 rounds)" 0 $bad

# Item 4: a reload that grows the file (and the map) while prepare_snapshot
# walks the map.
truncate -s 64M $HOST/img
subvol_create vol $HOST/img 64
dd if=/dev/urandom of=/dev/mapper/vol bs=1M count=32 oflag=direct status=none
bad=0
for i in $(seq 2 21); do
	truncate -s $((i * 64))M $HOST/img
	dmsetup suspend vol
	dmsetup message vol 0 prepare_snapshot &
	dmsetup reload vol --table "0 $(mib $((i * 64))) subvol $HOST/img"
	wait $! || bad=$((bad + 1))
	dmsetup resume vol
done
check_eq "prepare_snapshot succeeded beside every reload (20)" 0 $bad
check_eq "the volume grew to the last reload" "$(mib 1344)" "$(dmsetup table vol | awk '{ print $2 }')"
check_eq "its data is shared" "$(mib 32)" "$(status_field vol $F_SHARED)"
check_eq "with its reserve" "$(mib 32)" "$(status_field vol $F_COW)"
check_eq "which the pool backs, once" "$(mib 32)" "$(status_field vol $F_COMMITTED)"
dmsetup remove vol
rm $HOST/img

# Item 8: guarantee none -> full by a reload while writes overwrite shared
# blocks through the live table.
truncate -s 512M $HOST/img
subvol_create vol $HOST/img 512 guarantee:none
dd if=/dev/urandom of=/dev/mapper/vol bs=1M count=200 oflag=direct status=none
dmsetup suspend vol
dmsetup message vol 0 prepare_snapshot
cp --reflink=always $HOST/img $HOST/snap
dmsetup resume vol
check_eq "without the guarantee there is no reserve" "0 $(mib 200)" \
	"$(status_field vol $F_COW) $(status_field vol $F_SHARED)"
dd if=/dev/urandom of=/dev/mapper/vol bs=64k count=1600 oflag=direct conv=notrunc status=none &
writer=$!
sleep 1
check "reload with guarantee:full while the writes run" \
	dmsetup reload vol --table "0 $(mib 512) subvol $HOST/img"
check "resume" dmsetup resume vol
wait $writer
check "the writes ran across the switch" test "$(status_field vol $F_SHARED)" -lt "$(mib 200)"
check_eq "the reserve is what is still shared" "$(status_field vol $F_SHARED)" "$(status_field vol $F_COW)"
check_eq "and the pool backs exactly that" "$(status_field vol $F_COW)" "$(status_field vol $F_COMMITTED)"
check_eq "no write was uncovered" 0 "$(status_field vol $F_UNCOVERED)"
dmsetup remove vol
rm $HOST/img $HOST/snap

# Item 5: mounts (which look the provider up) racing the device's removal
# (whose last put releases it).
truncate -s 256M $HOST/img
subvol_create vol $HOST/img 256
mkfs.xfs -q /dev/mapper/vol
dmsetup remove vol
mkdir -p /mnt/guest
removed=0
for i in $(seq 10); do
	subvol_create vol $HOST/img 256
	( for _ in $(seq 20); do
		mount /dev/mapper/vol /mnt/guest 2>/dev/null && umount /mnt/guest
	done ) &
	mounter=$!
	until dmsetup remove vol 2>/dev/null; do :; done
	removed=$((removed + 1))
	wait $mounter
	mountpoint -q /mnt/guest && umount /mnt/guest
done
check_eq "each round removed the device while mounts raced it" 10 $removed
check_eq "no warning, oops or I/O error in the kernel log" "" \
	"$(kmsg_since_mark | grep -E 'WARNING|refcount_t|BUG|Oops|I/O error|Corruption')"
finish
