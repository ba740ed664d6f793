# Two hundred create/remove cycles leak nothing: no workqueue threads, no
# open backing files (the host unmounts), no module references (rmmod
# works), and no growth of kernel slab memory beyond noise.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs
backing "$HOST/img" 64
TABLE="0 $((64 * SECTORS_PER_MIB)) subvol $HOST/img"

slab_kb() { awk '/^Slab:/ { print $2 }' /proc/meminfo; }

# Warm up caches (dentries, dm's own structures) before measuring.
for i in $(seq 1 20); do dmsetup create cyc --table "$TABLE"; dmsetup remove cyc; done
sync; echo 3 >/proc/sys/vm/drop_caches
slab_before=$(slab_kb)

# A leak of 4 KiB or more a cycle shows above the noise (a few hundred KiB).
cycles=200
failed=0
for i in $(seq 1 $cycles); do
	dmsetup create cyc --table "$TABLE" && dmsetup remove cyc || failed=$((failed + 1))
done
check_eq "$cycles create/remove cycles" 0 $failed

sync; echo 3 >/proc/sys/vm/drop_caches
slab_after=$(slab_kb)
check "slab memory grew by less than 4 KiB a cycle ($slab_before -> $slab_after KiB)" \
	test $((slab_after - slab_before)) -lt $((cycles * 4))
check_eq "no dm-subvol workqueue threads left" 0 "$(ps | grep -c '[d]m-subvol')"
check_eq "module reference count" 0 "$(awk '$1 == "dm_subvol" { print $3 }' /proc/modules)"
check "host filesystem unmounts (no open backing file)" umount "$HOST"
check "module unloads" rmmod dm_subvol

finish
