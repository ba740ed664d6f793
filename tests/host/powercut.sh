#!/bin/bash
# Data fsync'ed on a subvol device survives a power cut: the VM is killed
# without shutdown (sysrq b), booted again on the same scratch disk, and
# everything that was fsync'ed before the cut is there.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/lib/hosttest.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check "boot 1: write, fsync, power cut" \
	sh -c "'$top/scripts/vm-run' --disk '$work/disk' --disk-size 2G \
		'$top/tests/host/powercut-vm.bash' write >'$work/write.out' 2>&1"
sums=$(awk '$1 == "SUM" { printf "%s=%s ", $2, $3 }' "$work/write.out")
check_eq "boot 1 reported the checksums of 5 fsync'ed objects" 5 "$(wc -w <<<"$sums")"

# shellcheck disable=SC2086 # one argument per name=sum
"$top/scripts/vm-run" --disk "$work/disk" "$top/tests/host/powercut-vm.bash" \
	verify $sums | tee "$work/verify.out"
rc=${PIPESTATUS[0]}
check_eq "boot 2: verification passed" 0 "$rc"

finish
