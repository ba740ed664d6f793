# Host reads and writes that fail with ENOMEM or EAGAIN (the host's
# passing state, not a broken disk) are retried, for transient_timeout
# seconds, and only then failed (the review's item 25).  The Debian
# kernel has no fault injection, so tests/kmod/subvol-fault.ko turns the
# results of the target's host I/O into errors (a kprobe on its
# completion callback).
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

P=/sys/module/subvol_fault/parameters
T=/sys/module/dm_subvol/parameters/transient_timeout
dd if=/dev/urandom of=/tmp/source bs=1M count=16 status=none
host_xfs
backing "$HOST/img" 512
subvol_create vol "$HOST/img" 512
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G
mkfs.xfs -q $DEV
mount $DEV $G
check "load the fault injector" modprobe subvol_fault
check_eq "the target's retry time is a module parameter, 60 s by default" 60 "$(cat $T 2>&1)"
kmsg_mark

# inject ERRNO COUNT: fail the next COUNT host completions with ERRNO.
inject() {
	echo "$1" >$P/error
	echo "$2" >$P/count
}

# Writes through the guest XFS, each host write's first result ENOMEM.
before=$(cat $P/injected)
inject -12 64
check "guest writes while the host says ENOMEM" dd if=/tmp/source of=$G/a bs=1M conv=fsync status=none
check_eq "every injected ENOMEM was used" 64 "$(($(cat $P/injected) - before))"
# Reads, with EAGAIN.
echo 3 >/proc/sys/vm/drop_caches
before=$(cat $P/injected)
inject -11 32
check_eq "guest reads while the host says EAGAIN, and the data is right" "$(sha /tmp/source)" "$(sha $G/a)"
check_eq "every injected EAGAIN was used" 32 "$(($(cat $P/injected) - before))"
check_eq "no I/O error reached the guest" "" "$(kernel_errors)"
umount $G
check "xfs_repair -n is clean" xfs_repair -n $DEV

# An ENOMEM that lasts: the write fails once the retry time is over.
echo 2 >$T
inject -12 1000000
# uptime_ms: milliseconds since boot (busybox date has no %N).
uptime_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }
start=$(uptime_ms)
check_fails "a direct write fails when ENOMEM outlasts transient_timeout" \
	dd if=/tmp/source of=$DEV bs=4k count=1 seek=100 oflag=direct status=none
ms=$(($(uptime_ms) - start))
echo "# the write failed after $ms ms"
check "not before the 2 s" test $ms -ge 2000
inject -12 0
check "and the device works again once the host does" \
	dd if=/tmp/source of=$DEV bs=4k count=1 seek=100 oflag=direct status=none
check_eq "what it wrote reads back" "$(sha /tmp/source 4096)" \
	"$(dd if=$DEV bs=4k skip=100 count=1 iflag=direct status=none | sha256sum | cut -d' ' -f1)"
echo 60 >$T
check "the fault injector unloads" rmmod subvol_fault
no_accounting_errors vol
dmsetup remove vol
finish
