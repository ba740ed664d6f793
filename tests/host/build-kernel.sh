#!/bin/bash
# Host-side test of scripts/build-kernel (configuration and cache key only:
# it never compiles a kernel) and of the kernel-log patterns with which
# scripts/vm-run fails a run on a debug kernel's reports.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/build-kernel-test.XXXXXX")
bad_dir=""
trap 'rm -rf "$work" ${bad_dir:+"$bad_dir" "$bad_dir.lock"}' EXIT

show() { while IFS= read -r line; do echo "#   $line"; done <<<"$1"; }

# (a) The debug flavour's .config (the first run extracts the source, about
# 20 s; then kconfig, about 10 s; cached afterwards).
dir=$("$ROOT/scripts/build-kernel" --config-only 2>"$work/err" | tail -n 1)
check "build-kernel --config-only succeeds" test -f "$dir/.config" || show "$(cat "$work/err")"
for opt in PROVE_LOCKING=y DEBUG_ATOMIC_SLEEP=y KASAN=y KASAN_GENERIC=y KFENCE=y \
	DEBUG_KMEMLEAK=y DEBUG_OBJECTS=y DEBUG_OBJECTS_WORK=y DEBUG_OBJECTS_TIMERS=y \
	DEBUG_OBJECTS_FREE=y DETECT_HUNG_TASK=y DEBUG_INFO_NONE=y XFS_FS=m XFS_QUOTA=y \
	BLK_DEV_DM=m DM_THIN_PROVISIONING=m DM_LOG_WRITES=m PVH=y 9P_FS=m KPROBES=y \
	LOCALVERSION='"-debug"'; do
	check "the debug .config has CONFIG_$opt" grep -qxF "CONFIG_$opt" "$dir/.config"
done
check_eq "--print-dir names the same directory" "$dir" "$("$ROOT/scripts/build-kernel" --print-dir)"

# (b) The cache key: a copy of the script and fragments, with a cache of
# its own (--print-dir only hashes, it extracts nothing).
mkdir -p "$work/copy/scripts"
cp -r "$ROOT/scripts/build-kernel" "$ROOT/scripts/kernel-config" "$work/copy/scripts/"
key() { DM_SUBVOL_CACHE=$work/cache "$work/copy/scripts/build-kernel" --print-dir "$@" | xargs basename; }
key0=$(key)
check_eq "the same inputs give the same key (and directory name)" "${dir##*/}" "$key0"
touch "$work/copy/scripts/kernel-config/vm.config"
check_eq "a fragment's time alone leaves the key" "$key0" "$(key)"
cp "$work/copy/scripts/kernel-config/debug.config" "$work/debug.config"
echo "CONFIG_DEBUG_LIST=n" >>"$work/copy/scripts/kernel-config/debug.config"
key1=$(key)
check "a changed fragment changes the key" test "$key1" != "$key0"
cp "$work/debug.config" "$work/copy/scripts/kernel-config/debug.config"
check_eq "the fragment changed back gives the old key" "$key0" "$(key)"
mkdir "$work/patches"
echo "--- a/README" >"$work/patches/0001-x.patch"
check "a patch directory changes the key" test "$(key --patches "$work/patches")" != "$key0"
echo "# x" >>"$work/copy/scripts/build-kernel"
check "a changed script changes the key" test "$(key)" != "$key0"
cp "$ROOT/scripts/build-kernel" "$work/copy/scripts/build-kernel"

# (c) An option kconfig cannot give fails the build, named. This uses the
# shared source tree (the real cache), in a key directory removed after.
printf 'CONFIG_KASAN_SW_TAGS=y\nCONFIG_NO_SUCH_OPTION=y\n' >"$work/copy/scripts/kernel-config/bad.config"
bad_dir=$("$work/copy/scripts/build-kernel" --flavour bad --print-dir)
out=$("$work/copy/scripts/build-kernel" --flavour bad --config-only 2>&1)
check_eq "an option that did not make it fails build-kernel" 1 $? || show "$out"
check "it names CONFIG_KASAN_SW_TAGS" grep -q 'not in the final .config: CONFIG_KASAN_SW_TAGS=y' <<<"$out"
check "it names CONFIG_NO_SUCH_OPTION" grep -q 'not in the final .config: CONFIG_NO_SUCH_OPTION=y (got: absent)' <<<"$out"
check_status "an unknown flavour is a usage error" 2 "$ROOT/scripts/build-kernel" --flavour nosuch --print-dir

# (d) vm-run's kernel-log patterns: the debug checkers' report lines (as the
# 6.1 source prints them) fail a run, their boot banners do not.
while IFS= read -r line; do
	printf '[   12.345678] %s\n' "$line" >"$work/log"
	check_status "vm-run fails on: $line" 3 "$VM_RUN" --check-log "$work/log"
done <<'EOF'
BUG: KASAN: slab-out-of-bounds in subvol_map+0x12/0x40 [dm_subvol]
BUG: KFENCE: use-after-free read in subvol_map+0x12/0x40 [dm_subvol]
ODEBUG: free active (active state 0) object: 0000000012345678 object type: timer_list hint: f+0x0/0x10
DEBUG_LOCKS_WARN_ON(1)
WARNING: inconsistent lock state
WARNING: possible circular locking dependency detected
BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580
kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)
VM-RUN: kmemleak: suspected memory leaks after x.sh:
INFO: task kworker/0:1:12 blocked for more than 120 seconds.
turning off the locking correctness validator.
INFO: lockdep is turned off.
EOF
while IFS= read -r line; do
	printf '[    0.012345] %s\n' "$line" >"$work/log"
	check_status "vm-run passes: $line" 0 "$VM_RUN" --check-log "$work/log"
done <<'EOF'
kmemleak: Kernel memory leak detector initialized (mem pool available: 15765)
kfence: initialized - using 2097152 bytes for 255 objects at 0x(____ptrval____)-0x(____ptrval____)
Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar
KernelAddressSanitizer initialized (generic)
rcu: 	RCU lockdep checking is enabled.
... MAX_LOCKDEP_KEYS:        8192
EOF

# A report written to the kernel log inside a VM fails the run (one boot).
echo 'echo "BUG: KASAN: use-after-free in fake_report+0x0/0x1" >/dev/kmsg' >"$work/kasan.sh"
out=$("$VM_RUN" "$work/kasan.sh" 2>&1)
check_eq "a KASAN report in the VM makes vm-run exit 3" 3 $? || show "$out"
check "vm-run prints it" grep -q '^vm-run: kernel reported: .*BUG: KASAN: use-after-free in fake_report' <<<"$out"

# (e) vm-run --kernel DIR, on a stand-in for a built kernel: Debian's own,
# laid out as scripts/build-kernel lays out its result (bzImage, release,
# modules/lib/modules/RELEASE with the modules vm-run loads). At a fixed
# path, so that its cached base initramfs is reused by the next run.
kver=$("$ROOT/scripts/kernel-version")
fake=$ROOT/build/test-kernel
rm -rf "$fake"
mkdir -p "$fake/modules/lib/modules/$kver"
cp "/boot/vmlinuz-$kver" "$fake/bzImage"
echo "$kver" >"$fake/release"
# vm-run's MODULES list, and what they depend on.
mapfile -t mods < <(sed -n '/^MODULES=(/,/^)/{/^MODULES=(/d;/^)/d;s/#.*//;p}' "$VM_RUN" | tr -s ' \t' '\n' | sed '/^$/d')
for mod in "${mods[@]}"; do
	modprobe -S "$kver" --show-depends "$mod" | awk '$1 == "insmod" { print $2 }'
done | sort -u | while IFS= read -r path; do
	rel=${path#/lib/modules/"$kver"/}
	mkdir -p "$fake/modules/lib/modules/$kver/${rel%/*}"
	cp "$path" "$fake/modules/lib/modules/$kver/$rel"
done
cp /lib/modules/"$kver"/modules.{order,builtin,builtin.modinfo} "$fake/modules/lib/modules/$kver/"
depmod -b "$fake/modules" "$kver"
printf '%s\n' 'uname -r' 'test -d /sys/module/dm_thin_pool && echo dm_thin_pool loaded' >"$work/kernel.sh"
out=$("$VM_RUN" --kernel "$fake" "$work/kernel.sh" 2>"$work/err")
check_eq "vm-run --kernel boots DIR/bzImage, loads DIR's modules (${#mods[@]} listed)" \
	"$kver"$'\n'"dm_thin_pool loaded" "$out" || show "$(cat "$work/err")"
rm -rf "${fake:?}/modules"
check_status "vm-run --kernel DIR without a modules tree cannot run" 126 "$VM_RUN" --kernel "$fake" "$work/kernel.sh"
rm -f "${fake:?}/release"
check_status "vm-run --kernel DIR that build-kernel did not make is a usage error" 2 "$VM_RUN" --kernel "$fake" "$work/kernel.sh"
rm -rf "${fake:?}"

# debug-suite's own usage errors, before it builds anything.
out=$("$ROOT/scripts/debug-suite" --mem-extra lots 2>&1)
check_eq "debug-suite --mem-extra that is not a number: exit 2, one line" "2 1" "$? $(wc -l <<<"$out")"
check "naming the option and the value" grep -qx 'debug-suite: --mem-extra is not a number of MiB: lots' <<<"$out"
check_status "debug-suite --mem-extra without a value: exit 2" 2 "$ROOT/scripts/debug-suite" --mem-extra
out=$("$ROOT/scripts/debug-suite" --jobs 0 2>&1)
check_eq "debug-suite --jobs 0: exit 2, naming the option" "2 debug-suite: --jobs is not a positive number: 0" "$? $out"
out=$("$ROOT/scripts/debug-suite" --hung-task 10m 2>&1)
check_eq "debug-suite --hung-task 10m: exit 2, naming the option" \
	"2 debug-suite: --hung-task is not a number of seconds: 10m" "$? $out"

finish
