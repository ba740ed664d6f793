# Who owns a snapshot copy (issue 15): the subvol process that waits for
# it.  Killed with SIGKILL during the copy (foreground or --no-wait), it
# leaves a copy nobody will name: status says so, the next snapshot of the
# volume cancels it and succeeds, subvol monitor cancels it at its next
# check, and the copy-on-write reserve it claimed comes back.  A copy whose
# process lives is left alone by both, and its snapshot, without a name
# until the copy is complete, cannot be sent or cloned.  On a terminal
# the tool shows the copy's progress on one line.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

export SUBVOL_CONFIG_DIR=/tmp/subvol-etc
host_xfs
P=$HOST/pool G=/mnt/guest
mkdir -p $G /mnt/snap
# pid_of TEXT: the pid of the process whose command line holds TEXT.
pid_of() {
	local f
	for f in /proc/[0-9]*/cmdline; do
		[ "$f" = /proc/$$/cmdline ] && continue
		if { tr '\0' ' ' <"$f"; } 2>/dev/null | grep -qF -- "$1"; then
			f=${f#/proc/}
			echo "${f%/cmdline}"
			return 0
		fi
	done
	return 1
}
# until_true SECONDS CMD...: CMD succeeds within SECONDS (tenths polled).
until_true() {
	local n=$(($1 * 10))
	shift
	while ! "$@"; do
		n=$((n - 1))
		[ $n -gt 0 ] || return 1
		sleep 0.1
	done
}
gone() { ! running "$1"; }
copy_field() { dmsetup status subvol-tank-vm | awk '{ print $NF }'; }
copying() { copy_field | grep -q /; }
status_copy() { subvol status -o snapshot_copy --noheadings tank/vm; }
cow() { status_field subvol-tank-vm $F_COW; }

check "pool create" subvol pool create --name tank $P
check "create a volume" subvol create --size 512M --mkfs tank/vm
mount /dev/subvol/tank/vm $G
# Many extents, so that a slow copy has much to do.
fallocate -l 96M $G/frag
check "fragment the image" xfs_io -d -c "pwrite -q -R -b 4k 0 96m" $G/frag
sum=$(sha $G/frag)
sync
cow0=$(cow)
check_eq "status: no snapshot copy" "-" "$(status_copy)"

# --- the process of a --no-wait snapshot killed during the copy
copy_rate_mib 2
o=$(subvol snapshot --no-wait tank/vm s1 2>&1)
check "snapshot --no-wait" grep -q "copying in the background" <<<"$o"
pid=$(pid_of "snapshot --no-wait tank/vm s1")
check "its background process runs" test -n "$pid"
check "the copy is under way" copying
check "a copy-on-write reserve is claimed" test "$(cow)" -gt "$cow0"
check "status: owned, with its progress" sh -c "subvol status -o snapshot_copy --noheadings tank/vm | grep -q '^[0-9]*% of [0-9]* MiB\$'"
kill -9 "$pid"
check "SIGKILL ends it" until_true 10 sh -c "! test -d /proc/$pid"
check "the device still holds the copy" copying
check "status: no process owns it" sh -c "subvol status tank/vm | grep -q 'no subvol process owns it'"
check_fails "no snapshot s1" test -e $P/s1.img
# The next snapshot cancels it, says so, and is made.
copy_rate_mib 0
o=$(subvol snapshot tank/vm s2 2>&1)
s=$?
echo "# $o"
check_eq "the next snapshot is made" 0 "$s"
check "it says it cancelled the orphaned copy" grep -q "cancelled a snapshot copy on subvol-tank-vm whose subvol process is gone (it was running)" <<<"$o"
check "s2 exists" test -e $P/s2.img
check_fails "s1 does not" test -e $P/s1.img
check "s2 holds the data" sh -c "subvol activate tank/s2 >/dev/null && mount -o ro,nouuid,norecovery /dev/subvol/tank/s2 /mnt/snap"
check_eq "the file in s2" "$sum" "$(sha /mnt/snap/frag)"
umount /mnt/snap
check "deactivate s2" subvol deactivate tank/s2
check_eq "no copy left on the device" "-" "$(copy_field)"
check_eq "no hidden file left in the pool" "" "$(ls -A $P | grep '^\.' || true)"

# --- a foreground snapshot killed during the copy; the monitor cancels
cow1=$(cow)
copy_rate_mib 2
subvol snapshot tank/vm s3 >/tmp/s3.out 2>&1 &
check "a foreground snapshot starts copying" until_true 60 copying
pid=$(pid_of "snapshot tank/vm s3")
kill -9 "$pid"
check "SIGKILL ends it" until_true 10 sh -c "! test -d /proc/$pid"
check "status: no process owns it" sh -c "subvol status tank/vm | grep -q 'no subvol process owns it'"
check "its reserve is still claimed" test "$(cow)" -gt "$cow1"
o=$(subvol monitor --once 2>&1)
echo "# $o"
check "subvol monitor --once cancels it" grep -q "subvol-tank-vm: cancelled a snapshot copy of $P/vm.img whose subvol process is gone" <<<"$o"
check_eq "no copy left on the device" "-" "$(copy_field)"
check "the reserve is back to what s2 needs" test "$(cow)" -le "$cow1"
check_fails "no snapshot s3" test -e $P/s3.img

# --- a copy whose process lives is left alone
o=$(subvol snapshot --no-wait tank/vm s4 2>&1)
check "another snapshot --no-wait" grep -q "copying in the background" <<<"$o"
check "status: owned" sh -c "! subvol status tank/vm | grep -q 'no subvol process owns it'"
o=$(subvol snapshot tank/vm s5 2>&1)
check "a snapshot meanwhile is refused" grep -q "volume tank/vm: another subvol process is copying a snapshot of it" <<<"$o"
check_fails "it left no image" test -e $P/s5.img
# Until the copy is complete the snapshot has no name: nothing can use it.
o=$(subvol send tank/s4 2>&1 >/dev/null)
check "send of the snapshot being copied refused: it has no name yet" \
	grep -q "volume tank/s4: no such volume" <<<"$o"
o=$(subvol clone tank/s4 c4 2>&1)
check "clone of it refused likewise" grep -q "volume tank/s4: no such volume" <<<"$o"
check_fails "list does not show it" sh -c "subvol list --noheadings tank | awk '{ print \$2 }' | grep -qx s4"
subvol monitor --once >/tmp/mon.out 2>&1
check_fails "subvol monitor leaves it be" grep -q cancelled /tmp/mon.out
check "the copy goes on" copying
copy_rate_mib 0
check "and completes: s4 appears" until_true 300 test -e $P/s4.img
check "its process ends" until_true 30 gone "snapshot --no-wait tank/vm s4"
check_eq "no copy left on the device" "-" "$(copy_field)"

# --- on a terminal: a progress line, rewritten in place
copy_rate_mib 16
o=$(script -qec "subvol snapshot tank/vm s6" /dev/null 2>&1 </dev/null)
copy_rate_mib 0
check "snapshot on a terminal" test -e $P/s6.img
check "it shows the progress in place" grep -q $'\r'"tank/vm: copying, *[0-9]*% of [0-9]* MiB" <<<"$o"
check "ending at 100%" grep -q $'\r'"tank/vm: copying, 100% of [0-9]* MiB" <<<"$o"
check "then says it is made" grep -q "Snapshot tank/s6 of tank/vm created" <<<"$o"

# --- nothing leaked
umount $G
check "deactivate" subvol deactivate tank/vm
check "remove everything" subvol remove tank/vm tank/s2 tank/s4 tank/s6
check_eq "the pool is empty" "" "$(ls -A $P)"
finish
