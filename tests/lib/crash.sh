# shellcheck shell=bash
# Crash consistency by dm-log-writes, in the VM (issue 25): helpers for
# tests/vm/3b-crash-replay.sh and scripts/torture-crash.  Source after
# vmtest.sh and subvol.sh.
#
# The scratch disk is carved by dm-linear into four devices:
#   crash-host    the host XFS's device, under dm-log-writes (crash-lw)
#   crash-log     the log-writes log: every write, flush, FUA and mark
#   crash-replay  where fstests' replay-log replays the log, incrementally,
#                 point after point (never mounted)
#   crash-cow     the copy-on-write store of a non-persistent dm-snapshot
#                 of crash-replay (crash-snap), which the checks mount:
#                 log recovery and the checks write only to the snapshot,
#                 thrown away after each point, so the next replay goes on
#                 from the replayed state untouched
# HOST (subvol.sh) is where the host XFS is mounted.
# The workload (cc_* functions) runs on the host XFS on crash-lw: a pool
# and a volume made by the subvol tool, the patched (space-aware) XFS in
# the volume, files written and fsync'ed, each fsync followed by a
# log-writes mark; the manifest ($CC_DIR/manifest) says what each mark
# must hold.  Then every chosen point (a mark, or a random entry: a power
# cut) is replayed and checked (cc_check_point).

CC_DIR=/tmp/crash
CC_LW=/dev/mapper/crash-lw
CC_LOG=/dev/mapper/crash-log
CC_REPLAY=/dev/mapper/crash-replay
CC_SNAP=/dev/mapper/crash-snap
CC_CHOST=/mnt/chost
CC_CGUEST=/mnt/cguest
GUEST=/mnt/guest
CC_POOL=crash
CC_VOL=vol
CC_VOLDEV=/dev/mapper/subvol-crash-vol
CC_MARKS=0

# shellcheck source=SCRIPTDIR/repair-class.sh
. "$(dirname "${BASH_SOURCE[0]}")/repair-class.sh"

# Failures and runs per check kind, for the summary; cuts inside
# xfs_growfs that left stale secondary superblocks (cc_guest_repair).
declare -A CC_RUNS=() CC_FAILS=()
CC_STALE_SECONDARIES=0
CC_KINDS=(replay host-mount activate accounting guest-mount data guest-repair host-repair)

# cc_check KIND NAME CMD...: a check, counted under KIND.
cc_check() {
	local kind=$1
	shift
	CC_RUNS[$kind]=$((${CC_RUNS[$kind]:-0} + 1))
	check "$@" || {
		CC_FAILS[$kind]=$((${CC_FAILS[$kind]:-0} + 1))
		return 1
	}
}

# cc_check_eq KIND NAME EXPECTED ACTUAL
cc_check_eq() {
	local kind=$1
	shift
	CC_RUNS[$kind]=$((${CC_RUNS[$kind]:-0} + 1))
	check_eq "$@" || {
		CC_FAILS[$kind]=$((${CC_FAILS[$kind]:-0} + 1))
		return 1
	}
}

# cc_layout HOST_MIB LOG_MIB COW_MIB: carve the scratch disk, start
# logging, make and mount the host XFS, pool and volume (VOL_MIB, default
# 320) with the guest XFS mounted at $GUEST.
cc_layout() {
	local host=$(($1 * SECTORS_PER_MIB)) log=$(($2 * SECTORS_PER_MIB))
	local cow=$(($3 * SECTORS_PER_MIB)) need have
	need=$((2 * host + log + cow))
	have=$(blockdev --getsz "$SCRATCH_DEV")
	if ((need > have)); then
		echo "crash: the scratch disk has $have sectors, the layout needs $need" >&2
		return 1
	fi
	mkdir -p "$CC_DIR" "$GUEST" "$CC_CHOST" "$CC_CGUEST"
	: >"$CC_DIR/manifest"
	dmsetup create crash-host --table "0 $host linear $SCRATCH_DEV 0" &&
		dmsetup create crash-log --table "0 $log linear $SCRATCH_DEV $host" &&
		dmsetup create crash-replay --table "0 $host linear $SCRATCH_DEV $((host + log))" &&
		dmsetup create crash-cow --table "0 $cow linear $SCRATCH_DEV $((2 * host + log))" || return
	# The host device and the replay device start out the same (zeroes,
	# a new sparse disk): the log holds only what is written after this.
	dmsetup create crash-lw --table "0 $host log-writes /dev/mapper/crash-host $CC_LOG" || return
	mkfs.xfs -q -f "$CC_LW" || return
	cc_mark mkfs
	mkdir -p "$HOST"
	mount "$CC_LW" "$HOST" || return
	export SUBVOL_CONFIG_DIR=$CC_DIR/subvol-etc
	subvol pool create --name "$CC_POOL" "$HOST/pool" >/dev/null &&
		subvol create --size "${4:-320}M" --mkfs "$CC_POOL/$CC_VOL" >/dev/null || return
	mount "$CC_VOLDEV" "$GUEST" || return
	# The table the checks activate the volume with (the length follows
	# the image, which a grow changes).
	dmsetup table "subvol-$CC_POOL-$CC_VOL" | cut -d" " -f2- >"$CC_DIR/table"
	dd if=/dev/urandom of="$CC_DIR/source" bs=1M count=4 status=none
	sync
	cc_mark ready
}

# cc_mark NAME: a log-writes mark; marks are numbered in order (m<N>
# becomes the N-th mark entry of the log) and the manifest's lines name
# the mark after which they hold.
cc_mark() {
	CC_MARKS=$((CC_MARKS + 1))
	dmsetup message crash-lw 0 mark "$1" || return
	echo "$CC_MARKS $1" >>"$CC_DIR/marks"
}

# cc_rand N: CC_R = a random number in [0, N) from bash's $RANDOM, seeded
# by the caller (RANDOM=SEED); a variable, not output: a $(...) subshell
# would not advance this shell's generator.
cc_rand() {
	CC_R=$((((RANDOM << 15) | RANDOM) % $1))
}

# cc_put NAME: write a new guest file of 4 KiB..1 MiB (random) from the
# source, fsync it, mark; the manifest gets its size and checksum.
cc_put() {
	local f=$GUEST/$1 kib skip
	cc_rand 256
	kib=$((4 * (1 + CC_R)))
	cc_rand 3000
	skip=$CC_R
	dd if="$CC_DIR/source" of="$f" bs=1K count=$kib skip=$skip conv=fsync status=none || return
	cc_mark "$1"
	echo "$CC_MARKS put $1 $(stat -c %s "$f") $(sha "$f")" >>"$CC_DIR/manifest"
}

# cc_append NAME: append 4..64 KiB to a guest file, fsync, mark; the
# manifest's new line covers the whole file (the old bytes must stay).
cc_append() {
	local f=$GUEST/$1 count
	cc_rand 16
	count=$((1 + CC_R))
	cc_rand 900
	dd if="$CC_DIR/source" of="$f" bs=4K count=$count skip=$CC_R \
		oflag=append conv=notrunc,fsync status=none || return
	cc_mark "a-$1"
	echo "$CC_MARKS put $1 $(stat -c %s "$f") $(sha "$f")" >>"$CC_DIR/manifest"
}

# cc_del NAME: delete a guest file, fsync the directory, mark.
cc_del() {
	rm -f "$GUEST/$1" && xfs_io -r -c fsync "$GUEST" || return
	cc_mark "d-$1"
	echo "$CC_MARKS del $1" >>"$CC_DIR/manifest"
}

CC_FILES=0
# cc_fsync_work N: N fsync'ed operations on the guest: mostly new files,
# some appends to and deletions of older ones.
cc_fsync_work() {
	local i r victim
	for ((i = 0; i < $1; i++)); do
		cc_rand 10
		r=$CC_R
		cc_rand $((CC_FILES + 1))
		victim=f$CC_R
		if ((CC_FILES > 2 && r == 0)); then
			[[ -e $GUEST/$victim ]] && cc_del "$victim" && continue
		fi
		if ((CC_FILES > 2 && r <= 2)); then
			[[ -e $GUEST/$victim ]] && cc_append "$victim" && continue
		fi
		cc_put "f$CC_FILES" || return
		CC_FILES=$((CC_FILES + 1))
	done
}

# cc_snapshot_work N: a snapshot by the tool, its copy in the background
# (--no-wait) while N fsync'ed operations go on.
cc_snapshot_work() {
	subvol snapshot --no-wait "$CC_POOL/$CC_VOL" "snap$CC_MARKS" >/dev/null || return
	cc_mark snapshot
	cc_fsync_work "$1"
	# Until the target holds no copy (status field 18 is "-"), 300 s.
	local i=0
	while [[ $(status_field "subvol-$CC_POOL-$CC_VOL" 18) != - ]] && ((i < 600)); do
		sleep 0.5
		i=$((i + 1))
	done
	cc_mark snapshot-done
	[[ $(status_field "subvol-$CC_POOL-$CC_VOL" 18) == - ]]
}

# cc_nearfull_work N: fill the host to ~48 MiB free with a preallocated
# file, then N fsync'ed operations (the guest's reservations claim pool
# space from what is left), delete half the files and fstrim (the pool
# gives space back), remove the filler.
cc_nearfull_work() {
	local free
	free=$(free_bytes "$HOST")
	((free > 64 << 20)) && fallocate -l $((free - (48 << 20))) "$HOST/filler"
	cc_mark filled
	cc_fsync_work "$1"
	local i
	for ((i = 0; i < CC_FILES; i += 2)); do
		[[ -e $GUEST/f$i ]] && cc_del "f$i"
	done
	fstrim "$GUEST" || return
	sync
	cc_mark trimmed
	rm -f "$HOST/filler"
	sync
	cc_mark unfilled
}

# cc_reload_work: the volume's table loaded again (suspend, reload, resume)
# while the guest is mounted.
cc_reload_work() {
	local dm=subvol-$CC_POOL-$CC_VOL
	dmsetup reload "$dm" --table "$(dmsetup table "$dm")" && dmsetup resume "$dm" || return
	cc_mark reloaded
}

# cc_grow_work: the volume grown by 64 MiB by the tool, the guest XFS
# grown onto it.
cc_grow_work() {
	subvol resize --size +64M "$CC_POOL/$CC_VOL" >/dev/null || return
	cc_mark growing
	xfs_growfs "$GUEST" >/dev/null || return
	cc_mark grown
}

# cc_receive_work: the first snapshot sent by the tool and received into a
# second pool on the same host; the manifest's "image" line has the
# received image's checksum, which every mark after must show.
cc_receive_work() {
	local snap img
	for img in "$HOST/pool"/snap*.img; do
		snap=${img##*/}
		snap=${snap%.img}
		break
	done
	[[ -n ${snap:-} && -e $img ]] || return
	subvol pool create --name "${CC_POOL}2" "$HOST/pool2" >/dev/null &&
		subvol send --quiet "$CC_POOL/$snap" | subvol receive --quiet "${CC_POOL}2" >/dev/null || return
	[[ -e $HOST/pool2/$snap.img ]] || return
	cc_mark received
	echo "$CC_MARKS image pool2/$snap.img $(stat -c %s "$img") $(sha "$img")" >>"$CC_DIR/manifest"
}

# cc_stop: unmount everything and stop logging; prints the log's entries.
cc_stop() {
	umount "$GUEST" && subvol deactivate "$CC_POOL/$CC_VOL" >/dev/null || return
	cc_mark guest-off
	umount "$HOST" || return
	dmsetup remove crash-lw
}

# cc_entries: "ENTRY FLAGS" (flags in hex) of every entry of the log, by
# replay-log's verbose find mode looking for a mark that does not exist.
cc_entries() {
	replay-log -vv --log "$CC_LOG" --find --end-mark '-no-such-mark-' 2>/dev/null |
		sed -n 's/^seek entry \([0-9]*\)@.* flags \(0x[0-9a-f]*\).*/\1 \2/p'
}

# Busybox awk (in the VM) has no strtonum: hex("0x1a") by hand.
CC_AWK_HEX='function hex(s,  i, v) {
	v = 0; s = tolower(substr(s, 3))
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}'

# cc_mark_entries: "ENTRY MARKNUMBER" of the mark entries (flag 0x8), in
# order.  dm-log-writes adds one of its own (dm-log-writes-end) when it
# is removed: only the first as many as cc_mark sent count.
cc_mark_entries() {
	awk -v max="$(wc -l <"$CC_DIR/marks")" "$CC_AWK_HEX"'
		int(hex($2) / 8) % 2 && n < max { print $1, ++n }' "$CC_DIR/entries"
}

# cc_fiemap FILE: "ALLOCATED SHARED" sectors of FILE by FIEMAP (allocated:
# every extent, unwritten ones (flag 0x800) included: the target counts
# them as mapped, dm-subvol-space.c; shared: flag 0x2000).
cc_fiemap() {
	xfs_io -r -c 'fiemap -v' "$1" | awk "$CC_AWK_HEX"'
		$3 != "hole" && $NF ~ /^0x/ {
			a += $4
			if (int(hex($NF) / 8192) % 2) s += $4
		}
		END { print a + 0, s + 0 }'
}

# cc_accounting POINT WHEN: the pool's accounting is consistent with the
# host's extent map: nothing uncovered, no accounting error, the pool holds
# what it backs, mapped and shared match FIEMAP, the copy-on-write reserve
# covers every shared block.
cc_accounting() {
	local p=$1 when=$2 dm=crash-vol st fm
	read -r -a st <<<"$(dmsetup status $dm)"
	fm=$(cc_fiemap "$CC_CHOST/pool/$CC_VOL.img")
	cc_check_eq accounting "$p: $when: uncovered 0, accounting errors 0" "0 0" \
		"${st[$((F_UNCOVERED + 3))]} ${st[$((F_ACCOUNTING_ERRORS + 3))]}"
	cc_check accounting "$p: $when: pool claimed ${st[$((F_CLAIMED + 3))]} >= committed ${st[$((F_COMMITTED + 3))]}" \
		test "${st[$((F_CLAIMED + 3))]}" -ge "${st[$((F_COMMITTED + 3))]}"
	cc_check_eq accounting "$p: $when: mapped, shared as FIEMAP" "$fm" \
		"${st[$((F_MAPPED + 3))]} ${st[$((F_SHARED + 3))]}"
	cc_check_eq accounting "$p: $when: copy-on-write reserve = shared" \
		"${st[$((F_SHARED + 3))]}" "${st[$((F_COW + 3))]}"
}

# cc_data POINT MARK [exact]: every file fsync'ed before mark MARK holds
# what it held then; a file deleted before MARK is gone; one deleted after
# MARK is gone or intact.  With "exact" (the point is the mark itself,
# nothing after it was replayed), nothing done after the mark is there:
# files are exactly as the manifest says at MARK, no other file exists.
cc_data() {
	local p=$1 m=$2 exact=${3:-} bad=0 name f
	local -A last=() size=() sum=() later=()
	local n op x s h
	while read -r n op x s h; do
		[[ $op == image ]] && continue
		if ((n <= m)); then
			last[$x]=$op size[$x]=$s sum[$x]=$h
		else
			later[$x]=1
		fi
	done <"$CC_DIR/manifest"
	for name in "${!last[@]}"; do
		f=$CC_CGUEST/$name
		if [[ ${last[$name]} == del ]]; then
			[[ -e $f ]] && bad=$((bad + 1)) && echo "# $p: $name deleted before mark $m is there"
			continue
		fi
		if [[ ! -e $f ]]; then
			[[ -z $exact && -n ${later[$name]:-} ]] && continue
			bad=$((bad + 1))
			echo "# $p: $name (fsync'ed before mark $m) is missing"
		elif [[ $(head -c "${size[$name]}" "$f" | sha256sum | cut -d' ' -f1) != "${sum[$name]}" ]]; then
			bad=$((bad + 1))
			echo "# $p: $name: its first ${size[$name]} bytes are not what was fsync'ed before mark $m"
		elif [[ -n $exact && $(stat -c %s "$f") != "${size[$name]}" ]]; then
			bad=$((bad + 1))
			echo "# $p: $name: $(stat -c %s "$f") bytes at mark $m, ${size[$name]} were fsync'ed"
		fi
	done
	if [[ -n $exact ]]; then
		for f in "$CC_CGUEST"/f*; do
			[[ -e $f && -z ${last[${f##*/}]:-} ]] || continue
			bad=$((bad + 1))
			echo "# $p: ${f##*/}, made after mark $m, is there"
		done
		cc_check_eq data "$p: the files are exactly as at mark $m (${#last[@]} files)" 0 $bad
	else
		cc_check_eq data "$p: every byte fsync'ed before mark $m is intact (${#last[@]} files)" 0 $bad
	fi
}

CC_REPLAYED=0
# cc_images POINT MARK: each image received before MARK (the manifest's
# "image" lines) is there with the checksum of what was sent.
cc_images() {
	local p=$1 m=$2 n op x s h
	while read -r n op x s h; do
		[[ $op == image ]] || continue
		((n <= m)) || continue
		cc_check_eq data "$p: $x, received before mark $m, is what was sent" "$s $h" \
			"$(stat -c %s "$CC_CHOST/$x" 2>&1) $(sha "$CC_CHOST/$x" 2>&1)"
	done <"$CC_DIR/manifest"
}

# cc_check_point LABEL ENTRY MARK: replay the log up to ENTRY (inclusive)
# onto crash-replay, going on from the last point, and check the state on
# a throwaway snapshot of it; MARK is the last mark at or before ENTRY.
cc_check_point() {
	local p="$1 (entry $2, mark $3)" entry=$2 m=$3 table len img
	cc_check replay "$p: replay" replay-log --log "$CC_LOG" --replay "$CC_REPLAY" \
		--start-entry "$CC_REPLAYED" --limit $((entry + 1 - CC_REPLAYED)) || return
	CC_REPLAYED=$((entry + 1))
	dmsetup create crash-snap --table \
		"0 $(blockdev --getsz "$CC_REPLAY") snapshot $CC_REPLAY /dev/mapper/crash-cow N 8" || return
	if cc_check host-mount "$p: host XFS mounts" mount "$CC_SNAP" "$CC_CHOST"; then
		img=$CC_CHOST/pool/$CC_VOL.img
		# The received images are whole files: checked at marks only
		# (a checksum of the image takes seconds under TCG).
		[[ $1 == mark ]] && cc_images "$p" "$m"
		# Before the volume exists there is nothing more to check.
		if [[ -e $img ]] && ((m >= $(cc_mark_number ready))); then
			len=$(($(stat -c %s "$img") / 4096 * 8)) # whole 4 KiB blocks
			read -r -a table <<<"$(cat "$CC_DIR/table")"
			table[0]=$len table[2]=$img
			if cc_check activate "$p: the volume activates" dmsetup create crash-vol --table "0 ${table[*]}"; then
				cc_accounting "$p" "activated"
				if cc_check guest-mount "$p: guest XFS mounts" mount /dev/mapper/crash-vol "$CC_CGUEST"; then
					cc_data "$p" "$m" "$([[ $1 == mark ]] && echo exact)"
					umount "$CC_CGUEST"
					cc_accounting "$p" "guest unmounted"
				fi
				cc_guest_repair "$p" "$m"
				dmsetup remove crash-vol
			fi
		fi
		umount "$CC_CHOST"
		cc_check host-repair "$p: host xfs_repair -n" xfs_repair -n "$CC_SNAP"
	fi
	dmsetup remove crash-snap
}

# cc_guest_repair LABEL MARK: the guest's xfs_repair -n is clean; after a
# cut inside xfs_growfs (MARK is "growing"), stale secondary superblocks
# are accepted (tests/lib/repair-class.sh), and counted.
cc_guest_repair() {
	local p=$1 m=$2 dev=/dev/mapper/crash-vol out rc ags
	out=$(xfs_repair -n $dev 2>&1)
	rc=$?
	if ((rc == 1)) && [[ $m == "$(cc_mark_number growing)" ]] &&
		ags=$(repair_stale_secondaries $dev "$out"); then
		echo "# $p: the cut inside xfs_growfs left the secondary superblocks of AG $ags with the old geometry (stock XFS writes them outside the log); xfs_repair reset them"
		CC_STALE_SECONDARIES=$((CC_STALE_SECONDARIES + 1))
		rc=0
	fi
	cc_check_eq guest-repair "$p: guest xfs_repair -n" 0 $rc || sed 's/^/#   /' <<<"$out"
}

# cc_mark_number NAME: the number of the first mark called NAME.
cc_mark_number() {
	awk -v n="$1" '$2 == n { print $1; exit }' "$CC_DIR/marks"
}

# cc_points NMARKS NCUTS [NAME...]: the points to check, "ENTRY LABEL
# MARK" sorted by entry: NMARKS marks at random (all if NMARKS is -1;
# always the first after the volume is ready, the last, and the marks
# called NAME), NCUTS random entries (power cuts) after the mkfs mark.
# Needs $CC_DIR/entries.
cc_points() {
	local nmarks=$1 ncuts=$2 first total i
	local -a mentries=()
	mapfile -t mentries < <(cc_mark_entries | cut -d' ' -f1)
	total=$(wc -l <"$CC_DIR/entries")
	first=${mentries[0]}
	{
		if ((nmarks < 0 || nmarks >= ${#mentries[@]})); then
			for i in "${!mentries[@]}"; do echo "${mentries[$i]} mark"; done
		else
			echo "${mentries[$(($(cc_mark_number ready) - 1))]} mark"
			echo "${mentries[-1]} mark"
			for i in "${@:3}"; do
				echo "${mentries[$(($(cc_mark_number "$i") - 1))]} mark"
			done
			for ((i = 2; i < nmarks; i++)); do
				cc_rand ${#mentries[@]}
				echo "${mentries[$CC_R]} mark"
			done
		fi
		for ((i = 0; i < ncuts; i++)); do
			cc_rand $((total - first - 1))
			echo "$((first + 1 + CC_R)) cut"
		done
	} >"$CC_DIR/points.raw" # not a pipe: a subshell reseeds $RANDOM
	sort -n -u -k1,1 "$CC_DIR/points.raw" | while read -r e kind; do
		# the last mark at or before e
		echo "$e $kind $(cc_mark_entries | awk -v e="$e" '$1 <= e { m = $2 } END { print m + 0 }')"
	done
}

# cc_run_points POINTS_FILE: check each point ("ENTRY KIND MARK").
cc_run_points() {
	local e kind m
	while read -r e kind m; do
		cc_check_point "$kind" "$e" "$m"
	done <"$1"
}

# cc_summary: the table of checks run and failed per kind.
cc_summary() {
	local k
	printf '# %-13s %6s %6s\n' check runs failed
	for k in "${CC_KINDS[@]}"; do
		printf '# %-13s %6d %6d\n' "$k" "${CC_RUNS[$k]:-0}" "${CC_FAILS[$k]:-0}"
	done
	echo "# cuts inside xfs_growfs with stale secondary superblocks (accepted): $CC_STALE_SECONDARIES"
}
