# shellcheck shell=bash
# Check helpers for test scripts (sourced: `. /src/tests/lib/vmtest.sh` in
# the VM; tests/lib/hosttest.sh brings the same ones to host-side tests).
#
#   check NAME CMD...          passes when CMD exits 0
#   check_eq NAME EXPECTED ACTUAL
#   check_fails NAME CMD...    passes when CMD exits non-zero
#   check_status NAME STATUS CMD...  passes when CMD exits with STATUS
#   finish                     prints "N passed, N failed"; fails if any
#                              check failed or none ran
#
# Each check prints "ok - NAME" or "not ok - NAME" followed by "#"-lines
# saying what was expected and what was seen, and returns non-zero on
# failure, so a test can stop early: `check mkfs mkfs.xfs "$DEV" || { finish; exit; }`
# (without `set -e`: that would end the script at the first failed check,
# before finish).

_vmtest_passed=0
_vmtest_failed=0

_vmtest_pass() {
	_vmtest_passed=$((_vmtest_passed + 1))
	echo "ok - $1"
}

# _vmtest_fail NAME LINE...: report a failure, each detail line as "#   LINE"
# (long output is cut to its last 40 lines).
_vmtest_fail() {
	local name=$1 lines line
	shift
	_vmtest_failed=$((_vmtest_failed + 1))
	echo "not ok - $name"
	lines=$(printf '%s\n' "$@")
	if (($(wc -l <<<"$lines") > 40)); then
		echo "#   (output cut to its last 40 lines)"
		lines=$(tail -n 40 <<<"$lines")
	fi
	while IFS= read -r line; do echo "#   $line"; done <<<"$lines"
	return 1
}

check_status() {
	local name=$1 expected=$2 out status=0
	shift 2
	out=$("$@" 2>&1) || status=$?
	((status == expected)) && _vmtest_pass "$name" && return
	_vmtest_fail "$name" "command: $*" "expected exit status $expected, got $status" ${out:+"output:" "$out"}
}

check() {
	local name=$1
	shift
	check_status "$name" 0 "$@"
}

check_eq() {
	[[ $2 == "$3" ]] && _vmtest_pass "$1" && return
	_vmtest_fail "$1" "expected: $2" "actual:   $3"
}

check_fails() {
	local name=$1 out status=0
	shift
	out=$("$@" 2>&1) || status=$?
	((status != 0)) && _vmtest_pass "$name" && return
	_vmtest_fail "$name" "command: $*" "expected a non-zero exit status, got 0" ${out:+"output:" "$out"}
}

finish() {
	echo "$_vmtest_passed passed, $_vmtest_failed failed"
	if ((_vmtest_passed + _vmtest_failed == 0)); then
		echo "# no checks ran"
		return 1
	fi
	((_vmtest_failed == 0))
}
