# 200 snapshots of one mounted volume, one file written between each two:
# every snapshot holds exactly the files written before it, the origin
# stays clean, and all of them go in one remove.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

export SUBVOL_CONFIG_DIR=/tmp/subvol-etc
N=200
host_xfs
P=$HOST/pool G=/mnt/guest
mkdir -p $G /mnt/snap
check "pool create" subvol pool create --name tank $P
check "create with mkfs" subvol create --size 320M --mkfs tank/vm
mount /dev/subvol/tank/vm $G || { finish; exit; }

start=$(date +%s)
fails=0
for i in $(seq 1 $N); do
	echo "file $i" >$G/f$i
	subvol snapshot tank/vm s$i >/tmp/snap.out 2>&1 || { fails=$((fails + 1)); cat /tmp/snap.out; }
done
echo "# $N snapshots in $(($(date +%s) - start)) s"
check_eq "$N snapshots made" 0 $fails
check_eq "list shows $N snapshots" $N "$(subvol list --noheadings tank | awk '$3 == "snapshot"' | wc -l)"
check_eq "each names its origin" $N "$(subvol list --noheadings tank | awk '$3 == "snapshot" && $6 == "vm"' | wc -l)"
check_eq "the origin is still running" "ACTIVE" "$(dmsetup info subvol-tank-vm | awk '/^State:/ { print $2 }')"

# snapshot K holds f1..fK and nothing after
for k in 1 77 $N; do
	check "activate s$k" subvol activate tank/s$k
	mount -o ro,nouuid,norecovery /dev/subvol/tank/s$k /mnt/snap
	check_eq "s$k holds f1..f$k" "$k file $k" "$(ls /mnt/snap | grep -c '^f') $(cat /mnt/snap/f$k)"
	check_fails "s$k does not hold f$((k + 1))" test -e /mnt/snap/f$((k + 1))
	umount /mnt/snap
	check "deactivate s$k" subvol deactivate tank/s$k
done

umount $G
check "xfs_repair -n of the origin" xfs_repair -n /dev/subvol/tank/vm
snaps=$(for i in $(seq 1 $N); do echo tank/s$i; done)
# shellcheck disable=SC2086 # one word per snapshot
check "remove all $N in one command" subvol remove $snaps
check_eq "only the origin is left" "vm.img" "$(ls -A $P)"
check "the origin mounts" mount /dev/subvol/tank/vm $G
check_eq "and has all its files" $N "$(ls $G | grep -c '^f')"
umount $G
check "deactivate it" subvol deactivate tank/vm
finish
