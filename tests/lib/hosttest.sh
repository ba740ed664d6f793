# shellcheck shell=bash
# Check helpers for host-side tests (sourced): the very same check, check_eq,
# check_fails, check_status and finish as the VM tests use, with the same
# output, plus ROOT (the repo) and VM_RUN (scripts/vm-run).

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck disable=SC2034 # used by the tests that source this
VM_RUN=$ROOT/scripts/vm-run
# shellcheck source=SCRIPTDIR/vmtest.sh
. "$ROOT/tests/lib/vmtest.sh"
