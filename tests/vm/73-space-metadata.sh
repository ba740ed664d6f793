# Metadata-only operations at the limit: many empty files, directories and
# extended attributes end in ENOSPC from the guest, cleanly.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

dd if=/dev/urandom of=/tmp/source bs=1M count=50 status=none
host_xfs 400
backing "$HOST/img" 1024
subvol_create vol "$HOST/img" 1024
DEV=/dev/mapper/vol G=/mnt/guest
mkdir -p $G
mkfs.xfs -q $DEV
mount $DEV $G
fill $G /tmp/source
check "data fill ended in ENOSPC" grep -q "No space left on device" /tmp/fill.err
# Give the host 2 MiB back (shrink the first file, trim), for metadata:
# room for some thousands of operations (an inode chunk of 64 takes 32 KiB).
truncate -s $((48 << 20)) $G/f1
fstrim $G
sync
kmsg_mark

check "a directory for the metadata" mkdir $G/m
n=0 err=
while [ $n -lt 100000 ]; do
	n=$((n + 1))
	if ((n % 16 == 0)); then
		err=$(mkdir $G/m/d$n 2>&1) || break
	elif ((n % 16 == 1 && n > 1)); then
		# on the directory just made, and on the file before it
		printf -v v512 '%0512d' $n
		printf -v v256 '%0256d' $n
		err=$(setfattr -n user.n$n -v "$v512" $G/m/d$((n - 1)) 2>&1) || break
		err=$(setfattr -n user.n$n -v "$v256" $G/m/f$((n - 2)) 2>&1) || break
	else
		{ : >$G/m/f$n; } 2>/tmp/err || { err=$(cat /tmp/err); break; }
	fi
done
echo "# $n metadata operations until: $err"
check "metadata operations end in ENOSPC" grep -q "No space left on device" <<<"$err"
check "many operations succeeded before it" test $n -gt 500
check_eq "no write reached the host without a promise" 0 "$(status_field vol $F_UNCOVERED)"
entries=$(ls $G/m | wc -l)
check "umount" umount $G
check_eq "no I/O error, writeback error or shutdown" "" "$(kernel_errors)"
check "xfs_repair -n is clean" xfs_repair -n $DEV
check "mount again" mount $DEV $G
check_eq "every entry made is there" "$entries" "$(ls $G/m | wc -l)"
check "umount at the end" umount $G
no_accounting_errors vol
dmsetup remove vol
finish
