# Volumes as LVM physical volumes, with real lvm2.  pvcreate, vgcreate and
# lvcreate work on a subvol device; with the lvm.conf filter of "subvol
# lvm-filter" host LVM neither lists nor activates a VG inside a volume
# unless told to (--devices, or the volume set --host-lvm); a read-only
# snapshot of a PV is left alone and never given to host LVM; a writable
# copy (clone, snapshot --writable) gets new PV and VG UUIDs and a new VG
# name from vgimportclone, so that both VGs can be active side by side.
# No udev here: libdevmapper and LVM make the nodes themselves
# (DM_DISABLE_UDEV), and the tool makes the links.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

export SUBVOL_CONFIG_DIR=/tmp/subvol-etc LVM_SUPPRESS_FD_WARNINGS=1
host_xfs
check "pool create" subvol pool create --name vms $HOST/pool || { finish; exit; }
D=/dev/subvol/vms

# The host's lvm.conf: no udev to wait for, no dmeventd; nothing else.
mkdir -p /etc/lvm
cat >/etc/lvm/lvm.conf <<'EOF'
activation {
	udev_sync = 0
	udev_rules = 0
	monitoring = 0
}
backup {
	backup = 0
	archive = 0
}
EOF
for cmd in pvcreate vgcreate lvcreate vgimportclone; do
	check "$cmd is a link to lvm in the VM" test "$(readlink "$(command -v $cmd)")" = lvm
done

# pv_field DEV FIELD: a field of the PV on DEV, read past any filter.
pv_field() { pvs --noheadings -o "$2" --devices "$1" "$1" 2>/dev/null | tr -d ' '; }
# vg_field DEV FIELD: a field of the VG on DEV, likewise.
vg_field() { vgs --noheadings -o "$2" --devices "$1" 2>/dev/null | tr -d ' '; }
# seen CMD...: what an LVM reporting command prints without --devices.
seen() { "$@" --noheadings 2>/dev/null | tr -s ' ' | sed 's/^ //'; }

# --- pvcreate, vgcreate, lvcreate on a volume ---------------------------------------
check "subvol create --size 512M vms/data" subvol create --size 512M vms/data || { finish; exit; }
check "pvcreate $D/data" pvcreate $D/data
check "vgcreate vg0 $D/data" vgcreate vg0 $D/data
check "lvcreate -L 64M -n lv0 vg0" lvcreate -y -L 64M -n lv0 vg0
check "the LV is active (/dev/vg0/lv0)" test -b /dev/vg0/lv0
dd if=/dev/urandom of=/tmp/lv.data bs=1M count=16 status=none
check "write 16 MiB to the LV" dd if=/tmp/lv.data of=/dev/vg0/lv0 bs=1M oflag=direct status=none
sum=$(sha /tmp/lv.data)
check_eq "it reads back" "$sum" "$(sha /dev/vg0/lv0 $((16 << 20)))"
check_eq "without the filter vgs shows vg0" "vg0" "$(seen vgs -o vg_name)"
origin_pv=$(pv_field $D/data pv_uuid)
origin_vg=$(vg_field $D/data vg_uuid)
check "the PV and VG have UUIDs" test -n "$origin_pv" -a -n "$origin_vg"

# Deactivating the volume under an active VG: refused, naming the LV.
out=$(subvol deactivate vms/data 2>&1)
check_eq "deactivate with vg0 active: refused, naming vg0-lv0" 1 \
	"$(grep -c 'held by vg0-lv0 (an LVM VG on it active' <<<"$out")" || echo "# $out"
check "vgchange -an vg0" vgchange -an vg0

# --- the filter: host LVM leaves the volume alone --------------------------------
check_status "lvm-filter --check before: not installed (exit 1)" 1 subvol lvm-filter --check
check "subvol lvm-filter installs it" subvol lvm-filter
check "lvm-filter --check: installed" subvol lvm-filter --check
check "lvmconfig reads it" sh -c "lvmconfig devices/global_filter | grep -q 'r|^/dev/mapper/subvol-|'"
check_eq "vgs does not show vg0" "" "$(seen vgs -o vg_name)"
check_eq "pvs does not show the volume" "" "$(seen pvs -o pv_name)"
check_eq "pvscan finds no PV" "No matching physical volumes found" "$(pvscan 2>&1 | sed 's/^ *//')"
check_eq "lvs does not show lv0" "" "$(seen lvs -o lv_name)"
vgchange -ay >/dev/null 2>&1
check_fails "vgchange -ay activates nothing" test -e /dev/vg0/lv0
check_fails "pvcreate on another volume is refused by the filter" \
	sh -c "subvol create --size 64M vms/other >/dev/null && pvcreate $D/other"

# ... unless told to: --devices takes the named device past the filter.
check_eq "vgs --devices $D/data shows vg0" "vg0" "$(seen vgs -o vg_name --devices $D/data)"
check "vgchange -ay --devices $D/data vg0" vgchange -ay --devices $D/data vg0
check_eq "the LV has its data" "$sum" "$(sha /dev/vg0/lv0 $((16 << 20)))"
check "vgchange -an --devices $D/data vg0" vgchange -an --devices $D/data vg0

# ... or the volume set --host-lvm: the link the filter accepts.
check "subvol set --host-lvm vms/data" subvol set --host-lvm vms/data
check "the link /dev/disk/by-id/host-lvm-subvol-vms-data is made" \
	test "$(readlink /dev/disk/by-id/host-lvm-subvol-vms-data)" = ../../mapper/subvol-vms-data
check_eq "status: Host lvm yes" "yes" "$(subvol status -o host_lvm --noheadings vms/data | tr -d ' ')"
check_eq "vgs shows vg0 now" "vg0" "$(seen vgs -o vg_name)"
check "vgchange -ay vg0" vgchange -ay vg0
check "the LV is active" test -b /dev/vg0/lv0
out=$(subvol set --no-host-lvm vms/data 2>&1)
check_eq "set --no-host-lvm with vg0 active: refused, naming vg0-lv0" 1 \
	"$(grep -c 'held by vg0-lv0' <<<"$out")" || echo "# $out"
check_eq "and the volume is still host LVM's" "yes" \
	"$(subvol status -o host_lvm --noheadings vms/data | tr -d ' ')"
check "vgchange -an vg0" vgchange -an vg0
check "set --no-host-lvm" subvol set --no-host-lvm vms/data
check_fails "the link is gone" test -e /dev/disk/by-id/host-lvm-subvol-vms-data
check_eq "vgs does not show vg0 again" "" "$(seen vgs -o vg_name)"
check "deactivate and activate again with --host-lvm: the link comes with it" sh -c \
	"subvol set --host-lvm vms/data && subvol deactivate vms/data && ! test -e /dev/disk/by-id/host-lvm-subvol-vms-data &&
	 subvol activate vms/data && test -L /dev/disk/by-id/host-lvm-subvol-vms-data"

# --- a read-only snapshot is left alone ---------------------------------------
out=$(subvol snapshot --activate vms/data monday 2>&1)
check "subvol snapshot --activate vms/data monday" test $? = 0 || echo "# $out"
check "it says the snapshot's PV is never host LVM's" grep -q "holds an LVM PV with its origin's UUIDs: host LVM never uses it" <<<"$out"
check_eq "the snapshot keeps its origin's PV UUID" "$origin_pv" "$(pv_field $D/monday pv_uuid)"
check_eq "and VG name" "vg0" "$(pv_field $D/monday vg_name)"
check_status "set --host-lvm on the snapshot: refused" 1 subvol set --host-lvm vms/monday
check_fails "no host-lvm link for the snapshot" test -e /dev/disk/by-id/host-lvm-subvol-vms-monday
# With its origin host LVM's, the host sees vg0 once, on the origin, and
# no duplicate on the snapshot.
out=$(pvs -o pv_name,vg_name,pv_uuid --noheadings 2>&1)
check_eq "pvs: one PV, the origin's" "/dev/disk/by-id/host-lvm-subvol-vms-data vg0 $origin_pv" \
	"$(tr -s ' ' <<<"$out" | sed 's/^ //')"
check "vgchange -ay vg0 activates the origin's LV" vgchange -ay vg0
check_eq "its dm-linear is on the origin's device, not the snapshot's" \
	"data $(dmsetup info -c --noheadings -o major,minor subvol-vms-data | tr -d ' ')" \
	"data $(dmsetup deps -o devno vg0-lv0 | sed -n 's/.*(\([0-9]*\), \([0-9]*\)).*/\1:\2/p')"
check "vgchange -an vg0" vgchange -an vg0
check "deactivate the snapshot" subvol deactivate vms/monday

# --- a clone gets new UUIDs and a new VG name ---------------------------------------
out=$(subvol clone vms/monday test 2>&1)
check "subvol clone vms/monday test" test $? = 0 || echo "# $out"
check "it says vg0 is now vg01" grep -q "its LVM PV has new UUIDs and its VG vg0 is now vg01 (vgimportclone)" <<<"$out" ||
	echo "# $out"
check_eq "the clone is inactive again" inactive "$(subvol status -o state --noheadings vms/test | tr -d ' ')"
check "activate the clone" subvol activate vms/test
clone_pv=$(pv_field $D/test pv_uuid)
check_eq "its VG is vg01" vg01 "$(pv_field $D/test vg_name)"
check "its PV UUID is new" test -n "$clone_pv" -a "$clone_pv" != "$origin_pv"
check "its VG UUID is new" test "$(vg_field $D/test vg_uuid)" != "$origin_vg" -a -n "$(vg_field $D/test vg_uuid)"
check_eq "the origin kept its PV UUID" "$origin_pv" "$(pv_field $D/data pv_uuid)"
check_eq "and its VG name" vg0 "$(pv_field $D/data vg_name)"
check_eq "the clone is not host LVM's: vgs shows vg0 alone" "vg0" "$(seen vgs -o vg_name)"
check_eq "no backup of the guest's VG in the host's /etc/lvm" "" "$(ls /etc/lvm/backup /etc/lvm/archive 2>/dev/null)"

# Both VGs side by side, told to.
check "vgchange -ay both (--devices)" vgchange -ay --devices $D/data,$D/test vg0 vg01
check_eq "lvs: both LVs active" "lv0 vg0 a
lv0 vg01 a" "$(lvs --noheadings -o lv_name,vg_name,lv_active --devices $D/data,$D/test |
	tr -s ' ' | sed -e 's/^ //' -e 's/active$/a/' | sort)"
check_eq "the clone's LV has the data of the snapshot's time" "$sum" "$(sha /dev/vg01/lv0 $((16 << 20)))"
check "write to the origin's LV" dd if=/dev/zero of=/dev/vg0/lv0 bs=1M count=4 oflag=direct status=none
check_eq "the clone's LV is unchanged" "$sum" "$(sha /dev/vg01/lv0 $((16 << 20)))"
check "vgchange -an both" vgchange -an --devices $D/data,$D/test vg0 vg01

# --- snapshot --writable of an active volume: the same -------------------------------
out=$(subvol snapshot --writable vms/data tuesday 2>&1)
check "subvol snapshot --writable vms/data tuesday" test $? = 0 || echo "# $out"
check "it says vg0 has a new name" grep -q "its VG vg0 is now vg0" <<<"$out" || echo "# $out"
check "activate it" subvol activate vms/tuesday
check "its PV UUID is neither the origin's nor the clone's" \
	test "$(pv_field $D/tuesday pv_uuid)" != "$origin_pv" -a "$(pv_field $D/tuesday pv_uuid)" != "$clone_pv"
check_fails "its VG is not vg0" test "$(pv_field $D/tuesday vg_name)" = vg0

# --- a PV in no VG: a new PV UUID -----------------------------------------------------
check "a volume with a PV in no VG" sh -c "subvol create --size 64M vms/orphan >/dev/null && pvcreate -q --devices $D/orphan $D/orphan"
orphan_pv=$(pv_field $D/orphan pv_uuid)
out=$(subvol snapshot --writable vms/orphan orphan2 2>&1)
check "its writable snapshot: a new PV UUID" grep -q "its LVM PV (in no VG) has a new UUID (pvchange --uuid)" <<<"$out" ||
	echo "# $out"
check "activate it" subvol activate vms/orphan2
check "and the PV UUID differs" test -n "$(pv_field $D/orphan2 pv_uuid)" -a "$(pv_field $D/orphan2 pv_uuid)" != "$orphan_pv"

# --- a VG over two volumes: a copy of one cannot be imported alone ------------------
check "vgcreate vgab on two volumes" sh -c "subvol create --size 64M vms/a >/dev/null && subvol create --size 64M vms/b >/dev/null &&
	vgcreate -q --devices $D/a,$D/b vgab $D/a $D/b"
out=$(subvol snapshot --writable vms/a a2 2>&1)
check_eq "the copy is made" 0 $?
check "a note says it keeps its UUIDs, why, and what to run" \
	grep -q "Note: vms/a2 keeps its origin's LVM PV and VG UUIDs (.*); before LVM sees both, run: vgimportclone --devices $D/a2 $D/a2" <<<"$out" ||
	echo "# $out"

# --- remove the filter --------------------------------------------------------------
check "lvm-filter --remove" subvol lvm-filter --remove
check_status "lvm-filter --check: not installed" 1 subvol lvm-filter --check
check_fails "the filter is gone from lvm.conf" grep -q subvol /etc/lvm/lvm.conf
finish
