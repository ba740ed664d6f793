# subvol monitor with real LVM: the host XFS on a 600 MiB LV, a pool that
# autoextends it (past 300 MiB free, by 256 MiB), a 2 GiB volume with
# no_space:queue (its low-water mark the pool's threshold) and the patched
# guest XFS, which writes 1.5 GiB.  With
# the monitor running: no ENOSPC and no I/O error, the LV extended by
# lvextend --resizefs as many times as needed (and the host XFS with it),
# every byte reads back (every MiB holds its offset), pool status has what the
# monitor did.  Without the monitor, on another 600 MiB LV: ENOSPC, and
# every acknowledged byte reads back.  Then a resize that fails after
# lvextend grew the LV (fsadm refusing): the next check grows the host
# XFS to its LV instead of extending the LV again.
#
# The guest writes as fast as it can: faster than lvextend grows the host
# (3-5 s under TCG).  The space-aware XFS reserves before it writes, so
# under no_space:queue it is its reservation that waits for the host to
# grow (tests/vm/7p-space-hold.sh); fio's longest write is printed.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh
. /src/tests/lib/lvmhost.sh

export SUBVOL_CONFIG_DIR=/tmp/subvol-etc
VG=vmon H1=/mnt/host1 H2=/mnt/host2 G=/mnt/guest
MIB=1536 RATE=0
mkdir -p $G

check "pvcreate and vgcreate $VG on the scratch disk" lvm_vg $VG || { finish; exit; }
check "a 600 MiB LV with the host XFS" lvm_host_xfs $VG host1 600 $H1 || { finish; exit; }
check_eq "the LV is 600 MiB" $((600 << 20)) "$(lv_bytes $VG/host1)"
check "pool create with an autoextend policy" subvol pool create --name vms \
	--autoextend-threshold 300M --autoextend-step 256M --autoextend-max 3G $H1/vms || { finish; exit; }
check_eq "pool status: the policy and the LV" "300M 256M 3G $VG/host1 0" \
	"$(subvol pool status --noheadings -o autoextend_threshold,autoextend_step,autoextend_max,host_lv,extensions vms | xargs)"
# No --low-water: the volume's device gets the pool's threshold as its
# low-water mark, so its event wakes the monitor at the crossing.
# Queue holds the guest's reservations until the monitor has grown the
# host; 600 s, not the default 60: on the debug kernel one lvextend
# --resizefs takes 40-50 s, and two back to back passed 60 s (ENOSPC at
# write(2), correctly: the growth came too late for the timeout).
check "a 2 GiB volume, no_space:queue, no low-water mark of its own, with an XFS" \
	subvol create --size 2G --no-space queue --no-space-timeout 600 --mkfs vms/vol || { finish; exit; }
DEV=/dev/mapper/subvol-vms-vol
check_eq "its table has the threshold's low_water, 300M in sectors" "low_water:$((300 << 11))" \
	"$(dmsetup table subvol-vms-vol | grep -o 'low_water:[0-9]*')"
check_eq "status shows it" 300M "$(subvol status --noheadings -o low_water_mark vms/vol | xargs)"
kmsg_mark
check "mount the patched guest XFS" mount $DEV $G || { finish; exit; }
check_eq "the guest attached to the space API" attached "$(status_field subvol-vms-vol $F_CLIENT)"
echo "# host free before: $(($(free_bytes $H1) >> 20)) MiB of $(($(fs_bytes $H1) >> 20)) MiB"

# --- with the monitor
monitor_start /tmp/monitor.log
check "the monitor started and follows the device's events" \
	grep -q 'started: checking the pools every 10 s and at their devices. events' /tmp/monitor.log
check_fails "a second monitor is refused" subvol monitor --once
start=$EPOCHREALTIME
fio_fill $G/data $MIB $RATE /tmp/fio1
st=$?
secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
echo "# fio: $MIB MiB in $secs s, longest write $(($(fio_field /tmp/fio1 80) / 1000)) ms; $(cat /tmp/fio1.err)"
check_eq "the guest wrote $MIB MiB without an error (fio exit 0, error 0)" "0 0" "$st $(fio_field /tmp/fio1 5)"
check_eq "fio wrote $MIB MiB" $((MIB * 1024)) "$(fio_field /tmp/fio1 47)"
check_eq "no ENOSPC" "" "$(grep -i 'no space' /tmp/fio1.err)"
check_eq "the file is $MIB MiB" $((MIB << 20)) "$(stat -c %s $G/data)"
check "the monitor still runs" kill -0 "$MONITOR_PID"
monitor_stop
check_eq "the monitor stops at SIGTERM, exit 0" 0 $?
sed 's/^/# monitor: /' /tmp/monitor.log
check "it logged that it stopped" grep -q 'stopped by signal 15' /tmp/monitor.log

n=$(grep -c 'pool vms: extended: lvextend --resizefs -L +256M vmon/host1' /tmp/monitor.log)
check "the LV was extended (at least twice: 1.5 GiB does not fit in 600M + 256M)" test "$n" -ge 2
check_eq "the LV grew by 256 MiB each time" $(((600 + 256 * n) << 20)) "$(lv_bytes $VG/host1)"
check "the host XFS grew with it (the LV less at most its 64 MiB log)" \
	test "$(fs_bytes $H1)" -ge $(((600 + 256 * n - 64) << 20))
check_eq "pool status counts the extensions" "$n" "$(subvol pool status --noheadings -o extensions vms | xargs)"
check "pool status has the last extension, with its time" \
	sh -c "subvol pool status -o last_extension,last_extension_time vms | grep -q 'vmon/host1: host filesystem .* -> '"
check_eq "no failure logged or kept" "0 -" \
	"$(grep -cE 'failed|cannot|nothing to do|no free space|maximum' /tmp/monitor.log) $(subvol pool status --noheadings -o last_error vms | xargs)"
# The first crossing comes at the event of the mark the threshold gave.
check_eq "the device's event found the first crossing" "(at a device event)" \
	"$(grep -m1 -o 'past the threshold 300M (.*)' /tmp/monitor.log | sed 's/^past the threshold 300M //')"
check_eq "no I/O error, writeback error or shutdown in the kernel log" "" "$(kernel_errors)"
check_eq "no write reached the host without a promise" 0 "$(status_field subvol-vms-vol $F_UNCOVERED)"
no_accounting_errors subvol-vms-vol
# A new threshold leaves the live table's mark; pool set names the volume,
# and subvol set --low-water 0 reloads the table with the new one.
out=$(subvol pool set --autoextend-threshold 400M vms 2>&1)
check "pool set --autoextend-threshold 400M names the active volume that keeps the old mark" \
	grep -qx "Volume vms/vol: its device keeps its low-water mark, 300M, not the threshold's 400M, until it is activated again or subvol set --low-water 0 vms/vol reloads its table" <<<"$out" ||
	echo "# $out"
check_eq "status shows the live table's mark, still 300M" 300M "$(subvol status --noheadings -o low_water_mark vms/vol | xargs)"
check "subvol set --low-water 0 vms/vol (a reload under the mounted guest)" subvol set --low-water 0 vms/vol
check_eq "the table has the new threshold's mark, 400M" "low_water:$((400 << 11))" \
	"$(dmsetup table subvol-vms-vol | grep -o 'low_water:[0-9]*')"
check_eq "pool set --autoextend-threshold 400M again: nothing to name" "" \
	"$(subvol pool set --autoextend-threshold 400M vms 2>&1 | grep '^Volume')"
check "umount" umount $G
check "xfs_repair -n of the guest is clean" xfs_repair -n $DEV
check "mount it again" mount $DEV $G
# What fio wrote (all of it, unless a check above failed) reads back.
check "every MiB reads back with its offset pattern (fio --verify_only)" \
	fio_verify $G/data $(($(stat -c %s $G/data) >> 20))
check "umount, deactivate" sh -c "umount $G && subvol deactivate vms/vol"
check "the host XFS is clean too" sh -c "umount $H1 && xfs_repair -n /dev/$VG/host1"

# --- without the monitor: ENOSPC, nothing lost
check "another 600 MiB LV with a host XFS" lvm_host_xfs $VG host2 600 $H2 || { finish; exit; }
check "the same pool policy, no monitor" subvol pool create --name idle \
	--autoextend-threshold 300M --autoextend-step 256M $H2/idle
check "the same volume, with its own low-water mark 350M" subvol create --size 2G --no-space queue --low-water 350M --mkfs idle/vol
DEV2=/dev/mapper/subvol-idle-vol
check_eq "its own mark wins over the pool's threshold" "low_water:$((350 << 11))" \
	"$(dmsetup table subvol-idle-vol | grep -o 'low_water:[0-9]*')"
kmsg_mark
check "mount it" mount $DEV2 $G || { finish; exit; }
dd if=/dev/urandom of=/tmp/source bs=1M count=50 status=none
fill $G /tmp/source
echo "# written before ENOSPC: $(($(bytes_in $G) >> 20)) MiB; dd: $(cat /tmp/fill.err)"
check "the guest's write(2) failed with ENOSPC" grep -q "No space left on device" /tmp/fill.err
check "it wrote less than $MIB MiB" test "$(bytes_in $G)" -lt $((MIB << 20))
check_eq "the LV is still 600 MiB" $((600 << 20)) "$(lv_bytes $VG/host2)"
check_eq "pool status: no extension" "0 -" \
	"$(subvol pool status --noheadings -o extensions,last_extension idle | xargs)"
check_eq "no I/O error, writeback error or shutdown in the kernel log" "" "$(kernel_errors)"
no_accounting_errors subvol-idle-vol
guest_checks "without the monitor" $DEV2 $G /tmp/source
umount $G

# --- a resize that fails after lvextend grew the LV (fsadm) leaves the
# host filesystem smaller than its LV: the next check grows it to the LV,
# rather than extending the LV again.
mkdir -p /tmp/lvm-fsadm
cat >/tmp/lvm-fsadm/fsadm <<'EOF2'
#!/bin/sh
# fsadm that checks but does not resize.
case " $* " in *" resize "*) echo "fsadm: resize refused by the test" >&2; exit 1 ;; esac
exec /usr/sbin/fsadm "$@"
EOF2
chmod +x /tmp/lvm-fsadm/fsadm
sed 's|fsadm_executable = .*|fsadm_executable = "/tmp/lvm-fsadm/fsadm"|' /etc/lvm/lvm.conf >/tmp/lvm-fsadm/lvm.conf
check_eq "lvm.conf in LVM_SYSTEM_DIR names the refusing fsadm" 'fsadm_executable="/tmp/lvm-fsadm/fsadm"' \
	"$(LVM_SYSTEM_DIR=/tmp/lvm-fsadm lvmconfig global/fsadm_executable 2>/dev/null)"
check "pool set idle --autoextend-step 512M" subvol pool set --autoextend-step 512M idle
size0=$(fs_bytes $H2)
LVM_SYSTEM_DIR=/tmp/lvm-fsadm subvol monitor --once 2>/tmp/monitor3.log
sed 's/^/# monitor, fsadm failing: /' /tmp/monitor3.log
check_eq "lvextend grew the LV by 512 MiB" $(((600 + 512) << 20)) "$(lv_bytes $VG/host2)"
check_eq "but the host filesystem did not grow" "$size0" "$(fs_bytes $H2)"
check "the monitor logged the failure" grep -q 'pool idle: .*lvextend --resizefs -L +512M vmon/host2 failed' /tmp/monitor3.log
LVM_SYSTEM_DIR=/tmp/lvm-fsadm subvol monitor --once 2>/tmp/monitor4.log
sed 's/^/# monitor, next check: /' /tmp/monitor4.log
check_eq "the next check did not extend the LV again" $(((600 + 512) << 20)) "$(lv_bytes $VG/host2)"
check "it grew the host filesystem to its LV (less at most its 64 MiB log)" \
	test "$(fs_bytes $H2)" -ge $(((600 + 512 - 64) << 20))
check "and logged it" grep -q 'pool idle: grew the host filesystem from .* to its LV vmon/host2 (1.1G), which an earlier resize left larger' /tmp/monitor4.log
check "the host XFS is clean" sh -c "subvol deactivate idle/vol && umount $H2 && xfs_repair -n /dev/$VG/host2"
finish
