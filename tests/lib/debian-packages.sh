# shellcheck shell=bash
# The Debian packages' build and the checks of what they hold, shared by
# tests/host/debian-packages.sh (the suite) and scripts/debian-chroot
# (which goes on to install them).  Source after hosttest.sh, with $top
# (the repo) and $work (a scratch directory) set.
#
#   build_packages     dpkg-buildpackage -b in a copy of the tree, into
#                      $work; sets $version and debs[] (the three .debs),
#                      returns 1 if they were not all built

# shellcheck disable=SC2154 # top and work are the caller's
build_packages() {
	local p lint xfs_deb
	# From a copy of the tracked (and new, unignored) files: the work
	# tree's build products stay out of the packages, and the tree stays
	# untouched.
	mkdir -p "$work/src"
	(cd "$top" && git ls-files -co --exclude-standard -z | rsync -a --from0 --files-from=- . "$work/src/")
	if ! check "dpkg-buildpackage -b builds the packages" \
		sh -c "cd '$work/src' && dpkg-buildpackage -b -us -uc >'$work/build.log' 2>&1"; then
		printf '#   %s\n' "$(tail -n 30 "$work/build.log")"
		return 1
	fi
	version=$(cd "$work/src" && dpkg-parsechangelog -S Version)
	debs=()
	for p in dm-subvol-dkms_"${version}"_all dm-subvol-xfs-dkms_"${version}"_all subvol_"${version}"_amd64; do
		check "built $p.deb" test -f "$work/$p.deb" && debs+=("$work/$p.deb")
	done
	check_eq "dkms.conf has the package's version" "$version" \
		"$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$top/dkms.conf")"
	check_eq "the tool has the package's version" "$version" \
		"$(sed -n 's/^#define SUBVOL_TOOL_VERSION\t"\(.*\)"$/\1/p' "$top/userspace/subvol/commands/commands.h")"
	# lintian's default level: errors and warnings.
	lint=$(cd "$work" && lintian --tag-display-limit 0 ./*.changes 2>&1 | grep -E '^[EW]: ')
	check_eq "lintian: no error or warning" "" "$lint"
	xfs_deb=$work/dm-subvol-xfs-dkms_${version}_all.deb
	check "the XFS package says what it replaces" sh -c "dpkg-deb -f '$xfs_deb' Description | grep -q 'REPLACES THE XFS MODULE'"
	check "and how to undo it" sh -c "dpkg-deb --fsys-tarfile '$xfs_deb' | tar -xO ./usr/share/doc/dm-subvol-xfs-dkms/README | grep -q 'apt remove dm-subvol-xfs-dkms'"
	check "and records the kernel sources it carries" sh -c "dpkg-deb -f '$xfs_deb' Built-Using | grep -q 'linux (= '"
	((${#debs[@]} == 3))
}
