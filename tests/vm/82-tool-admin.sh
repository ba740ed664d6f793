# The subvol tool's commands that change a volume's options, name or pool
# while devices exist: set reloads an active volume's table with the new
# options (and the device keeps its data and stays open); rename, pool
# export, pool remove, pool import --name and import refuse while a volume
# concerned is active, and change nothing.  The native test
# (tests/host/subvol-admin.sh) covers the inactive paths.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

export SUBVOL_CONFIG_DIR=/tmp/subvol-etc
host_xfs
P=$HOST/pool G=/mnt/guest
mkdir -p $G

# refused NAME TEXT CMD...: CMD exits 1 and its message holds TEXT.
refused() {
	local name=$1 text=$2 o s=0
	shift 2
	o=$("$@" 2>&1) || s=$?
	if [ $s -eq 1 ] && [[ $o == *"$text"* ]]; then
		check_eq "$name" 1 1
	else
		check_eq "$name (exit $s)" "refused, saying \"$text\"" "$o"
	fi
}

check "pool create" subvol pool create --name tank $P
check "create with mkfs" subvol create --size 320M --mkfs tank/vm
DEV=/dev/mapper/subvol-tank-vm
mount $DEV $G || { finish; exit; }
dd if=/dev/urandom of=$G/data bs=1M count=4 conv=fsync status=none
sum=$(sha256sum <$G/data)
check_eq "the table has no features" "0 655360 subvol $P/vm.img" "$(dmsetup table subvol-tank-vm)"

# --- set on an active, mounted volume: a table reload
check "set --no-space queue --no-space-timeout 30 --low-water 64M --ignore-discard" \
	subvol set --no-space queue --no-space-timeout 30 --low-water 64M --ignore-discard tank/vm
table=$(dmsetup table subvol-tank-vm)
check "the live table has no_space:queue" grep -q 'no_space:queue' <<<"$table"
check "and no_space_timeout:30" grep -q 'no_space_timeout:30' <<<"$table"
check "and the low-water mark (131072 sectors)" grep -q 'low_water:131072' <<<"$table"
check "and ignore_discard" grep -q 'ignore_discard' <<<"$table"
check_eq "the device is running" ACTIVE "$(dmsetup info subvol-tank-vm | awk '/^State:/ { print $2 }')"
check_eq "status shows the new options" "queue 30" \
	"$(subvol status tank/vm | awk -F': *' '/^No.space:/ { p = $2 } /^No.space.timeout:/ { t = $2 } END { print p, t }')"
check_eq "the data is intact" "$sum" "$(sha256sum <$G/data)"
check "the guest still writes" dd if=/dev/zero of=$G/more bs=1M count=2 conv=fsync status=none
check "set --no-space error --no-ignore-discard" subvol set --no-space error --no-ignore-discard tank/vm
check_eq "back to no features but the low-water mark" "0 655360 subvol $P/vm.img 1 low_water:131072" \
	"$(dmsetup table subvol-tank-vm)"

# --- refusals while active
refused "rename of an active volume" "active" subvol rename tank/vm vm2
check "its image keeps its name" test -e $P/vm.img
check "snapshot tank/vm s1" subvol snapshot tank/vm s1
check "activate the snapshot" subvol activate tank/s1
refused "rename of an active snapshot" "active" subvol rename tank/s1 s1b
refused "pool export with active volumes" "active" subvol pool export tank
check "the pool stays registered" test -L $SUBVOL_CONFIG_DIR/pools/tank
refused "pool remove with active volumes" "active" subvol pool remove --yes tank
check "the images stay" test -e $P/vm.img -a -e $P/s1.img
refused "import of an active volume's image" "active" subvol import $P/vm.img tank/copy
check_fails "no copy made" test -e $P/copy.img
check "deactivate the snapshot" subvol deactivate tank/s1
check "rename the inactive snapshot" subvol rename tank/s1 s1b
check "it activates under its new name" subvol activate tank/s1b
check_eq "read-only, as a snapshot" 1 "$(blockdev --getro /dev/mapper/subvol-tank-s1b)"
check "deactivate it" subvol deactivate tank/s1b
check "the target wrote nothing into the sealed image" \
	sh -c "! getfattr --absolute-names -n trusted.dm-subvol.shared $P/s1b.img 2>/dev/null | grep -q ."

# --- import: a raw image made outside the tool activates with the guarantee
umount $G
check "deactivate" subvol deactivate tank/vm
dd if=$P/vm.img of=$HOST/raw.img bs=1M conv=sparse status=none
check "import a raw image (a copy of vm's)" subvol import $HOST/raw.img tank/imp
check "it activates" subvol activate tank/imp
check "it mounts" mount -o nouuid /dev/subvol/tank/imp $G
check_eq "with the data written before" "$sum" "$(sha256sum <$G/data)"
check "and takes writes" dd if=/dev/zero of=$G/new bs=1M count=2 conv=fsync status=none
umount $G
check "deactivate it" subvol deactivate tank/imp

check "pool remove --yes" subvol pool remove --yes tank
check_eq "no image is left" "" "$(ls $P)"
check_eq "no subvol device is left" "" "$(dmsetup ls --target subvol 2>/dev/null | grep -v 'No devices')"
finish
