#!/bin/bash
# A claim the host cannot back fails without taking the host's free space
# on its way: the pool claims a chunk at a time, and only what the host
# has free, so that a host writer working meanwhile never sees ENOSPC.
# (A claim used to fallocate the whole request at once, fill the host,
# and halve the request after ENOSPC.)  And the failed claim keeps
# nothing: the host's free space is back once the pool settles.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 400
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
mkdir -p $HOST/writer
sleep 2
free0=$(free_bytes $HOST)
echo "# host free: $((free0 >> 20)) MiB"

# writer: 1 MiB files, written and removed in turn, until told to stop;
# its failures go to /tmp/writer.err.
writer() {
	local i=0
	: >/tmp/writer.err
	while [ ! -e /tmp/stop-writer ]; do
		i=$((i % 8 + 1))
		rm -f $HOST/writer/$i
		dd if=/dev/zero of=$HOST/writer/$i bs=64k count=16 conv=fsync status=none 2>>/tmp/writer.err
	done
}
rm -f /tmp/stop-writer
writer &
writer_pid=$!

too_much=$(((free0 >> 9) + 100 * SECTORS_PER_MIB))
refused=0
for _ in $(seq 20); do
	dmsetup message vol 0 reserve $too_much 2>/dev/null || refused=$((refused + 1))
done
touch /tmp/stop-writer
wait $writer_pid
check_eq "20 reservations of 100 MiB more than the host has are refused" 20 "$refused"
check_eq "the host writer saw no error meanwhile" "" "$(sort -u /tmp/writer.err)"
check_eq "the refusals promised nothing" 0 "$(status_field vol $F_PROMISED)"

# A reservation the host can back still succeeds, and is released.
check "a reservation of 64 MiB succeeds" dmsetup message vol 0 reserve $((64 * SECTORS_PER_MIB))
check "and is released" dmsetup message vol 0 release $((64 * SECTORS_PER_MIB))
sleep 3
check "the pool gives the host its space back (within 16 MiB)" \
	test "$(free_bytes $HOST)" -ge $((free0 - (16 << 20)))
no_accounting_errors vol
dmsetup remove vol
finish
