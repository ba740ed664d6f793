#!/bin/bash
# Discard and write-zeroes on a full host (review item 24: they need host
# btree blocks, which no promise covers).  Punching a block out of the
# middle of an extent splits it, and the host reserves blocks for its
# extent tree first; zeroing without unmapping allocates like a write.
# On a host filled to its last allocatable block, 4096 scattered discards
# (taking the image from one extent to 2696) and zeroing of promised
# holes and of data all succeed: a punch frees a block for each it
# reserves, and the zeroing is accounted as a write.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs 300
backing "$HOST/img" 256
subvol_create vol "$HOST/img" 256
DEV=/dev/mapper/vol
mkdir -p $HOST/filler
check "write 64 MiB sequentially (few host extents)" \
	dd if=/dev/urandom of=$DEV bs=1M count=64 oflag=direct status=none

# Fill the host.
i=0
while dd if=/dev/zero of=$HOST/filler/$i bs=1M count=4 oflag=direct status=none 2>/dev/null; do
	i=$((i + 1))
done
# The last blocks by appending to a file (a new file needs an inode).
while dd if=/dev/zero of=$HOST/filler/last bs=4k count=1 oflag=direct,append conv=notrunc \
	status=none 2>/dev/null; do
	:
done
echo "# host free after the fill: $(($(free_bytes $HOST) >> 10)) KiB"
kmsg_mark

# Zeroing without unmapping (fallocate ZERO_RANGE on the device: write
# zeroes with REQ_NOUNMAP) into holes a "reserve" message promised, and
# over data.
check "reserve 1 MiB for the zeroing of holes" dmsetup message vol 0 reserve 2048
check "zero 1 MiB of holes without unmapping" xfs_io -d -c "fzero 128m 1m" $DEV
check "zero 1 MiB of data without unmapping" xfs_io -d -c "fzero 8m 1m" $DEV
check_eq "the zeroed data reads as zeros" 0 "$(dd if=$DEV bs=1M skip=8 count=1 iflag=direct status=none | tr -d '\000' | wc -c)"

# 4096 discards of single blocks, at random, each splitting an extent.
check "4096 scattered 4 KiB discards on the full host" \
	fio --name=trim --filename=$DEV --rw=randtrim --bs=4k --size=64m \
	--number_ios=4096 --ioengine=psync --output=/tmp/trim.out
echo "# host extents of the image: $(xfs_io -c 'stat' $HOST/img | sed -n 's/.*nextents = //p' | head -1)"

check_eq "no request failed" "" "$(kmsg_since_mark | grep -a 'failed on' || true)"
no_accounting_errors vol
dmsetup remove vol
finish
