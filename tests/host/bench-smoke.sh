#!/bin/bash
# Smoke runs of every benchmark and fuzzing script, at tiny sizes and one
# repeat: each must complete and print its table.  Figures are not judged
# here (the README has the real runs); this only keeps the scripts
# working.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

OUT=$(mktemp -d /tmp/bench-smoke.XXXXXX)
trap 'rm -rf "$OUT"' EXIT

# smoke NAME PATTERN... -- CMD...: run CMD, then check that it succeeded
# and that each PATTERN (an extended regex) matches a line of its output.
smoke() {
	local name=$1 patterns=() p st
	shift
	while [ "$1" != -- ]; do patterns+=("$1"); shift; done
	shift
	"$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	st=$?
	check_eq "$name completes" 0 $st
	((st == 0)) || tail -5 "$OUT/$name.err" | sed 's/^/#   /'
	for p in "${patterns[@]}"; do
		check "$name prints /$p/" grep -Eq -- "$p" "$OUT/$name.out"
	done
}

smoke bench-io '^workload +unit +subvol +loop +file +thin' \
	'^seq-read +MiB/s +[0-9.]+ ' '^rand-write +IOPS +[0-9]+ ' -- \
	"$ROOT/scripts/bench-io" --runtime 1 --size 64 --repeat 1
smoke bench-send '^full send of base: [0-9]+ stream bytes' \
	'^1M: receive identical: yes' -- \
	"$ROOT/scripts/bench-send" --size 64M --changes 1 --no-thin
smoke bench-snapshot '^size +workload +extents +frozen' \
	'^1G +few +[0-9]+ +[0-9.]+ ' '^1G +many +[0-9]+ +[0-9.]+ ' '^1G +x1000 +[0-9]+ +[0-9.]+ ' -- \
	"$ROOT/scripts/bench-snapshot" --sizes 1 --repeat 1 --random 4 --extents 1000
smoke bench-space ' buffered +2 +[0-9.]+ +[0-9.]+ +[0-9.]+ +-?[0-9.]+%' \
	' 1 GiB +[0-9]+ MiB +[0-9]+ MiB' '^  ext-1000 +[0-9]+ +[0-9.]+ +[0-9]+ KiB' -- \
	"$ROOT/scripts/bench-space" --size 64 --repeat 1 --writers "1 2" --efficiency 1 --extents 1000
smoke monitor-lvm '^result: ' '^# +crossed_s +grown_s +crossing_to_s +lvextend_s +size_MiB' \
	'^extensions: [0-9]+ ' '^crossing to extension, s: median ' '^longest write held: [0-9]+ ms' -- \
	"$ROOT/scripts/monitor-lvm" --lv 300 --volume 1 --write 320 --rate 16m --threshold 150M \
	--step 128M
smoke fuzz-target '^  lines +10$' '^  accepted +[0-9]+$' '^[0-9]+ passed, 0 failed$' -- \
	"$ROOT/scripts/fuzz-target" --iterations 10 --seed 7 --out "$OUT/fuzz-target"
finish
