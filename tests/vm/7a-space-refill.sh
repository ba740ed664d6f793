#!/bin/bash
# Reservations that outrun the pool's claim wait for it, wherever the
# guest reserves: write(2) and page faults on a shared mapping (mmap
# writers), while the host has space.  The pool keeps only a few MiB
# claimed ahead of its promises, so fast writers need it to claim more
# (a refill) many times; a page fault that found the claim short used to
# give the writer SIGBUS.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 2048
backing "$HOST/img" 1536
subvol_create vol "$HOST/img" 1536
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G
check "mkfs.xfs" mkfs.xfs -q $DEV || { finish; exit; }
check "mount" mount $DEV $G || { finish; exit; }
kmsg_mark

# wait_all: wait for every background job; set status to the last
# non-zero exit status (0 if every job succeeded).  Not in a subshell:
# only this shell can wait for its jobs.
wait_all() {
	local job
	status=0
	for job in $(jobs -p); do
		wait "$job" || status=$?
	done
}

# 4 mmap writers and 2 write(2) writers, 96 MiB each, at once.
for i in 1 2 3 4; do
	xfs_io -f -c "truncate 96m" -c "mmap -w 0 96m" -c "mwrite -S 0x5$i 0 96m" \
		-c "msync -s 0 96m" $G/m$i >/tmp/m$i.out 2>&1 &
done
for i in 1 2; do
	xfs_io -f -c "pwrite -q -S 0x6$i -b 1m 0 96m" $G/w$i >/tmp/w$i.out 2>&1 &
done
wait_all
check_eq "every writer finished without a signal or error" 0 "$status"
for f in /tmp/m?.out /tmp/w?.out; do
	check_eq "$(basename "$f" .out): no error output" "" "$(cat "$f")"
done
check "sync" sync
# bytes_other FILE BYTE: bytes of FILE that are not BYTE (a number).
bytes_other() { tr -d "$(printf '\\%03o' "$2")" <"$1" | wc -c; }
for i in 1 2 3 4; do
	check_eq "m$i holds its pattern" 0 "$(bytes_other $G/m$i $((0x50 + i)))"
done
for i in 1 2; do
	check_eq "w$i holds its pattern" 0 "$(bytes_other $G/w$i $((0x60 + i)))"
done
check_eq "no write reached the host without a promise" 0 "$(status_field vol $F_UNCOVERED)"

# 128 mmap writers of 512 KiB files at once, as fstests' generic/619
# runs them: what one fault's refill claims is the volume's, and the
# other faults take it first; a fault that retried once got SIGBUS.
mkdir $G/many
for i in $(seq 128); do
	xfs_io -f -c "truncate 512k" -c "mmap -w 0 512k" -c "mwrite -S 0x77 0 512k" \
		-c "msync -s 0 512k" $G/many/f$i >/tmp/many$i.out 2>&1 &
done
wait_all
check_eq "128 mmap writers finished without a signal or error" 0 "$status"
check_eq "every one of them wrote its file whole" 0 \
	"$(cat $G/many/f* | tr -d '\167' | wc -c)"
check_eq "no write reached the host without a promise, with 128 writers" 0 \
	"$(status_field vol $F_UNCOVERED)"
no_accounting_errors vol
check_eq "no I/O error in the kernel log" "" "$(kernel_errors)"
check "umount" umount $G
dmsetup remove vol
finish
