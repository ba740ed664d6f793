# Random table lines and messages for the subvol target, seeded: each
# table line is refused (by dmsetup, dm core, or the constructor with a
# subvol: message) or makes a device that reads back what is written to
# it, answers status and table, and goes away; each message to a device
# (random words and numbers, snapshot_begin on descriptors of every kind,
# suspends and resumes between them) succeeds or is refused with a
# message in the kernel log.  Meanwhile a good device's data stays as it
# was, and at the end no device is left, the module unloads and the host
# filesystem unmounts: nothing leaked.  The kernel log gets no BUG,
# WARNING, Oops, hung task or sleeping-in-atomic report.  Prints the
# counts.  scripts/fuzz-target runs it longer.
#
#   1a-fuzz-target.sh [ITERATIONS [SEED]]
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh
. /src/tests/lib/fuzz.sh

ITER=${1:-20}
SEED=${2:-$(($(date +%s) / 86400))}
echo "# seed $SEED, $ITER table lines: tests/vm/1a-fuzz-target.sh $ITER $SEED repeats this run"
RANDOM=$SEED

host_xfs
MIB64=$((64 * SECTORS_PER_MIB))
backing "$HOST/img" 64
backing "$HOST/small" 1
backing "$HOST/snap" 64
backing "$HOST/snapsmall" 1
mkdir -p "$HOST/dir" /mnt/tmpfs
mkfifo "$HOST/fifo"
mount -t tmpfs tmpfs /mnt/tmpfs
truncate -s 64M /mnt/tmpfs/other
backing "$HOST/good.img" 64
subvol_create good "$HOST/good.img" 64
dd if=/dev/urandom of=/dev/mapper/good bs=1M count=8 oflag=direct status=none
good_sha=$(sha /dev/mapper/good)
kmsg_mark

# The generators set REPLY rather than print (see tests/lib/fuzz.sh).
LONG_FEATURE=$(head -c 200 /dev/zero | tr '\0' f)
LONG_PATH=$HOST/$(head -c 300 /dev/zero | tr '\0' a)
num() {
	pick 0 1 7 8 9 4096 $MIB64 $((MIB64 - 8)) $((MIB64 + 8)) -1 -8 x "" 0x10 1e3 \
		18446744073709551615 18446744073709551616 9223372036854775807 4294967296 \
		99999999999999999999999
}
feature() {
	local timeout mark
	num && timeout=$REPLY
	num && mark=$REPLY
	pick ignore_discard ignore_discard ignore_discard:1 guarantee:none guarantee:full \
		guarantee:x guarantee: no_space:queue no_space:error no_space:x no_space \
		"no_space_timeout:$timeout" "no_space_timeout:$((RANDOM % 2 ? 3600 : 3601))" \
		"low_water:$mark" low_water unknown : "$LONG_FEATURE"
}
# A valid line with some of the features, for devices to fuzz.
valid_table() {
	local feats=() f
	for f in ignore_discard "guarantee:$((RANDOM % 2 ? 0 : 1))" no_space:queue \
		"low_water:$((RANDOM * 8))"; do
		f=${f/guarantee:0/guarantee:none}
		f=${f/guarantee:1/guarantee:full}
		((RANDOM % 2)) && feats+=("$f")
	done
	[[ " ${feats[*]} " == *" no_space:queue "* ]] && ((RANDOM % 2)) &&
		feats+=("no_space_timeout:$((RANDOM % 3600 + 1))")
	REPLY="0 $MIB64 subvol $HOST/img ${#feats[@]} ${feats[*]}"
}
table() {
	local n=$((RANDOM % 4)) feats=() count start len path i
	((RANDOM % 3)) || { valid_table; return; }
	for ((i = 0; i < n; i++)); do feature && feats+=("$REPLY"); done
	pick $n $n $n $n $n $((n + 1)) $((n - 1)) x 99999 -1 && count=$REPLY
	((n == 0)) && pick "" "" "" 0 1 x && count=$REPLY
	pick 0 0 0 0 0 0 1 x && start=$REPLY
	pick $MIB64 $MIB64 $MIB64 $MIB64 $((MIB64 / 2)) 8 1 $((MIB64 + 8)) 0 99999999999 && len=$REPLY
	pick "$HOST/img" "$HOST/img" "$HOST/img" "$HOST/img" "$HOST/small" "$HOST/dir" \
		"$HOST/fifo" "$HOST/none" img /dev/null /mnt/tmpfs/other "$LONG_PATH" && path=$REPLY
	REPLY="$start $len subvol $path $count ${feats[*]}"
}
message() {
	local a b fd
	num && a=$REPLY
	num && b=$REPLY
	pick 3 4 5 6 7 8 9 0 1 99 -1 x "" && fd=$REPLY
	pick "reserve $a" "release $a" "reserve 8" "release 8" "RESERVE 4096" \
		prepare_snapshot "prepare_snapshot x" rescan_sharing snapshot_end snapshot_cancel \
		"snapshot_begin $fd" snapshot_begin "reserve" "reserve 8 8" unknown "release $a $b"
}

lines=0 accepted=0 refused_ctr=0 refused_other=0 msgs=0 msg_ok=0 msg_refused=0
msg_silent=0 io_bad=0 left=0 suspends=0
# fuzz_device NAME [ro]: messages, suspends and resumes, and I/O while
# it is live (reads only with ro); leaves it resumed.
fuzz_device() {
	local dev=$1 ro=${2:-} n=$((RANDOM % 8)) k m before suspended=0 off
	for ((k = 0; k < n; k++)); do
		case $((RANDOM % 6)) in
		0)
			if ((suspended)); then
				dmsetup resume "$dev" && suspended=0
			else
				dmsetup suspend "$dev" && suspended=1 && suspends=$((suspends + 1))
			fi
			;;
		1)
			if ((!suspended)) && [[ $ro ]]; then
				dd if="/dev/mapper/$dev" of=/dev/null bs=4k skip=$((RANDOM % 2048)) count=1 \
					iflag=direct status=none || io_bad=$((io_bad + 1))
			elif ((!suspended)); then
				off=$((RANDOM % 2048))
				head -c 4096 /dev/urandom >/tmp/blk
				if dd if=/tmp/blk of="/dev/mapper/$dev" bs=4k seek=$off count=1 oflag=direct status=none 2>/dev/null; then
					cmp -s /tmp/blk <(dd if="/dev/mapper/$dev" bs=4k skip=$off count=1 iflag=direct status=none) ||
						io_bad=$((io_bad + 1))
				fi
			fi
			;;
		*)
			message && m=$REPLY
			msgs=$((msgs + 1))
			before=$(kmsg_since_mark | grep -c ': message ' || true)
			# snapshot_begin takes a descriptor of dmsetup's: open some.
			# shellcheck disable=SC2086 # the message is words
			# "--": a message word may start with "-".
			if dmsetup message -- "$dev" 0 $m 3<"$HOST/img" 4<>"$HOST/snap" 5<>"$HOST/snapsmall" \
				6<"$HOST/dir" 7<>/mnt/tmpfs/other 8>>"$HOST/snap" 9<>"$HOST/good.img" \
				>/dev/null 2>&1; then
				msg_ok=$((msg_ok + 1))
			elif (($(kmsg_since_mark | grep -c ': message ' || true) > before)); then
				msg_refused=$((msg_refused + 1))
			else
				msg_silent=$((msg_silent + 1))
				echo "# no kernel message for the refused message '$m' to $dev"
			fi
			;;
		esac
	done
	((suspended)) && dmsetup resume "$dev"
	# A copy left held keeps its file: cancel it, as the tool would.
	dmsetup message "$dev" 0 snapshot_cancel >/dev/null 2>&1 || true
}

# The kernel log of the whole run, kept as it goes: the ring may wrap.
: >/tmp/fuzz-kmsg
for ((i = 0; i < ITER; i++)); do
	kmsg_since_mark >>/tmp/fuzz-kmsg
	kmsg_mark
	table && t=$REPLY
	lines=$((lines + 1))
	if dmsetup create fz --table "$t" >/dev/null 2>&1; then
		accepted=$((accepted + 1))
		dmsetup status fz >/dev/null && dmsetup table fz >/dev/null ||
			echo "# status or table of an accepted device failed: $t"
		fuzz_device fz
		dmsetup remove fz || { left=$((left + 1)); echo "# cannot remove the device of: $t"; }
	else
		# Whatever a refused create left (dmsetup makes the device first).
		dmsetup remove fz >/dev/null 2>&1 || true
		if kmsg_since_mark | grep -q 'subvol: '; then
			refused_ctr=$((refused_ctr + 1))
		else
			refused_other=$((refused_other + 1))
		fi
	fi
	((i % 10 == 0)) && fuzz_device good ro
done

echo "# fuzz: lines $lines accepted $accepted refused_by_subvol $refused_ctr refused_by_dm_or_dmsetup $refused_other messages $msgs ok $msg_ok refused $msg_refused suspends $suspends"
check "some table lines made devices" test "$accepted" -gt 0
check "the constructor refused some, with a subvol: message" test "$refused_ctr" -gt 0
check "some messages succeeded and some were refused" test "$msg_ok" -gt 0 -a "$msg_refused" -gt 0
check_eq "every refused message left a kernel message" 0 "$msg_silent"
check_eq "every block written read back as written, every read succeeded" 0 "$io_bad"
check_eq "every accepted device was removed" 0 "$left"
check_eq "the good device's data is as it was" "$good_sha" "$(sha /dev/mapper/good)"
kmsg_since_mark >>/tmp/fuzz-kmsg
check_eq "no BUG, WARNING, Oops, hung task or sleeping in atomic context" "" \
	"$(kernel_problems /tmp/fuzz-kmsg)"
dmsetup remove good
umount /mnt/tmpfs
nothing_left
finish
