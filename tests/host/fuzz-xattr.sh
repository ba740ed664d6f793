#!/bin/bash
# A short run of scripts/fuzz-xattr: the subvol tool, built with ASan and
# UBSan, reads 160 attribute values (user.subvol.volume, .pool, .monitor
# and the seals; valid by construction or with one defect; the seed is
# the day's, printed): each valid one accepted and reported as it is,
# each defect refused by every command reading it with exit 1 and one
# line naming the object and the attribute, nothing on disk changed; the
# target's sharing record, whatever it holds, unread and dropped before
# a clone.
# Then the harness itself: a tool that crashes and one that refuses in
# two lines must be counted as failures.  Needs root.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

check_eq "runs as root (loop mounts)" 0 "$EUID" || { finish; exit; }
OUT=$(mktemp -d /tmp/fuzz-xattr.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
FUZZ=$ROOT/scripts/fuzz-xattr
day=$(($(date +%s) / 86400))
seed=$((day * 1000))
n=160
echo "# seed $seed: scripts/fuzz-xattr --iterations $n --seed $seed repeats this run"

"$FUZZ" --iterations $n --seed "$seed" --out "$OUT/failed" >"$OUT/out" 2>"$OUT/err"
st=$?
sed 's/^/# /' "$OUT/out"
check_eq "fuzz-xattr: $n values, exit 0" 0 "$st" || sed 's/^/#   /' "$OUT/err" | tail -n 30
check "it closes with $n passed, 0 failed" grep -qx "$n passed, 0 failed" "$OUT/out"
check "with the sanitizers built in" grep -q '(ASan and UBSan build)' "$OUT/out"
for what in "crashed (signal, exit > 2, sanitizer)" "no end in 60 s" "a defect accepted (exit 0)" \
	"a defect refused with a status other than 1" "refused with other than one line (or control bytes)" \
	"refused without naming the object and attribute" "refused, but something changed on disk" \
	"other volumes or pools not listed" "a valid value refused" "a valid value reported otherwise" \
	"a sharing record left on a clone's source or clone"; do
	check_eq "$what: 0" 0 "$(grep -F "$what:" "$OUT/out" | awk '{ print $NF }')"
done
# Both sides of the oracle were exercised, on every attribute.
for t in volume pool monitor seal; do
	check "$t: valid values were tried" grep -Eq "^ +[0-9]+  $t valid$" "$OUT/out"
	check "$t: defects were tried" grep -Eq "^ +[0-9]+  $t [a-z_]+$" <(grep -v " valid$" "$OUT/out")
done
check "the target's sharing record, any bytes, was tried" grep -Eq '^ +[0-9]+  record any$' "$OUT/out"
check "refusals came from the key checks (a duplicate, a number out of range)" \
	grep -Eq 'is there twice|is more than' "$OUT/out"

# The harness counts what it is there to count.
cat >"$OUT/segv" <<'SH'
#!/bin/sh
kill -SEGV $$
SH
cat >"$OUT/chatty" <<'SH'
#!/bin/sh
echo "subvol: volume p/v: user.subvol.volume: refused" >&2
echo "and a second line" >&2
exit 1
SH
chmod +x "$OUT/segv" "$OUT/chatty"
"$FUZZ" --iterations 4 --seed 1 --tool "$OUT/segv" >"$OUT/segv.out" 2>&1
check_eq "a tool killed by SIGSEGV: fuzz-xattr exits 1" 1 $?
check "and counts its crashes" grep -Eq 'crashed \(signal, exit > 2, sanitizer\): +[1-9]' "$OUT/segv.out"
check "naming the signal" grep -q 'exit 139 (signal 11)' "$OUT/segv.out"
check "4 values failed" grep -qx '0 passed, 4 failed' "$OUT/segv.out"
"$FUZZ" --iterations 4 --seed 1 --tool "$OUT/chatty" >"$OUT/chatty.out" 2>&1
check_eq "a tool that refuses in two lines: exit 1" 1 $?
check "and such refusals counted" grep -Eq 'refused with other than one line \(or control bytes\): +[1-9]' "$OUT/chatty.out"
check "4 values failed" grep -qx '0 passed, 4 failed' "$OUT/chatty.out"
check "a failure prints the value and how to set it" grep -q 'set by: setfattr -' "$OUT/chatty.out"
check_status "--iterations 0: usage error" 2 "$FUZZ" --iterations 0
finish
