#!/bin/bash
# The space guarantee under everything at once, for SECONDS (default 45):
# two volumes on one host filesystem, a host writer that never stops
# (it fills the host, frees part of it, and fills it again), and each
# guest filling, checking, deleting, trimming and snapshotting in a loop.
# Nothing may be lost, no write may reach the host uncovered, no I/O
# error may reach a guest, and the accounting must stay exact.
# scripts/torture-space runs it for longer and prints its figures.
#
#   7g-space-torture.sh [SECONDS]
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

SECONDS_TOTAL=${1:-45}
host_xfs 1000
mkdir -p $HOST/hostwriter
dd if=/dev/urandom of=/tmp/source bs=1M count=16 status=none
for v in a b; do
	backing "$HOST/$v.img" 1024
	subvol_create $v "$HOST/$v.img" 1024
	mkfs.xfs -q /dev/mapper/$v
	mkdir -p /mnt/$v
	mount /dev/mapper/$v /mnt/$v
done
kmsg_mark

# host_writer: fills the host with 4 MiB files, removes every other one
# when it is full, and goes on, until told to stop.
host_writer() {
	local i=0 n
	while [ ! -e /tmp/stop ]; do
		i=$((i + 1))
		if ! dd if=/dev/zero of=$HOST/hostwriter/$i bs=1M count=4 oflag=direct status=none 2>/dev/null; then
			rm -f $HOST/hostwriter/$i
			n=0
			for f in $HOST/hostwriter/*; do
				n=$((n + 1))
				((n % 2)) && rm -f "$f"
			done
		fi
	done
}

# guest_loop V: fill, check, delete half, trim and now and then snapshot,
# until told to stop; one line of counts at the end.
guest_loop() {
	local v=$1 g=/mnt/$1 round=0 written=0 enospc=0 snaps=0 refused=0 bad=0 i f n
	while [ ! -e /tmp/stop ]; do
		round=$((round + 1))
		for i in $(seq 8); do
			f=$g/r$round-$i
			if ! dd if=/tmp/source of=$f bs=1M conv=fsync status=none 2>/tmp/$v.err; then
				grep -q "No space left on device" /tmp/$v.err && enospc=$((enospc + 1))
				[ -e $f ] && written=$((written + $(stat -c %s $f)))
				break
			fi
			written=$((written + $(stat -c %s $f)))
		done
		bad=$((bad + $(prefixes_mismatch_fast $g /tmp/source)))
		n=0
		for f in $g/r*; do
			n=$((n + 1))
			((n % 2)) && rm -f "$f"
		done
		fstrim $g 2>/dev/null
		if ((round % 3 == 0)); then
			dmsetup suspend $v
			if dmsetup message $v 0 prepare_snapshot 2>/dev/null; then
				cp --reflink=always $HOST/$v.img $HOST/$v.snap && snaps=$((snaps + 1))
			else
				refused=$((refused + 1))
			fi
			dmsetup resume $v
			# Only the newest snapshot is kept.
			rm -f $HOST/$v.snap.old
			[ -e $HOST/$v.snap ] && mv $HOST/$v.snap $HOST/$v.snap.old
		fi
	done
	echo "$round $written $enospc $snaps $refused $bad" >/tmp/$v.counts
}

rm -f /tmp/stop
host_writer &
hw=$!
guest_loop a &
ga=$!
guest_loop b &
gb=$!
sleep "$SECONDS_TOTAL"
touch /tmp/stop
wait $ga $gb $hw

rounds=0 written=0 enospc=0 snaps=0 refused=0 bad=0
for v in a b; do
	read -r r w e s x m </tmp/$v.counts
	echo "# torture $v: rounds $r, written $((w >> 20)) MiB, ENOSPC $e, snapshots $s (refused $x), files not as written $m"
	rounds=$((rounds + r)) written=$((written + w)) enospc=$((enospc + e))
	snaps=$((snaps + s)) refused=$((refused + x)) bad=$((bad + m))
done
uncovered=$(($(status_field a $F_UNCOVERED) + $(status_field b $F_UNCOVERED)))
acct=$(($(status_field a $F_ACCOUNTING_ERRORS) + $(status_field b $F_ACCOUNTING_ERRORS)))
kerr=$(kernel_errors | wc -l)
echo "# torture: seconds $SECONDS_TOTAL rounds $rounds written_mib $((written >> 20)) enospc $enospc snapshots $snaps refused $refused uncovered $uncovered accounting_errors $acct kernel_errors $kerr"
check "both guests ran rounds" test "$rounds" -ge 2
check_eq "every file read back as written, each round" 0 "$bad"
check_eq "no write reached the host without a promise" 0 "$uncovered"
check_eq "no accounting error" 0 "$acct"
check_eq "no I/O error, writeback error or shutdown" "" "$(kernel_errors)"
for v in a b; do
	check "$v: umount" umount /mnt/$v
	check "$v: xfs_repair -n is clean" xfs_repair -n /dev/mapper/$v
	dmsetup remove $v
done
finish
