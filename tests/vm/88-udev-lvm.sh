# The udev rules with a real udevd and LVM's own rules (Debian's 55-dm,
# 56-lvm, 60-persistent-storage-dm, 69-lvm, 95-dm-notify and the tool's
# 56-dm-subvol): udev makes /dev/subvol/POOL/VOLUME and gives the node the
# ownership of other disks; LVM's udev autoactivation leaves a VG inside a
# volume alone, on activation and on a coldplug event, but activates it
# once the volume is set --host-lvm (the control that shows it would
# have); a read-only snapshot of a host LVM volume is never activated;
# a clone made with udev running gets vgimportclone as without.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

# The udev helper reads the pool registry where udev looks: the default.
unset SUBVOL_CONFIG_DIR
export LVM_SUPPRESS_FD_WARNINGS=1
check "start udevd" vm-start-udev || { finish; exit; }
unset DM_DISABLE_UDEV
mkdir -p /etc/lvm
printf 'activation {\n\tmonitoring = 0\n}\nbackup {\n\tbackup = 0\n\tarchive = 0\n}\n' >/etc/lvm/lvm.conf
host_xfs
check "pool create" subvol pool create --name vms $HOST/pool || { finish; exit; }
D=/dev/subvol/vms

# prop DEV NAME: a udev property of DEV.
prop() { udevadm info -q property -n "$1" 2>/dev/null | sed -n "s/^$2=//p"; }
# settled: udev has handled every event, the ones LVM's RUN made too.
settled() { udevadm settle --timeout=60; sleep 1; udevadm settle --timeout=60; }
# lv_appears DEV: wait up to 30 s for it.
lv_appears() {
	for _ in $(seq 1 30); do
		[ -b "$1" ] && return 0
		sleep 1
	done
	return 1
}

check "subvol create --size 256M vms/disk" subvol create --size 256M vms/disk || { finish; exit; }
settled
check "udev made /dev/subvol/vms/disk (a link to ../../dm-N)" sh -c "readlink $D/disk | grep -qx '../../dm-[0-9]*'"
node=$(readlink -f $D/disk)
check_eq "the node: root, group disk, mode 0660" "root disk 660" "$(stat -c '%U %G %a' "$node")"
check_eq "udev: SUBVOL_POOL, SUBVOL_VOLUME" "vms disk" "$(prop $D/disk SUBVOL_POOL) $(prop $D/disk SUBVOL_VOLUME)"
check_eq "udev: DM_ACTIVATION cleared, not host LVM's" "0 -" \
	"$(prop $D/disk DM_ACTIVATION) $(prop $D/disk SUBVOL_HOST_LVM)-"

check "pvcreate, vgcreate, lvcreate" sh -c "pvcreate -q $D/disk && vgcreate -q vg0 $D/disk && lvcreate -q -y -n lv0 -L 32M vg0"
settled
check "udev made /dev/vg0/lv0" test -L /dev/vg0/lv0
dd if=/dev/urandom of=/tmp/lv.data bs=1M count=8 status=none
dd if=/tmp/lv.data of=/dev/vg0/lv0 bs=1M oflag=direct status=none
sum=$(sha /tmp/lv.data)
check "vgchange -an vg0" vgchange -an vg0
check "subvol lvm-filter" subvol lvm-filter

# Activation of the volume: LVM's rules see a PV and leave it alone.
check "deactivate and activate vms/disk" sh -c "subvol deactivate vms/disk && subvol activate vms/disk"
settled
check_eq "udev: the activation event's DM_ACTIVATION is cleared" 0 "$(prop $D/disk DM_ACTIVATION)"
check_eq "udev: blkid saw the PV" LVM2_member "$(prop $D/disk ID_FS_TYPE)"
sleep 3
check_fails "vg0 is not autoactivated" test -e /dev/mapper/vg0-lv0
check_eq "pvscan recorded no PV online" "" "$(ls /run/lvm/pvs_online 2>/dev/null)"
# A coldplug event, as udevadm trigger at boot makes.
check "udevadm trigger --action=add $node" udevadm trigger --action=add "$node"
settled
sleep 3
check_fails "after a coldplug event neither" test -e /dev/mapper/vg0-lv0
check_eq "and no PV online" "" "$(ls /run/lvm/pvs_online 2>/dev/null)"

# The control: the same volume set --host-lvm is autoactivated.
check "set --host-lvm (active)" subvol set --host-lvm vms/disk
settled
check "udev made /dev/disk/by-id/host-lvm-subvol-vms-disk" test -L /dev/disk/by-id/host-lvm-subvol-vms-disk
check_eq "udev: SUBVOL_HOST_LVM=1" 1 "$(prop $D/disk SUBVOL_HOST_LVM)"
check_eq "vgs sees vg0 through the filter" vg0 "$(vgs --noheadings -o vg_name 2>/dev/null | tr -d ' ')"
check "deactivate and activate vms/disk" sh -c "subvol deactivate vms/disk && subvol activate vms/disk"
settled
check "now LVM's rules autoactivate vg0" lv_appears /dev/mapper/vg0-lv0
check_eq "with its data" "$sum" "$(sha /dev/mapper/vg0-lv0 $((8 << 20)))"
check_status "set --no-host-lvm with vg0 active: refused" 1 subvol set --no-host-lvm vms/disk
check "vgchange -an vg0" vgchange -an vg0

# A read-only snapshot of it: never activated, though its PV makes vg0
# complete.
check "deactivate vms/disk" subvol deactivate vms/disk
rm -rf /run/lvm/pvs_online/* /run/lvm/vgs_online/*
check "snapshot --activate vms/disk snap" subvol snapshot --activate vms/disk snap
settled
sleep 3
check_eq "udev: the snapshot's DM_ACTIVATION cleared, not host LVM's" "0 -" \
	"$(prop $D/snap DM_ACTIVATION) $(prop $D/snap SUBVOL_HOST_LVM)-"
check_fails "vg0 is not activated from the snapshot" test -e /dev/mapper/vg0-lv0
check_fails "no host-lvm link for it" test -e /dev/disk/by-id/host-lvm-subvol-vms-snap
check_eq "vgs does not see it" "" "$(vgs --noheadings -o vg_name 2>/dev/null)"
check "deactivate the snapshot" subvol deactivate vms/snap

# A clone with udev running: vgimportclone, and no device left behind.
out=$(subvol clone vms/snap copy 2>&1)
check "clone vms/snap copy: vg0 is now vg01" grep -q "its VG vg0 is now vg01 (vgimportclone)" <<<"$out" || echo "# $out"
settled
check_fails "the clone's device is gone again" test -e /dev/mapper/subvol-vms-copy
check_fails "and its link" test -e $D/copy
check "activate both" sh -c "subvol activate vms/disk vms/copy >/dev/null"
settled
check_eq "vg0 came up by itself (host LVM's), vg01 did not" "vg0-lv0" \
	"$(cd /dev/mapper && for _ in $(seq 1 30); do [ -e vg0-lv0 ] && break; sleep 1; done; ls -d vg0* 2>/dev/null)"
check "vgchange -ay --devices $D/copy vg01: side by side, told to" vgchange -ay --devices $D/copy vg01
settled
check_eq "the clone's LV has the data" "$sum" "$(sha /dev/vg01/lv0 $((8 << 20)))"
check "vgchange -an both" sh -c "vgchange -an vg0 && vgchange -an --devices $D/copy vg01"
check "set --no-host-lvm" subvol set --no-host-lvm vms/disk
settled
check_fails "the host-lvm link is gone" test -e /dev/disk/by-id/host-lvm-subvol-vms-disk
check "deactivate both" subvol deactivate vms/disk vms/copy
finish
