# Guests that do not reserve (the stock XFS, a raw writer): the no-space
# policies decide what a write the host has no space for gets.  Error:
# ENOSPC at once, never EIO.  Queue: the write waits and completes when
# host space is freed within the timeout, or fails with ENOSPC after it.
# And the low-water mark raises a dm event.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

# The stock xfs module, not the patched one the harness loaded (xfs.ko
# in Debian's 6.1, xfs.ko.xz in its 6.12).
stock=$(ls /lib/modules/"$(uname -r)"/kernel/fs/xfs/xfs.ko* | head -n 1)
check "load the stock xfs module" sh -c "rmmod xfs && insmod $stock" || { finish; exit; }
host_xfs 400
G=/mnt/guest
mkdir -p $G

# 1. Error policy (the default), stock XFS on top.
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
mkfs.xfs -q /dev/mapper/vol
mount /dev/mapper/vol $G
check_eq "the stock XFS does not attach" none "$(status_field vol $F_CLIENT)"
kmsg_mark
dd if=/dev/zero of=$G/big bs=1M oflag=direct status=none 2>/tmp/err
check "a direct write beyond the host's space fails with ENOSPC" grep -q "No space left on device" /tmp/err
check_fails "and not with EIO" grep -q "Input/output error" /tmp/err
check "the device logged the host's ENOSPC" sh -c "dmesg | grep -q 'failed on $HOST/img: -28'"
check_eq "without a client no write counts as uncovered" 0 "$(status_field vol $F_UNCOVERED)"
no_accounting_errors vol
umount $G
dmsetup remove vol
rm -f $HOST/img

# 2. Queue policy: a raw writer waits for space, which comes back in time.
backing "$HOST/img" 1024
fallocate -l 64M $HOST/spare
subvol_create q "$HOST/img" 1024 guarantee:none no_space:queue no_space_timeout:60
check_eq "status: policy queue" queue "$(status_field q $F_NO_SPACE)"
mib=$(($(free_bytes $HOST) >> 20))
dd if=/dev/zero of=/dev/mapper/q bs=1M count=$((mib + 32)) oflag=direct status=none 2>/tmp/err &
pid=$!
for _ in $(seq 1 600); do
	[ "$(free_bytes $HOST)" -lt $((1 << 20)) ] && break
	sleep 0.1
done
sleep 2
check "the writer waits while the host is full" kill -0 $pid
rm $HOST/spare
wait $pid
check_eq "the writer completes once space is freed" 0 $?
check_eq "the writer saw no error" "" "$(cat /tmp/err)"
check_eq "what it wrote reads back (zeros)" 0 "$(nonzero_bytes /dev/mapper/q $(((mib + 32) << 20)))"
dmsetup remove q
rm -f $HOST/img

# ... and fails with ENOSPC once the timeout has passed.
backing "$HOST/img" 1024
subvol_create q "$HOST/img" 1024 guarantee:none no_space:queue no_space_timeout:2
mib=$(($(free_bytes $HOST) >> 20))
start=$(date +%s)
dd if=/dev/zero of=/dev/mapper/q bs=1M count=$((mib + 32)) oflag=direct status=none 2>/tmp/err
took=$(($(date +%s) - start))
check "after the timeout the write fails with ENOSPC" grep -q "No space left on device" /tmp/err
check "it waited for the timeout first" test $took -ge 2
dmsetup remove q
rm -f $HOST/img

# 3. The low-water mark raises one dm event.
backing "$HOST/img" 1024
free=$(($(free_bytes $HOST) / 512))
mark=$((free - 100 * 2048))
subvol_create lw "$HOST/img" 1024 guarantee:none low_water:$mark
events0=$(dmsetup info -c --noheadings -o events lw | tr -d ' ')
check_eq "status: above the low-water mark" ok "$(status_field lw $F_LOW_WATER)"
dd if=/dev/zero of=/dev/mapper/lw bs=1M count=150 oflag=direct status=none
check "an event after crossing the mark" test "$(dmsetup info -c --noheadings -o events lw | tr -d ' ')" -gt "$events0"
check_eq "status: below the low-water mark" low "$(status_field lw $F_LOW_WATER)"
check "the kernel log says so" sh -c "dmesg | grep -q 'below the low-water mark'"
dmsetup remove lw
finish
