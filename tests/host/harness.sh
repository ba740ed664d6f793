#!/bin/bash
# Host-side test of the VM harness: runs scripts/vm-run several times (each
# boot takes ~10 s) and checks its exit statuses, output, $OUT and --disk.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/harness-test.XXXXXX")
trap 'rm -rf "$work"' EXIT

# script NAME <<END: write the VM test script $work/NAME.sh.
script() { cat >"$work/$1.sh"; }

# show OUTPUT: the output of a failed check, in the checks' format.
show() { while IFS= read -r line; do echo "#   $line"; done <<<"$1"; }

# (a) the in-VM harness test passes and its $OUT comes back.
check "00-harness.sh passes in the VM" "$VM_RUN" --out "$work/out" "$ROOT/tests/vm/00-harness.sh"
check_eq "its OUT file came back" "harness ok $("$ROOT/scripts/kernel-version")" "$(cat "$work/out/harness.txt" 2>&1)"
check "the console log is saved in --out" grep -q 'Linux version' "$work/out/console.log"

# ARGS arrive as given; the last output line, written just before the VM
# ends, is not lost.
script args <<'END'
printf '<%s>' "$@"
echo
echo "hung task timeout $(cat /proc/sys/kernel/hung_task_timeout_secs)"
echo "last line"
END
out=$("$VM_RUN" --hung-task 77 "$work/args.sh" 'a b' '' "c'd" 2>&1)
check_eq "ARGS are passed as given" "<a b><><c'd>" "$(head -n 1 <<<"$out")"
check "--hung-task sets the kernel's hung task timeout" grep -qx 'hung task timeout 77' <<<"$out"
check_eq "the script's last output line arrives" "last line" "$(tail -n 1 <<<"$out")"

# (b) a kernel WARNING fails the run.
script warn <<<'echo "WARNING: CPU: 0 PID: 1 at test" >/dev/kmsg'
out=$("$VM_RUN" "$work/warn.sh" 2>&1)
check_eq "a kernel WARNING makes vm-run exit 3" 3 $? || show "$out"
check "vm-run prints the WARNING line" grep -q '^vm-run: kernel reported: .*WARNING: CPU: 0 PID: 1 at test' <<<"$out"

# (c) the script's exit status is vm-run's.
script exit7 <<<'exit 7'
check_status "a script exiting 7 makes vm-run exit 7" 7 "$VM_RUN" "$work/exit7.sh"

# (d) vm-powercut ends the run with 0; what was synced before it is there
# in the next boot with the same --disk (XFS replays its log).
script cut1 <<'END'
set -e
mkfs.xfs -q "$SCRATCH_DEV"
mkdir /mnt/x
mount "$SCRATCH_DEV" /mnt/x
echo before-the-cut >/mnt/x/file
sync
echo saved >"$OUT/cut1"
vm-powercut
echo "after the cut"
END
out=$("$VM_RUN" --disk "$work/disk.img" --disk-size 1G --out "$work/cut1" "$work/cut1.sh" 2>&1)
check_eq "vm-powercut makes vm-run exit 0" 0 $? || show "$out"
check_fails "nothing runs after vm-powercut" grep -q 'after the cut' <<<"$out"
check_eq "OUT is saved at a power cut" saved "$(cat "$work/cut1/cut1" 2>&1)"
script cut2 <<'END'
set -e
mkdir /mnt/x
mount "$SCRATCH_DEV" /mnt/x
cat /mnt/x/file
END
check_eq "the synced file is there in the next boot" before-the-cut \
	"$("$VM_RUN" --disk "$work/disk.img" "$work/cut2.sh" 2>&1)"

# A VM that ends before the script does, and one that hangs.
script poweroff <<<'echo o >/proc/sysrq-trigger; sleep 60'
out=$("$VM_RUN" "$work/poweroff.sh" 2>&1)
check_eq "a VM that stops early makes vm-run exit 125" 125 $? || show "$out"
check "vm-run says so" grep -qx 'vm-run: VM stopped before SCRIPT finished' <<<"$out"
script hang <<<'sleep 600'
check_status "a timeout makes vm-run exit 124" 124 "$VM_RUN" --timeout 20 "$work/hang.sh"

# A task blocked in the kernel (a write to a frozen filesystem) ends the
# run when the hung-task detector reports it, with its stack printed,
# long before --timeout.
script blocked <<'END'
mkfs.xfs -q -f "$SCRATCH_DEV" && mount "$SCRATCH_DEV" /mnt && xfs_io -x -c freeze /mnt || exit 9
echo 5 >/proc/sys/kernel/hung_task_timeout_secs
echo x >/mnt/file &
sleep 300
echo "still running"
END
out=$("$VM_RUN" --timeout 400 "$work/blocked.sh" 2>&1)
check_eq "a hung task makes vm-run exit 3" 3 $? || show "$out"
check_fails "it ends the run: the script did not go on" grep -q 'still running' <<<"$out"
check "vm-run prints the blocked task's report" \
	grep -q '^vm-run: report: .*task [a-z]*:[0-9]* blocked for more than' <<<"$out"
check "and its stack" grep -q '^vm-run: report: .*__sb_start_write\|^vm-run: report: .*percpu_down_read' <<<"$out"

# stand_in_qemu DIR: DIR/qemu-system-x86_64, which finds its console log
# ($log) and writes its pid file as qemu does, then runs the script on stdin.
stand_in_qemu() {
	mkdir -p "$1"
	{
		cat <<'END'
#!/bin/bash
while (($#)); do
	case $1 in
	-serial) [[ $2 == file:* ]] && log=${2#file:} ;;
	-pidfile) echo $$ >"$2" ;;
	esac
	shift
done
END
		cat
	} >"$1/qemu-system-x86_64"
	chmod +x "$1/qemu-system-x86_64"
}

# A qemu that is still running after the guest printed its exit status
# (seen once: idle after "reboot: Power down" until --timeout) is killed,
# and the script's status stands.  The stand-in qemu writes the marker
# and its pid, then hangs.
stand_in_qemu "$work/stuck-qemu" <<'END'
echo "VM-RUN-EXIT-STATUS=7" >>"$log"
exec sleep 600
END
out=$(PATH="$work/stuck-qemu:$PATH" VM_RUN_EXIT_GRACE=3 "$VM_RUN" --timeout 120 "$work/exit7.sh" 2>&1)
check_eq "a qemu stuck after the guest's exit status is killed, and the status stands" 7 $? || show "$out"
check "vm-run says it killed it" grep -q '^vm-run: qemu had not exited .* after the guest ended; killed it$' <<<"$out"

# A kernel stuck in early boot (no "Run /init" in VM_RUN_BOOT_LIMIT
# seconds) is killed and booted again, up to three times. The stand-in
# qemu hangs in boot while its count file says so, then boots.
stand_in_qemu "$work/boot-qemu" <<'END'
n=$(($(cat "$BOOT_COUNT" 2>/dev/null || echo 0) + 1))
echo "$n" >"$BOOT_COUNT"
echo "[    2.0] Running RCU-tasks wait API self tests" >>"$log"
((n > STUCK_BOOTS)) || exec sleep 600
printf '[    9.0] Run /init as init process\nVM-RUN-EXIT-STATUS=5\n' >>"$log"
END
boot() {
	rm -f "$work/boots"
	PATH="$work/boot-qemu:$PATH" BOOT_COUNT=$work/boots STUCK_BOOTS=$1 VM_RUN_BOOT_LIMIT=2 VM_RUN_BOOT_TRIES=3 \
		"$VM_RUN" --timeout 120 "$work/exit7.sh" 2>&1
}
out=$(boot 2)
check_eq "two boots stuck before /init: the third runs the script" 5 $? || show "$out"
check_eq "qemu was started three times" 3 "$(cat "$work/boots")"
check_eq "vm-run says so for each stuck boot" 2 \
	"$(grep -c '^vm-run: boot [12] of 3: the kernel had not started /init after 2s (last: .*Running RCU-tasks wait API self tests); killed it$' <<<"$out")"
out=$(boot 3)
check_eq "three boots stuck: vm-run gives up, VM stopped" 125 $? || show "$out"
check_eq "after three tries" 3 "$(cat "$work/boots")"
out=$(boot 0)
check_eq "a boot that reaches /init is not retried" "5 1" "$? $(cat "$work/boots")" || show "$out"

# (e) --share: what the guest writes there is on the host at once, also
# when the VM is killed afterwards; --rootfs: an image the guest reads and
# may write, the writes thrown away; --stock-xfs: Debian's xfs.ko.
mkdir -p "$work/share" "$work/rootfs"
echo from-the-image >"$work/rootfs/marker"
truncate -s 64M "$work/rootfs.img"
mkfs.ext4 -q -d "$work/rootfs" "$work/rootfs.img"
script share <<'END'
mkdir /mnt/r
mount "$ROOTFS_DEV" /mnt/r
cat /mnt/r/marker >"$SHARE/seen"
echo scribbled >/mnt/r/marker
umount /mnt/r
modinfo -n xfs >>"$SHARE/seen"
sync
sleep 600
END
"$VM_RUN" --timeout 25 --share "$work/share" --rootfs "$work/rootfs.img" --stock-xfs "$work/share.sh" >/dev/null 2>&1
check_eq "--rootfs: the guest reads the image; --share: its write survives the VM being killed" \
	from-the-image "$(head -n 1 "$work/share/seen" 2>&1)"
check "--stock-xfs: Debian's xfs.ko, not the patched one" \
	grep -q '/kernel/fs/xfs/xfs.ko$' <(sed -n 2p "$work/share/seen")
debugfs -R 'cat /marker' "$work/rootfs.img" 2>/dev/null >"$work/marker-after"
check_eq "--rootfs: the guest's writes to the image are thrown away" from-the-image "$(cat "$work/marker-after")"

# (f) usage errors exit 2 without booting anything.
check_status "no SCRIPT: exit 2" 2 "$VM_RUN"
check_status "unknown option: exit 2" 2 "$VM_RUN" --bogus "$work/exit7.sh"
check_status "missing SCRIPT file: exit 2" 2 "$VM_RUN" "$work/no-such-script.sh"
check_status "option without a value: exit 2" 2 "$VM_RUN" --mem
check_status "non-numeric --mem: exit 2" 2 "$VM_RUN" --mem lots "$work/exit7.sh"
check_status "non-numeric --hung-task: exit 2" 2 "$VM_RUN" --hung-task 2m "$work/exit7.sh"
check_status "bad --disk-size: exit 2" 2 "$VM_RUN" --disk-size 4X "$work/exit7.sh"
check_status "--share that is not a directory: exit 2" 2 "$VM_RUN" --share "$work/no-such-dir" "$work/exit7.sh"
check_status "--rootfs that does not exist: exit 2" 2 "$VM_RUN" --rootfs "$work/no-such.img" "$work/exit7.sh"
check "--help prints usage" grep -q '^usage: scripts/vm-run' <("$VM_RUN" --help)

# scripts/repeat-test: its usage errors, then one run of a VM test under
# one busy loop, counted in runs.
REPEAT=$ROOT/scripts/repeat-test
check_status "repeat-test without TEST: exit 2" 2 "$REPEAT"
check_status "repeat-test --runs 0: exit 2" 2 "$REPEAT" --runs 0 harness
check_status "repeat-test --load x: exit 2" 2 "$REPEAT" --load x harness
check_status "repeat-test of a TEST naming many files: exit 2" 2 "$REPEAT" space
out=$("$REPEAT" --runs 1 --load 1 --out "$work/repeat" 00-harness 2>&1)
check_eq "repeat-test of a passing test exits 0" 0 $? || show "$out"
check "it prints the run's checks" grep -qE '^run 1: [1-9][0-9]* passed, 0 failed, exit 0, [0-9]+ s$' <<<"$out"
check_eq "and ends with the runs counted" "1 passed, 0 failed" "$(tail -n 1 <<<"$out")"
check "it keeps the run's console log" grep -q 'Linux version' "$work/repeat/run1/console.log"
check_fails "no busy loop is left running" pgrep -f "$work/repeat"

# scripts/torture: its usage errors, and each run it lists is a script
# that takes every option the run gives it (its --help names them).
TORTURE=$ROOT/scripts/torture
check_status "torture --only with no such run: exit 2" 2 "$TORTURE" --only crash,nothing
check_status "torture with an unknown option: exit 2" 2 "$TORTURE" --fast
bad=""
while read -r name cmd; do
	read -ra words <<<"$cmd"
	help=$("$ROOT/${words[0]}" --help 2>&1) || bad+=" $name(--help fails)"
	for w in "${words[@]:1}"; do
		[[ $w == -* && $help != *"$w"* ]] && bad+=" $name($w)"
	done
done < <("$TORTURE" --list)
check_eq "every torture run is a script that takes its options" "" "$bad"
check_eq "torture lists eleven runs" 11 "$("$TORTURE" --list | wc -l)"
git clone -q "$ROOT" "$work/clone" && echo "# changed" >>"$work/clone/README.md"
out=$("$work/clone/scripts/torture" --only fuzz-receive 2>&1)
check_eq "torture refuses a work tree with uncommitted changes" 2 $?
check "and says so" grep -q 'uncommitted changes' <<<"$out"

finish
