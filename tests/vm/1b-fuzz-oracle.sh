# Table lines and messages for the subvol target with an oracle, seeded.
# Each table line is valid by construction, or has exactly one defect of
# a known kind (the constructor's refusals in subvol.rst, "Table line"),
# and each message likewise ("Messages").  A valid line must make a
# device of its length whose `dmsetup table` is the line with the
# features in canonical form and whose status has its mode, block size,
# length and policies, and which is then removed; a defective line must
# be refused with its kind's message in the kernel log.  A valid message
# must succeed (a reserve and a release move the promised sectors by as
# much) or be refused as documented (snapshot_end with no copy: EINVAL);
# a defective one must fail with its kind's error number and kernel log
# line.  The kinds are dealt from shuffled decks, so that a run of a deck
# or more has each at least once.  Every mismatch is a "not ok" naming
# the line, to repeat with the seed; the counts per kind are printed.  At
# the end no device is left, the module unloads, the host unmounts, and
# the kernel log has no BUG, WARNING or Oops.  scripts/fuzz-oracle runs
# it longer.
#
#   1b-fuzz-oracle.sh [LINES [SEED]]
#
# LINES table lines and as many messages (default 40: a deck of each).
# shellcheck source=SCRIPTDIR/../lib/vmtest.sh
. /src/tests/lib/vmtest.sh
# shellcheck source=SCRIPTDIR/../lib/subvol.sh
. /src/tests/lib/subvol.sh
# shellcheck source=SCRIPTDIR/../lib/fuzz.sh
. /src/tests/lib/fuzz.sh

LINES=${1:-40}
SEED=${2:-$(($(date +%s) / 86400))}
echo "# seed $SEED, $LINES table lines and messages: tests/vm/1b-fuzz-oracle.sh $LINES $SEED repeats this run"
RANDOM=$SEED
MIB=1048576

# The fixtures: files of every kind the doc names, on the XFS host and
# on other filesystems.
host_xfs
XFS_BS=$(($(stat -f -c %S "$HOST") / 512))
backing "$HOST/a.img" 64
truncate -s $((64 * MIB + 4096 + 512)) "$HOST/odd.img"
backing "$HOST/back\\slash.img" 16
ln -s a.img "$HOST/link.img"
backing "$HOST/hint.img" 64
xfs_io -c "extsize 1m" "$HOST/hint.img"
backing "$HOST/held.img" 64
subvol_create held "$HOST/held.img" 64
ln -s held.img "$HOST/heldlink.img"
backing "$HOST/immutable.img" 64
xfs_io -r -c "chattr +i" "$HOST/immutable.img"
mkdir -p "$HOST/dir" "$HOST/rodir" /mnt/ro /mnt/tmpfs /mnt/vfat /mnt/ext4
ln -s dir "$HOST/dirlink"
mkfifo "$HOST/fifo"
backing "$HOST/rodir/r.img" 64
mount --bind "$HOST/rodir" /mnt/ro
mount -o remount,bind,ro /mnt/ro
dd if=/dev/zero of="$HOST/swap" bs=1M count=4 status=none
mkswap "$HOST/swap" >/dev/null 2>&1
swapon "$HOST/swap"
# A running executable: bash, kept from replacing itself by its command.
cp "$BASH" "$HOST/exe"
"$HOST/exe" -c 'sleep 100000; :' &
EXE_PID=$!
mount -t tmpfs -o size=300m tmpfs /mnt/tmpfs
truncate -s 64M /mnt/tmpfs/t.img
# No direct I/O: ramfs (tmpfs has it since 6.6).
mkdir -p /mnt/ramfs
mount -t ramfs ramfs /mnt/ramfs
truncate -s 64M /mnt/ramfs/t.img
truncate -s 100M /mnt/tmpfs/vfat.img
VFAT_LOOP=$(losetup --find --show /mnt/tmpfs/vfat.img)
mkfs.vfat "$VFAT_LOOP" >/dev/null 2>&1
mount -t vfat "$VFAT_LOOP" /mnt/vfat
truncate -s 64M /mnt/vfat/v.img
truncate -s 100M /mnt/tmpfs/ext4.img
mkfs.ext4 -q -F /mnt/tmpfs/ext4.img
mount -o loop /mnt/tmpfs/ext4.img /mnt/ext4
truncate -s $((32 * MIB + 1024 + 512)) /mnt/ext4/e.img
EXT4_BS=$(($(stat -f -c %S /mnt/ext4) / 512))
echo "# host block size $XFS_BS sectors, ext4's $EXT4_BS"

# size_sectors FILE: its size in whole sectors (REPLY); the fixtures do
# not change, so each is asked once (a stat a line costs under TCG).
declare -A SIZES=()
size_sectors() {
	[[ -n ${SIZES[$1]:-} ]] || SIZES[$1]=$(($(stat -L -c %s "$1") / 512))
	REPLY=${SIZES[$1]}
}

# valid_length BS SECTORS: a multiple of BS from BS to SECTORS (REPLY).
valid_length() {
	local k=$(($2 / $1))
	case $((RANDOM % 4)) in
	0) REPLY=$1 ;;
	1) REPLY=$((k * $1)) ;;
	*) REPLY=$(((RANDOM * 32768 + RANDOM) % k * $1 + $1)) ;;
	esac
}

# shuffle ARRAY: shuffle the array named ARRAY in place.
shuffle() {
	# shellcheck disable=SC2178 # a is the array, by name
	local -n a=$1
	local i j t
	for ((i = ${#a[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		t=${a[i]} a[i]=${a[j]} a[j]=$t
	done
}

# valid_features NONE: a valid feature list in FEATS (random order, random
# case, each at most once), and what `dmsetup table` prints for it in
# CANON (" <count> <feature>..." or "").  NONE=1: guarantee:none is among
# them (a host or file that cannot have the guarantee); NONE=full: the
# guarantee is left full.
valid_features() {
	local g=full ns=error t=60 lw=0 ignore=0 v c=()
	FEATS=()
	if ((RANDOM % 2)); then
		ignore=1
		random_case ignore_discard && FEATS+=("$REPLY")
	fi
	if [[ $1 == 1 ]] || { [[ $1 != full ]] && ((RANDOM % 2)); } ||
		{ [[ $1 == full ]] && ((RANDOM % 3 == 0)); }; then
		if [[ $1 == 1 ]]; then
			g=none
		elif [[ $1 != full ]]; then
			pick full none && g=$REPLY
		fi
		random_case guarantee && v=$REPLY
		random_case "$g" && FEATS+=("$v:$REPLY")
	fi
	if ((RANDOM % 2)); then
		pick error queue && ns=$REPLY
		random_case no_space && v=$REPLY
		random_case "$ns" && FEATS+=("$v:$REPLY")
		if [[ $ns == queue ]] && ((RANDOM % 2)); then
			pick 1 3600 $((RANDOM % 3600 + 1)) $((RANDOM % 60 + 1)) && t=$REPLY
			random_case no_space_timeout && v=$REPLY
			# A decimal number may have leading zeros.
			if ((RANDOM % 8)); then FEATS+=("$v:$t"); else FEATS+=("$v:00$t"); fi
		fi
	fi
	if ((RANDOM % 2)); then
		pick 0 1 8 $((RANDOM * 8)) $((RANDOM * RANDOM * RANDOM)) 9223372036854775807 \
			18446744073709551615 && lw=$REPLY
		random_case low_water && v=$REPLY
		if ((RANDOM % 8)); then FEATS+=("$v:$lw"); else FEATS+=("$v:0$lw"); fi
	fi
	shuffle FEATS
	((ignore)) && c+=(ignore_discard)
	[[ $g == none ]] && c+=(guarantee:none)
	[[ $ns == queue ]] && c+=(no_space:queue "no_space_timeout:$t")
	[[ $lw != 0 ]] && c+=("low_water:$lw")
	CANON=""
	((${#c[@]})) && CANON=" ${#c[@]} ${c[*]}"
	# The policies as the status line has them.
	POLICIES="$g $ns"
}

# count_word N: the feature count for N features: N, sometimes with a
# leading zero, or none at all for no features.
count_word() {
	if (($1 == 0)); then
		pick "" 0 00 && COUNT=$REPLY
	elif ((RANDOM % 8)); then
		COUNT=$1
	else
		COUNT=0$1
	fi
}

# insert WORD: WORD at a random place of FEATS.
insert() {
	local at=$((RANDOM % (${#FEATS[@]} + 1)))
	FEATS=("${FEATS[@]:0:at}" "$1" "${FEATS[@]:at}")
}

# has NAME: FEATS has feature NAME (any case); its index in REPLY.
has() {
	local i w
	for ((i = 0; i < ${#FEATS[@]}; i++)); do
		w=${FEATS[i],,}
		[[ ${w%%:*} == "$1" ]] && REPLY=$i && return 0
	done
	return 1
}

# The files of valid lines: path, block size in sectors, whether the
# guarantee must be off (1), and the status's block size.
VALID_FILES=(
	"$HOST/a.img $XFS_BS 0"
	"$HOST/odd.img $XFS_BS 0"
	"$HOST/back\\slash.img $XFS_BS 0"
	"$HOST/link.img $XFS_BS 0"
	"$HOST//a.img $XFS_BS 0"
	"$HOST/./a.img $XFS_BS 0"
	"$HOST/hint.img $XFS_BS 1"
	"/mnt/ext4/e.img $EXT4_BS 1"
)

# The kinds of table line: "valid" (several times, for a quarter of the
# lines) and one per defect; EXPECT holds each defect's message.
declare -A EXPECT=(
	[no_path]="Invalid argument count"
	[relative_path]="Backing file path must be absolute"
	[missing_file]="Backing file not found"
	[not_regular]="Backing file is not a regular file"
	[immutable]="Permission denied opening backing file"
	[read_only_fs]="Backing file is on a read-only filesystem"
	[swap_file]="Backing file is busy (a swap file or being executed)"
	[executable]="Backing file is busy (a swap file or being executed)"
	[too_long]="Backing file is shorter than the target length"
	[not_block_multiple]="Length is not a multiple of the backing filesystem block size"
	[no_direct_io]="Backing filesystem does not support direct I/O"
	[no_punch]="Backing filesystem does not support hole punching"
	[in_use]="Backing file is already used by another subvol device"
	[count_not_number]="Invalid feature count: "
	[count_above_16]="Invalid feature count: "
	[count_above_words]="Invalid feature count: "
	[count_wraps]="Invalid feature count: "
	[words_after]="Too many arguments after the features"
	[unknown_feature]="Unknown feature"
	[feature_twice]="Feature given twice"
	[bad_ignore_discard]="Invalid feature value: ignore_discard takes none"
	[bad_guarantee]="Invalid feature value: guarantee is full or none"
	[bad_no_space]="Invalid feature value: no_space is error or queue"
	[bad_timeout]="Invalid feature value: no_space_timeout is 1 to 3600 seconds"
	[timeout_wraps]="Invalid feature value: no_space_timeout is 1 to 3600 seconds"
	[bad_low_water]="Invalid feature value: low_water is a number of sectors"
	[timeout_without_queue]="no_space_timeout needs no_space:queue"
	[full_on_ext4]="guarantee:full needs an XFS host filesystem: use guarantee:none"
	[full_extent_hint]="Backing file has an extent size hint: clear it or use guarantee:none"
)
TABLE_KINDS=("${!EXPECT[@]}")
for ((i = 0; i < ${#TABLE_KINDS[@]} / 3; i++)); do TABLE_KINDS+=(valid); done

# table_line KIND: a table line of that kind in LINE, created read-only if
# RO=1; for a valid one, the length in LEN, the table dmsetup prints in
# WANT_TABLE and the status's first fields in WANT_STATUS.
table_line() {
	local kind=$1 path bs none=0 size len f n v
	RO=0
	pick "${VALID_FILES[@]}" && read -r path bs none <<<"$REPLY"
	# The file of the kind, if it is not any valid one.
	case $kind in
	full_on_ext4) path=/mnt/ext4/e.img bs=$EXT4_BS none=full ;;
	full_extent_hint) path=$HOST/hint.img bs=$XFS_BS none=full ;;
	immutable) path=$HOST/immutable.img ;;
	read_only_fs) path=/mnt/ro/r.img ;;
	swap_file) path=$HOST/swap ;;
	executable) path=$HOST/exe ;;
	no_direct_io) path=/mnt/ramfs/t.img ;;
	no_punch) path=/mnt/vfat/v.img ;;
	in_use) pick "$HOST/held.img" "$HOST/heldlink.img" "$HOST//held.img" && path=$REPLY ;;
	esac
	[[ $path == "$HOST/hint.img" || $path == /mnt/ext4/* ]] || bs=$XFS_BS
	# Its length is right for it: the defect is elsewhere.
	if [[ -f $path ]]; then
		size_sectors "$path" && size=$REPLY
	else
		size=$((64 * SECTORS_PER_MIB))
	fi
	valid_length "$bs" "$size" && len=$REPLY
	valid_features "$none"
	# shellcheck disable=SC2088 # a literal "~" in a path: no shell expands it
	case $kind in
	valid)
		((RANDOM % 5)) || RO=1
		count_word ${#FEATS[@]}
		LINE="0 $len subvol $path${COUNT:+ $COUNT}${FEATS[*]:+ ${FEATS[*]}}"
		LEN=$len
		WANT_TABLE="0 $len subvol $path$CANON"
		WANT_STATUS="1 rw $bs $len $POLICIES"
		((RO)) && WANT_STATUS="1 ro $bs $len $POLICIES"
		return
		;;
	no_path) LINE="0 $len subvol"; return ;;
	relative_path) pick a.img ./a.img mnt/host/a.img ../a.img '~/a.img' && path=$REPLY ;;
	missing_file) pick "$HOST/none.img" "$HOST/nodir/a.img" "$HOST/a.img/x" "$HOST/A.img" && path=$REPLY ;;
	not_regular) pick "$HOST/dir" "$HOST/dirlink" "$HOST/fifo" /dev/null "$SCRATCH_DEV" / && path=$REPLY ;;
	too_long)
		len=$(((size / bs + 1 + RANDOM % 3) * bs))
		((RANDOM % 4)) || len=$(((size / bs + 1) * bs + RANDOM * 32768 * bs))
		;;
	not_block_multiple)
		# ext4's blocks are smaller: sometimes a length XFS would refuse.
		len=$((len - bs + 1 + RANDOM % (bs - 1)))
		;;
	count_not_number)
		pick x -1 "+${#FEATS[@]}" "0x${#FEATS[@]}" "${#FEATS[@]}x" "${#FEATS[@]}.0" one && COUNT=$REPLY
		;;
	count_above_16)
		while ((${#FEATS[@]} < 17 + RANDOM % 4)); do FEATS+=(ignore_discard); done
		COUNT=${#FEATS[@]}
		((RANDOM % 2)) && COUNT=$((RANDOM + 17))
		;;
	count_above_words) COUNT=$((${#FEATS[@]} + 1 + RANDOM % 3)) ;;
	count_wraps)
		# Above 16 as a number, but 2^32 more than the features given.
		COUNT=$((4294967296 * (1 + RANDOM % 2) + ${#FEATS[@]}))
		;;
	words_after)
		if ((${#FEATS[@]} == 0)); then
			pick ignore_discard x 1 guarantee:none && FEATS=("$REPLY")
			COUNT=0
		else
			COUNT=$((RANDOM % ${#FEATS[@]}))
		fi
		;;
	unknown_feature)
		pick ignore_discards ignore_discar discard guarantee_none:full guaranty:full \
			nospace:queue no-space:error low_water_mark:8 lowwater:8 no_space_timeout_s:5 \
			: :full x x:y "ignore discard" && f=$REPLY
		# "ignore discard" is two unknown words; keep it one.
		f=${f// /_x_}
		random_case "$f" && insert "$REPLY"
		;;
	feature_twice)
		if ((${#FEATS[@]} == 0)); then
			random_case ignore_discard && FEATS=("$REPLY" "$REPLY")
		else
			f=${FEATS[RANDOM % ${#FEATS[@]}]}
			n=${f%%:*}
			case ${n,,} in
			guarantee) pick full none && v=:$REPLY ;;
			no_space) pick error queue && v=:$REPLY ;;
			no_space_timeout) v=:$((RANDOM % 3600 + 1)) ;;
			low_water) v=:$RANDOM ;;
			*) v="" ;;
			esac
			# After the first: the first is parsed, and valid.
			has "${n,,}" && n=$REPLY
			pick "$f" "${f%%:*}$v" && f=$REPLY
			v=$((n + 1 + RANDOM % (${#FEATS[@]} - n)))
			FEATS=("${FEATS[@]:0:v}" "$f" "${FEATS[@]:v}")
		fi
		;;
	bad_ignore_discard)
		has ignore_discard && unset "FEATS[REPLY]" && FEATS=("${FEATS[@]}")
		pick ignore_discard: ignore_discard:1 ignore_discard:yes ignore_discard:: && insert "$REPLY"
		;;
	bad_guarantee)
		has guarantee && unset "FEATS[REPLY]" && FEATS=("${FEATS[@]}")
		pick guarantee guarantee: guarantee:x guarantee:fulll guarantee:non guarantee:full: \
			guarantee:1 && random_case "$REPLY" && insert "$REPLY"
		;;
	bad_no_space)
		has no_space && unset "FEATS[REPLY]" && FEATS=("${FEATS[@]}")
		pick no_space no_space: no_space:x no_space:errors no_space:queued no_space:0 &&
			random_case "$REPLY" && insert "$REPLY"
		;;
	bad_timeout | timeout_wraps)
		has no_space_timeout && unset "FEATS[REPLY]" && FEATS=("${FEATS[@]}")
		has no_space && unset "FEATS[REPLY]" && FEATS=("${FEATS[@]}")
		insert no_space:queue
		if [[ $kind == bad_timeout ]]; then
			pick 0 00 3601 4294967296 x -1 "" 1x 0x10 99999999999999999999 && v=$REPLY
			((RANDOM % 8)) || v=NONE
		else
			v=$((4294967296 + RANDOM % 3600 + 1))
		fi
		if [[ $v == NONE ]]; then insert no_space_timeout; else insert "no_space_timeout:$v"; fi
		;;
	bad_low_water)
		has low_water && unset "FEATS[REPLY]" && FEATS=("${FEATS[@]}")
		pick low_water low_water: low_water:x low_water:-1 low_water:18446744073709551616 \
			low_water:1e3 low_water:0x10 low_water:8k && insert "$REPLY"
		;;
	timeout_without_queue)
		has no_space_timeout && unset "FEATS[REPLY]" && FEATS=("${FEATS[@]}")
		has no_space && unset "FEATS[REPLY]" && FEATS=("${FEATS[@]}")
		((RANDOM % 2)) && insert no_space:error
		insert "no_space_timeout:$((RANDOM % 3600 + 1))"
		;;
	immutable | read_only_fs | swap_file | executable | no_direct_io | no_punch | in_use) ;;
	full_on_ext4 | full_extent_hint) ;;
	*) echo "# table_line: no kind $kind" && exit 1 ;;
	esac
	case $kind in
	count_* | words_after) ;;
	*) count_word ${#FEATS[@]} ;;
	esac
	LINE="0 $len subvol $path${COUNT:+ $COUNT}${FEATS[*]:+ ${FEATS[*]}}"
}

declare -A TABLE_COUNT=() MSG_COUNT=() BAD=()
bad=0 shown=0
# mismatch WHAT EXPECTED ACTUAL: a "not ok" for a line or message that is
# not as the oracle expects, of the kind in KIND (the first 3 of a kind
# and 50 in all in full, the rest in a line).
mismatch() {
	bad=$((bad + 1))
	BAD[$KIND]=$((${BAD[$KIND]:-0} + 1))
	if ((shown < 50 && BAD[$KIND] <= 3)); then
		shown=$((shown + 1))
		check_eq "$1" "$2" "$3"
		# What the last device-mapper call answered and logged, and
		# what the devices' status was then, to tell what happened.
		echo "#   last call: ${DMC_CALL:-} -> ${DMC:-}"
		local l
		for l in "${DMC_LOG[@]}"; do echo "#   its kernel log: $l"; done
		for l in mf mn; do
			dmc status "$l" && echo "#   status of $l: $DMC_TEXT"
		done
	else
		echo "# mismatch not shown in full: $1"
	fi
}

# The device-mapper calls go through one process, dm-coproc
# (tests/tools/dm-coproc.c): under TCG, starting dmsetup a dozen times a
# line cost more than the rest of the run.  It also keeps the kernel log
# of the whole run in /tmp/oracle-kmsg (the ring may wrap) and hands back
# what each call logged.  The log before it starts goes there first.
dmesg -c >/tmp/oracle-kmsg
coproc DM_COPROC { exec dm-coproc /tmp/oracle-kmsg; }

# dmc WORD ARG...: one call (see dm-coproc.c); "ok" or the error text in
# DMC, what an ok carries in DMC_TEXT, the kernel log lines it logged in
# DMC_LOG.
dmc() {
	local IFS=$'\t' reply
	DMC_CALL=$*
	printf '%s\n' "$*" >&"${DM_COPROC[1]}"
	read -r -u "${DM_COPROC[0]}" reply || { echo "# dm-coproc ended" && exit 1; }
	DMC=${reply%%$'\t'*} DMC_TEXT=""
	[[ $reply == *$'\t'* ]] && DMC_TEXT=${reply#*$'\t'}
	[[ $DMC == error ]] && DMC=$DMC_TEXT
	DMC_LOG=()
	while read -r -u "${DM_COPROC[0]}" reply && [[ $reply != . ]]; do
		DMC_LOG+=("${reply#log$'\t'}")
	done
}

# first_log AFTER [WITHIN]: the first line of DMC_LOG holding AFTER (and
# WITHIN before it), from the end of AFTER (REPLY; empty if none).
first_log() {
	local l
	REPLY=""
	for l in "${DMC_LOG[@]}"; do
		[[ $l == *"${2:-}"*"$1"* ]] && REPLY=${l#*"${2:-}"} && REPLY=${REPLY#*"$1"} && return
	done
}

# status_word NAME INDEX: a field of NAME's status as status_field
# counts them (REPLY).
status_word() {
	local w
	dmc status "$1"
	read -ra w <<<"$DMC_TEXT"
	REPLY=${w[$2 + 3]:-}
}

# check_table KIND: create a device with LINE and compare with the oracle.
check_table() {
	local kind=$1 got want w ro=rw how=""
	((RO)) && ro=ro how=" --readonly"
	dmc create fo "$ro" "$LINE"
	if [[ $DMC == ok ]]; then
		if [[ $kind == valid ]]; then
			want="size $LEN; table $WANT_TABLE; status $WANT_STATUS"
			dmc size fo && got="size $DMC_TEXT;"
			dmc table fo && got+=" table $DMC_TEXT;"
			dmc status fo && read -ra w <<<"$DMC_TEXT"
			got+=" status ${w[*]:3:4} ${w[*]:9:2}"
			[[ $got == "$want" ]] ||
				mismatch "table line $i ($kind): '$LINE'$how" "$want" "$got"
		else
			dmc table fo
			mismatch "table line $i ($kind): '$LINE' refused" "refused: ${EXPECT[$kind]}" \
				"accepted: $DMC_TEXT"
		fi
		dmc remove fo
		[[ $DMC == ok ]] || mismatch "table line $i: '$LINE': device removed" ok "$DMC"
	else
		# dm core logs the constructor's error ("device-mapper: table:
		# 253:N: subvol: WHY"); a snapshot copy's end may come between.
		first_log 'subvol: ' 'table: ' && got=$REPLY
		if [[ $kind == valid ]]; then
			mismatch "table line $i ($kind): '$LINE'$how accepted" \
				accepted "refused: ${got:-$DMC}"
		elif [[ $got != "${EXPECT[$kind]}"* ]]; then
			mismatch "table line $i ($kind): '$LINE' refused with its message" \
				"${EXPECT[$kind]}" "${got:-(no subvol: message) $DMC}"
		fi
	fi
	TABLE_COUNT[$kind]=$((${TABLE_COUNT[$kind]:-0} + 1))
}

# The devices messages go to: guarantee:full, guarantee:none and a
# read-only one; state kept for each.
backing "$HOST/mf.img" 64
backing "$HOST/mn.img" 64
backing "$HOST/mr.img" 64
backing "$HOST/snap-mf.img" 64
backing "$HOST/snap-mn.img" 64
backing "$HOST/snapsmall.img" 1
subvol_create mf "$HOST/mf.img" 64
subvol_create mn "$HOST/mn.img" 64 guarantee:none no_space:queue
dmsetup create mr --readonly --table "$(subvol_table "$HOST/mr.img" 64)"
declare -A SUSPENDED=([mf]=0 [mn]=0 [mr]=0) PROMISED=([mf]=0 [mn]=0 [mr]=0) COPY=([mf]=0 [mn]=0)
HOST_FREE=$(($(status_field mf "$F_HOST_FREE") + 0))

# state DEV live|suspended: bring DEV there.
state() {
	if [[ $2 == suspended ]] && ((!SUSPENDED[$1])); then
		dmc suspend "$1" && [[ $DMC == ok ]] && SUSPENDED[$1]=1
	elif [[ $2 == live ]] && ((SUSPENDED[$1])); then
		dmc resume "$1" && [[ $DMC == ok ]] && SUSPENDED[$1]=0
	fi
}

# begin_copy DEV: start a snapshot copy of DEV (suspended) to its file.
begin_copy() {
	state "$1" suspended
	dmc message "$1" "rw:$HOST/snap-$1.img" "snapshot_begin 7" && [[ $DMC == ok ]] && COPY[$1]=1
}

# cancel_copy DEV: end DEV's snapshot copy.
cancel_copy() {
	dmc message "$1" - snapshot_cancel && [[ $DMC == ok ]] && COPY[$1]=0
}

# Message kinds: an expected errno (ok for success) and kernel log line
# ("" for none); "%a" in it is the message's word, "%b" its argument.
declare -A MEXPECT=(
	[reserve]="ok|"
	[release]="ok|"
	[rescan_sharing]="ok|"
	[prepare_snapshot]="ok|"
	[snapshot_begin]="ok|"
	[snapshot_cancel]="ok|"
	[snapshot_end_done]="ok|"
	[end_no_copy]="Invalid argument|%a: no snapshot copy"
	[unknown]="Invalid argument|'%a' is unknown or has the wrong number of arguments"
	[wrong_count]="Invalid argument|'%a' is unknown or has the wrong number of arguments"
	[size_not_number]="Invalid argument|%a: '%b' is not a whole number of 4096-byte blocks"
	[size_not_block]="Invalid argument|%a: '%b' is not a whole number of 4096-byte blocks"
	[reserve_no_space]="No space left on device|reserve: the host filesystem has no space for %b sectors"
	[size_read_only]="Invalid argument|%a: the device is read-only"
	[prepare_live]="Device or resource busy|prepare_snapshot: the device must be suspended"
	[begin_live]="Device or resource busy|snapshot_begin: the device must be suspended"
	[begin_fd_not_number]="Invalid argument|snapshot_begin: '%b' is not a file descriptor number"
	[begin_fd_closed]="Bad file descriptor|snapshot_begin: %b is not an open file descriptor of the caller"
	[begin_fd_not_regular]="Invalid argument|snapshot_begin: file descriptor %b is not a regular file"
	[begin_fd_other_fs]="Invalid cross-device link|snapshot_begin: file descriptor %b is not on the filesystem of "
	[begin_fd_backing]="Invalid argument|snapshot_begin: file descriptor %b is the backing file itself"
	[begin_fd_in_use]="Device or resource busy|snapshot_begin: file descriptor %b is the backing file of a subvol device"
	[begin_fd_read_only]="Bad file descriptor|snapshot_begin: file descriptor %b is not open for writing"
	[begin_fd_append]="Bad file descriptor|snapshot_begin: file descriptor %b is not open for writing"
	[begin_fd_small]="Invalid argument|snapshot_begin: file descriptor %b is smaller than "
	[begin_held]="Device or resource busy|snapshot_begin: a snapshot copy is already held"
	[rescan_held]="Device or resource busy|rescan_sharing: a snapshot copy is held: end or cancel it first"
)
MSG_KINDS=("${!MEXPECT[@]}")
# About as many valid messages as defective ones.
MSG_KINDS+=(reserve reserve release release rescan_sharing prepare_snapshot reserve release)

# message KIND: a message of that kind to device MDEV in MSG (words), to
# send with the descriptors in FDSPEC; the device is brought to the state
# it needs first.
message() {
	local kind=$1 n w
	MDEV=mf FD=""
	pick mf mn && MDEV=$REPLY
	case $kind in
	reserve | release)
		pick 0 8 $((RANDOM % 64 * 8)) $((RANDOM % 4096 * 8)) && n=$REPLY
		random_case "$kind" && MSG="$REPLY $n"
		;;
	rescan_sharing)
		((COPY[$MDEV])) && cancel_copy "$MDEV"
		pick live suspended && state "$MDEV" "$REPLY"
		random_case rescan_sharing && MSG=$REPLY
		;;
	prepare_snapshot)
		state "$MDEV" suspended
		random_case prepare_snapshot && MSG=$REPLY
		;;
	snapshot_begin | begin_held)
		if [[ $kind == snapshot_begin ]] && ((COPY[$MDEV])); then
			cancel_copy "$MDEV"
		elif [[ $kind == begin_held ]] && ((!COPY[$MDEV])); then
			begin_copy "$MDEV"
		fi
		state "$MDEV" suspended
		FD=snap
		random_case snapshot_begin && MSG="$REPLY 7"
		;;
	snapshot_cancel | rescan_held)
		((COPY[$MDEV])) || begin_copy "$MDEV"
		pick live suspended && state "$MDEV" "$REPLY"
		[[ $kind == rescan_held ]] && w=rescan_sharing || w=snapshot_cancel
		random_case $w && MSG=$REPLY
		;;
	snapshot_end_done)
		((COPY[$MDEV])) || begin_copy "$MDEV"
		state "$MDEV" live
		[[ $(wait_copy "$MDEV" 60) == "done" ]] || echo "# the copy of $MDEV did not complete"
		random_case snapshot_end && MSG=$REPLY
		;;
	end_no_copy)
		pick mf mn mr && MDEV=$REPLY
		[[ $MDEV != mr ]] && ((COPY[$MDEV])) && cancel_copy "$MDEV"
		pick snapshot_end snapshot_cancel && random_case "$REPLY" && MSG=$REPLY
		;;
	unknown)
		pick reserve_ releases snapshot rescan prepare-snapshot snapshot_begin_ x 0 \
			snapshot_ended cancel && random_case "$REPLY" && MSG=$REPLY
		((RANDOM % 2)) && MSG+=" 8"
		;;
	wrong_count)
		pick reserve release "reserve 8 8" "release 8 x" "prepare_snapshot now" \
			"rescan_sharing 1" "snapshot_end 0" "snapshot_cancel x" snapshot_begin \
			"snapshot_begin 7 7" && MSG=$REPLY
		random_case "${MSG%% *}" && MSG=$REPLY${MSG#"${MSG%% *}"}
		;;
	size_not_number | size_not_block | size_read_only)
		if [[ $kind == size_not_number ]]; then
			pick x -8 +x 0x10 8x 1e3 18446744073709551616 99999999999999999999999 8.0 && n=$REPLY
		elif [[ $kind == size_not_block ]]; then
			n=$((RANDOM * 8 + 1 + RANDOM % 7))
		else
			MDEV=mr n=$((RANDOM % 64 * 8))
		fi
		pick reserve release && random_case "$REPLY" && MSG="$REPLY $n"
		;;
	reserve_no_space)
		MDEV=mf
		# Twice the free space: the pool may hold some claimed already.
		pick $(((HOST_FREE / 4 + RANDOM) * 8)) $((RANDOM * RANDOM * 8 + HOST_FREE * 8)) \
			9223372036854775800 18446744073709551608 && n=$REPLY
		random_case reserve && MSG="$REPLY $n"
		;;
	prepare_live)
		state "$MDEV" live
		random_case prepare_snapshot && MSG=$REPLY
		;;
	begin_live)
		state "$MDEV" live
		FD=snap
		random_case snapshot_begin && MSG="$REPLY 7"
		;;
	begin_fd_*)
		state "$MDEV" suspended
		case $kind in
		begin_fd_not_number) pick x -1 7x "" 0x7 4294967303 && n=$REPLY ;;
		begin_fd_closed) n=$((RANDOM % 500 + 300)) ;;
		*) n=7 FD=${kind#begin_fd_} ;;
		esac
		[[ -z $n ]] && n=x
		random_case snapshot_begin && MSG="$REPLY $n"
		;;
	*) echo "# message: no kind $kind" && exit 1 ;;
	esac
}

# send: send MSG to MDEV with descriptor 7 as FD says; the errno text
# ("ok" for success) in SENT.
send() {
	local fd words
	case $FD in
	snap) fd=rw:$HOST/snap-$MDEV.img ;;
	not_regular) fd=r:$HOST/dir ;;
	other_fs) fd=rw:/mnt/tmpfs/t.img ;;
	backing) fd=rw:$HOST/$MDEV.img ;;
	in_use) fd=rw:$HOST/held.img ;;
	read_only) fd=r:$HOST/snap-$MDEV.img ;;
	append) fd=a:$HOST/snap-$MDEV.img ;;
	small) fd=rw:$HOST/snapsmall.img ;;
	*) fd=- ;;
	esac
	# The words, a space between each, as dmsetup message joins them.
	read -ra words <<<"$MSG"
	dmc message "$MDEV" "$fd" "${words[*]}"
	SENT=$DMC
}

# check_message KIND: send a message of that kind and compare.
check_message() {
	local kind=$1 want_errno want_log got_log words a b before after
	message "$kind"
	read -ra words <<<"$MSG"
	a=${words[0]} b=${words[1]:-}
	want_errno=${MEXPECT[$kind]%%|*}
	want_log=${MEXPECT[$kind]#*|}
	want_log=${want_log//%a/$a}
	want_log=${want_log//%b/$b}
	before=${PROMISED[$MDEV]}
	send
	first_log ': message ' && got_log=$REPLY
	if [[ $SENT != "$want_errno" ]]; then
		mismatch "message $i ($kind) to $MDEV ($( ((SUSPENDED[$MDEV])) && echo suspended || echo live)): '$MSG'" \
			"$want_errno${want_log:+: $want_log}" "$SENT${got_log:+: $got_log}"
	# The log names the message as sent or in lower case (it varies).
	elif [[ -n $want_log && ${got_log,,} != "${want_log,,}"* ]] || [[ -z $want_log && -n $got_log ]]; then
		mismatch "message $i ($kind) to $MDEV: '$MSG': its kernel log line" "${want_log:-(none)}" \
			"${got_log:-(none)}"
	fi
	# What the device holds promised follows reserve and release.
	if [[ $SENT == ok ]]; then
		case ${a,,} in
		reserve) PROMISED[$MDEV]=$((before + b)) ;;
		release) PROMISED[$MDEV]=$((b > before ? 0 : before - b)) ;;
		snapshot_begin) COPY[$MDEV]=1 ;;
		snapshot_end | snapshot_cancel) [[ $MDEV == mr ]] || COPY[$MDEV]=0 ;;
		esac
	fi
	if [[ ${a,,} == reserve || ${a,,} == release ]]; then
		status_word "$MDEV" "$F_PROMISED" && after=$REPLY
		[[ $after == "${PROMISED[$MDEV]}" ]] ||
			mismatch "message $i ($kind) to $MDEV: '$MSG': promised sectors" "${PROMISED[$MDEV]}" "$after"
		PROMISED[$MDEV]=$after
	fi
	# Keep the promises small: give them back now and then.
	if ((PROMISED[$MDEV] > 65536)); then
		dmc message "$MDEV" - "release ${PROMISED[$MDEV]}" && [[ $DMC == ok ]] && PROMISED[$MDEV]=0
	fi
	MSG_COUNT[$kind]=$((${MSG_COUNT[$kind]:-0} + 1))
}

start=$EPOCHREALTIME
DECK=() MDECK=()
for ((i = 0; i < LINES; i++)); do
	((${#DECK[@]})) || { DECK=("${TABLE_KINDS[@]}") && shuffle DECK; }
	kind=${DECK[-1]} KIND=table:${DECK[-1]}
	unset "DECK[-1]"
	table_line "$kind"
	check_table "$kind"
	((${#MDECK[@]})) || { MDECK=("${MSG_KINDS[@]}") && shuffle MDECK; }
	kind=${MDECK[-1]} KIND=message:${MDECK[-1]}
	unset "MDECK[-1]"
	check_message "$kind"
	# A long run says how far it is.
	((i % 500 == 499)) && echo "# progress: $((i + 1)) lines and messages, $bad not as expected," \
		"$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
done
secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')

# The counts by kind, and how many were not as expected.
echo "# table lines by kind:"
for k in $(printf '%s\n' "${!TABLE_COUNT[@]}" | sort); do
	echo "#   $k ${TABLE_COUNT[$k]}${BAD[table:$k]:+ (${BAD[table:$k]} not as expected)}"
done
echo "# messages by kind:"
for k in $(printf '%s\n' "${!MSG_COUNT[@]}" | sort); do
	echo "#   $k ${MSG_COUNT[$k]}${BAD[message:$k]:+ (${BAD[message:$k]} not as expected)}"
done
echo "# oracle: lines $LINES messages $LINES mismatches $bad seconds $secs rate $(awk -v n="$LINES" -v s="$secs" 'BEGIN { printf "%.2f", n / s }')"
check_eq "every table line and message as the oracle expects (seed $SEED)" 0 "$bad"

for d in mf mn; do
	state "$d" live
	((COPY[$d])) && cancel_copy "$d"
done
# dm-coproc ends at the end of its input, with the ring cleared.
coproc_in=${DM_COPROC[1]} coproc_pid=$DM_COPROC_PID
exec {coproc_in}>&-
wait "$coproc_pid"
dmsetup remove mf
dmsetup remove mn
dmsetup remove mr
dmsetup remove held
kill "$EXE_PID"
wait "$EXE_PID" 2>/dev/null
swapoff "$HOST/swap"
xfs_io -r -c "chattr -i" "$HOST/immutable.img"
umount /mnt/ro /mnt/vfat /mnt/ext4
losetup -d "$VFAT_LOOP"
umount /mnt/tmpfs
dmesg -c >>/tmp/oracle-kmsg
check_eq "no BUG, WARNING, Oops, hung task or sleeping in atomic context" "" \
	"$(kernel_problems /tmp/oracle-kmsg)"
nothing_left
finish
