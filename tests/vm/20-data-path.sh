# The data path: what is written reads back identical (fio verify at random
# offsets and sizes, concurrent jobs, after remove and re-create); block
# sizes and limits; discard and write-zeroes punch holes in the backing
# file; read-only tables refuse writes; the status line tells the truth.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

# 128 MiB: all of it is hashed, verified or compared several times, at
# some 20 MB/s under TCG.
MIB=128
host_xfs
backing "$HOST/img" $MIB
subvol_create vol "$HOST/img" $MIB
DEV=/dev/mapper/vol

check_eq "logical block size is the host's" 4096 "$(blockdev --getss $DEV)"
check_eq "physical block size is the host's" 4096 "$(blockdev --getpbsz $DEV)"
check_eq "size" $((MIB << 20)) "$(blockdev --getsize64 $DEV)"
queue=$(queue_dir vol)
check_eq "discard granularity" 4096 "$(cat "$queue/discard_granularity")"
check "discards advertised" test "$(cat "$queue/discard_max_bytes")" -gt 0
check "write-zeroes advertised" test "$(cat "$queue/write_zeroes_max_bytes")" -gt 0
check_eq "volatile write cache (flushes are honoured)" "write back" \
	"$(cat "$queue/write_cache")"

# Random offsets and sizes, four jobs at once on disjoint quarters, each
# with 16 requests in flight; every block carries a checksum and a header
# naming its offset, so misplaced data is caught too.
fio_job() {
	fio --name=verify --filename=$DEV --direct=1 --ioengine=libaio \
		--iodepth=16 --numjobs=4 --size=$((MIB / 4))M --offset_increment=$((MIB / 4))M \
		--bsrange=4k-256k --rw=randwrite --randrepeat=1 --randseed=7 \
		--verify=crc32c --verify_fatal=1 --verify_dump=0 \
		--group_reporting --output-format=terse "$@" >/tmp/fio.out 2>&1
}
check "fio: random writes verify (4 jobs, qd 16)" fio_job
sum_before=$(sha $DEV)

dmsetup remove vol
subvol_create vol "$HOST/img" $MIB
check "fio: verify only after remove and re-create" fio_job --verify_only
check_eq "device content after re-create" "$sum_before" "$(sha $DEV)"

# Status: <format> <mode> <block> <virtual> <backed> <host_free>.
sync
check_eq "status field count" 19 "$(dmsetup status vol | awk '{ print NF - 3 }')"
check_eq "status format" 1 "$(status_field vol 0)"
check_eq "status mode" rw "$(status_field vol 1)"
check_eq "status block sectors" 8 "$(status_field vol 2)"
check_eq "status virtual sectors" $((MIB * SECTORS_PER_MIB)) "$(status_field vol 3)"
check_eq "status backed sectors = the file's allocation" \
	"$(stat -c %b "$HOST/img")" "$(status_field vol 4)"
free_host=$(($(stat -f -c '%a * %S' "$HOST") / 512))
free_status=$(status_field vol 5)
check "status host free sectors = statfs ($free_host vs $free_status)" \
	test $((free_host - free_status)) -le 2048 -a $((free_status - free_host)) -le 2048
check_eq "table line" "0 $((MIB * SECTORS_PER_MIB)) subvol $HOST/img" "$(dmsetup table vol)"

# Discard punches holes: the whole device discarded leaves nothing backed.
alloc_before=$(allocated_bytes "$HOST/img")
check "blkdiscard" blkdiscard $DEV
alloc_after=$(allocated_bytes "$HOST/img")
check "discard freed the backing blocks ($alloc_before -> $alloc_after)" \
	test "$alloc_after" -lt $((alloc_before / 100))
check_eq "discarded device reads zeros" 0 "$(nonzero_bytes $DEV)"

# Write-zeroes: a range reads back as zeros.  BLKZEROOUT (blkdiscard -z)
# asks for no unmapping: the blocks stay allocated on the host.  fallocate
# --punch-hole on the device allows unmapping: the range becomes a hole.
zeros8m=$(head -c 8388608 /dev/zero | sha256sum | cut -d' ' -f1)
read8m() { dd if=$DEV bs=1M skip="$1" count=8 iflag=direct status=none | sha256sum | cut -d' ' -f1; }
dd if=/dev/urandom of=$DEV bs=1M count=32 oflag=direct status=none
alloc_before=$(allocated_bytes "$HOST/img")
check "write-zeroes without unmap (blkdiscard -z)" \
	blkdiscard --zeroout --offset 4194304 --length 8388608 $DEV
check_eq "zeroed range reads zeros" "$zeros8m" "$(read8m 4)"
check_eq "no unmap: still allocated on the host" "$alloc_before" "$(allocated_bytes "$HOST/img")"
check "write-zeroes with unmap (fallocate --punch-hole)" \
	fallocate --punch-hole --offset 16777216 --length 8388608 $DEV
check_eq "punched range reads zeros" "$zeros8m" "$(read8m 16)"
check "punched range unmapped on the host" \
	test "$(allocated_bytes "$HOST/img")" -le $((alloc_before - 8388608))

# Flush: an fsync of the device reaches the backing file (no error).
check "fsync of the device" xfs_io -c fsync $DEV

# Data sent with FUA (O_DSYNC direct writes) reads back.
dd if=/dev/urandom of=/tmp/chunk bs=1M count=2 status=none
check "O_DSYNC direct write to device" dd if=/tmp/chunk of=$DEV bs=1M seek=100 oflag=direct,dsync status=none conv=notrunc
check_eq "dsync data reads back" "$(sha /tmp/chunk)" \
	"$(dd if=$DEV bs=1M skip=100 count=2 iflag=direct status=none | sha256sum | cut -d' ' -f1)"

# ignore_discard: no discards advertised, nothing punched.
dmsetup remove vol
subvol_create vol "$HOST/img" $MIB ignore_discard
check_eq "ignore_discard: discard_max_bytes" 0 "$(cat "$queue/discard_max_bytes")"
check_fails "ignore_discard: blkdiscard refused" blkdiscard $DEV
check_eq "ignore_discard: table line" \
	"0 $((MIB * SECTORS_PER_MIB)) subvol $HOST/img 1 ignore_discard" "$(dmsetup table vol)"
dmsetup remove vol

# Read-only tables refuse writes and change nothing.
file_sum=$(sha "$HOST/img")
dmsetup create rovol --readonly --table "0 $((MIB * SECTORS_PER_MIB)) subvol $HOST/img"
check_eq "read-only: status mode" ro "$(status_field rovol 1)"
# What each kind of write gets (review item 50): the block layer refuses
# write(2) and BLKZEROOUT on a read-only device, and discard is not
# advertised; only a kernel user ignoring the flag reaches the target.
check_fails "read-only: direct write fails" \
	dd if=/dev/zero of=/dev/mapper/rovol bs=4k count=1 oflag=direct conv=notrunc status=none
check "read-only: write(2) gets EPERM" grep -q "Operation not permitted" \
	<<<"$(dd if=/dev/zero of=/dev/mapper/rovol bs=4k count=1 oflag=direct conv=notrunc status=none 2>&1)"
check_fails "read-only: discard fails" blkdiscard /dev/mapper/rovol
check "read-only: discard gets EOPNOTSUPP" grep -q "Operation not supported" \
	<<<"$(blkdiscard /dev/mapper/rovol 2>&1)"
check "read-only: write-zeroes gets EPERM" grep -q "Operation not permitted" \
	<<<"$(blkdiscard -z -l 1M /dev/mapper/rovol 2>&1)"
check "read-only: reads work" dd if=/dev/mapper/rovol of=/dev/null bs=1M count=8 status=none
dmsetup remove rovol
check_eq "read-only: backing file unchanged" "$file_sum" "$(sha "$HOST/img")"

# A path with a backslash round-trips: "dmsetup table" output reloads.
# (libdevmapper escapes backslashes on load, and cannot carry whitespace.)
backing "$HOST/back\\slash" 64
dmsetup create slashed --table "0 $((64 * SECTORS_PER_MIB)) subvol $HOST/back\\slash"
table=$(dmsetup table slashed)
check_eq "path with a backslash in the table" \
	"0 $((64 * SECTORS_PER_MIB)) subvol $HOST/back\\slash" "$table"
check "table output reloads as is" dmsetup reload slashed --table "$table"
check "resume" dmsetup resume slashed
dmsetup remove slashed

# IMA measures the table as the target describes it (STATUSTYPE_IMA), the
# backing file's path escaped, with every feature (review item 43).
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
ima=/sys/kernel/security/ima
if check "IMA policy for device-mapper loads" sh -c \
	"echo 'measure func=CRITICAL_DATA label=device-mapper template=ima-buf' >$ima/policy"; then
	backing "$HOST/a,b=c;d\\e" 64
	dmsetup create imavol --table \
		"0 $((64 * SECTORS_PER_MIB)) subvol $HOST/a,b=c;d\\e 4 no_space:queue no_space_timeout:7 low_water:2048 guarantee:none"
	measured=$(awk '$5 == "dm_table_load" { print $6 }' $ima/ascii_runtime_measurements |
		xxd -r -p | tr '\0' '\n')
	check "IMA: path escaped, all features" grep -qF \
		"target_name=subvol,target_version=1.4.0,backing_file=$HOST/a\\x2cb\\x3dc\\x3bd\\x5ce,mode=rw,ignore_discard=n,guarantee=none,no_space=queue,no_space_timeout=7,low_water=2048;" \
		<<<"$measured"
	dmsetup remove imavol
fi

finish
