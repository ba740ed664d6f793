#!/bin/bash
# Native test of what volumes as LVM PVs and as VM disks need from the
# host, without device-mapper: "subvol lvm-filter" on copies of the
# host's lvm.conf (installed, read back by lvmconfig, idempotent, removed
# byte for byte, refused beside a global_filter of the administrator's);
# the --host-lvm option in the metadata, status, list and the udev helper
# (never for a snapshot or a copy); the udev rules (disk ownership, no
# LVM autoactivation, the host-lvm link) against LVM's own rules; the
# tool's finding of an LVM label in a copied image; and the VM disk
# examples of subvol(8) and the README: qemu accepts the command line,
# and the libvirt disk uses libvirt's attribute values.  Needs root (loop
# mounts); lvm2 and qemu-system-x86 are in scripts/setup.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

# shellcheck source=SCRIPTDIR/../lib/tooltest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tooltest.sh"

tooltest_start subvol-lvm
RULES=$ROOT/userspace/udev/56-dm-subvol.rules.in
MAN=$ROOT/userspace/man/subvol.8
export LVM_SUPPRESS_FD_WARNINGS=1

# --- lvm-filter --------------------------------------------------------------------------
# The host's lvm.conf, or, without lvm2, one like Debian's: all comments.
conf=$work/lvm/lvm.conf
mkdir -p "$work/lvm"
if [ -f /etc/lvm/lvm.conf ]; then
	cp /etc/lvm/lvm.conf "$conf"
else
	printf '# lvm.conf\nconfig {\n}\ndevices {\n\t# filter = [ "a|.*|" ]\n}\n' >"$conf"
fi
cp "$conf" "$work/lvm.orig"
check_status "--check before: exit 1" 1 sv lvm-filter --check --file "$conf"
out=$(sv lvm-filter --file "$conf" 2>&1)
check_eq "lvm-filter installs it" "$conf: subvol filter installed: host LVM leaves subvol devices alone (but volumes set --host-lvm)" "$out"
check "--check after: exit 0" sv lvm-filter --check --file "$conf"
check_eq "one global_filter line, in the devices section" 1 \
	"$(awk '/^[ \t]*devices[ \t]*\{/ { d = 1 } d && /^[ \t]*global_filter[ \t]*=/ { n++ } d && /^[ \t]*\}/ { d = 0 } END { print n + 0 }' "$conf")"
check_eq "the rest of the file is as it was" "" \
	"$(diff "$work/lvm.orig" "$conf" | grep '^<')"
if command -v lvmconfig >/dev/null; then
	check_eq "lvmconfig reads the filter" \
		'global_filter=["a|^/dev/disk/by-id/host-lvm-subvol-|","r|^/dev/mapper/subvol-|","r|^/dev/subvol/|","r|^/dev/disk/by-id/dm-name-subvol-|"]' \
		"$(LVM_SYSTEM_DIR=$work/lvm lvmconfig devices/global_filter 2>&1)"
	check_eq "LVM_SYSTEM_DIR names the file: --check" 0 \
		"$(LVM_SYSTEM_DIR=$work/lvm sv lvm-filter --check >/dev/null; echo $?)"
else
	echo "# note: no lvmconfig (lvm2): the filter is not read back by LVM"
fi
cp "$conf" "$work/lvm.once"
out=$(sv lvm-filter --file "$conf" 2>&1)
check_eq "again: there already" "$conf: the subvol filter is there already" "$out"
check "and the file is unchanged" cmp "$conf" "$work/lvm.once"
chmod 640 "$conf"
sv lvm-filter --remove --file "$conf" >/dev/null
check "--remove gives back the file byte for byte" cmp "$conf" "$work/lvm.orig"
check_eq "and keeps its mode" 640 "$(stat -c %a "$conf")"
out=$(sv lvm-filter --remove --file "$conf" 2>&1)
check_eq "--remove again: nothing to remove" "$conf: no subvol filter to remove" "$out"

# An older filter is updated in place.
sv lvm-filter --file "$conf" >/dev/null
sed -i 's/"r|^\/dev\/subvol\/|", //' "$conf"
check_status "an older filter: --check exit 1" 1 sv lvm-filter --check --file "$conf"
check_eq "lvm-filter updates it" "$conf: subvol filter updated: host LVM leaves subvol devices alone (but volumes set --host-lvm)" \
	"$(sv lvm-filter --file "$conf" 2>&1)"
check "to what it writes" cmp "$conf" "$work/lvm.once"
sv lvm-filter --remove --file "$conf" >/dev/null

# No devices section: one of its own, and away again.
printf 'global {\n\tumask = 077\n}' >"$work/lvm/nodev.conf"
cp "$work/lvm/nodev.conf" "$work/nodev.orig"
check "without a devices section" sv lvm-filter --file "$work/lvm/nodev.conf"
check "it adds one" grep -qx 'devices {' "$work/lvm/nodev.conf"
if command -v lvmconfig >/dev/null; then
	cp "$work/lvm/nodev.conf" "$work/lvm/lvm.conf"
	check "lvmconfig reads that one too" \
		sh -c "LVM_SYSTEM_DIR=$work/lvm lvmconfig devices/global_filter | grep -qF '\"r|^/dev/mapper/subvol-|\"'"
fi
check "--check: there" sv lvm-filter --check --file "$work/lvm/nodev.conf"
sv lvm-filter --remove --file "$work/lvm/nodev.conf" >/dev/null
check_eq "--remove leaves the file as it was (with a newline at its end)" "$(cat "$work/nodev.orig")" \
	"$(cat "$work/lvm/nodev.conf")"

# The administrator's global_filter: refused, the file untouched.
printf 'devices {\n\tglobal_filter = [ "r|/dev/cdrom|" ]\n}\n' >"$work/lvm/own.conf"
cp "$work/lvm/own.conf" "$work/own.orig"
out=$(sv lvm-filter --file "$work/lvm/own.conf" 2>&1)
s=$?
check_eq "beside a global_filter of its own: exit 1" 1 $s
check_eq "one line, naming the file, the line and the patterns to add" 1 \
	"$(grep -c "^subvol: lvm-filter: $work/lvm/own.conf sets devices/global_filter already (line 2); put these patterns first in it yourself.*r|^/dev/mapper/subvol-|" <<<"$out")" ||
	show "$out"
check "the file is untouched" cmp "$work/lvm/own.conf" "$work/own.orig"
# A commented one is not one.
printf 'devices {\n\t# global_filter = [ "a|.*|" ]\n\tuse_devicesfile = 1\n}\n' >"$work/lvm/dvf.conf"
out=$(sv lvm-filter --file "$work/lvm/dvf.conf" 2>&1)
check "a commented global_filter is no obstacle" grep -q "subvol filter installed" <<<"$out"
check "use_devicesfile = 1: a note that LVM ignores the filter then" \
	grep -q "^Note: .*use_devicesfile = 1 (line 3): LVM then uses only the devices its devices file lists" <<<"$out"
out=$(sv lvm-filter --file "$work/nosuch/lvm.conf" 2>&1)
check_eq "a missing file: exit 1, one line" "subvol: lvm-filter: cannot read $work/nosuch/lvm.conf: No such file or directory (is lvm2 installed?)|1" \
	"$out|$(sv lvm-filter --file "$work/nosuch/lvm.conf" >/dev/null 2>&1; echo $?)"
check_status "lvm-filter with an argument: usage error" 2 sv lvm-filter extra
check_status "--check and --remove: usage error" 2 sv lvm-filter --check --remove --file "$conf"

# --- --host-lvm in the metadata ------------------------------------------------------------
mkdir -p "$work/mnt/xfs"
truncate -s 512M "$work/xfs.fs"
check "mkfs.xfs (reflink)" mkfs.xfs -q "$work/xfs.fs" || { finish; exit; }
check "mount it" mount -o loop "$work/xfs.fs" "$work/mnt/xfs" || { finish; exit; }
M=$work/mnt/xfs/main
check "pool create main" sv pool create "$M" || { finish; exit; }
pool_id=$(getfattr --absolute-names --only-values -n user.subvol.pool "$M" | sed -n 's/^id=//p')

check "create --inactive --host-lvm main/pv" sv create --inactive --host-lvm --size 8M main/pv
check "create --inactive main/plain" sv create --inactive --size 8M main/plain
check_eq "metadata: host_lvm=1, and 0 by default" "1 0" "$(meta host_lvm "$M/pv.img") $(meta host_lvm "$M/plain.img")"
check_eq "status: Host LVM yes" "yes" "$(sv status main/pv | sed -n 's/^Host LVM: *//p')"
check_eq "status --json: host_lvm true" "true" \
	"$(sv status --json main/pv | tr -d ' \n' | grep -o '"host_lvm":[a-z]*' | cut -d: -f2)"
check_eq "list -o name,host_lvm" "plain no
pv yes" "$(sv list --noheadings -o name,host_lvm main | tr -s ' ' | sed 's/^ //;s/ $//')"
check_eq "set --no-host-lvm" "Volume main/pv: host LVM leaves the PVs on it alone (no-host-lvm)" \
	"$(sv set --no-host-lvm main/pv 2>&1)"
check_eq "metadata: host_lvm=0" 0 "$(meta host_lvm "$M/pv.img")"
check_eq "set --host-lvm" "Volume main/pv: host LVM may scan and activate the PVs on it (host-lvm)" \
	"$(sv set --host-lvm main/pv 2>&1)"
check_eq "with another option: both said" \
	"Volume main/pv: no-space queue, no-space-timeout 0, low-water 0, no-ignore-discard, host-lvm" \
	"$(sv set --no-space queue --host-lvm main/pv 2>&1)"
check_status "--host-lvm and --no-host-lvm: usage error" 2 sv set --host-lvm --no-host-lvm main/pv

check "snapshot main/pv s" sv snapshot main/pv s
check "snapshot --writable main/pv w" sv snapshot --writable main/pv w
check "clone main/s c" sv clone main/s c
check_eq "snapshots and copies are not host LVM's" "0 0 0" \
	"$(meta host_lvm "$M/s.img") $(meta host_lvm "$M/w.img") $(meta host_lvm "$M/c.img")"
out=$(sv set --host-lvm main/s 2>&1)
check_eq "set --host-lvm on a snapshot: refused, one line" \
	"subvol: volume main/s: a snapshot's LVM PVs have its origin's UUIDs, and host LVM never uses them; give it to host LVM through a clone (subvol clone, which runs vgimportclone)|1" \
	"$out|$(sv set --host-lvm main/s >/dev/null 2>&1; echo $?)"
# A stream's metadata never makes a received snapshot host LVM's.
check "pool create second" sv pool create "$work/mnt/xfs/second"
check "send main/s | receive second" sh -c "$SUBVOL send main/s | $SUBVOL receive second >/dev/null 2>&1"
check_eq "the received snapshot: host_lvm=0" 0 "$(meta host_lvm "$work/mnt/xfs/second/s.img")"

# The udev helper: SUBVOL_HOST_LVM=1 only for the volume with that UUID.
uuid_of() { echo "SUBVOL-$pool_id-$(meta id "$M/$1.img")"; }
check_eq "udev-name with the UUID of a --host-lvm volume" \
	$'SUBVOL_POOL=main\nSUBVOL_VOLUME=pv\nSUBVOL_HOST_LVM=1' "$(sv udev-name subvol-main-pv "$(uuid_of pv)" 2>&1)"
check_eq "udev-name of a volume that is not" $'SUBVOL_POOL=main\nSUBVOL_VOLUME=plain' \
	"$(sv udev-name subvol-main-plain "$(uuid_of plain)" 2>&1)"
check_eq "udev-name with another volume's UUID: not host LVM's" $'SUBVOL_POOL=main\nSUBVOL_VOLUME=pv' \
	"$(sv udev-name subvol-main-pv "$(uuid_of plain)" 2>&1)"
check_eq "udev-name of a pool it cannot find: no error, not host LVM's" $'SUBVOL_POOL=nosuch\nSUBVOL_VOLUME=pv' \
	"$(sv udev-name subvol-nosuch-pv "$(uuid_of pv)" 2>&1)"
check_eq "udev-name without a UUID: as before" $'SUBVOL_POOL=main\nSUBVOL_VOLUME=pv' \
	"$(sv udev-name subvol-main-pv 2>&1)"

# --- a copied image holding an LVM label ------------------------------------------------
# label IMAGE SECTOR NUMBER: an LVM2 label header in SECTOR that says it
# is in sector NUMBER, with the checksum LVM (and libblkid, which the tool
# asks) checks: LVM's CRC32 from 0xf597a6cf of the sector from offset 20.
label() {
	python3 - "$@" <<-'PY'
		import struct, sys, zlib
		path, sector, number = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
		body = struct.pack("<I", 32) + b"LVM2 001" + b"\0" * (512 - 32)
		crc = zlib.crc32(body, 0xf597a6cf ^ 0xffffffff) ^ 0xffffffff
		with open(path, "r+b") as f:
		    f.seek(sector * 512)
		    f.write(b"LABELONE" + struct.pack("<QI", number, crc) + body)
	PY
}
check "create --inactive main/lv" sv create --inactive --size 8M main/lv
label "$M/lv.img" 1 1
out=$(sv snapshot main/lv lvsnap 2>&1)
check "a snapshot of an image with an LVM label: said it is never host LVM's" \
	grep -q "^It holds an LVM PV with its origin's UUIDs: host LVM never uses it" <<<"$out" || show "$out"
out=$(sv clone main/lvsnap lvclone 2>&1)
check "its clone is made" test -f "$M/lvclone.img"
check "with a note: no device-mapper here to give it new UUIDs, and what to run" \
	grep -q "^Note: main/lvclone keeps its origin's LVM PV UUIDs (device-mapper is not available here to activate it); before LVM sees both, run: vgimportclone --devices /dev/subvol/main/lvclone /dev/subvol/main/lvclone" <<<"$out" ||
	show "$out"
check "create --inactive main/nolabel" sv create --inactive --size 8M main/nolabel
label "$M/nolabel.img" 1 2
out=$(sv snapshot --writable main/nolabel nolabel2 2>&1)
check_fails "a label that names another sector is none: no note" grep -q "LVM" <<<"$out"

# --- udev rules -------------------------------------------------------------------------
# shellcheck disable=SC2016 # $env{...} is udev's
check "the rules give the node root, group disk, mode 0660" \
	grep -qx 'OWNER="root", GROUP="disk", MODE="0660"' "$RULES"
check "they clear DM_ACTIVATION for a volume not host LVM's" \
	grep -qx 'ENV{SUBVOL_HOST_LVM}!="1", ENV{DM_ACTIVATION}="0"' "$RULES"
# shellcheck disable=SC2016
check "they link a host LVM volume as /dev/disk/by-id/host-lvm-<DM name>" \
	grep -qxF 'ENV{SUBVOL_HOST_LVM}=="1", SYMLINK+="disk/by-id/host-lvm-$env{DM_NAME}"' "$RULES"
check "the filter accepts that link" grep -qF '"a|^/dev/disk/by-id/host-lvm-subvol-|"' "$work/lvm.once"
check_eq "all of it after the SUBVOL- match, before the end label" "ok" \
	"$(awk '/DM_UUID}!="SUBVOL-/ { u = NR } /DM_ACTIVATION}="0"/ { a = NR } /GROUP="disk"/ { g = NR }
		/^LABEL="subvol_end"/ { e = NR } END { print (u < a && u < g && a < e && g < e) ? "ok" : "no" }' "$RULES")"
# LVM gates its autoactivation of a dm device on DM_ACTIVATION (Debian's
# 69-lvm.rules, upstream's 69-dm-lvm.rules): what clearing it relies on.
lvm_rules=
for f in /lib/udev/rules.d/69-lvm.rules /lib/udev/rules.d/69-dm-lvm.rules /usr/lib/udev/rules.d/69-dm-lvm.rules; do
	[ -f "$f" ] && lvm_rules=$f && break
done
if [ -n "$lvm_rules" ]; then
	check "$lvm_rules scans a dm device only with DM_ACTIVATION=1" \
		grep -qF 'KERNEL!="dm-[0-9]*", GOTO="next"' "$lvm_rules"
	check "(its dm-device rule)" grep -qxF 'ENV{DM_UDEV_PRIMARY_SOURCE_FLAG}=="1", ENV{DM_ACTIVATION}=="1", GOTO="lvm_scan"' "$lvm_rules"
	check "and the device-mapper rules run before ours (55 < 56)" test -f /lib/udev/rules.d/55-dm.rules
else
	echo "# note: no LVM udev rules (lvm2 not installed): not checked against them"
fi

# --- VM disks: the examples of subvol(8) and the README ------------------------------------
man_text=$(groff -man -Tascii -P-cbu "$MAN" 2>/dev/null)
readme=$(cat "$ROOT/README.md")
# qemu_args TEXT: the -blockdev and -device arguments of its qemu example.
qemu_args() {
	grep -oE -- '-(blockdev driver=host_device|device virtio-blk-pci),[^ ]*' <<<"$1" | sed 's/^-\([a-z]*\) /\1 /'
}
truncate -s 64M "$work/disk.img"
for doc in subvol.8 README.md; do
	if [ $doc = subvol.8 ]; then text=$man_text; else text=$readme; fi
	args=$(qemu_args "$text")
	blockdev=$(sed -n 's/^blockdev //p' <<<"$args")
	device=$(sed -n 's/^device //p' <<<"$args")
	check "$doc: a qemu example with -blockdev host_device and -device virtio-blk-pci" \
		test -n "$blockdev" -a -n "$device" || continue
	check "$doc: on /dev/subvol/POOL/VOLUME" grep -qE 'filename=/dev/subvol/[^/,]+/[^/,]+,' <<<"$blockdev,"
	for opt in cache.direct=on aio=native discard=unmap; do
		check "$doc: -blockdev has $opt" grep -qE "(^|,)$opt(,|\$)" <<<"$blockdev"
	done
	check "$doc: -device has werror=enospc" grep -qE '(^|,)werror=enospc(,|$)' <<<"$device"
	if ! command -v qemu-system-x86_64 >/dev/null; then
		echo "# note: no qemu-system-x86_64: the command line is not tried"
		continue
	fi
	# The same options on a file (host_device wants a block device).
	file_opts=$(sed -e 's/driver=host_device/driver=file/' -e "s|filename=[^,]*|filename=$work/disk.img|" <<<"$blockdev")
	out=$(printf 'info qtree\ninfo block\nquit\n' | timeout 120 qemu-system-x86_64 -machine pc -accel tcg -S \
		-nodefaults -display none -monitor stdio -blockdev "$file_opts" -device "$device" 2>&1 |
		tr -d '\r' | sed 's/\x1b\[[0-9;]*[A-Za-z]//g')
	check "$doc: qemu takes the options (direct I/O)" grep -q 'Cache mode: *writeback, direct' <<<"$out" || show "$out"
	check "$doc: and the device's werror=enospc" grep -q 'werror = "enospc"' <<<"$out"
done

# The libvirt disk: well-formed, and libvirt's names and values
# (formatdomain: error_policy stop|report|ignore|enospace, io
# threads|native|io_uring, cache none|writethrough|writeback|directsync|unsafe|default,
# discard unmap|ignore).
if command -v python3 >/dev/null; then
	for doc in subvol.8 README.md; do
		if [ $doc = subvol.8 ]; then text=$man_text; else text=$readme; fi
		xml=$(sed -n '/<disk type=/,/<\/disk>/p' <<<"$text" | sed 's/^ *//')
		out=$(python3 -c '
import sys, xml.etree.ElementTree as ET
d = ET.fromstring(sys.stdin.read())
v = d.find("driver").attrib
ok = {"error_policy": {"stop", "report", "ignore", "enospace"}, "rerror_policy": {"stop", "report", "ignore"},
      "io": {"threads", "native", "io_uring"}, "discard": {"unmap", "ignore"},
      "cache": {"default", "none", "writethrough", "writeback", "directsync", "unsafe"}}
bad = [k + "=" + v[k] for k in v if k in ok and v[k] not in ok[k]]
print(d.get("type"), d.get("device"), v.get("name"), v.get("type"), v.get("cache"), v.get("io"),
      v.get("discard"), v.get("error_policy"), d.find("source").get("dev").startswith("/dev/subvol/"), *bad)' <<<"$xml" 2>&1)
		check_eq "$doc: the libvirt disk is a block disk, raw, cache none, io native, discard unmap, error_policy enospace, on /dev/subvol" \
			"block disk qemu raw none native unmap enospace True" "$out" || show "$xml"
	done
else
	echo "# note: no python3: the libvirt examples are not parsed"
fi

finish
