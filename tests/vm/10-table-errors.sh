# Every way a subvol table line can be wrong is refused by the constructor
# with its own message, and refusing leaves nothing behind: the good
# device keeps its table and data, and the module can be unloaded at the end.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

host_xfs
backing "$HOST/img" 64
MIB64=$((64 * SECTORS_PER_MIB))

# expect_refusal NAME MESSAGE CMD...: CMD fails and the kernel says MESSAGE.
# Returns non-zero if CMD was accepted, for the caller to clean up.
expect_refusal() {
	local name=$1 message=$2
	shift 2
	kmsg_mark
	if "$@" 2>/dev/null; then
		check_eq "$name: refused" refused accepted
		return 1
	fi
	check "$name: kernel says '$message'" grep -qF "subvol: $message" <<<"$(kmsg_since_mark)"
}

# refuse NAME MESSAGE TABLE: creating a device with TABLE is refused.
refuse() {
	expect_refusal "$1" "$2" dmsetup create bad --table "$3" || true
	dmsetup remove bad 2>/dev/null || true
}

refuse "no arguments" "Invalid argument count" "0 $MIB64 subvol"
refuse "missing file" "Backing file not found" "0 $MIB64 subvol $HOST/nothing"
refuse "missing directory" "Backing file not found" "0 $MIB64 subvol $HOST/nodir/img"
refuse "relative path" "Backing file path must be absolute" "0 $MIB64 subvol img"
refuse "directory" "Backing file is not a regular file" "0 $MIB64 subvol $HOST"
refuse "block device" "Backing file is not a regular file" "0 $MIB64 subvol $SCRATCH_DEV"
mkfifo "$HOST/fifo"
refuse "fifo" "Backing file is not a regular file" "0 $MIB64 subvol $HOST/fifo"

backing "$HOST/locked" 64
xfs_io -r -c "chattr +i" "$HOST/locked"
refuse "immutable file" "Permission denied opening backing file" "0 $MIB64 subvol $HOST/locked"
xfs_io -r -c "chattr -i" "$HOST/locked"

# An active swap file: opening it for writing is allowed, and punching a
# hole in it fails with ETXTBSY; the constructor names the cause itself
# (review item 50: it used to say "Cannot punch holes in backing file").
dd if=/dev/zero of="$HOST/swap" bs=1M count=64 status=none
mkswap "$HOST/swap" >/dev/null 2>&1
if check "swapon of a file on the host" swapon "$HOST/swap"; then
	refuse "active swap file" "Backing file is busy (a swap file or being executed)" \
		"0 $MIB64 subvol $HOST/swap"
	swapoff "$HOST/swap"
fi
rm -f "$HOST/swap"

refuse "file too short" "Backing file is shorter than the target length" \
	"0 $((MIB64 + 8)) subvol $HOST/img"
refuse "length not a block multiple" \
	"Length is not a multiple of the backing filesystem block size" \
	"0 $((MIB64 - 1)) subvol $HOST/img"

# ramfs has no direct I/O (tmpfs has none in 6.1, but some since 6.6).
mkdir -p /mnt/ramfs /mnt/tmpfs
mount -t ramfs ramfs /mnt/ramfs
truncate -s 64M /mnt/ramfs/img
refuse "no direct I/O (ramfs)" "Backing filesystem does not support direct I/O" \
	"0 $MIB64 subvol /mnt/ramfs/img"
umount /mnt/ramfs
mount -t tmpfs -o size=80m tmpfs /mnt/tmpfs

# vfat has direct I/O and fallocate, but cannot punch holes.
truncate -s 100M /mnt/tmpfs/vfat.img
loopdev=$(losetup --find --show /mnt/tmpfs/vfat.img)
mkfs.vfat "$loopdev" >/dev/null 2>&1
mkdir -p /mnt/vfat
mount -t vfat "$loopdev" /mnt/vfat
truncate -s 64M /mnt/vfat/img
refuse "no hole punching (vfat)" "Backing filesystem does not support hole punching" \
	"0 $MIB64 subvol /mnt/vfat/img"
# A read-only table needs no hole punching.
check "read-only table on vfat accepted" \
	dmsetup create vfatro --readonly --table "0 $MIB64 subvol /mnt/vfat/img"
dmsetup remove vfatro 2>/dev/null || true

mount -o remount,ro /mnt/vfat
refuse "read-only host filesystem" "Backing file is on a read-only filesystem" \
	"0 $MIB64 subvol /mnt/vfat/img"
umount /mnt/vfat
losetup -d "$loopdev"

# ext4 has everything the data path needs, but allocates by rules the
# space guarantee does not know.
truncate -s 100M /mnt/tmpfs/ext4.img
mkfs.ext4 -q -F /mnt/tmpfs/ext4.img
mkdir -p /mnt/ext4
mount -o loop /mnt/tmpfs/ext4.img /mnt/ext4
truncate -s 64M /mnt/ext4/img
refuse "guarantee:full on an ext4 host" "guarantee:full needs an XFS host filesystem: use guarantee:none" \
	"0 $MIB64 subvol /mnt/ext4/img"
check "guarantee:none on an ext4 host accepted" \
	dmsetup create ext4none --table "0 $MIB64 subvol /mnt/ext4/img 1 guarantee:none"
dmsetup remove ext4none 2>/dev/null || true
umount /mnt/ext4

# The host must allocate one block per block written: no extent size
# hint, and the CoW extent size is kept at one block.
backing "$HOST/hinted" 64
xfs_io -c "extsize 1m" "$HOST/hinted"
refuse "extent size hint with guarantee:full" \
	"Backing file has an extent size hint: clear it or use guarantee:none" \
	"0 $MIB64 subvol $HOST/hinted"
check "extent size hint with guarantee:none accepted" \
	dmsetup create hintnone --table "0 $MIB64 subvol $HOST/hinted 1 guarantee:none"
dmsetup remove hintnone 2>/dev/null || true
backing "$HOST/cow" 64
xfs_io -c "cowextsize 1m" "$HOST/cow"
check "a CoW extent size hint does not refuse the table" subvol_create cow "$HOST/cow" 64
check_eq "the table set the CoW extent size to one block" "[4096] $HOST/cow" \
	"$(xfs_io -c cowextsize "$HOST/cow")"
xfs_io -c "cowextsize 2m" "$HOST/cow"
sleep 1.2
kmsg_mark
dd if=/dev/zero of=/dev/mapper/cow bs=4k count=1 oflag=direct status=none
check_eq "a write that allocates sets it back after a host change" "[4096] $HOST/cow" \
	"$(xfs_io -c cowextsize "$HOST/cow")"
xfs_io -c "cowextsize 2m" "$HOST/cow"
dmsetup suspend cow
check "resume sets it back too" dmsetup resume cow
check_eq "after resume: one block" "[4096] $HOST/cow" "$(xfs_io -c cowextsize "$HOST/cow")"
dmsetup remove cow

# Features.
refuse "feature count not a number" "Invalid feature count" \
	"0 $MIB64 subvol $HOST/img x ignore_discard"
refuse "feature count too large" "Invalid feature count" \
	"0 $MIB64 subvol $HOST/img 2 ignore_discard"
refuse "feature count above 16" "Invalid feature count" \
	"0 $MIB64 subvol $HOST/img 17 $(printf 'ignore_discard %.0s' {1..17})"
refuse "arguments after features" "Too many arguments after the features" \
	"0 $MIB64 subvol $HOST/img 1 ignore_discard extra"
refuse "unknown feature" "Unknown feature" "0 $MIB64 subvol $HOST/img 1 discard_please"
refuse "duplicate feature" "Feature given twice" \
	"0 $MIB64 subvol $HOST/img 2 ignore_discard ignore_discard"
refuse "duplicate policy" "Feature given twice" \
	"0 $MIB64 subvol $HOST/img 2 guarantee:none guarantee:full"
refuse "ignore_discard with a value" "Invalid feature value: ignore_discard takes none" \
	"0 $MIB64 subvol $HOST/img 1 ignore_discard:yes"
refuse "unknown guarantee" "Invalid feature value: guarantee is full or none" \
	"0 $MIB64 subvol $HOST/img 1 guarantee:most"
refuse "no_space without a value" "Invalid feature value: no_space is error or queue" \
	"0 $MIB64 subvol $HOST/img 1 no_space"
refuse "timeout not a number" "Invalid feature value: no_space_timeout is 1 to 3600 seconds" \
	"0 $MIB64 subvol $HOST/img 2 no_space:queue no_space_timeout:soon"
refuse "timeout out of range" "Invalid feature value: no_space_timeout is 1 to 3600 seconds" \
	"0 $MIB64 subvol $HOST/img 2 no_space:queue no_space_timeout:3601"
refuse "timeout 0" "Invalid feature value: no_space_timeout is 1 to 3600 seconds" \
	"0 $MIB64 subvol $HOST/img 2 no_space:queue no_space_timeout:0"
refuse "timeout without queue" "no_space_timeout needs no_space:queue" \
	"0 $MIB64 subvol $HOST/img 1 no_space_timeout:5"
refuse "low water not a number" "Invalid feature value: low_water is a number of sectors" \
	"0 $MIB64 subvol $HOST/img 1 low_water:-1"
# Each refusal is logged once, by dm, as ti->error (review item 41: the
# target logged a bad or unknown feature a second time itself).
kmsg_mark
dmsetup create bad --table "0 $MIB64 subvol $HOST/img 1 guarantee:most" 2>/dev/null || true
dmsetup remove bad 2>/dev/null || true
check_eq "a bad feature value is logged once" 1 \
	"$(grep -c 'guarantee:most\|Invalid feature value' <<<"$(kmsg_since_mark)")"
# Every feature at once, in any case, is accepted and printed canonically.
check "all features accepted" dmsetup create allfeat --table \
	"0 $MIB64 subvol $HOST/img 5 LOW_WATER:2048 Guarantee:none no_space:QUEUE ignore_discard no_space_timeout:5"
check_eq "all features in the table" \
	"0 $MIB64 subvol $HOST/img 5 ignore_discard guarantee:none no_space:queue no_space_timeout:5 low_water:2048" \
	"$(dmsetup table allfeat)"
dmsetup remove allfeat 2>/dev/null || true

# Sharing: one file, one device.
check "good device created" subvol_create good "$HOST/img" 64
dd if=/dev/urandom of=/dev/mapper/good bs=1M count=4 oflag=direct status=none
before=$(sha /dev/mapper/good)
refuse "file used by another device" "Backing file is already used by another subvol device" \
	"0 $MIB64 subvol $HOST/img"
backing "$HOST/img2" 64
twice_table() {
	printf '0 %s subvol %s\n%s %s subvol %s\n' "$MIB64" "$HOST/img2" "$MIB64" "$MIB64" "$HOST/img2" |
		dmsetup create twice
}
expect_refusal "one table naming a file twice" \
	"Backing file is already used by another subvol device" twice_table ||
	dmsetup remove twice

# A reload of the same device with the same file (a resize) is allowed.
check "reload of the same device with its own file" \
	dmsetup reload good --table "0 $MIB64 subvol $HOST/img 1 ignore_discard"
check "resume after reload" dmsetup resume good
check_eq "data intact after reload" "$before" "$(sha /dev/mapper/good)"

# A file on a filesystem on the device itself, directly or through another
# subvol device, would send the device's I/O back into itself.
backing "$HOST/outer" 512
subvol_create outer "$HOST/outer" 512
mkfs.xfs -q /dev/mapper/outer
mkdir -p /mnt/outer
mount /dev/mapper/outer /mnt/outer
backing /mnt/outer/inner 400
expect_refusal "file on the device itself" "Backing file lives on the device itself" \
	dmsetup reload outer --table "0 $((400 * SECTORS_PER_MIB)) subvol /mnt/outer/inner" || dmsetup clear outer
check "nested device on a file inside another is fine" \
	subvol_create inner /mnt/outer/inner 400
mkfs.xfs -q /dev/mapper/inner
mkdir -p /mnt/inner
mount /dev/mapper/inner /mnt/inner
backing /mnt/inner/deep 512
expect_refusal "file on the device through another subvol" "Backing file lives on the device itself" \
	dmsetup reload outer --table "0 $((512 * SECTORS_PER_MIB)) subvol /mnt/inner/deep" || dmsetup clear outer
umount /mnt/inner
dmsetup remove inner
umount /mnt/outer
dmsetup remove outer

check_eq "good device untouched by the refusals" "$before" "$(sha /dev/mapper/good)"
check_eq "good device's table" "0 $MIB64 subvol $HOST/img 1 ignore_discard" \
	"$(dmsetup table good)"
dmsetup remove good
umount /mnt/tmpfs
nothing_left

finish
