#!/bin/bash
# Test of the suite runner itself on the native unit tests (a few
# seconds): run N files at once, it prints every file's output whole under
# its own header and the same closing count as a serial run; bad options
# and patterns that select nothing are refused.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

RUN=$ROOT/tests/run
units=$(find "$ROOT/build/tests/unit" -maxdepth 1 -type f -perm -u+x | wc -l)
check "there are several unit test files" test "$units" -ge 2

serial=$("$RUN" --no-setup --jobs 1 unit/ 2>&1)
check_eq "--jobs 1 passes" 0 $?
parallel=$("$RUN" --no-setup --jobs 2 unit/ 2>&1)
check_eq "--jobs 2 passes" 0 $?

# total OUTPUT: the sum of the per-file counts.
total() { sed -n 's/^=== unit\/[^:]*: \([0-9]*\) passed, 0 failed.*/\1/p' <<<"$1" | paste -sd+ | bc; }
check_eq "--jobs 2 reports every file once" "$units" "$(grep -c '^=== unit/.*: [0-9]* passed' <<<"$parallel")"
check_eq "its closing line is the sum of the files' counts" "$(total "$parallel") passed, 0 failed" \
	"$(tail -n 1 <<<"$parallel")"
check_eq "it counts what --jobs 1 counts" "$(tail -n 1 <<<"$serial")" "$(tail -n 1 <<<"$parallel")"

# Each file's lines come whole between its header and its count: no
# other file's header or count line falls between them.
whole=yes
while IFS= read -r name; do
	block=$(sed -n "\\|^=== $name\$|,\\|^=== $name: |p" <<<"$parallel")
	[[ $(sed -n '2,$p' <<<"$block" | grep -c '^=== ') == 1 ]] || whole="no ($name)"
done < <(sed -n 's/^=== \(unit\/[^:]*\)$/\1/p' <<<"$parallel")
check_eq "each file's output is printed whole" yes "$whole"

check_status "--jobs 0 is refused" 2 "$RUN" --no-setup --jobs 0 unit/
err=$("$RUN" --no-setup --jobs 0 unit/ 2>&1)
check "it says why" grep -q "^tests/run: --jobs needs a number" <<<"$err"
check_status "a pattern that selects nothing is refused" 2 "$RUN" --no-setup no-such-test
finish
