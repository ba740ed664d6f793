# shellcheck shell=bash
# What scripts/fuzz-receive and scripts/fuzz-xattr share (sourced, with
# ROOT set to the repository):
#
#   fuzz_tool NAME TOOL     sets FUZZ_TOOL to TOOL, or, when TOOL is "",
#                           builds build/asan/bin/subvol with ASan and UBSan
#                           and sets FUZZ_TOOL to it and FUZZ_ASAN to
#                           " (ASan and UBSan build)"; exports the
#                           sanitizers' options; sets SUBVOL to the plain
#                           build (made if missing), for the setup
#   fuzz_mount DIR          a 1 GiB loop-mounted XFS at DIR/mnt (its file
#                           DIR/xfs.fs); fuzz_umount DIR undoes it
#
# A sanitizer's report makes the tool exit 99 (ASan) or 98 (UBSan), and
# FUZZ_SANITIZER is the pattern of the reports' first lines.
# shellcheck disable=SC2034 # FUZZ_* are for the scripts that source this
FUZZ_SANITIZER='ERROR: AddressSanitizer|runtime error:'

fuzz_tool() {
	local name=$1
	FUZZ_TOOL=$2 FUZZ_ASAN=""
	if [[ -z $FUZZ_TOOL ]]; then
		# -fno-sanitize-recover: a UB report ends the process, as a crash does.
		make -s -C "$ROOT/userspace" BUILD="$ROOT/build/asan" \
			CC="cc -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer" \
			"$ROOT/build/asan/bin/subvol"
		FUZZ_TOOL=$ROOT/build/asan/bin/subvol FUZZ_ASAN=" (ASan and UBSan build)"
	fi
	[[ -x $FUZZ_TOOL ]] || { echo "$name: no tool at $FUZZ_TOOL" >&2; exit 2; }
	# LeakSanitizer needs ptrace, which containers often refuse; leaks of a
	# process that exits are not what this looks for.
	export ASAN_OPTIONS=detect_leaks=0:exitcode=99 UBSAN_OPTIONS=print_stacktrace=1:exitcode=98
	SUBVOL=$ROOT/build/bin/subvol
	[[ -x $SUBVOL ]] || make -s -C "$ROOT/userspace" "$ROOT/build/bin/subvol"
}

fuzz_mount() {
	mkdir -p "$1/mnt"
	truncate -s 1G "$1/xfs.fs"
	mkfs.xfs -q "$1/xfs.fs"
	mount -o loop "$1/xfs.fs" "$1/mnt"
}

fuzz_umount() {
	if mountpoint -q "$1/mnt"; then umount "$1/mnt"; fi
}
