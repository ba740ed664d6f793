# A 16 TiB volume: its block map is small while the volume is sparse
# (map_bytes, the module parameter), the whole-map walks of activation,
# prepare_snapshot, rescan_sharing and release go a chunk at a time
# without a soft lockup or an RCU stall, and data scattered over the 16 TiB
# is accounted (mapped) and read back.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs
IMG=$HOST/img
truncate -s 16T $IMG
# 64 MiB of data in 4096 runs of 16 KiB spread over the 16 TiB.
dd if=/dev/urandom of=/tmp/run bs=16k count=1 status=none
for i in $(seq 0 4095); do
	echo "pwrite -q -i /tmp/run $((i << 32)) 16k"
done | xfs_io $IMG
sync
echo 3 >/proc/sys/vm/drop_caches
map0=$(cat /sys/module/dm_subvol/parameters/map_bytes)
dmesg -c >/dev/null

start=$(date +%s)
check "activate the 16 TiB volume" subvol_create vol $IMG $((16 << 20))
echo "# activation: $(($(date +%s) - start)) s"
bytes=$(($(cat /sys/module/dm_subvol/parameters/map_bytes) - map0))
echo "# map: $bytes bytes for 16 TiB, 4096 scattered runs"
check "its map takes at most 24 MiB (4096 split groups and the group array)" \
	test "$bytes" -le $((24 << 20))
# Status counts sectors: 4096 runs of 32.
check_eq "mapped: the 4096 runs written (sectors)" 131072 "$(status_field vol $F_MAPPED)"
check "a write at the far end" sh -c "dd if=/tmp/run of=/dev/mapper/vol bs=16k seek=$(((16 << 26) - 1)) count=1 oflag=direct status=none"
check_eq "mapped: one run more" 131104 "$(status_field vol $F_MAPPED)"
check "it reads back" cmp <(dd if=/dev/mapper/vol bs=16k skip=$(((16 << 26) - 1)) count=1 iflag=direct status=none) /tmp/run
check "a run in the middle reads back" cmp <(dd if=/dev/mapper/vol bs=16k skip=$((2048 << 18)) count=1 iflag=direct status=none) /tmp/run

start=$(date +%s)
dmsetup suspend vol
check "prepare_snapshot walks the whole map while suspended" dmsetup message vol 0 prepare_snapshot
check "clone" cp --reflink=always $IMG $HOST/snap
dmsetup resume vol
echo "# suspended for $(($(date +%s) - start)) s"
check_eq "every mapped block counts as shared" "$(status_field vol $F_MAPPED)" "$(status_field vol $F_SHARED)"
# Truncated first: XFS frees an unlinked file's blocks in the background.
truncate -s 0 $HOST/snap
rm -f $HOST/snap
sync
check "rescan_sharing after the clone went" dmsetup message vol 0 rescan_sharing
check_eq "nothing is shared any more" 0 "$(status_field vol $F_SHARED)"
check "remove" dmsetup remove vol
check_eq "the map's memory is given back" "$map0" "$(cat /sys/module/dm_subvol/parameters/map_bytes)"
check_eq "no soft lockup, RCU stall or hung task" 0 \
	"$(dmesg | grep -Eci 'soft lockup|rcu.*stall|blocked for more than')"
finish
