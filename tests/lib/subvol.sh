# Helpers for in-VM tests of the subvol target; source after vmtest.sh.
#
# The host filesystem is an XFS on the scratch disk, mounted at $HOST.

HOST=/mnt/host
SECTORS_PER_MIB=2048

# host_xfs [SIZE_MIB]: make and mount the host XFS, on the whole scratch
# disk or on a dm-linear of its first SIZE_MIB (a small host, to run out).
host_xfs() {
	local dev=$SCRATCH_DEV
	if [ -n "${1:-}" ]; then
		dmsetup create hostdev --table "0 $(($1 * SECTORS_PER_MIB)) linear $SCRATCH_DEV 0"
		dev=/dev/mapper/hostdev
	fi
	mkfs.xfs -q -f "$dev"
	mkdir -p "$HOST"
	mount -t xfs "$dev" "$HOST"
}

# backing FILE SIZE_MIB: a sparse backing file.
backing() {
	mkdir -p "$(dirname "$1")"
	truncate -s "${2}M" "$1"
}

# subvol_create NAME FILE SIZE_MIB [FEATURE...]: a subvol device over FILE.
subvol_create() {
	local name=$1 file=$2 mib=$3 table
	shift 3
	table="0 $((mib * SECTORS_PER_MIB)) subvol $file"
	[ $# -eq 0 ] || table="$table $# $*"
	dmsetup create "$name" --table "$table"
}

# status_field NAME INDEX: a field of the target's INFO status, counted
# from 0 after "<start> <length> subvol" (the uapi header's enum order).
status_field() {
	dmsetup status "$1" | awk -v i="$2" '{ print $(i + 4) }'
}

# queue_dir NAME: the sysfs queue directory of a dm device (no udev here,
# so /dev/mapper/NAME is a node, not a link to dm-N).
queue_dir() {
	echo "/sys/block/$(dmsetup info -c --noheadings -o blkdevname "$1")/queue"
}

# allocated_bytes FILE: bytes the host has allocated to FILE.
allocated_bytes() {
	echo $(($(stat -c '%b' "$1") * 512))
}

# kmsg_mark: a marker in the kernel log; kmsg_since_mark prints what the
# kernel logged after the last marker.
kmsg_mark() {
	KMSG_MARK="subvol-test-mark-$RANDOM$RANDOM"
	echo "$KMSG_MARK" >/dev/kmsg
}
kmsg_since_mark() {
	dmesg | sed -n "/$KMSG_MARK/,\$p" | tail -n +2
}

# sha FILE_OR_DEV [BYTES]: checksum of the first BYTES (default: all).
sha() {
	if [ -n "${2:-}" ]; then
		head -c "$2" "$1" | sha256sum | cut -d' ' -f1
	else
		sha256sum <"$1" | cut -d' ' -f1
	fi
}
