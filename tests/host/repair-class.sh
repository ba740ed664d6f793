#!/bin/bash
# tests/lib/repair-class.sh, which lets the crash checks accept what a
# power cut inside xfs_growfs leaves (secondary superblocks with the old
# geometry), must accept exactly that: on a grown XFS (in a loop device)
# with one secondary superblock set back to the old geometry it does,
# and the real repair it runs leaves the filesystem clean; with another
# fault beside it, or none, it does not.  Needs root.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"
# shellcheck source=SCRIPTDIR/../lib/repair-class.sh
. "$ROOT/tests/lib/repair-class.sh"

check_eq "runs as root (loop devices)" 0 "$EUID" || { finish; exit; }
work=$(mktemp -d /tmp/repair-class.XXXXXX)
loop=""
cleanup() {
	mountpoint -q "$work/mnt" && umount "$work/mnt"
	[[ -n $loop ]] && losetup -d "$loop"
	rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/mnt"

# grown: a 400 MiB XFS of 4 AGs grown to 700 MiB (7 AGs) in a loop
# device, $loop.
grown() {
	[[ -n $loop ]] && losetup -d "$loop"
	rm -f "$work/img"
	truncate -s 700M "$work/img"
	mkfs.xfs -q -d size=400m,agcount=4 "$work/img"
	loop=$(losetup -f --show "$work/img")
	mount "$loop" "$work/mnt"
	echo data >"$work/mnt/file"
	xfs_growfs -d "$work/mnt" >/dev/null
	umount "$work/mnt"
}
# stale AG: AG's secondary superblock back to the old geometry.
stale() {
	xfs_db -x -c "sb $1" -c "write -d dblocks 102400" -c "write -d agcount 4" "$loop" >/dev/null 2>&1
}
# classify: repair_stale_secondaries on $loop after xfs_repair -n; its
# output in $ags, its status returned.
classify() {
	local out
	out=$(xfs_repair -n "$loop" 2>&1)
	ags=$(repair_stale_secondaries "$loop" "$out")
}

grown
check "a grown XFS in a loop device, clean" xfs_repair -n "$loop"
check_fails "clean: nothing to accept" classify
stale 5
stale 6
check_fails "AGs 5 and 6 left with the old geometry: xfs_repair -n fails" xfs_repair -n "$loop"
classify
check_eq "accepted as stale secondaries, of AGs 5 and 6" "0 5 6" "$? $ags"
check "the repair it ran left the filesystem clean" xfs_repair -n "$loop"

grown
stale 5
xfs_db -x -c "agf 1" -c "write -d freeblks 7" "$loop" >/dev/null 2>&1
check_fails "a stale secondary beside a wrong AGF free count: refused" classify
finish
