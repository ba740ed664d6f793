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
	HOST_MIB=${1:-}
}

# grow_host MIB: grow the host's dm-linear (host_xfs SIZE_MIB) by MIB and
# its XFS, as lvextend --resizefs would; xfs_growfs's status.
grow_host() {
	HOST_MIB=$((HOST_MIB + $1))
	dmsetup suspend hostdev
	dmsetup reload hostdev --table "0 $((HOST_MIB * SECTORS_PER_MIB)) linear $SCRATCH_DEV 0"
	dmsetup resume hostdev
	xfs_growfs -d "$HOST" >/dev/null
}

# fill_host_but MIB: leave the host about MIB free (0: not a block), in
# files under $HOST/filler (once the pool has given back, a second after
# the guest's last reservation, what it no longer needs).
fill_host_but() {
	local free
	sync
	sleep 2
	mkdir -p "$HOST/filler"
	free=$(($(free_bytes "$HOST") >> 20))
	[ "$free" -gt "$1" ] &&
		dd if=/dev/zero of="$HOST/filler/f$RANDOM" bs=1M count=$((free - $1)) status=none
	[ "$1" -eq 0 ] &&
		dd if=/dev/zero of="$HOST/filler/f$RANDOM" bs=4k conv=fsync status=none 2>/dev/null
	sync
}

# reservation_held: since kmsg_mark, a device logged that it holds a
# space-aware guest's reservation (no_space:queue on a full host).
reservation_held() {
	kmsg_since_mark | grep -q "host full: holding the guest's reservation"
}

# wait_held [SECONDS]: wait up to SECONDS (default 20) for reservation_held.
wait_held() {
	local i
	for i in $(seq 1 $((${1:-20} * 5))); do
		reservation_held && return 0
		sleep 0.2
	done
	return 1
}

# finished PID: the process has ended (or is a zombie).
finished() {
	[ ! -e "/proc/$1" ] || [ "$(sed -n 's/^[0-9]* (.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null)" = Z ]
}

# ended_within PID SECONDS: the process PID ended within SECONDS.
ended_within() {
	local i
	for i in $(seq 1 $(($2 * 5))); do
		finished "$1" && return 0
		sleep 0.2
	done
	return 1
}

# backing FILE SIZE_MIB: a sparse backing file.
backing() {
	mkdir -p "$(dirname "$1")"
	truncate -s "${2}M" "$1"
}

# subvol_table FILE SIZE_MIB [FEATURE...]: the table line of a subvol device.
subvol_table() {
	local file=$1 mib=$2
	shift 2
	if [ $# -eq 0 ]; then
		echo "0 $((mib * SECTORS_PER_MIB)) subvol $file"
	else
		echo "0 $((mib * SECTORS_PER_MIB)) subvol $file $# $*"
	fi
}

# subvol_create NAME FILE SIZE_MIB [FEATURE...]: a subvol device over FILE.
subvol_create() {
	local name=$1
	shift
	dmsetup create "$name" --table "$(subvol_table "$@")"
}

# subvol_reload NAME FILE SIZE_MIB [FEATURE...]: load and resume a new
# table for NAME.
subvol_reload() {
	local name=$1
	shift
	dmsetup reload "$name" --table "$(subvol_table "$@")" && dmsetup resume "$name"
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

# host_shared_sectors FILE: sectors of FILE the host reports shared
# (FIEMAP_EXTENT_SHARED, 0x2000), as xfs_io prints them.
host_shared_sectors() {
	xfs_io -r -c 'fiemap -v' "$1" | awk '
		function hex(s,  i, v) {
			v = 0; s = tolower(substr(s, 3))
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		$3 != "hole" && $NF ~ /^0x/ && int(hex($NF) / 8192) % 2 { s += $4 }
		END { print s + 0 }'
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

# Fields of the INFO status line (include/uapi/linux/dm-subvol.h).
F_BACKED=4 F_HOST_FREE=5 F_GUARANTEE=6 F_NO_SPACE=7 F_MAPPED=8 F_SHARED=9
F_PROMISED=10 F_COW=11 F_CLAIMED=12 F_COMMITTED=13 F_UNCOVERED=14
F_CLIENT=15 F_LOW_WATER=16 F_ACCOUNTING_ERRORS=17 F_COPY=18

# copy_rate_mib MIB_S: the most MiB a second a snapshot copy proceeds
# at (the module parameter; 0: no limit), for a test that needs a copy
# still running at some point, or racing its writes.
copy_rate_mib() {
	echo "$1" >/sys/module/dm_subvol/parameters/copy_rate_mib
}

# wait_copy NAME [SECONDS]: wait until NAME's snapshot copy field is no
# longer a count (at most SECONDS, default 600); prints the field.
wait_copy() {
	local i=0 f
	while f=$(status_field "$1" $F_COPY) && [[ $f == */* ]] && [ $i -lt $((${2:-600} * 5)) ]; do
		sleep 0.2
		i=$((i + 1))
	done
	echo "$f"
}

# no_accounting_errors NAME: a check that the device's client never
# released more than it held promised (status field 17, target 1.2.0).
no_accounting_errors() {
	check_eq "$1: no accounting error" 0 "$(status_field "$1" $F_ACCOUNTING_ERRORS)"
}

# free_bytes DIR: bytes free for an unprivileged writer on DIR's filesystem.
free_bytes() {
	stat -f -c '%a %S' "$1" | awk '{ print $1 * $2 }'
}

# fill DIR SOURCE [ERRFILE]: write SOURCE (50 MiB) as DIR/f1, f2, ... with
# dd until a write fails or 60 files are there.  dd's error is left in
# ERRFILE (default /tmp/fill.err).
fill() {
	local i=0 err=${3:-/tmp/fill.err}
	: >"$err"
	while [ $i -lt 60 ]; do
		i=$((i + 1))
		dd if="$2" of="$1/f$i" bs=1M conv=fsync status=none 2>"$err" || break
	done
}

# guest_checks NAME DEV DIR SOURCE: after a fill of DIR on DEV: unmount,
# repair, mount again, and every acknowledged byte reads back.
guest_checks() {
	local name=$1 dev=$2 dir=$3 written
	written=$(bytes_in "$dir")
	check "$name: umount" umount "$dir"
	check "$name: xfs_repair -n is clean" xfs_repair -n "$dev"
	check "$name: mount again" mount "$dev" "$dir"
	check_eq "$name: every acknowledged byte is there" "$written" "$(bytes_in "$dir")"
	check_eq "$name: every file reads back as written" 0 "$(prefixes_mismatch_fast "$dir" "$4")"
}

# bytes_in DIR: the sizes of DIR's files, added up.
bytes_in() {
	local f s=0
	for f in "$1"/*; do
		[ -f "$f" ] && s=$((s + $(stat -c %s "$f")))
	done
	echo $s
}

# prefixes_mismatch DIR SOURCE: how many files of DIR are not a prefix of SOURCE.
prefixes_mismatch() {
	local f bad=0
	for f in "$1"/*; do
		[ -f "$f" ] || continue
		[ "$(sha "$f")" = "$(sha "$2" "$(stat -c %s "$f")")" ] || bad=$((bad + 1))
	done
	echo $bad
}

# prefixes_mismatch_fast DIR SOURCE: the same count, in a fraction of the
# time under TCG: each size of prefix of SOURCE is hashed once (a fill
# leaves many files of SOURCE's whole size), a whole SOURCE is read
# directly, and a part of it through GNU dd's 1 MiB reads (busybox head -c
# feeds the pipe 4 KiB at a time, 2-3 times slower).
prefixes_mismatch_fast() {
	local f size full bad=0
	local -A want=()
	full=$(stat -c %s "$2")
	for f in "$1"/*; do
		[ -f "$f" ] || continue
		size=$(stat -c %s "$f")
		if [ -z "${want[$size]:-}" ]; then
			if ((size >= full)); then
				want[$size]=$(sha "$2")
			else
				want[$size]=$(dd if="$2" bs=1M count="$size" iflag=count_bytes status=none |
					sha256sum | cut -d' ' -f1)
			fi
		fi
		[ "$(sha "$f")" = "${want[$size]}" ] || bad=$((bad + 1))
	done
	echo $bad
}

# nonzero_bytes FILE_OR_DEV [BYTES]: how many bytes of it (of its first
# BYTES) are not zero; 0 means it reads as zeros.  Under TCG this is some
# ten times faster than hashing it and a stream of zeros to compare with.
nonzero_bytes() {
	if [ -n "${2:-}" ]; then
		echo $(($(dd if="$1" bs=1M count="$2" iflag=count_bytes status=none | tr -d '\000' | wc -c)))
	else
		echo $(($(tr -d '\000' <"$1" | wc -c)))
	fi
}

# nothing_left: the checks that a test left nothing behind: no device
# but the host's, the module unloads (nothing holds it), and the host
# filesystem unmounts (no backing file open).
nothing_left() {
	check "no device left over" test -z "$(dmsetup ls | grep -v '^No devices' | grep -v hostdev)"
	check "module unloads: nothing holds it" rmmod dm_subvol
	check "host filesystem unmounts: no file left open" umount "$HOST"
}

# kernel_errors: lines of the kernel log since the mark that mean a guest
# lost data or a device failed I/O.
kernel_errors() {
	kmsg_since_mark | grep -aiE 'I/O error|writeback error|shut ?down|corrupt|log I/O|Buffer I/O|failed on /mnt|lost async page write' || true
}

# running TEXT: a process runs whose command line holds TEXT (the VM has
# no pgrep).
running() {
	local f
	for f in /proc/[0-9]*/cmdline; do
		[ "$f" = /proc/$$/cmdline ] && continue
		{ tr '\0' ' ' <"$f"; } 2>/dev/null | grep -qF -- "$1" && return 0
	done
	return 1
}
