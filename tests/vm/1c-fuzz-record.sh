# The sharing record (trusted.dm-subvol.shared, dm-subvol-record.c), fed
# to the kernel corrupt, with an oracle. An activation reads the record
# only when it cannot read the host's extent map; here the table load runs
# under an address-space limit that leaves dmsetup room to run but not
# the 14 KiB the extent walk maps (the walk fails with -ENOMEM, logged).
#
# - A record with one header defect (magic, version, block size, range
#   count, length, inode, generation, layout) is not trusted: every data
#   block counts as shared, and the kernel log says why.
# - A record with a valid header and random ranges (out of the file,
#   overflowing, empty, group edges, "allocated" flags) is applied as
#   written, in order: mapped and shared are what a per-block model of
#   the file gives, the copy-on-write reserve follows shared.
# Each time the volume's data is untouched, rescan_sharing brings shared
# back to the host's own count, and nothing is left at the end.
#
#   1c-fuzz-record.sh [CASES [SEED]]
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

CASES=${1:-8}
SEED=${2:-$(($(date +%s) / 86400))}
echo "# seed $SEED, $CASES random records: tests/vm/1c-fuzz-record.sh $CASES $SEED repeats this run"
RANDOM=$SEED

ATTR=trusted.dm-subvol.shared
MIB=96
NR_BLOCKS=$((MIB * 256))
GROUP=20480 # SUBVOL_MAP_GROUP_BLOCKS: the map splits at its edges
host_xfs
backing "$HOST/img" $MIB
# Data: blocks [100, 2148), [20470, 20500) across the group edge, and the
# last block; the rest holes. Direct writes: no unwritten extents.
write_blocks() { dd if=/dev/urandom of="$HOST/img" bs=4k seek="$1" count="$2" conv=notrunc oflag=direct status=none; }
write_blocks 100 2048
write_blocks 20470 30
write_blocks $((NR_BLOCKS - 1)) 1
sync
# A clone, rewritten but for blocks 100-1099: those stay shared. (The
# clone, not the image: a copy-on-write in the image would leave its
# copy-on-write fork extents, which SEEK_DATA counts as data for a while.)
cp --reflink=always "$HOST/img" "$HOST/clone"
for range in "1100 1048" "20470 30" "$((NR_BLOCKS - 1)) 1"; do
	set -- $range
	dd if=/dev/urandom of="$HOST/clone" bs=4k seek="$1" count="$2" conv=notrunc oflag=direct status=none
done
# What the map starts from: the host's data ranges (SEEK_DATA), in blocks,
# "start count ...": more than was written, the clone's copy-on-write
# having left the host its own extent boundaries.
DATA=$(xfs_io -r -c 'seek -a -r 0' "$HOST/img" | awk -v size=$((MIB << 20)) '
	$1 == "DATA" { d = $2 }
	$1 == "HOLE" && d != "" { printf "%d %d ", d / 4096, ($2 - d) / 4096; d = "" }
	END { if (d != "") printf "%d %d", d / 4096, (size - d) / 4096 }')
echo "# host data ranges (block count ...): $DATA"
host_shared=$(host_shared_sectors "$HOST/img")
check_eq "the host shares blocks 100-1099 of the image" 8000 "$host_shared"
img_sha=$(sha "$HOST/img")

subvol_create vol "$HOST/img" $MIB
check_eq "an activation that reads the extent map counts the host's sharing" "$host_shared" \
	"$(status_field vol "$F_SHARED")"
dmsetup remove vol
good=$(getfattr --absolute-names -e hex -n $ATTR "$HOST/img" 2>/dev/null | sed -n "s/^$ATTR=0x//p")
check "the removal wrote a sharing record" test -n "$good"
HEADER=${good:0:80} # magic version block_size nr_ranges ino generation pad layout

# le VALUE BYTES: VALUE (bash's signed 64-bit) as little-endian hex.
le() {
	local h out="" i
	h=$(printf "%0$(($2 * 2))x" "$1")
	h=${h: -$(($2 * 2))}
	for ((i = ${#h} - 2; i >= 0; i -= 2)); do out+=${h:i:2}; done
	echo "$out"
}
# field OFFSET BYTES [HEX]: a header with the field at OFFSET replaced.
field() { echo "${HEADER:0:$(($1 * 2))}$3${HEADER:$((($1 + $2) * 2))}"; }
HEADER_NR=$(le 0 4)
set_record() { setfattr -n $ATTR -v "0x$1" "$HOST/img"; }

# Load the table with the address-space limit (KiB) that lets dmsetup run
# and the extent walk fail: the smallest that loads, found once by
# bisection, then a step up when a load needs it.
load_at() {
	(ulimit -v "$1" && exec dmsetup load vol --table "0 $((MIB * 2048)) subvol $HOST/img") >/dev/null 2>&1
}
# Each load that succeeds is cleared: a second table on the same file
# would share the first one's accounting and not read anything.
find_limit() {
	local lo=1024 hi=65536 mid
	dmsetup create vol --notable
	while ((hi - lo > 4)); do
		mid=$(((lo + hi) / 2))
		if load_at $mid; then
			hi=$mid
			dmsetup clear vol
		else
			lo=$mid
		fi
	done
	dmsetup remove vol
	LIMIT=$hi
	echo "# the table loads under a ${LIMIT} KiB address-space limit"
}
find_limit
load_limited() {
	local kb
	dmsetup create vol --notable || return 1
	for kb in $LIMIT $((LIMIT + 8)) $((LIMIT + 16)) $((LIMIT + 32)); do
		load_at "$kb" && dmsetup resume vol && return
	done
	dmsetup remove vol
	return 1
}

# activate_with RECORD-HEX|"" WHAT: activate the volume from that record.
activate_with() {
	if [ -n "$1" ]; then set_record "$1"; else setfattr -x $ATTR "$HOST/img" 2>/dev/null; fi
	kmsg_mark
	if ! load_limited; then
		check "$2: the volume activates" false
		return 1
	fi
	# Without this the case tested nothing: the extent map was read.
	check "$2: the activation read the record (extent map unreadable: -12)" \
		grep -q "subvol: .*cannot read the extent map of img: -12" <(kmsg_since_mark) && return
	dmsetup remove vol
	return 1
}

# expect WHAT MAPPED SHARED [IN-HOLES]: the status against the model, then
# the data, a rescan back to the host's count, and the removal. The rescan
# reads the host's extents only: blocks the record called allocated and
# shared where the host has a hole (IN-HOLES sectors) stay counted shared,
# more reserve, never less, until an activation reads the extent map.
expect() {
	local st
	st=$(dmsetup status vol)
	check_eq "$1: mapped and shared sectors" "$2 $3" "$(status_field vol "$F_MAPPED") $(status_field vol "$F_SHARED")" ||
		echo "#   status: $st"
	check_eq "$1: the copy-on-write reserve follows shared" "$(status_field vol "$F_SHARED")" \
		"$(status_field vol "$F_COW")"
	check "$1: rescan_sharing" dmsetup message vol 0 rescan_sharing
	check_eq "$1: after it, shared is the host's (and ${4:-0} in host holes)" $((host_shared + ${4:-0})) \
		"$(status_field vol "$F_SHARED")"
	# Reading it all takes seconds under TCG: every fourth case.
	((++cases_checked % 4)) ||
		check_eq "$1: the volume reads the image's data" "$img_sha" "$(sha /dev/mapper/vol)"
	check "$1: removed" dmsetup remove vol
}

# model RANGES...: "mapped shared shared-in-host-holes" in sectors after applying
# "start len allocated" ranges in order to the image's layout.
model() {
	printf '%s\n' "$@" | awk -v nr=$NR_BLOCKS -v data="$DATA" '
		BEGIN { n = split(data, d, " ")
			for (i = 1; i < n; i += 2)
				for (b = d[i]; b < d[i] + d[i + 1]; b++) data[b] = s[b] = 1 }	# 1 data, 2 shared
		NF == 3 { start = $1; len = $2
			if (start >= nr) next
			if (len > nr - start) len = nr - start
			for (b = start; b < start + len; b++)
				if ($3 && !(b in s)) s[b] = 1
				else if (!$3 && (b in s) && s[b] == 1) s[b] = 2 }
		END { for (b in s) { m++; if (s[b] == 2) { sh++; if (!(b in data)) hole++ } }
			print m * 8, sh * 8, hole * 8 }'
}
cases_checked=0
DATA_SECTORS=$(model | cut -d' ' -f1) # in sectors

# (a) The record as the kernel wrote it, and one with no ranges.
activate_with "$good" "the kernel's own record" &&
	expect "the kernel's own record" "$DATA_SECTORS" "$host_shared"
activate_with "$(field 12 4 "$HEADER_NR")" "a record with no ranges" &&
	expect "a record with no ranges" "$DATA_SECTORS" 0

# (b) One header defect each: not trusted, every data block shared.
ino=$(stat -c %i "$HOST/img")
good_nr=$((${#good} / 32 - 2))
generation=$((0x${good:54:2}${good:52:2}${good:50:2}${good:48:2}))
layout=$((0x${good:78:2}${good:76:2}${good:74:2}${good:72:2}${good:70:2}${good:68:2}${good:66:2}${good:64:2}))
short=${good:0:$((${#good} - 2))}
while IFS='|' read -r what why rec; do
	[ -n "$what" ] || continue
	activate_with "$rec" "$what" || continue
	check "$what: the log says: $why" \
		grep -q "subvol: [^ ]*: sharing record of img: $why; counting all $((DATA_SECTORS / 8)) data blocks as shared" \
		<(kmsg_since_mark)
	expect "$what" "$DATA_SECTORS" "$DATA_SECTORS"
done <<EOF
no record|none|
a wrong magic|not valid|$(field 0 4 "$(le 0x53565349 4)")${good:80}
version 1|not valid|$(field 4 4 "$(le 1 4)")${good:80}
version 3|not valid|$(field 4 4 "$(le 3 4)")${good:80}
a block size of 512|not valid|$(field 8 4 "$(le 512 4)")${good:80}
a block size of 8192|not valid|$(field 8 4 "$(le 8192 4)")${good:80}
one range more than it holds|not valid|$(field 12 4 "$(le $((good_nr + 1)) 4)")${good:80}
4001 ranges|not valid|$(field 12 4 "$(le 4001 4)")${good:80}
a byte more|not valid|${good}00
a byte short|not valid|$short
a short header|not valid|${HEADER:0:78}
one byte|not valid|53
another inode|copied from another file|$(field 16 8 "$(le $((ino + 1)) 8)")${good:80}
another generation|copied from another file|$(field 24 4 "$(le $((generation ^ 1)) 4)")${good:80}
another layout|the file changed since it was written|$(field 32 8 "$(le $((layout ^ 1)) 8)")${good:80}
EOF

# (c) A valid header and random ranges, applied in order.
ALLOCATED=$((1 << 63))
rnd() { echo $(((RANDOM << 15 | RANDOM) % $1)); }
pick_start() {
	case $((RANDOM % 8)) in
	0) echo $((NR_BLOCKS - 1 - RANDOM % 2)) ;;
	1) echo $((GROUP - 2 + RANDOM % 4)) ;;
	2) echo $((NR_BLOCKS + RANDOM % 3)) ;;
	3) echo $(((1 << 63) - 1 - RANDOM % 2)) ;; # and 2^63 as -1 - 2^63 - ... below
	4) echo -1 ;;                               # 2^64 - 1
	*) rnd $NR_BLOCKS ;;
	esac
}
pick_len() {
	case $((RANDOM % 8)) in
	0) echo 0 ;;
	1) echo 1 ;;
	2) echo $NR_BLOCKS ;;
	3) echo $(((1 << 63) - 1)) ;; # start + len overflows
	*) rnd 3000 ;;
	esac
}
for ((c = 1; c <= CASES; c++)); do
	n=$((RANDOM % 4 ? RANDOM % 12 : RANDOM % 200))
	hex="" ranges=()
	for ((i = 0; i < n; i++)); do
		start=$(pick_start) len=$(pick_len) alloc=$((RANDOM % 3 == 0))
		hex+=$(le "$start" 8)$(le $((len | (alloc ? ALLOCATED : 0))) 8)
		# awk reads numbers as doubles: a start past 2^53 is past the file all the same.
		ranges+=("$(printf '%u' "$start") $len $alloc")
	done
	what="random record $c ($n ranges)"
	activate_with "$(field 12 4 "$(le "$n" 4)")$hex" "$what" || continue
	echo "# $what: $(printf '%s, ' "${ranges[@]}")"
	read -r m s h < <(model "${ranges[@]}")
	expect "$what" "$m" "$s" "$h"
done

# The last removal wrote a record of what the volume knew: a new one.
dmsetup create vol --table "0 $((MIB * 2048)) subvol $HOST/img"
check_eq "a normal activation at the end: shared is the host's" "$host_shared" "$(status_field vol "$F_SHARED")"
no_accounting_errors vol
dmsetup remove vol
check_eq "the image's data never changed" "$img_sha" "$(sha "$HOST/img")"
nothing_left
finish
