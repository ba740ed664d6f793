#!/bin/bash
# A power cut while the device copies a snapshot (issue 15): the VM is
# killed without shutdown during the copy, booted again on the same
# scratch disk, and there is no snapshot, the host has the space of the
# unnamed copy back, and the origin activates with everything fsync'ed.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/hosttest.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check "boot 1: snapshot --no-wait, overwrite, power cut during the copy" \
	sh -c "'$top/scripts/vm-run' --disk '$work/disk' --disk-size 2G \
		'$top/tests/host/snapshot-powercut-vm.bash' write >'$work/write.out' 2>&1"
grep '^# ' "$work/write.out" || true
free0=$(awk '$1 == "FREE" { print $2 }' "$work/write.out")
copying=$(awk '$1 == "COPY" { print $2 }' "$work/write.out")
sum=$(awk '$1 == "SUM" { print $2 }' "$work/write.out")
check "boot 1 reported the host's free space" test -n "$free0"
check "the power went while the copy ran" grep -q / <<<"$copying"

"$top/scripts/vm-run" --disk "$work/disk" "$top/tests/host/snapshot-powercut-vm.bash" \
	verify "$free0" "$sum" | tee "$work/verify.out"
rc=${PIPESTATUS[0]}
check_eq "boot 2: verification passed" 0 "$rc"

finish
