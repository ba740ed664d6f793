# subvol snapshot of an active volume (issue 15): the device is suspended
# only to fix the point in time, and copies the image afterwards while the
# guest runs.  The freeze does not grow with the image's extent count; a
# snapshot taken with --no-wait while a writer runs holds every file made
# durable before it and none begun after the command returned, and the
# data that writes replaced during the copy; the name appears only when
# the copy is complete; a second snapshot is refused while one copies; a
# deactivation during the copy leaves no snapshot and no host space taken,
# and the origin activates again.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

export SUBVOL_CONFIG_DIR=/tmp/subvol-etc
dd if=/dev/urandom of=/tmp/source bs=1M count=4 status=none
host_xfs
P=$HOST/pool G=/mnt/guest
mkdir -p $G /mnt/snap
ms() { awk '{ print int($1 * 1000) }' /proc/uptime; }
extents() { xfs_io -r -c 'fiemap' "$1" | grep -vc hole; }
# frozen OUTPUT: the tool's "suspended for X ms", in whole ms.
frozen() { sed -n 's/.*suspended for \([0-9]*\)\.[0-9]* ms.*/\1/p' <<<"$1"; }
# wait_gone PATTERN: until no process matches (a background copy), 600 s.
wait_gone() {
	local i=0
	while running "$1" && [ $i -lt 3000 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	! running "$1"
}
# wait_file FILE: until it exists, 600 s.
wait_file() {
	local i=0
	while [ ! -e "$1" ] && [ $i -lt 3000 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	[ -e "$1" ]
}

check "pool create" subvol pool create --name tank $P
check "create a volume" subvol create --size 512M --mkfs tank/small
check "create another" subvol create --size 512M --mkfs tank/vm

# --- the freeze, few extents and many
mount /dev/subvol/tank/small $G
dd if=/dev/urandom of=$G/data bs=1M count=192 conv=fsync status=none
umount $G
t0=$(ms)
o=$(subvol snapshot tank/small s0 2>&1)
t_small=$(($(ms) - t0))
f_small=$(frozen "$o")
echo "# few extents ($(extents $P/small.img)): frozen $f_small ms, snapshot complete in $t_small ms"

mount /dev/subvol/tank/vm $G
# A file whose blocks the guest allocated at once, written 4 KiB at a time
# in random order: one host extent for nearly every block.
fallocate -l 96M $G/frag
check "fragment the image" xfs_io -d -c "pwrite -q -R -b 4k 0 96m" $G/frag
dd if=/dev/urandom of=$G/frag bs=1M count=96 conv=notrunc,fsync status=none
n=$(extents $P/vm.img)
echo "# the image has $n extents"
check "the image has thousands of extents" test "$n" -gt 5000
t0=$(ms)
o=$(subvol snapshot tank/vm s1 2>&1)
t_frag=$(($(ms) - t0))
f_frag=$(frozen "$o")
echo "# many extents ($n): frozen $f_frag ms, snapshot complete in $t_frag ms"
check "the snapshot says how long the device was suspended" test -n "$f_frag"
check "the freeze is shorter than the copy" test "${f_frag:-999999}" -lt "$t_frag"
check_eq "no progress line without a terminal" 0 "$(tr -cd '\r' <<<"$o" | wc -c)"
check "the snapshot holds the file" sh -c "subvol activate tank/s1 >/dev/null && mount -o ro,nouuid,norecovery /dev/subvol/tank/s1 /mnt/snap && cmp $G/frag /mnt/snap/frag"
umount /mnt/snap
check "deactivate it" subvol deactivate tank/s1

# --- --no-wait while a writer runs and another overwrites: the point in
# time.  The copy must still run at the second snapshot below, after the
# overwrite: it is held to 1 MiB/s until then (the overwrite clones its
# own ranges first, whatever the rate; on the debug kernel it outlasted a
# whole copy at 32 MiB/s, and the second snapshot was made, not
# refused), then goes at 32 MiB/s at most, so that the writes race it.
copy_rate_mib 1
writer() {
	local i=0
	while [ ! -e /tmp/stop ]; do
		i=$((i + 1))
		echo $i >>/tmp/started
		dd if=/tmp/source of=$G/w/$i bs=64k conv=fsync status=none || break
		echo $i >>/tmp/done
	done
}
frag_sum=$(sha $G/frag)
: >/tmp/done
: >/tmp/started
rm -f /tmp/stop
mkdir $G/w
writer &
wpid=$!
sleep 2
before=$(tail -n 1 /tmp/done)
o=$(subvol snapshot --no-wait tank/vm s2 2>&1)
st=$?
returned=$(tail -n 1 /tmp/started)
check "the copy runs in a background process" running "snapshot --no-wait tank/vm s2"
echo "# $o"
check_eq "snapshot --no-wait returns at once" 0 "$st"
check "it says the copy goes on in the background" grep -q "copying in the background" <<<"$o"
check_fails "the snapshot has no name yet" test -e $P/s2.img
check "the copy is under way" sh -c "dmsetup status subvol-tank-vm | awk '{ print \$NF }' | grep -q /"
# Overwrite a third of the file meanwhile: each range is copied before it
# changes.  Each such write waits for the clone of its own 256 KiB units,
# and this file's are fragmented: under TCG about 70 ms a unit, 1.5 s on
# the debug kernel, where rewriting all 96 MiB kept the other writer's
# fsync waiting for its log write longer than the hung-task limit.
check "overwrite a file during the copy" dd if=/dev/urandom of=$G/frag bs=1M count=32 conv=notrunc,fsync status=none
o=$(subvol snapshot tank/vm s3 2>&1)
check "a second snapshot is refused while one copies" grep -q "another subvol process is copying a snapshot of it" <<<"$o"
check_fails "it left no image" test -e $P/s3.img
copy_rate_mib 32
check "the snapshot appears when complete" wait_file $P/s2.img
check "the background process ends" wait_gone "snapshot --no-wait tank/vm"
touch /tmp/stop
wait $wpid
check "the writer went on during the copy" test "$(tail -n 1 /tmp/done)" -gt "${returned:-0}"
check_eq "the device holds no copy" "-" "$(dmsetup status subvol-tank-vm | awk '{ print $NF }')"
check "list shows it as a snapshot of vm" sh -c "subvol list --noheadings tank | awk '\$2 == \"s2\" && \$3 == \"snapshot\" && \$6 == \"vm\"' | grep -q ."
check "activate the snapshot" subvol activate tank/s2
check "mount it" mount -o ro,nouuid,norecovery /dev/subvol/tank/s2 /mnt/snap
missing=0
for i in $(seq 1 "${before:-0}"); do
	[ "$(sha /mnt/snap/w/$i 2>/dev/null)" = "$(sha /tmp/source)" ] || missing=$((missing + 1))
done
check_eq "every file made durable before the snapshot is in it, whole" 0 "$missing"
late=0
for i in $(seq $((returned + 1)) "$(tail -n 1 /tmp/started)"); do
	[ -e /mnt/snap/w/$i ] && late=$((late + 1))
done
check_eq "no file begun after the command returned is in it" 0 "$late"
check_eq "every file in it is a prefix of what was written" 0 "$(prefixes_mismatch /mnt/snap/w /tmp/source)"
check_eq "the file overwritten during the copy is as it was in the snapshot" "$frag_sum" "$(sha /mnt/snap/frag)"
check "and new in the origin" test "$(sha $G/frag)" != "$frag_sum"
umount /mnt/snap
check "deactivate the snapshot" subvol deactivate tank/s2

# --- a deactivation during the copy: no snapshot, the host's space back
umount $G
check "deactivate vm" subvol deactivate tank/vm
free0=$(free_bytes $HOST)
check "activate vm" subvol activate tank/vm
mount /dev/subvol/tank/vm $G
# Still copying at the deactivation: held to 1 MiB/s (with no limit,
# the copy once ended before its process was looked for).
copy_rate_mib 1
o=$(subvol snapshot --no-wait tank/vm s4 2>&1)
check "snapshot --no-wait" grep -q "copying in the background" <<<"$o"
check "the copy runs in a background process" running "snapshot --no-wait tank/vm s4"
# The copy holds the old data of what is overwritten now: 32 MiB.
dd if=/dev/urandom of=$G/frag bs=1M count=32 conv=notrunc,fsync status=none
echo "# host free: $((free0 >> 20)) MiB inactive before, $(($(free_bytes $HOST) >> 20)) MiB during the copy"
umount $G
check "deactivate vm during the copy" subvol deactivate tank/vm
check "the background process ends" wait_gone "snapshot --no-wait tank/vm"
check_fails "no snapshot was named" test -e $P/s4.img
check_eq "nor any hidden file" "" "$(ls -A $P | grep '^\.' || true)"
free1=$(free_bytes $HOST)
echo "# host free after: $((free1 >> 20)) MiB"
check "the host has its space back (within 16 MiB)" test "$free1" -gt $((free0 - (16 << 20)))
check "the origin activates again" subvol activate tank/vm
check "and mounts" mount /dev/subvol/tank/vm $G
check "with its files" cmp /tmp/source $G/w/1
umount $G
check "xfs_repair -n of the origin" xfs_repair -n /dev/subvol/tank/vm
check "deactivate" subvol deactivate tank/vm tank/small
check "remove everything" subvol remove tank/vm tank/small tank/s0 tank/s1 tank/s2
check_eq "the pool is empty" "" "$(ls -A $P)"
finish
