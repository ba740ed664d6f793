#!/bin/bash
# After a snapshot every block is shared, and the host allocates for a
# copy-on-write by its own rules: XFS allocates a whole CoW extent (32
# blocks by default, more with a cowextsize hint) for one shared block.
# With the host otherwise full (a host writer takes every block it can),
# 16 writers overwrite scattered 4 KiB blocks of shared files, direct,
# buffered and through mmap, for long enough to use the pool's margin
# many times over: no write may fail, and nothing is uncovered.  A host
# writer that takes every block the host frees may hold the writes (the
# limit subvol.rst states), never fail them.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

# RUNTIME: seconds of overwrites; FILLER: "none" leaves the host's free
# space alone, "once" fills the host before the overwrites, "always" also
# takes every block the host frees later.
RUNTIME=${1:-30} FILLER=${2:-always}
host_xfs 700
backing "$HOST/img" 512
subvol_create vol "$HOST/img" 512
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G $HOST/filler
check "mkfs.xfs" mkfs.xfs -q $DEV || { finish; exit; }
check "mount" mount $DEV $G || { finish; exit; }
echo "# backing file's CoW extent size hint: $(xfs_io -c cowextsize $HOST/img)"

# jobfile RW: 16 writers, each on a file of 12 MiB of its own (6 direct,
# 5 buffered, 5 through mmap).  With RW randwrite: scattered 4 KiB
# overwrites for $RUNTIME seconds, each block verified after it is
# written; otherwise the files are written whole.
jobfile() {
	printf '%s\n' "[global]" "directory=$G" "filename_format=\$jobname.\$jobnum" \
		bs=4k size=12m verify=crc32c verify_fatal=1 group_reporting
	if [ "$1" = randwrite ]; then
		printf '%s\n' rw=randwrite time_based runtime="$RUNTIME" verify_backlog=64
	else
		printf '%s\n' rw=write do_verify=0 end_fsync=1
	fi
	printf '%s\n' "[direct]" numjobs=6 direct=1 ioengine=psync \
		"[buffered]" numjobs=5 fsync=16 ioengine=psync \
		"[mmap]" numjobs=5 fsync=16 ioengine=mmap
}
jobfile write >/tmp/prep.fio
jobfile randwrite >/tmp/overwrite.fio

# The files, then a snapshot: all of it shared.
check "write the 16 files" fio /tmp/prep.fio --output=/tmp/prep.out --eta=never
sync
dmsetup suspend vol
check "prepare_snapshot" dmsetup message vol 0 prepare_snapshot
check "clone" cp --reflink=always $HOST/img $HOST/snap
check "resume" dmsetup resume vol
shared0=$(status_field vol $F_SHARED)

# filler: fills the host, then (FILLER=always) takes every block the host
# frees, until told to stop.
filler() {
	local i=0
	while [ ! -e /tmp/stop-filler ]; do
		i=$((i + 1))
		dd if=/dev/zero of=$HOST/filler/$i bs=64k count=16 oflag=direct status=none 2>/dev/null && continue
		[ "$FILLER" = once ] && break
		sleep 0.05
	done
}
# host_used: bytes in use on the host filesystem, less the filler's.
host_used() {
	local filler
	filler=$(du -sk $HOST/filler | cut -f1)
	echo $(($(stat -f -c '(%b - %f) * %S' $HOST) - filler * 1024))
}
used0=$(host_used)
rm -f /tmp/stop-filler
filler_pid=
if [ "$FILLER" != none ]; then
	filler &
	filler_pid=$!
	sleep 5
fi
echo "# host free with the filler running: $(($(free_bytes $HOST) >> 10)) KiB"
kmsg_mark

# A filler that takes every block the host frees can take what the pool
# releases for the device's writes before they allocate it, again and
# again, until the pool's claim is gone: then the writes are held (never
# failed) until host space is freed.  After RUNTIME + 30 s the filler
# stops and gives half of its space back, as an admin would.
(sleep $((RUNTIME + 30)) && touch /tmp/stop-filler && sleep 1 &&
	find $HOST/filler -type f | awk 'NR % 2' | xargs -r rm -f) &
watchdog=$!
fio /tmp/overwrite.fio --output=/tmp/overwrite.out --eta=never
fio_status=$?
kill $watchdog 2>/dev/null
[ -e /tmp/stop-filler ] && echo "# the filler had to give space back for the held writes to complete"
check_eq "fio: every overwrite and its verification succeeded" 0 "$fio_status" ||
	tail -n 20 /tmp/overwrite.out | sed 's/^/#   /'
written=$(sed -n 's/.*WRITE: bw=.*io=\([0-9.]*[KMG]i*B\).*/\1/p' /tmp/overwrite.out | head -1)
check "sync" sync
touch /tmp/stop-filler
[ -z "$filler_pid" ] || wait $filler_pid
unshared=$(((shared0 - $(status_field vol $F_SHARED)) * 512))
used=$(($(host_used) - used0))
echo "# overwritten: $written; $((unshared >> 20)) MiB no longer shared; the host's space in use grew $((used >> 20)) MiB (the filler's left out); pool: $(($(status_field vol $F_COMMITTED) / 2048)) MiB promised, $(($(status_field vol $F_CLAIMED) / 2048)) MiB claimed"
# The host's space in use counts the pool's claim, which a filler takes
# from: compare only without one.
[ "$FILLER" = none ] &&
	check "the host allocated at most 5/4 of what copy-on-write took from the pool" \
		test $((used * 4)) -le $((unshared * 5))
check_eq "no write reached the host without a promise" 0 "$(status_field vol $F_UNCOVERED)"
no_accounting_errors vol
check_eq "no I/O error, writeback error or shutdown" "" "$(kernel_errors)"
check_eq "the device failed no write" "" "$(kmsg_since_mark | grep -a 'failed on' || true)"
echo "# writes held for a full host: $(kmsg_since_mark | grep -ac 'host full') log lines"
check "umount" umount $G
check "xfs_repair -n is clean" xfs_repair -n $DEV
dmsetup remove vol
finish
