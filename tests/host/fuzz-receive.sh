#!/bin/bash
# A short run of scripts/fuzz-receive: subvol receive, built with ASan and
# UBSan, given 120 mutated streams (raw and sealed, full and
# incremental; the seed is the day's, printed), must refuse each in one
# line leaving its pool as it was, or accept it with the data it
# describes.  The status and table parsers' unit fuzz test, built with
# the sanitizers.  Then the harness itself: a tool that crashes and one
# that refuses in two lines must be counted as failures.  Needs root.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

check_eq "runs as root (loop mounts)" 0 "$EUID" || { finish; exit; }
OUT=$(mktemp -d /tmp/fuzz-receive.XXXXXX)
trap 'rm -rf "$OUT"' EXIT
FUZZ=$ROOT/scripts/fuzz-receive
day=$(($(date +%s) / 86400))
seed=$((day * 1000))
echo "# seed $seed: scripts/fuzz-receive --iterations 120 --seed $seed repeats this run"

"$FUZZ" --iterations 120 --seed "$seed" --out "$OUT/failed" >"$OUT/out" 2>"$OUT/err"
st=$?
sed 's/^/# /' "$OUT/out"
check_eq "fuzz-receive: 120 streams, exit 0" 0 "$st" || sed 's/^/#   /' "$OUT/err" | tail -n 20
check "it closes with 120 passed, 0 failed" grep -qx '120 passed, 0 failed' "$OUT/out"
check "with the sanitizers built in" grep -q '(ASan and UBSan build)' "$OUT/out"
for what in "accepted with other data" "refused with other than one line" \
	"refused, but the pool changed" "crashed (signal, exit > 2, sanitizer)" "no end in 60 s"; do
	check_eq "$what: 0" 0 "$(grep -F "$what:" "$OUT/out" | awk '{ print $NF }')"
done
check "some receives were refused by the structure checks, past the checksums" \
	grep -Eq 'out of order or out of bounds|its header announced|unknown type|follow the stream' "$OUT/out"

# The status and table parsers' fuzz test (tests/unit/test-parse-fuzz.c),
# with the sanitizers.
if check "tests/unit/test-parse-fuzz.c builds with ASan and UBSan" \
	cc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer \
	-std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-missing-field-initializers \
	-I"$ROOT/include/uapi" -I"$ROOT/userspace/lib" -o "$OUT/parse-fuzz" \
	"$ROOT/tests/unit/test-parse-fuzz.c" "$ROOT/userspace/lib/subvol-status.c"; then
	ASAN_OPTIONS=detect_leaks=0 "$OUT/parse-fuzz" 300000 "$seed" >"$OUT/parse.out" 2>&1
	check_eq "300000 mutated lines under the sanitizers: exit 0" 0 $?
	check "and no sanitizer report" sh -c "! grep -qE 'ERROR: AddressSanitizer|runtime error:' '$OUT/parse.out'"
	grep '^# ' "$OUT/parse.out"
	check "its checks pass" grep -qx '4 passed, 0 failed' "$OUT/parse.out"
fi

# The harness counts what it is there to count.
cat >"$OUT/segv" <<'EOF'
#!/bin/sh
kill -SEGV $$
EOF
cat >"$OUT/chatty" <<'EOF'
#!/bin/sh
echo "subvol: receive: refused" >&2
echo "and a second line" >&2
exit 1
EOF
chmod +x "$OUT/segv" "$OUT/chatty"
"$FUZZ" --iterations 4 --seed 1 --tool "$OUT/segv" >"$OUT/segv.out" 2>&1
check_eq "a tool killed by SIGSEGV: fuzz-receive exits 1" 1 $?
check_eq "and counts 4 crashes" 4 "$(grep -F 'crashed (signal' "$OUT/segv.out" | awk '{ print $NF }')"
check "naming the signal" grep -q 'exit 139 (signal 11)' "$OUT/segv.out"
"$FUZZ" --iterations 4 --seed 1 --tool "$OUT/chatty" >"$OUT/chatty.out" 2>&1
check_eq "a tool that refuses in two lines: exit 1" 1 $?
check_eq "and 4 such refusals" 4 "$(grep -F 'refused with other than one line' "$OUT/chatty.out" | awk '{ print $NF }')"
check_status "--iterations 0: usage error" 2 "$FUZZ" --iterations 0
finish
