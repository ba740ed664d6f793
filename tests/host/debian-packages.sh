#!/bin/bash
# The Debian packages (debian/) build with dpkg-buildpackage, are lintian
# clean, and hold what they must: the target's DKMS tree with its
# dkms.conf and only sources; the space-aware XFS's tree with fs/xfs, the
# Debian kernel ABI and the patches of each series and no build products;
# the tool with its man page, udev rules, completion and unit.  Installing
# them is scripts/debian-chroot (a clean chroot, DKMS for both kernels,
# the VM, removal; too long for the suite).
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/hosttest.sh"
. "$top/tests/lib/debian-packages.sh"

work=$(mktemp -d /var/tmp/debian-packages.XXXXXX)
trap 'rm -rf --one-file-system "$work"' EXIT

build_packages || { finish; exit; }

# files DEB: the paths a package holds, without the leading "./".
files() { dpkg-deb -c "$1" | awk '{ print $6 }' | sed 's|^\./||'; }
src=usr/src/dm-subvol-$version
target=$(files "$work/dm-subvol-dkms_${version}_all.deb")
for f in dkms.conf Makefile block/blk-space.c drivers/md/dm-subvol-target.c \
	drivers/md/compat/mnt_idmap.c include/linux/blk-space.h scripts/kernel-compat; do
	check "dm-subvol-dkms: $f" grep -qx "$src/$f" <<<"$target"
done
check_eq "dm-subvol-dkms: no build products or test modules" "" \
	"$(grep -E '\.(o|ko|mod|cmd)$|Module\.symvers|dm-subvol-features\.h|tests/' <<<"$target")"
check "dm-subvol-dkms: its dkms.conf is the tree's" sh -c \
	"dpkg-deb --fsys-tarfile '$work/dm-subvol-dkms_${version}_all.deb' | tar -xO ./$src/dkms.conf | cmp -s - '$top/dkms.conf'"

xsrc=usr/src/dm-subvol-xfs-$version
xfs=$(files "$work/dm-subvol-xfs-dkms_${version}_all.deb")
for f in dkms.conf Makefile README include/linux/blk-space.h; do
	check "dm-subvol-xfs-dkms: $f" grep -qx "$xsrc/$f" <<<"$xfs"
done
for series in 6.1 6.12; do
	for f in $series/ABI $series/VERSION $series/fs/xfs/xfs_super.c $series/fs/xfs/Makefile \
		patches/$series/cover-letter.txt; do
		check "dm-subvol-xfs-dkms: $f" grep -qx "$xsrc/$f" <<<"$xfs"
	done
done
check_eq "dm-subvol-xfs-dkms: no build products" "" "$(grep -E '\.(o|ko|mod|cmd)$' <<<"$xfs")"
tree=$work/xfs-tree
mkdir -p "$tree"
dpkg-deb -x "$work/dm-subvol-xfs-dkms_${version}_all.deb" "$tree"
check_eq "its dkms.conf excludes no kernel (a dkms 3.0.10 autoinstall would fail)" "" \
	"$(grep '^BUILD_EXCLUSIVE' "$tree/$xsrc/dkms.conf")"
for series in 6.1 6.12; do
	abi=$(cat "$tree/$xsrc/$series/ABI" 2>/dev/null)
	check_eq "$series: the ABI is the installed kernel's" "$("$top/scripts/kernel-version" "$series" | sed 's/-amd64$//')" "$abi"
	check "$series: the module carries dm-subvol's version" \
		grep -q "MODULE_VERSION(\"dm-subvol-$version+linux-" "$tree/$xsrc/$series/fs/xfs/xfs_super.c"
done

tool=$(files "$work/subvol_${version}_amd64.deb")
for f in usr/sbin/subvol usr/share/man/man8/subvol.8.gz lib/udev/rules.d/56-dm-subvol.rules \
	usr/share/bash-completion/completions/subvol lib/systemd/system/subvol-monitor.service; do
	check "subvol: $f" grep -qx "$f" <<<"$tool"
done
check "subvol: depends on libdevmapper, libsmartcols and libblkid" sh -c \
	"dpkg-deb -f '$work/subvol_${version}_amd64.deb' Depends | grep libdevmapper | grep libsmartcols | grep -q libblkid"
finish
