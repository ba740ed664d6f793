#!/bin/bash
# fstests' short lists in the VM (scripts/fstests): tests/fstests/short.list
# with the patched XFS on subvol devices, tests/fstests/short-overcommit.list
# on the overcommitted host.  Each test must pass and log no I/O error or
# shutdown.  The first run builds fstests' rootfs (debootstrap, a few
# minutes) and caches it outside the clone.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=tests/lib/hosttest.sh
. "$top/tests/lib/hosttest.sh"

out=$ROOT/build/test-logs/fstests-short
rm -rf "$out"
mkdir -p "$out"

# run CONFIG LIST: scripts/fstests on LIST in CONFIG, then a check per test.
run() {
	local config=$1 list=$2 name status secs kerr n=0
	"$ROOT/scripts/fstests" -c "$config" --list "$list" -t 600 -o "$out/$config" \
		>"$out/$config.log" 2>&1
	check "scripts/fstests ran the $config list (log: $out/$config.log)" \
		test -s "$out/$config/$config/results.txt" || { tail -n 20 "$out/$config.log" | sed 's/^/#   /'; return; }
	while read -r name status secs kerr; do
		n=$((n + 1))
		echo "# $config $name: $status in $secs s, kernel errors $kerr"
		check_eq "$config: $name passes" pass "$status"
		check_eq "$config: $name logged no I/O error or shutdown" 0 "$kerr"
	done <"$out/$config/$config/results.txt"
	check_eq "$config: every test of $(basename "$list") has a result" \
		"$(sed 's/#.*//' "$list" | grep -c .)" "$n"
}

run subvol "$ROOT/tests/fstests/short.list"
run overcommit "$ROOT/tests/fstests/short-overcommit.list"
finish
