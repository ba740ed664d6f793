#!/bin/bash
# Faults under the host filesystem (issue 25 part 3).  The host XFS is on
# a dm device over the scratch disk; its table is reloaded (without
# freezing the host: --nolockfs) so that chosen sectors fail:
#   - data: the sectors of the image's extents go to the error target, or
#     to a dm-flakey that fails writes only, during direct I/O on the
#     volume, a snapshot copy (snapshot_begin) and a pool claim (reserve);
#   - metadata: the whole host device fails and the host XFS shuts down,
#     during guest writes (a space-aware guest XFS), a snapshot copy and a
#     pool claim;
#   - the backing file truncated, and unlinked, under direct I/O;
#   - the host frozen during a guest fsync (the image's CoW extent size
#     hint cleared first, as an admin might) and a snapshot copy.
# Each time: the guest sees an error only where the host failed, every
# operation finishes within a bound (a hang is a failed check, and a hung
# task in the kernel log fails the run), dmsetup suspend, resume and
# remove work afterwards, the module unloads and the host unmounts.
#
#   31-host-faults.sh [ROUNDS]   (scripts/host-faults runs more rounds)
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

ROUNDS=${1:-1}
MIB=$((1 << 20))
HOST_MIB=768
HOST_SECTORS=$((HOST_MIB * SECTORS_PER_MIB))
# A task blocked in the kernel this long is reported, which fails the
# run: no wait for a frozen host below is that long.
echo 30 >/proc/sys/kernel/hung_task_timeout_secs

# within SECS CMD...: run CMD (output in /tmp/within.out) for at most SECS
# seconds.  RC is its exit status, or "hung" if it still runs then (it
# is left running, and the checks that follow fail).
within() {
	local secs=$1 pid n=0
	shift
	"$@" >/tmp/within.out 2>&1 &
	pid=$!
	while ! finished $pid; do
		if ((n >= secs * 10)); then
			RC=hung
			return
		fi
		sleep 0.1
		n=$((n + 1))
	done
	wait $pid
	RC=$?
}
# out: the last lines of what the last `within` command printed.
out() { tail -n 3 /tmp/within.out | tr '\n' ' '; }
# ok_within NAME SECS CMD...: CMD succeeds within SECS seconds.
ok_within() {
	local name=$1 secs=$2
	shift 2
	within "$secs" "$@"
	if [ "$RC" = 0 ]; then check_eq "$name" 0 0; else check_eq "$name" 0 "$RC: $(out)"; fi
}
# eio_within NAME SECS CMD...: CMD fails with EIO within SECS seconds.
eio_within() {
	local name=$1 secs=$2 got
	shift 2
	within "$secs" "$@"
	got="$RC: $(out)"
	[ "$RC" != hung ] && [ "$RC" != 0 ] && grep -q "Input/output error" /tmp/within.out && got=EIO
	check_eq "$name" EIO "$got"
}

# host_table TARGET [START LEN]...: the host device's table: linear on the
# scratch disk, but for each (sorted, disjoint) range of sectors, TARGET:
# error, or flakey-writes (writes fail, reads go through).
host_table() {
	local target=$1 pos=0 s l
	shift
	while (($#)); do
		s=$1 l=$2
		shift 2
		((s > pos)) && echo "$pos $((s - pos)) linear $SCRATCH_DEV $pos"
		case $target in
		error) echo "$s $l error" ;;
		flakey-writes) echo "$s $l flakey $SCRATCH_DEV $s 0 1 1 error_writes" ;;
		esac
		pos=$((s + l))
	done
	((pos < HOST_SECTORS)) && echo "$pos $((HOST_SECTORS - pos)) linear $SCRATCH_DEV $pos"
}
# host_load TABLE: load TABLE for the host device and switch to it, with
# no freeze of the host filesystem.
host_load() {
	dmsetup reload hostdev <<<"$1" && dmsetup resume --nolockfs hostdev
}
host_fail() { host_load "0 $HOST_SECTORS error"; }
host_heal() { host_load "$(host_table none)"; }
# extents_of FILE OFFSET LENGTH: "start length" in host sectors of each
# extent of FILE in the range, sorted.
extents_of() {
	xfs_io -r -c "fiemap -v $2 $3" "$1" |
		awk '$3 ~ /^[0-9]+\.\.[0-9]+$/ { split($3, r, /\.\./); print r[1], r[2] - r[1] + 1 }' |
		sort -n
}
# fail_extents TARGET FILE OFFSET LENGTH: the host sectors under that range
# of FILE fail (TARGET as for host_table); prints how many sectors.
fail_extents() {
	local ranges
	# shellcheck disable=SC2046 # the pairs are words
	ranges=$(extents_of "$2" "$3" "$4")
	# shellcheck disable=SC2086
	host_load "$(host_table "$1" $ranges)" || return
	awk '{ s += $2 } END { print s + 0 }' <<<"$ranges"
}
# pattern BYTE OFFSET_MIB MIB: direct write of BYTE (octal) to the volume.
pattern() {
	tr '\000' "\\$1" </dev/zero | dd of=$DEV bs=1M seek="$2" count="$3" oflag=direct iflag=fullblock status=none
}
# sum_at DEV OFFSET_MIB MIB: checksum of that range, read directly.
sum_at() {
	dd if="$1" bs=1M skip="$2" count="$3" iflag=direct status=none | sha256sum | cut -d' ' -f1
}
want() { head -c $(($2 * MIB)) /dev/zero | tr '\000' "\\$1" | sha256sum | cut -d' ' -f1; }
copy() { status_field vol $F_COPY; }
# begin_copy MIB_S NAME: a snapshot copy of vol into $HOST/dst at MIB_S
# MiB/s, its snapshot_begin the check NAME.
begin_copy() {
	truncate -s 64M $HOST/dst
	copy_rate_mib "$1"
	dmsetup suspend vol
	ok_within "$2" 30 sh -c "dmsetup message vol 0 'snapshot_begin 7' 7<>$HOST/dst"
	dmsetup resume vol
}
# wait_done PID SECS: until PID has exited, at most SECS seconds.
wait_done() {
	local n=0
	while ! finished "$1" && [ $n -lt $(($2 * 10)) ]; do
		sleep 0.1
		n=$((n + 1))
	done
}
# subvol_blocked: the tasks whose kernel stack is in the target and waits
# for a frozen host (freeze protection), one line each.
subvol_blocked() {
	local f
	for f in /proc/[0-9]*/stack; do
		grep -q 'dm_subvol' "$f" 2>/dev/null &&
			grep -qE 'percpu_rwsem_wait|mnt_want_write|sb_start_write' "$f" 2>/dev/null &&
			echo "${f%/stack}: $(tr '\n' ' ' <"$f" | grep -oE '[a-z_]+\+0x[0-9a-f]+/0x[0-9a-f]+ \[dm_subvol\]' | head -3 | tr '\n' ' ')"
	done
}
# io_loop CMDS: run CMDS (output in /tmp/io.out) over and over until
# /tmp/changed exists, and twice more; at most 50 times.  Fails if CMDS
# ever failed.
io_loop() {
	local i=0 after=0 rc=0
	: >/tmp/io.out
	while [ $i -lt 50 ] && [ $after -lt 2 ]; do
		eval "$1" >>/tmp/io.out 2>&1 || rc=1
		[ -e /tmp/changed ] && after=$((after + 1))
		i=$((i + 1))
	done
	return $rc
}
# settled NAME: the device suspends, resumes and is removed, each within 30 s.
settled() {
	ok_within "$1: dmsetup suspend" 30 dmsetup suspend "$1"
	ok_within "$1: dmsetup resume" 30 dmsetup resume "$1"
	ok_within "$1: dmsetup remove" 30 dmsetup remove "$1"
}
# restart: after the host died: nothing left, then a healed host mounted
# again (its log replayed) and the module loaded.
restart() {
	nothing_left
	host_heal
	check "$1: the healed host mounts again" mount /dev/mapper/hostdev "$HOST"
	modprobe dm_subvol
}

# section NAME: print the seconds the last section took, then NAME.
section() {
	local now
	now=$(cut -d' ' -f1 /proc/uptime)
	[ -n "${SECTION:-}" ] && echo "# $SECTION: $(awk -v a="$SECTION_T" -v b="$now" 'BEGIN { printf "%.1f", b - a }') s"
	SECTION=$1 SECTION_T=$now
}

host_xfs $HOST_MIB
DEV=/dev/mapper/vol

for round in $(seq "$ROUNDS"); do
	echo "# round $round of $ROUNDS"
	section "data EIO"
	# --- EIO on data: the image's extents fail, the rest of the host works.
	backing "$HOST/img" 64
	subvol_create vol "$HOST/img" 64
	pattern 241 0 2 && pattern 262 8 2 && pattern 303 16 2
	kmsg_mark
	n=$(fail_extents error "$HOST/img" 0 2m)
	echo "# data EIO: $n host sectors under the image's first 2 MiB fail"
	check "the failed extents are the first 2 MiB" test "${n:-0}" -ge 4096
	eio_within "data: a read of the failed range gets EIO" 30 \
		dd if=$DEV of=/dev/null bs=1M count=2 iflag=direct
	eio_within "data: an overwrite of the failed range gets EIO" 30 pattern 0 0 1
	ok_within "data: a read of an unaffected range succeeds" 30 sum_at $DEV 8 2
	check_eq "data: and holds its data" "$(want 262 2)" "$(sum_at $DEV 8 2)"
	ok_within "data: a write into a hole succeeds" 30 pattern 125 32 2
	check_eq "data: and reads back" "$(want 125 2)" "$(sum_at $DEV 32 2)"
	check "data: the kernel log names the failed read" \
		grep -Eq "subvol: [0-9]+:[0-9]+: read of [0-9]+ bytes at sector [0-9]+ failed on $HOST/img: -5" <<<"$(kmsg_since_mark)"
	check_eq "data: no error logged outside the failed range" "" \
		"$(kmsg_since_mark | grep -E 'failed on' | grep -vE 'at sector ([0-9]|[0-9]{2,3}|[0-3][0-9]{3}|40[0-9]{2}) failed' || true)"
	check "data: the host filesystem did not shut down" touch "$HOST/alive"

	# Writes fail, reads go through (dm-flakey error_writes).
	n=$(fail_extents flakey-writes "$HOST/img" 16m 2m)
	check "the write-failing extents are at 16 MiB" test "${n:-0}" -ge 4096
	eio_within "flakey: an overwrite gets EIO" 30 pattern 0 16 1
	ok_within "flakey: a read of the same range succeeds" 30 sum_at $DEV 16 2
	check_eq "flakey: and holds the data before the failed write" "$(want 303 2)" "$(sum_at $DEV 16 2)"

	# During a snapshot copy: the copy clones, reading no data, so it
	# completes; a write to the failed range is copied on write to new
	# blocks and succeeds; the snapshot shares the failed blocks.
	fail_extents error "$HOST/img" 0 2m >/dev/null
	begin_copy 4 "copy: snapshot_begin with failed extents"
	ok_within "copy: a write to the failed range during the copy succeeds" 30 pattern 42 0 1
	check_eq "copy: and reads back" "$(want 42 1)" "$(sum_at $DEV 0 1)"
	copy_rate_mib 0
	check_eq "copy: the copy completes" "done" "$(wait_copy vol 60)"
	ok_within "copy: snapshot_end" 30 dmsetup message vol 0 snapshot_end
	eio_within "copy: the snapshot's failed range gets EIO" 30 \
		dd if=$HOST/dst of=/dev/null bs=1M skip=1 count=1 iflag=direct
	check_eq "copy: the snapshot's other ranges read" "$(want 262 2)" "$(sum_at $HOST/dst 8 2)"
	rm -f $HOST/dst

	# A pool claim allocates without writing data: it succeeds.
	ok_within "claim: reserve 64 MiB with failed data extents" 30 \
		dmsetup message vol 0 reserve $((64 * SECTORS_PER_MIB))
	ok_within "claim: release it" 30 dmsetup message vol 0 release $((64 * SECTORS_PER_MIB))
	no_accounting_errors vol
	settled vol
	host_heal
	check_eq "data: after the heal, the failed writes changed nothing" \
		"$(want 303 2)" "$(sum_at $HOST/img 16 2)"

	section "truncate"
	# --- the backing file truncated under direct I/O: what is past the new
	# end reads as an error, writes go on, and the device resumes only
	# once the file is as long as the device again.
	backing "$HOST/img" 16
	subvol_create vol "$HOST/img" 16
	pattern 241 0 16
	kmsg_mark
	rm -f /tmp/changed
	io_loop "dd if=$DEV of=/dev/null bs=1M count=16 iflag=direct status=none; pattern 262 12 2" &
	io=$!
	sleep 0.2
	# (The writes at 12-14 MiB extend it again: 14-16 MiB stays past the end.)
	check "truncate: truncate the image to 4 MiB under I/O" truncate -s 4M $HOST/img
	touch /tmp/changed
	wait_done $io 60
	check "truncate: the I/O finishes within 60 s" finished $io
	wait $io
	check "truncate: reads past the end failed with EIO" grep -q "Input/output error" /tmp/io.out
	ok_within "truncate: a read before the new end succeeds" 30 sum_at $DEV 0 4
	check_eq "truncate: and holds its data" "$(want 241 4)" "$(sum_at $DEV 0 4)"
	eio_within "truncate: a read past the end gets EIO" 30 \
		dd if=$DEV of=/dev/null bs=1M skip=15 count=1 iflag=direct
	ok_within "truncate: dmsetup suspend" 30 dmsetup suspend vol
	within 30 dmsetup resume vol
	check_eq "truncate: the resume is refused while the file is short" 1 "$RC"
	check "truncate: the kernel log says why" \
		grep -q "backing file $HOST/img is .* bytes, shorter than the device" <<<"$(kmsg_since_mark)"
	truncate -s 16M $HOST/img
	ok_within "truncate: it resumes once the file is long again" 30 dmsetup resume vol
	ok_within "truncate: direct writes work again" 30 pattern 125 14 2
	settled vol

	section "unlink"
	# --- the backing file unlinked under direct I/O: nothing changes
	# until the device goes, and then its space is the host's again.
	free0=$(free_bytes $HOST)
	subvol_create vol "$HOST/img" 16
	rm -f /tmp/changed
	io_loop "pattern 262 0 2 && sum_at $DEV 0 2 >/dev/null" &
	io=$!
	sleep 0.2
	check "unlink: remove the image under I/O" rm $HOST/img
	touch /tmp/changed
	ok_within "unlink: direct writes go on" 30 pattern 303 8 2
	check_eq "unlink: and read back" "$(want 303 2)" "$(sum_at $DEV 8 2)"
	wait_done $io 60
	check "unlink: the I/O finishes within 60 s" finished $io
	wait $io
	check_eq "unlink: and every request of it succeeded" "0 " "$? $(cat /tmp/io.out)"
	settled vol
	check "unlink: the host has the file's space back" test "$(free_bytes $HOST)" -gt "$free0"

	section "freeze"
	# --- the host frozen during a guest fsync (a space-aware guest XFS):
	# the writes are held, not a worker of the target blocked until the
	# thaw (the pool used to truncate its reserve file from the held
	# writes' retry, waiting for the thaw there); then during a snapshot
	# copy.
	backing "$HOST/img" 512
	subvol_create vol "$HOST/img" 512
	mkdir -p /mnt/guest
	mkfs.xfs -q -f $DEV && mount $DEV /mnt/guest
	dd if=/dev/urandom of=/tmp/src bs=1M count=4 status=none
	cp /tmp/src /mnt/guest/f
	# As an admin might: clear the image's CoW extent size hint, which the
	# target sets again at the next write into holes (a second later).
	check "freeze: clear the image's CoW extent size hint" xfs_io -c "cowextsize 0" $HOST/img
	sleep 1.1
	kmsg_mark
	check "freeze: freeze the host" fsfreeze --freeze $HOST
	xfs_io -c fsync /mnt/guest/f 2>/tmp/fsync.err &
	syncer=$!
	sleep 2
	check_fails "freeze: the guest fsync waits while the host is frozen" finished $syncer
	check_eq "freeze: no task of the target waits for the thaw" "" "$(subvol_blocked)"
	ok_within "freeze: a read of the volume completes meanwhile" 20 \
		dd if=$DEV of=/dev/null bs=64k skip=100 count=1 iflag=direct
	check "freeze: thaw the host" fsfreeze --unfreeze $HOST
	wait_done $syncer 30
	check "freeze: the fsync completes within 30 s of the thaw" finished $syncer
	wait $syncer
	check_eq "freeze: and succeeds" "0 " "$? $(cat /tmp/fsync.err)"

	truncate -s 512M $HOST/dst
	copy_rate_mib 2
	ok_within "freeze: suspend for a snapshot" 30 dmsetup suspend vol
	ok_within "freeze: snapshot_begin" 30 sh -c "dmsetup message vol 0 'snapshot_begin 7' 7<>$HOST/dst"
	ok_within "freeze: resume" 30 dmsetup resume vol
	check "freeze: freeze the host during the copy" fsfreeze --freeze $HOST
	dd if=/tmp/src of=/mnt/guest/g bs=1M conv=fsync status=none 2>/tmp/fsync.err &
	syncer=$!
	sleep 2
	during=$(copy)
	check_fails "freeze: a guest write during the copy waits for the thaw" finished $syncer
	check_eq "freeze: no task of the target waits for the thaw (copy)" "" "$(subvol_blocked)"
	sleep 1
	check_eq "freeze: the copy does not move while the host is frozen" "$during" "$(copy)"
	check "freeze: thaw the host (copy)" fsfreeze --unfreeze $HOST
	wait_done $syncer 30
	check "freeze: the guest write completes within 30 s of the thaw" finished $syncer
	wait $syncer
	check_eq "freeze: and succeeds (copy)" "0 " "$? $(cat /tmp/fsync.err)"
	copy_rate_mib 0
	check_eq "freeze: the copy completes" "done" "$(wait_copy vol 60)"
	ok_within "freeze: snapshot_end" 30 dmsetup message vol 0 snapshot_end
	echo 3 >/proc/sys/vm/drop_caches
	check "freeze: the files read back" sh -c "cmp /tmp/src /mnt/guest/f && cmp /tmp/src /mnt/guest/g"
	check_eq "freeze: no I/O error in the kernel log" "" "$(kernel_errors)"
	no_accounting_errors vol
	ok_within "freeze: dmsetup suspend (the guest frozen)" 30 dmsetup suspend vol
	ok_within "freeze: dmsetup resume" 30 dmsetup resume vol
	rm -f $HOST/dst $HOST/alive

	section "host dead: guest writes"
	# --- EIO on host metadata: the whole host device fails, during guest
	# writes (the same guest XFS writing and fsyncing).
	(for i in $(seq 40); do
		dd if=/tmp/src of=/mnt/guest/w$i bs=1M conv=fsync status=none || exit 1
	done) 2>/tmp/io.out &
	io=$!
	sleep 2
	check "host dead: fail the whole host device under guest writes" host_fail
	wait_done $io 60
	check "host dead: the guest writer finishes within 60 s" finished $io
	wait $io
	check_eq "host dead: and got an error" 1 "$?"
	ok_within "host dead: the guest unmounts" 60 umount /mnt/guest
	settled vol
	restart "host dead"

	section "host dead: snapshot copy"
	# ... during a snapshot copy.
	backing "$HOST/img" 64
	subvol_create vol "$HOST/img" 64
	pattern 132 0 8
	begin_copy 1 "copy, host dead: snapshot_begin"
	check "copy, host dead: fail the host during the copy" host_fail
	# The host shuts down at its next log write.
	eio_within "copy, host dead: the host's log force fails" 30 xfs_io -c fsync $HOST/dst
	eio_within "copy, host dead: a write gets EIO" 30 pattern 0 8 1
	copy_rate_mib 0
	f=$(wait_copy vol 60)
	check "copy, host dead: the copy fails ($f)" test "${f%%:*}" = failed
	within 30 dmsetup message vol 0 snapshot_end
	check_eq "copy, host dead: snapshot_end is refused" 1 "$RC"
	ok_within "copy, host dead: snapshot_cancel" 30 dmsetup message vol 0 snapshot_cancel
	settled vol
	restart "copy, host dead"

	section "host dead: pool claim"
	# ... during a pool claim.
	backing "$HOST/img" 512
	subvol_create vol "$HOST/img" 512
	check "claim, host dead: fail the host" host_fail
	# Until the host writes its log, a claim may be made in memory.
	within 30 dmsetup message vol 0 reserve $((64 * SECTORS_PER_MIB))
	echo "# reserve on a failed host, before its shutdown: $RC $(out)"
	check "claim, host dead: the reserve finishes within 30 s" test "$RC" != hung
	[ "$RC" = 0 ] && ok_within "claim, host dead: release it" 30 \
		dmsetup message vol 0 release $((64 * SECTORS_PER_MIB))
	eio_within "claim, host dead: the host's log force fails" 30 xfs_io -c fsync $HOST/img
	# More than the pool holds: it must claim, and the host is dead.
	eio_within "claim, host dead: a claim after the shutdown gets EIO" 30 \
		dmsetup message vol 0 reserve $((400 * SECTORS_PER_MIB))
	check_eq "claim, host dead: promised nothing" 0 "$(status_field vol $F_PROMISED)"
	no_accounting_errors vol
	settled vol
	restart "claim, host dead"
done
section end
rm -f $HOST/img $HOST/dst
nothing_left
dmsetup remove hostdev
finish
