#!/bin/bash
# Native test of the pools' autoextend policy and of subvol monitor on a
# loop-mounted host XFS (no LVM, no device-mapper here: the monitor checks
# periodically and runs the pool's command): the --autoextend-* options of
# pool create and pool set, each bad value refused in one line naming the
# pool and the cause with nothing changed, the policy kept in the pool's
# attribute and shown by pool status (text, -o, --json, --bytes), the
# command's environment, failures logged and kept in user.subvol.monitor,
# the monitor's options, one monitor a registry, --daemon and --pidfile,
# and the systemd unit that make install installs.  Needs root.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"
# shellcheck source=SCRIPTDIR/../lib/tooltest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tooltest.sh"

tooltest_start subvol-monitor

# refused NAME STATUS WORD REGEX CMD...: CMD exits STATUS with a single
# line on stderr that names WORD and matches REGEX.
refused() {
	local name=$1 want=$2 word=$3 re=$4 err status=0 lines named why
	shift 4
	err=$("$@" 2>&1 >/dev/null </dev/null) || status=$?
	lines=$(printf '%s' "$err" | grep -c '')
	named=no
	[[ $err == *"$word"* ]] && named=yes
	why=no
	[[ $err =~ $re ]] && why=yes
	check_eq "$name" "exit $want, 1 line, names $word: yes, says /$re/: yes" \
		"exit $status, $lines line, names $word: $named, says /$re/: $why" || show "$err"
}
pool_attr() { getfattr --absolute-names --only-values -n user.subvol.pool "$1" 2>/dev/null; }
mon_attr() { getfattr --absolute-names --only-values -n user.subvol.monitor "$1" 2>/dev/null; }
# keys DIR: the autoextend keys of the pool's attribute, on one line.
keys() { pool_attr "$1" | grep '^autoextend_' | tr '\n' ' ' | sed 's/ $//'; }
# field POOL NAME: one field of pool status.
field() { sv pool status --noheadings -o "$2" "$1" 2>/dev/null; }

mkdir -p "$work/mnt/xfs"
truncate -s 1G "$work/xfs.fs"
check "mkfs.xfs (reflink)" mkfs.xfs -q "$work/xfs.fs" || { finish; exit; }
check "mount it" mount -o loop "$work/xfs.fs" "$work/mnt/xfs" || { finish; exit; }
X=$work/mnt/xfs

# --- pool create with a policy ----------------------------------------------
# shellcheck disable=SC2016 # the command's $SUBVOL_POOL is for its shell
out=$(sv pool create --autoextend-threshold 80 --autoextend-step 256M --autoextend-max 10G \
	--autoextend-command 'logger -t test "$SUBVOL_POOL"' "$X/p1" 2>&1)
check_eq "pool create with a policy says what it is" "Pool p1 created at $X/p1
Pool p1: autoextend when the host filesystem is over 80% used, by 256M, up to 10G; command: logger -t test \"\$SUBVOL_POOL\"" "$out"
check_eq "the policy is kept in user.subvol.pool" \
	"autoextend_threshold=80% autoextend_step=268435456 autoextend_max=10737418240 autoextend_command=logger -t test \"\$SUBVOL_POOL\"" \
	"$(keys "$X/p1")"
check "pool create without a policy" sv pool create "$X/p0"
check_eq "adds no autoextend key" "" "$(keys "$X/p0")"
check_eq "its threshold is off (-), the step the default 20%" "- 20% - -" \
	"$(sv pool status --noheadings -o autoextend_threshold,autoextend_step,autoextend_max,autoextend_command p0 | xargs)"
check_eq "pool status of p1: the policy" "80% 256M 10G" \
	"$(sv pool status --noheadings -o autoextend_threshold,autoextend_step,autoextend_max p1 | xargs)"
check_eq "pool status --bytes: step and maximum in bytes, the percent as it is" \
	"80% 268435456 10737418240" \
	"$(sv pool status --bytes --noheadings -o autoextend_threshold,autoextend_step,autoextend_max p1 | xargs)"
check_eq "no LV under a loop device" "-" "$(field p1 host_lv)"
check_eq "nothing done yet" "0 - - -" \
	"$(sv pool status --noheadings -o extensions,last_extension,last_command,last_error p1 | xargs)"
json=$(sv pool status --json p1)
check_json "pool status --json p1" "$json"
if [[ $json_tool == python3 ]]; then
	py() { python3 -c "import json, sys; d = json.load(sys.stdin)['pool'][0]; $1" <<<"$json"; }
	check_eq "JSON: threshold, step (bytes), max, command, extensions, last_error" \
		"80% 268435456 10737418240 True 0 None" \
		"$(py 'print(d["autoextend_threshold"], d["autoextend_step"], d["autoextend_max"], d["autoextend_command"].startswith("logger"), d["extensions"], d["last_error"])')"
fi
check "pool list -o name,autoextend_threshold,extensions" \
	sh -c "'$SUBVOL' pool list --noheadings -o name,autoextend_threshold,extensions | grep -qE '^p1 +80% +0\$'"
check "a threshold as a size of free space: 1.5G" sv pool create --autoextend-threshold 1.5G "$X/p2"
check_eq "kept in bytes, shown as a size" "autoextend_threshold=1610612736 1.5G" \
	"$(keys "$X/p2") $(field p2 autoextend_threshold)"

# --- bad values: usage errors, one line naming the pool and the cause --------
before=$(pool_attr "$X/p1")
refused "threshold abc" 2 "pool p1" 'autoextend-threshold "abc" is not a percent of the host filesystem used \(1-100\) or a size of free space with a unit' \
	sv pool set --autoextend-threshold abc p1
refused "threshold 0" 2 "pool p1" 'autoextend-threshold 0% would act at once' sv pool set --autoextend-threshold 0 p1
refused "threshold 150 (no unit: a percent)" 2 "pool p1" '"150" is not a percent' sv pool set --autoextend-threshold 150 p1
refused "threshold 101%" 2 "pool p1" '"101%" is not a percent from 1 to 100' sv pool set --autoextend-threshold 101% p1
refused "threshold 0G (no free space at all)" 2 "pool p1" '"0G" is not a percent' sv pool set --autoextend-threshold 0G p1
refused "step 256 (bytes)" 2 "pool p1" 'autoextend-step "256" is 256 bytes, less than 1M' sv pool set --autoextend-step 256 p1
refused "step 0%" 2 "pool p1" 'autoextend-step "0%" is not a percent from 1 to 1000' sv pool set --autoextend-step 0% p1
refused "step 2000%" 2 "pool p1" 'autoextend-step "2000%" is not a percent from 1 to 1000' sv pool set --autoextend-step 2000% p1
refused "step 10X" 2 "pool p1" 'autoextend-step "10X" is not a size' sv pool set --autoextend-step 10X p1
refused "step too large" 2 "pool p1" 'autoextend-step "99999E" is too large' sv pool set --autoextend-step 99999E p1
refused "max 12 (bytes)" 2 "pool p1" 'autoextend-max "12" is 12 bytes, less than 1M' sv pool set --autoextend-max 12 p1
refused "max abc" 2 "pool p1" 'autoextend-max "abc" is not a size' sv pool set --autoextend-max abc p1
refused "a command with a newline" 2 "pool p1" 'autoextend-command holds a newline' \
	sv pool set --autoextend-command $'a\nb' p1
refused "a command over 1024 bytes" 2 "pool p1" 'autoextend-command is 1025 bytes long, more than 1024' \
	sv pool set --autoextend-command "$(printf 'x%.0s' {1..1025})" p1
refused "a maximum below the host's size: refused" 1 "pool p1" 'autoextend-max 100M is below the host filesystem.s size now \(960M\)' \
	sv pool set --autoextend-max 100M p1
check_eq "nothing changed" "$before" "$(pool_attr "$X/p1")"
refused "pool create names the pool by --name" 2 "pool named" 'autoextend-step "1k" is 1024 bytes' \
	sv pool create --name named --autoextend-step 1k "$X/p3"
refused "and by its directory" 2 "pool $X/p3" '"x" is not a percent' \
	sv pool create --autoextend-threshold x "$X/p3"
refused "pool create with a maximum below the host's size" 1 "pool p3" 'below the host filesystem' \
	sv pool create --autoextend-max 1M "$X/p3"
check_fails "and no pool is made" test -e "$X/p3"
check_status "pool set without an option: usage error" 2 sv pool set p1
check_status "pool set without a pool: usage error" 2 sv pool set --autoextend-threshold 80
check_status "pool import takes no --autoextend option" 2 sv pool import --autoextend-threshold 80 "$X/p1"
refused "pool set of no pool" 1 "pool nosuch" 'no such pool' sv pool set --autoextend-threshold 80 nosuch
check "pool set as a user: needs root" \
	sh -c "su -s /bin/sh nobody -c \"SUBVOL_CONFIG_DIR=$SUBVOL_CONFIG_DIR '$SUBVOL' pool set --autoextend-threshold 80 p1\" 2>&1 | grep -q 'needs root'"

# --- pool set: only what is given changes --------------------------------------
out=$(sv pool set --autoextend-step 50% p1 2>&1)
check_eq "pool set --autoextend-step 50% says the whole policy" \
	"Pool p1: autoextend when the host filesystem is over 80% used, by 50% of its LV, up to 10G; command: logger -t test \"\$SUBVOL_POOL\"" "$out"
check_eq "the rest is kept" "autoextend_threshold=80% autoextend_step=50% autoextend_max=10737418240 autoextend_command=logger -t test \"\$SUBVOL_POOL\"" \
	"$(keys "$X/p1")"
check "pool set --autoextend-max none --autoextend-command ''" sv pool set --autoextend-max none --autoextend-command '' p1
check_eq "drops both keys" "autoextend_threshold=80% autoextend_step=50%" "$(keys "$X/p1")"
check "pool set --autoextend-threshold off (by its path)" sv pool set --autoextend-threshold off "$X/p1"
check_eq "off drops the threshold, keeps the step" "autoextend_step=50%" "$(keys "$X/p1")"
check "--autoextend-threshold 100 is off too" sv pool set --autoextend-threshold 100 p2
check_eq "p2 has no threshold left" "" "$(keys "$X/p2")"
check_eq "the pool's name, id and creation time are kept" "p1" \
	"$(pool_attr "$X/p1" | sed -n 's/^name=//p')"
check "other tools still read the pool" sv pool status p1

# --- the low-water mark a pool's threshold gives its volumes ---------------------
# A writable volume that sets no --low-water gets, at activation, the free
# space at which its pool is past the threshold (tests/vm/85 checks the
# live table); status and list show the mark it would get.
lw() { sv status --bytes --noheadings -o low_water_mark "$1" 2>&1 | xargs; }
check "pool p4 with a threshold of 300M free" sv pool create --autoextend-threshold 300M "$X/p4"
check "a volume without --low-water" sv create --inactive --size 8M p4/v
check "a volume with its own mark, 1M" sv create --inactive --size 8M --low-water 1M p4/own
check_eq "status: the volume without one has the threshold's, 300M" $((300 << 20)) "$(lw p4/v)"
check_eq "its metadata keeps 0: the mark is the pool's" 0 "$(meta low_water "$X/p4/v.img")"
check_eq "the volume with one keeps its own" $((1 << 20)) "$(lw p4/own)"
check "a snapshot of p4/v" sv snapshot p4/v s
check_eq "a snapshot (read-only) gets none" "-" "$(lw p4/s)"
check_eq "list shows the same" "own $((1 << 20))
s -
v $((300 << 20))" "$(sv list --bytes --noheadings -o name,low_water_mark p4 | sed -e "s/  */ /g" -e "s/ $//")"
out=$(sv pool set --autoextend-threshold 25 p4 2>&1)
check_eq "pool set --autoextend-threshold 25: one line, no active volume to name" 1 "$(grep -c '' <<<"$out")" || show "$out"
size=$(($(stat -f -c '%b * %S' "$X")))
check_eq "a percent: the free space at 25% used of the host's size now, in whole sectors" \
	$((size / 100 * 75 / 512 * 512)) "$(lw p4/v)"
check "pool set --autoextend-threshold off" sv pool set --autoextend-threshold off p4
check_eq "no policy: no mark" "-" "$(lw p4/v)"

# --- subvol monitor --once: the command and its environment -------------------
# The host is a few percent used: a threshold of 1% is past, 99% is not.
env_out=$work/env
check "p1: act past 1% used, step 0, a command that keeps its environment" \
	sv pool set --autoextend-threshold 1 --autoextend-step 0 --autoextend-max 2G \
	--autoextend-command "env | grep ^SUBVOL_ | sort > $env_out; echo ran >> $work/runs" p1
check "p0: 99%, not past" sv pool set --autoextend-threshold 99 --autoextend-command "echo p0 >> $work/runs" p0
err=$(sv monitor --once 2>&1)
st=$?
check_eq "monitor --once exits 0" 0 "$st" || show "$err"
check_eq "the command ran once, p0's not" "ran" "$(cat "$work/runs" 2>/dev/null)"
free=$(($(stat -f -c '%a * %S' "$X"))) size=$(($(stat -f -c '%b * %S' "$X")))
check_eq "its environment" "SUBVOL_CONFIG_DIR=$SUBVOL_CONFIG_DIR
SUBVOL_EXTENDED=0
SUBVOL_HOST_FREE=$free
SUBVOL_HOST_LV=
SUBVOL_HOST_SIZE=$size
SUBVOL_HOST_USED_PERCENT=$((((size - free) * 100 + size / 2) / size))
SUBVOL_LVEXTEND=not-lv
SUBVOL_MAX=$((2 << 30))
SUBVOL_POOL=p1
SUBVOL_POOL_PATH=$X/p1
SUBVOL_STEP=0
SUBVOL_THRESHOLD=1%" "$(cat "$env_out")"
check "it logged the crossing, one line, with the time" \
	grep -qE '^subvol monitor: [0-9:.]{12} pool p1: host filesystem [0-9]+% used, [0-9.]+[KMG] free: past the threshold 1% \(a single check\)$' <<<"$err"
check "and the command" grep -qE '^subvol monitor: [0-9:.]{12} pool p1: --autoextend-command exited 0 \(host filesystem [0-9]+% used, lvextend not-lv\)$' <<<"$err"
check_eq "two lines in all" 2 "$(grep -c '' <<<"$err")"
check_eq "pool status: the command, its time; no error, no extension" "yes - 0" \
	"$([[ $(field p1 last_command) == 'exited 0 (host filesystem '* && $(field p1 last_command_time) == 20* ]] && echo yes) $(field p1 last_error) $(field p1 extensions)"
check "kept in user.subvol.monitor" sh -c "getfattr --absolute-names --only-values -n user.subvol.monitor '$X/p1' | grep -q '^last_command=exited 0'"

# A failing command: exit 1, the failure logged and kept.
check "p1's command fails" sv pool set --autoextend-command 'echo "disk quota service down" >&2; exit 3' p1
err=$(sv monitor --once 2>&1)
check_eq "monitor --once exits 1" 1 "$?"
check "the failure is one line, with its exit status and its last message" \
	grep -qE '^subvol monitor: [0-9:.]{12} pool p1: --autoextend-command failed \(exit 3\): disk quota service down$' <<<"$err"
check_eq "pool status: last_error" "--autoextend-command failed (exit 3): disk quota service down" "$(field p1 last_error)"
check "and its time" test "$(field p1 last_error_time)" != -
check_eq "last_command says so too" "failed (exit 3): disk quota service down" "$(field p1 last_command)"

# Nothing to do: no LV, no command.
check "p1 without a command" sv pool set --autoextend-command '' --autoextend-step 20% p1
err=$(sv monitor --once 2>&1)
check_eq "monitor --once exits 1" 1 "$?"
check "says there is nothing to do, and why" \
	grep -q 'pool p1: host filesystem [0-9]*% used, past the threshold, and nothing to do: it is not on an LVM logical volume and the pool has no --autoextend-command' <<<"$err"
check "pool status has it" sh -c "'$SUBVOL' pool status --noheadings -o last_error p1 | grep -q 'nothing to do'"

# A user.subvol.monitor that cannot be read: pool status says so, the
# monitor writes it anew.
setfattr -n user.subvol.monitor -v $'format=9\nextensions=1' "$X/p1"
refused "pool status of a pool with a bad user.subvol.monitor: exit 1" 1 "pool p1" 'user.subvol.monitor: format "9" is not 1' \
	sv pool status p1
check "the monitor writes it anew" sh -c "'$SUBVOL' monitor --once >/dev/null 2>&1; getfattr --absolute-names --only-values -n user.subvol.monitor '$X/p1' | head -n 1 | grep -qx format=1"
check "pool status reads it again" sv pool status p1

# --- the monitor's options ------------------------------------------------------
check_status "--interval 0: usage error" 2 sv monitor --interval 0
check_status "--interval 3601: usage error" 2 sv monitor --interval 3601
check_status "--interval 1.5: usage error" 2 sv monitor -i 1.5
check_status "--once --daemon: usage error" 2 sv monitor --once --daemon
check_status "--pidfile without --daemon: usage error" 2 sv monitor --pidfile "$work/pid"
check_status "an argument: usage error" 2 sv monitor p1
check "monitor as a user: needs root" \
	sh -c "su -s /bin/sh nobody -c \"SUBVOL_CONFIG_DIR=$SUBVOL_CONFIG_DIR '$SUBVOL' monitor --once\" 2>&1 | grep -q 'needs root'"

# --- running: periodic checks, one monitor a registry, SIGTERM ----------------------
: >"$work/runs"
check "p1 runs a command again" sv pool set --autoextend-command "echo p1 >> $work/runs" p1
"$SUBVOL" monitor --interval 1 2>"$work/mon.log" &
mon=$!
sleep 2.5
refused "a second monitor is refused" 1 "another subvol monitor" 'is running for the pools registered in' \
	sv monitor --once
kill -TERM $mon
wait $mon
check_eq "the monitor stops at SIGTERM with exit 0" 0 $?
check "it said it started, without device-mapper events here" \
	grep -q 'started: checking the pools every 1 s (device-mapper is not available here: no events)' "$work/mon.log"
check "and that it stopped" grep -q 'stopped by signal 15' "$work/mon.log"
check "the command ran at the periodic checks too (at least twice)" test "$(grep -c p1 "$work/runs")" -ge 2
check "the periodic check says so" grep -q '(at start)' "$work/mon.log"
check "a monitor may start again" sv monitor --once

# --daemon and --pidfile
: >"$work/runs"
check "monitor --daemon --pidfile returns" sv monitor --daemon --interval 1 --pidfile "$work/pid"
for _ in $(seq 50); do [ -s "$work/pid" ] && break; sleep 0.1; done
pid=$(cat "$work/pid" 2>/dev/null)
check "the pid file names a running subvol" sh -c "test -n '$pid' && grep -q subvol /proc/$pid/cmdline"
sleep 1.5
check "the daemon acts" test -s "$work/runs"
kill -TERM "$pid" 2>/dev/null
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
check_fails "it stops at SIGTERM" kill -0 "$pid"
check_fails "and removes its pid file" test -e "$work/pid"

# --- the systemd unit -------------------------------------------------------------
dest=$work/root
check "make install DESTDIR" make -s -C "$ROOT/userspace" install DESTDIR="$dest" PREFIX=/usr
unit=$dest/lib/systemd/system/subvol-monitor.service
check "installs subvol-monitor.service" test -f "$unit"
check_eq "which runs the installed tool in the foreground" "ExecStart=/usr/sbin/subvol monitor" \
	"$(grep '^ExecStart=' "$unit")"
if command -v systemd-analyze >/dev/null; then
	# The same unit, running the tool where it is built (verify wants it there).
	sed "s|^ExecStart=/usr/sbin/subvol|ExecStart=$SUBVOL|" "$unit" >"$work/subvol-monitor.service"
	check "systemd-analyze verify accepts it" systemd-analyze verify --man=no "$work/subvol-monitor.service"
fi

finish
