#!/bin/bash
# Native test of subvol diff, send and receive (build/bin/subvol) on
# loop-mounted host XFS: diff of random changes between two snapshots,
# block by block, and of unrelated images (by content); full and
# incremental streams, a chain of them, holes carried as holes; refusals
# (missing base, corrupt, cut, too big, already held) that leave the
# receiving pool as it was; send's refusals; a stream over TCP between
# two network namespaces; --summary.  Nothing here needs device-mapper.
# Needs root (loop mounts, network namespaces).
#
# The random changes come from SUBVOL_SEND_SEED (printed; default: the
# time), so a failure can be replayed.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

# shellcheck source=SCRIPTDIR/../lib/tooltest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tooltest.sh"

tooltest_start subvol-send
ns_a=subvol-send-$$-a
ns_b=subvol-send-$$-b
bg_pid=
# shellcheck disable=SC2016 # expanded at exit
tooltest_cleanup_hook '[[ -n $bg_pid ]] && kill "$bg_pid" 2>/dev/null; ip netns del "$ns_a" 2>/dev/null; ip netns del "$ns_b" 2>/dev/null; true'
seed=${SUBVOL_SEND_SEED:-$(date +%s)}
echo "# seed $seed (SUBVOL_SEND_SEED=$seed replays these changes)"
RANDOM=$seed

# size FILE: its size in bytes.
size() { stat -c %s "$1"; }
# into FILE CMD...: CMD with stdout to FILE (check takes the output).
into() {
	local f=$1
	shift
	"$@" >"$f"
}
# pooldir POOL: its directory.
pooldir() { if [[ $1 == tiny ]]; then echo "$SM/tiny"; else echo "$X/$1"; fi; }
# state POOL: what a refusal must leave as it was: the pool directory's
# names (hidden ones too) and the pool's list.
state() { echo "$(entries "$(pooldir "$1")") | $(sv list --noheadings "$1" 2>&1)"; }

# refused NAME REGEX INPUT CMD...: CMD, with stdin from INPUT, exits 1 with
# a single line on stderr that matches REGEX.
refused() {
	local name=$1 re=$2 input=$3 err status=0 lines why
	shift 3
	err=$("$@" <"$input" 2>&1 >/dev/null) || status=$?
	lines=$(printf '%s' "$err" | grep -c '')
	why=no
	[[ $err =~ $re ]] && why=yes
	check_eq "$name" "exit 1, 1 line, says /$re/: yes" \
		"exit $status, $lines line, says /$re/: $why" || show "$err"
}
# receive_refused NAME POOL REGEX INPUT [NAME]: receive INPUT into POOL is
# refused, and leaves POOL as it was.
receive_refused() {
	local name=$1 pool=$2 re=$3 input=$4 before
	shift 4
	before=$(state "$pool")
	refused "$name: refused" "$re" "$input" sv receive "$pool" "$@"
	check_eq "$name: pool $pool unchanged" "$before" "$(state "$pool")"
}

# json_num KEY: the number (or "string") of "KEY": in the JSON on stdin.
json_num() { sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\).*/\1/p"; }

# --- the stream, read back (stream.h: little-endian, 56-byte header then
# its text, 24-byte records, DATA followed by its payload, END by a
# 32-byte SHA-256) ---------------------------------------------------------
u32() { od --endian=little -An -t u4 -j "$2" -N 4 "$1" | tr -d ' '; }
u64() { od --endian=little -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }
HDR=56
REC=24
# records STREAM: "POS TYPE OFFSET LENGTH" for each record, END included;
# then "end POS" (where the walk stopped).
records() {
	local f=$1 pos type off len max
	max=$(size "$f")
	pos=$((HDR + $(u32 "$f" 36)))
	while ((pos + REC <= max)); do
		{
			read -r type _
			read -r _ off len
		} < <(od --endian=little -An -w$REC -t u4 -t u8 -j "$pos" -N $REC "$f")
		echo "$pos $type $off $len"
		case $type in
		1) pos=$((pos + REC + len)) ;;
		2) pos=$((pos + REC)) ;;
		3) pos=$((pos + REC + 32)) && break ;;
		*) break ;;
		esac
	done
	echo "end $pos"
}
# flip FILE OFFSET [MASK]: a copy of FILE (printed) with one byte changed.
nflip=0
flip() {
	local out=$work/flip.$((++nflip)) b
	cp "$1" "$out"
	b=$(od -An -t u1 -j "$2" -N 1 "$1" | tr -d ' ')
	# shellcheck disable=SC2059
	printf "\\x$(printf %02x $((b ^ ${3:-0xff})))" | dd of="$out" bs=1 seek="$2" conv=notrunc status=none
	echo "$out"
}
# cut FILE BYTES: a copy of the first BYTES of FILE (printed).
ncut=0
cut_at() {
	local out=$work/cut.$((++ncut))
	head -c "$2" "$1" >"$out"
	echo "$out"
}

# --- blocks, and what changed (the tests' own model) -----------------------
B=4096
# pw IMAGE BLOCK COUNT PATTERN: write COUNT blocks of PATTERN at BLOCK.
pw() { xfs_io -c "pwrite -q -S $4 $(($2 * B)) $(($3 * B))" "$1"; }
punch() { xfs_io -c "fpunch $(($2 * B)) $(($3 * B))" "$1"; }
# blocks: "BLOCK KIND" lines of diff output on stdin, sorted by block; a
# range not on whole blocks shows as "misaligned".
blocks() {
	awk -v B=$B '$1 % B || $2 % B || $2 <= 0 { print "misaligned", $0; next }
		{ for (i = $1 / B; i < ($1 + $2) / B; i++) print i, $3 }'
}
# same_blocks NAME EXPECTED ACTUAL: two "BLOCK KIND" lists are equal.
same_blocks() {
	local sum_e sum_a
	sum_e="$(grep -c . <<<"$2") blocks $(md5sum <<<"$2" | cut -c1-8)"
	sum_a="$(grep -c . <<<"$3") blocks $(md5sum <<<"$3" | cut -c1-8)"
	check_eq "$1" "$sum_e" "$sum_a" || show "$(diff <(echo "$2") <(echo "$3") | grep '^[<>]' | head -n 12)"
}
# sum_len KIND: the bytes of diff lines of KIND (data, hole, or "" for all) on stdin.
sum_len() { awk -v k="$1" 'k == "" || $3 == k { n += $2 } END { print n + 0 }'; }

# --- host filesystems and pools --------------------------------------------
mkdir -p "$work/mnt/xfs" "$work/mnt/small" "$work/st"
truncate -s 1G "$work/xfs.fs"
truncate -s 300M "$work/small.fs" # mkfs.xfs's smallest
check "mkfs.xfs (reflink)" mkfs.xfs -q "$work/xfs.fs" || { finish; exit; }
check "mkfs.xfs a small one" mkfs.xfs -q "$work/small.fs" || { finish; exit; }
check "mount the XFS" mount -o loop "$work/xfs.fs" "$work/mnt/xfs" || { finish; exit; }
check "mount the small XFS" mount -o loop "$work/small.fs" "$work/mnt/small" || { finish; exit; }
X=$work/mnt/xfs
SM=$work/mnt/small
ST=$work/st
for p in src dst cor oth net; do
	check "pool create $p" sv pool create "$X/$p" || { finish; exit; }
done
check "pool create tiny (on the small XFS)" sv pool create "$SM/tiny"
P=$X/src

# --- 1. random changes between two snapshots -------------------------------
NB=8192 # 32M of 4K blocks
check "create src/v (32M)" sv create --inactive --size 32M src/v || { finish; exit; }
V=$P/v.img
declare -a base=() cur=()
# s1: data at [0,2M) [5M,6M) (random bytes) [12M,16M) [24M,25M); holes between.
pw "$V" 0 512 0x11
dd if=/dev/urandom of="$V" bs=1M seek=5 count=1 conv=notrunc status=none
pw "$V" 3072 1024 0x22
pw "$V" 6144 256 0x33
for r in "0 512" "1280 256" "3072 1024" "6144 256"; do
	read -r b n <<<"$r"
	for ((i = b; i < b + n; i++)); do base[i]=1; done
done
check "snapshot src/v s1" sv snapshot src/v s1 || { finish; exit; }
# Changes: a written block is changed (new extent, even with the same
# content); a punched one is changed when s1 had data there.
mark() { for ((i = $1; i < $1 + $2; i++)); do cur[i]=$3; done; }
rand_write() {
	local n=$((RANDOM % 16 + 1)) b
	b=$(((RANDOM * 32768 + RANDOM) % (NB - n + 1)))
	pw "$V" "$b" "$n" $((RANDOM % 0xdf + 1)) && mark "$b" "$n" d
}
nops=0
for ((k = 0; k < 20; k++)); do rand_write && nops=$((nops + 1)); done
# Punches over s1's data: one inside [12M,16M), one across the start of
# [24M,25M) (half of it over s1's hole), one inside [0,2M).
pb=$((3072 + RANDOM % 960))
punch "$V" "$pb" 48 && mark "$pb" 48 h && nops=$((nops + 1))
punch "$V" 6128 32 && mark 6128 32 h && nops=$((nops + 1))
for ((k = 0; k < 20; k++)); do rand_write && nops=$((nops + 1)); done
punch "$V" 100 20 && mark 100 20 h && nops=$((nops + 1))
# The same content as s1's, rewritten; and part of a punch written again.
pw "$V" 200 2 0x11 && mark 200 2 d && nops=$((nops + 1))
pw "$V" $((pb + 10)) 4 0x44 && mark $((pb + 10)) 4 d && nops=$((nops + 1))
check_eq "the changes were made (40 writes, 3 punches, 2 more writes)" 45 "$nops"
check "snapshot src/v s2" sv snapshot src/v s2 || { finish; exit; }
expected=$(for ((i = 0; i < NB; i++)); do
	case ${cur[i]:-} in
	d) echo "$i data" ;;
	h) ((${base[i]:-0})) && echo "$i hole" ;;
	esac
done)
out=$(sv diff src/s1 src/s2 2>"$work/err")
check_eq "diff src/s1 src/s2: exit 0, nothing on stderr" "0 " "$? $(cat "$work/err")"
got=$(blocks <<<"$out")
same_blocks "diff: exactly the changed blocks" "$(cut -d' ' -f1 <<<"$expected")" "$(cut -d' ' -f1 <<<"$got")"
same_blocks "diff: and their kinds (data, or hole where punched)" "$expected" "$got"
# blk IMAGE BLOCK: the content of one block.
blk() { dd if="$1" bs=$B skip="$2" count=1 status=none; }
hb=$(awk '$2 == "hole" { print $1; exit }' <<<"$got")
check "diff reports punched blocks as holes" test -n "$hb"
check "such a block ($hb) reads zeros in s2" cmp -s <(blk "$P/s2.img" "${hb:-0}") <(head -c $B /dev/zero)
check_fails "and not in s1" cmp -s <(blk "$P/s1.img" "${hb:-0}") <(head -c $B /dev/zero)
check "block 200 reads the same in s1 and s2 (rewritten with its content)" cmp <(blk "$P/s1.img" 200) <(blk "$P/s2.img" 200)
check "diff reports it changed all the same (a new extent)" grep -qx '200 data' <<<"$got"
check_eq "diff: ranges in order, adjacent ones of a kind merged" "$(wc -l <<<"$out")" \
	"$(awk 'NR > 1 && ($1 < e || ($1 == e && $3 == k)) { next } { n++; e = $1 + $2; k = $3 } END { print n }' <<<"$out")"
diff_bytes=$(sum_len "" <<<"$out")
diff_data=$(sum_len data <<<"$out")
diff_hole=$(sum_len hole <<<"$out")
diff_lines=$(wc -l <<<"$out")
check_eq "diff: the bytes are the changed blocks'" $(($(grep -c . <<<"$expected") * B)) "$diff_bytes"
json=$(sv diff --json src/s1 src/s2 2>&1)
check_json "diff --json is JSON" "$json"
check_eq "diff --json: method extents, the same bytes and ranges" "extents $diff_bytes $diff_lines" \
	"$(json_num method <<<"$json") $(json_num bytes <<<"$json") $(grep -o '"offset"' <<<"$json" | wc -l)" || show "$json"
out=$(sv diff src/s1 src/s1 2>&1)
check_eq "diff of a snapshot with itself: empty" "" "$out"
check_eq "diff --json of it: 0 bytes, no ranges" "0 []" \
	"$(json_num bytes <<<"$(sv diff --json src/s1 s1 2>&1)") $(sv diff --json src/s1 s1 2>&1 | grep -o '\[\]')"
out=$(sv diff src/s2 src/s1 2>&1)
check_eq "diff the other way: the same blocks" "$(cut -d' ' -f1 <<<"$expected")" "$(blocks <<<"$out" | cut -d' ' -f1)"

# --- 2. unrelated images: compared by content ------------------------------
check "cp -a --reflink=never src/s2 to src/u" cp -a --reflink=never "$P/s2.img" "$P/u.img"
U=$P/u.img
# s2 reads nonzero where written since s1, or s1's data not punched.
s2_nonzero() { [[ ${cur[$1]:-} == d ]] || { [[ ${cur[$1]:-} != h ]] && ((${base[$1]:-0})); }; }
declare -a ud=()
umark() { for ((i = $1; i < $1 + $2; i++)); do ud[i]=$3; done; }
# rb: a random block in b (not in a subshell: RANDOM would not follow the seed).
rb() { b=$(((RANDOM * 32768 + RANDOM) % (NB - 16))); }
# Content no block of s2 has (patterns 0xe1..), zeros, and s2's own content.
for pat in 0xe1 0xe2 0xe3; do
	rb && n=$((RANDOM % 16 + 1))
	pw "$U" "$b" "$n" "$pat" && umark "$b" "$n" data
done
b=$((3072 + RANDOM % 1000)) # zeros written over s1's [12M,16M)
dd if=/dev/zero of="$U" bs=$B seek="$b" count=6 conv=notrunc status=none && umark "$b" 6 zero
dd if=/dev/zero of="$U" bs=$B seek=1400 count=5 conv=notrunc status=none && umark 1400 5 zero # s1's random MiB
b=$((RANDOM % 500))
punch "$U" "$b" 8 && umark "$b" 8 zero
for k in 1 2; do
	rb && n=$((RANDOM % 16 + 1))
	dd if="$P/s2.img" of="$U" bs=$B skip="$b" seek="$b" count="$n" conv=notrunc status=none && umark "$b" "$n" same
done
dd if="$P/s2.img" of="$U" bs=$B skip=1300 seek=1300 count=16 conv=notrunc status=none && umark 1300 16 same
uexp=$(for ((i = 0; i < NB; i++)); do
	case ${ud[i]:-} in
	data) echo "$i data" ;;
	zero) s2_nonzero "$i" && echo "$i hole" ;;
	esac
done)
out=$(sv diff src/s2 src/u 2>"$work/err")
check_eq "diff src/s2 src/u: exit 0" 0 "$?"
check "diff says on stderr it compares content" grep -q 'comparing their content' "$work/err" || show "$(cat "$work/err")"
check_eq "diff: one line on stderr" 1 "$(grep -c '' "$work/err")"
ugot=$(blocks <<<"$out")
same_blocks "diff by content: exactly the blocks whose content differs" "$uexp" "$ugot"
check "blocks zeroed over data are holes" grep -qx '1400 hole' <<<"$ugot"
check_fails "blocks written back with s2's content are not reported" grep -Eq '^13(0[0-9]|1[0-5]) ' <<<"$ugot"
check_eq "diff --json says method content" content "$(sv diff --json src/s2 src/u 2>/dev/null | json_num method)"
check "remove src/u" sv remove src/u

# --- 3. full send and receive ----------------------------------------------
check "send src/s1 (full)" into "$ST/s1.full" sv send src/s1
check "receive it into dst" sv receive dst <"$ST/s1.full"
D=$X/dst
check "dst/s1 is byte-identical to src/s1" cmp "$P/s1.img" "$D/s1.img"
check_eq "the same allocated size (holes stay holes)" "$(stat -c %b "$P/s1.img")" "$(stat -c %b "$D/s1.img" 2>&1)"
check_eq "metadata: kind snapshot, the sender's id, size and origin" \
	"snapshot $(meta id "$P/s1.img") $(meta size "$P/s1.img") v" \
	"$(meta kind "$D/s1.img") $(meta id "$D/s1.img") $(meta size "$D/s1.img") $(meta origin_name "$D/s1.img")"
check_eq "listed as a snapshot" "s1 snapshot 32M" "$(sv list --noheadings dst 2>&1 | awk '{ print $2, $3, $4 }')"
a1=$(alloc "$P/s1.img")
s1_stream=$(size "$ST/s1.full")
check "the stream carries the data: >= allocated bytes ($s1_stream >= $a1)" test "$s1_stream" -ge "$a1"
check "no zeros for holes: <= allocated bytes + 64K ($s1_stream, image 32M)" test "$s1_stream" -le $((a1 + 65536))
recs=$(records "$ST/s1.full")
check_eq "the full stream: DATA and HOLE records covering the image, then END, to its last byte" \
	"covers 33554432, max data 1048576, in order, end at $s1_stream" \
	"$(awk '$1 == "end" { e = $2; next } $2 == 3 { next }
		$3 != pos { bad = 1 } { pos = $3 + $4 } $2 == 1 && $4 > m { m = $4 }
		END { printf "covers %d, max data %d, %s, end at %d", pos, m, bad ? "gaps" : "in order", e }' <<<"$recs")"
check "it has HOLE records" grep -q '^[0-9]* 2 ' <<<"$recs"
check_eq "its header announces the data bytes and records" \
	"$(u64 "$ST/s1.full" 40) $(u64 "$ST/s1.full" 48)" \
	"$(awk '$2 == 1 { d += $4 } $2 == 1 || $2 == 2 { n++ } END { print d, n }' <<<"$recs")"

# --- 4. incremental, and a chain -------------------------------------------
check "send --from s1 src/s2" into "$ST/s2.inc" sv send --from s1 src/s2
check "receive it into dst (which holds s1)" sv receive dst <"$ST/s2.inc"
check "dst/s2 is byte-identical to src/s2" cmp "$P/s2.img" "$D/s2.img"
check_eq "dst/s2: kind snapshot, the sender's id" "snapshot $(meta id "$P/s2.img")" \
	"$(meta kind "$D/s2.img") $(meta id "$D/s2.img")"
s2_stream=$(size "$ST/s2.inc")
check "the incremental stream carries the changed data: >= $diff_data bytes ($s2_stream)" \
	test "$s2_stream" -ge "$diff_data"
check "and little more: <= 1% + 64K over the $diff_bytes changed bytes ($s2_stream)" \
	test "$s2_stream" -le $((diff_bytes + diff_bytes / 100 + 65536))
recs=$(records "$ST/s2.inc")
check_eq "its records are the diff's ranges" "$(awk '{ print $1, $2, ($3 == "data" ? 1 : 2) }' <<<"$(sv diff src/s1 src/s2)")" \
	"$(awk '$2 == 1 || $2 == 2 { print $3, $4, $2 }' <<<"$recs")"
check "send src/s2 (full, for later)" into "$ST/s2.full" sv send src/s2

# s3: more random writes; s4: the volume grown, written past the old end.
for ((k = 0; k < 20; k++)); do rand_write; done
check "snapshot src/v s3" sv snapshot src/v s3
check "resize src/v to 36M" sv resize --size 36M src/v
pw "$V" 8200 30 0x55
pw "$V" 10 3 0x56
punch "$V" 3000 100
check "snapshot src/v s4" sv snapshot src/v s4
check "send --from s2 src/s3" into "$ST/s3.inc" sv send --from s2 src/s3
check "send --from src/s3 src/s4" into "$ST/s4.inc" sv send --from src/s3 src/s4
check "receive s3 (from s2) into dst" sv receive dst <"$ST/s3.inc"
check "dst/s3 is byte-identical to src/s3" cmp "$P/s3.img" "$D/s3.img"
check "receive s4 (from s3) into dst" sv receive dst <"$ST/s4.inc"
check "dst/s4 is byte-identical to src/s4 (grown to 36M)" cmp "$P/s4.img" "$D/s4.img"
check_eq "dst/s4: 36M in metadata and file" "37748736 37748736" "$(meta size "$D/s4.img") $(size "$D/s4.img")"
check_eq "dst holds the four snapshots, nothing else" "s1.img s2.img s3.img s4.img" "$(entries "$D")"

# A base the receiver lacks.
check "receive s1 (full) into oth" sv receive oth <"$ST/s1.full"
receive_refused "s3 (from s2) into oth, which lacks s2" oth 'incremental from snapshot s2 .*does not hold' "$ST/s3.inc"
check_eq "no hidden files in oth" "" "$(hidden "$X/oth")"

# --- 5. corrupt, cut, too big, already held --------------------------------
check "receive s1 (full) into cor" sv receive cor <"$ST/s1.full"
for kind in inc full; do
	f=$ST/s2.$kind
	recs=$(records "$f")
	first=$(awk '$2 == 1 { print $1; exit }' <<<"$recs")
	hole=$(awk '$2 == 2 { print $1; exit }' <<<"$recs")
	second=$(awk 'NR == 2 { print $1 }' <<<"$recs")
	tlen=$(u32 "$f" 36)
	fsz=$(size "$f")
	bad='corrupt|checksum'
	receive_refused "$kind: a flipped byte in the header" cor "$bad" "$(flip "$f" 24)"
	receive_refused "$kind: a flipped byte in the header's text" cor "$bad" "$(flip "$f" $((HDR + tlen / 2)))"
	receive_refused "$kind: a flipped byte in a data record's payload" cor 'data record [0-9]+ is corrupt' "$(flip "$f" $((first + REC + 100)))"
	receive_refused "$kind: a data record's type changed" cor "$bad" "$(flip "$f" "$first" 0x04)"
	receive_refused "$kind: a data record's offset 4K on" cor "$bad" "$(flip "$f" $((first + 9)) 0x10)"
	receive_refused "$kind: a data record's checksum changed" cor "$bad" "$(flip "$f" $((first + 5)))"
	receive_refused "$kind: a hole record's length changed" cor "$bad" "$(flip "$f" $((hole + 17)) 0x10)"
	receive_refused "$kind: a flipped byte in the final checksum" cor 'the end record is corrupt' "$(flip "$f" $((fsz - 1)))"
	early='ends early'
	receive_refused "$kind: cut inside the header" cor "$early" "$(cut_at "$f" 30)"
	receive_refused "$kind: cut inside the header's text" cor "$early" "$(cut_at "$f" $((HDR + tlen / 2)))"
	receive_refused "$kind: cut after the header" cor "$early" "$(cut_at "$f" $((HDR + tlen)))"
	receive_refused "$kind: cut between records" cor "$early" "$(cut_at "$f" "$second")"
	receive_refused "$kind: cut inside a record" cor "$early" "$(cut_at "$f" $((second + 10)))"
	receive_refused "$kind: cut inside a payload" cor "$early" "$(cut_at "$f" $((first + REC + 100)))"
	receive_refused "$kind: cut before the end record" cor "$early" "$(cut_at "$f" $((fsz - REC - 32)))"
	receive_refused "$kind: cut inside the end record" cor "$early" "$(cut_at "$f" $((fsz - 10)))"
	cp "$f" "$work/trail" && echo garbage >>"$work/trail"
	receive_refused "$kind: garbage after the end" cor 'follow' "$work/trail"
done
# A stream rewritten with its checksums made anew (found by
# scripts/fuzz-receive): the incremental one without its base_id line is a
# full stream that leaves blocks undescribed, which must not read as zeros.
python3 "$ROOT/scripts/fuzz-mutate.py" reseal "$ST/s2.inc" base_id "$work/nobase"
check_eq "the rewritten stream has no base_id and checks out" "0 0" \
	"$(grep -ac '^base_id=' "$work/nobase") $(python3 "$ROOT/scripts/fuzz-mutate.py" reseal "$work/nobase" "$work/nobase2"; cmp -s "$work/nobase" "$work/nobase2"; echo $?)"
receive_refused "an incremental stream without its base_id, sealed anew (a full stream with gaps)" cor \
	'^subvol: receive: (record [0-9]+ \(offset [0-9]+\) leaves bytes [0-9]+-[0-9]+ of a full stream undescribed|the full stream ends at byte [0-9]+ of its [0-9]+) \(corrupt stream\)' \
	"$work/nobase" nobase
receive_refused "an empty input" cor 'empty' /dev/null
echo "not a stream" >"$work/junk"
receive_refused "not a stream" cor 'not a subvol stream' "$work/junk"
check_eq "no hidden files in cor" "" "$(hidden "$X/cor")"
check "the intact incremental stream is received" sv receive cor <"$ST/s2.inc"
check "cor/s2 is byte-identical to src/s2" cmp "$P/s2.img" "$X/cor/s2.img"
receive_refused "the same snapshot again, under another name" cor 'holds this snapshot already, as s2' "$ST/s2.full" again
receive_refused "s3 under an existing name (s1)" cor 'has a volume s1 already' "$ST/s3.inc" s1
check "s3 under a new name: receive cor s3new" sv receive cor s3new <"$ST/s3.inc"
check "cor/s3new is byte-identical to src/s3" cmp "$P/s3.img" "$X/cor/s3new.img"
check_eq "cor/s3new has s3's id" "$(meta id "$P/s3.img")" "$(meta id "$X/cor/s3new.img")"
check "a full stream under a new name: receive oth copy2" sv receive oth copy2 <"$ST/s2.full"
check "oth/copy2 is byte-identical to src/s2" cmp "$P/s2.img" "$X/oth/copy2.img"

# Too big: the small XFS filled to leave ~40M, a stream of 64M of data.
free=$(($(stat -f -c '%a * %S' "$SM")))
check "fill the small XFS to 40M free" fallocate -l $((free - (40 << 20))) "$SM/filler"
free=$(($(stat -f -c '%a * %S' "$SM")))
check "less than 64M free on it ($((free >> 20))M)" test "$free" -lt $((64 << 20))
check "create src/big (64M), all data" sv create --inactive --size 64M src/big
xfs_io -c "pwrite -q -S 0x5a 0 64M" "$P/big.img"
check "snapshot src/big bigsnap" sv snapshot src/big bigsnap
check "send src/bigsnap" into "$ST/big.full" sv send src/bigsnap
check "its header announces 64M of data" test "$(u64 "$ST/big.full" 40)" -eq $((64 << 20))
receive_refused "a stream of 64M of data into the small pool" tiny 'pool tiny has [0-9.]+[KMG] free; the stream needs [0-9.]+[KMG]' "$ST/big.full"
receive_refused "its header alone: refused up front, not as cut" tiny 'pool tiny has [0-9.]+[KMG] free; the stream needs [0-9.]+[KMG]' \
	"$(cut_at "$ST/big.full" $((HDR + $(u32 "$ST/big.full" 36) + 100)))"
check_eq "tiny is still empty" "" "$(entries "$SM/tiny")"
check "a smaller stream fits (s1, full)" sv receive tiny <"$ST/s1.full"
check "tiny/s1 is byte-identical to src/s1" cmp "$P/s1.img" "$SM/tiny/s1.img"
check "remove src/big src/bigsnap" sv remove src/big src/bigsnap
rm -f "$ST/big.full"

# --- 6. send's refusals ----------------------------------------------------
refused "send of a volume" 'is a volume, not a snapshot' /dev/null sv send src/v
check_eq "nothing written" 0 "$(sv send src/v 2>/dev/null | wc -c)"
refused "send --from itself" 'is the snapshot itself' /dev/null sv send --from s1 src/s1
refused "send --from a volume" 'is a volume, not a snapshot' /dev/null sv send --from v src/s2
refused "send --from a missing snapshot" 'nosuch' /dev/null sv send --from nosuch src/s2
check_status "send without a snapshot: usage error" 2 sv send
check_status "receive without a pool: usage error" 2 sv receive
check_status "receive --from: usage error (an option of send)" 2 sv receive --from s1 x </dev/null
if command -v script >/dev/null; then
	out=$(script -qec "$SUBVOL send src/s1" /dev/null 2>&1)
	status=$?
	check_eq "send to a terminal: exit 1" 1 "$status"
	check "it says so" grep -q 'terminal' <<<"$out" || show "$out"
	check "and writes no stream there" test "${#out}" -lt 1000
else
	echo "# skipped: send to a terminal (no script(1))"
fi

# --- 7. over TCP between two network namespaces -----------------------------
check "receive s1 (full) into net" sv receive net <"$ST/s1.full"
if ! ip netns add "$ns_a" 2>"$work/err"; then
	echo "# skipped: a stream over TCP (ip netns add: $(head -n 1 "$work/err"))"
elif ! command -v socat >/dev/null; then
	echo "# skipped: a stream over TCP (no socat)"
else
	veth_a=svs$$a veth_b=svs$$b
	port=$((20000 + $$ % 20000))
	check "netns $ns_b" ip netns add "$ns_b"
	check "a veth pair between them" ip link add "$veth_a" netns "$ns_a" type veth peer name "$veth_b" netns "$ns_b"
	check "10.99.0.1/24 in A" ip -n "$ns_a" addr add 10.99.0.1/24 dev "$veth_a"
	check "10.99.0.2/24 in B" ip -n "$ns_b" addr add 10.99.0.2/24 dev "$veth_b"
	check "links up" sh -c "ip -n $ns_a link set $veth_a up && ip -n $ns_b link set $veth_b up &&
		ip -n $ns_a link set lo up && ip -n $ns_b link set lo up"
	timeout 30 ip netns exec "$ns_b" sh -c \
		"socat -u TCP-LISTEN:$port,reuseaddr STDOUT | '$SUBVOL' receive net" >"$work/tcp.out" 2>"$work/tcp.err" &
	bg_pid=$!
	for ((k = 0; k < 50; k++)); do
		ip netns exec "$ns_b" ss -Hltn "sport = :$port" 2>/dev/null | grep -q . && break
		sleep 0.1
	done
	check "the listener is up in B" ip netns exec "$ns_b" sh -c "ss -Hltn 'sport = :$port' | grep -q ."
	check "send --from s1 src/s2 | socat to B" timeout 30 ip netns exec "$ns_a" sh -c \
		"'$SUBVOL' send --from s1 src/s2 | socat -u STDIN TCP:10.99.0.2:$port,retry=50,interval=0.1"
	wait "$bg_pid"
	status=$?
	bg_pid=
	check_eq "receive in B: exit 0" 0 "$status" || show "$(cat "$work/tcp.err")"
	check "it says it received net/s2" grep -q 'Received snapshot net/s2' "$work/tcp.out"
	check "net/s2 is byte-identical to src/s2" cmp "$P/s2.img" "$X/net/s2.img"
fi

# --- 8. --summary ----------------------------------------------------------
sv send --summary --from s1 src/s2 >"$ST/sum" 2>"$work/sum.err"
check_eq "send --summary: exit 0, one line on stderr" "0 1" "$? $(grep -c '' "$work/sum.err")"
sum=$(cat "$work/sum.err")
check_json "send --summary is JSON" "$sum"
check "the stream is the same as without --summary" cmp "$ST/sum" "$ST/s2.inc"
recs=$(records "$ST/sum")
check_eq "send --summary: stream_bytes is the stream's size" "$(size "$ST/sum")" "$(json_num stream_bytes <<<"$sum")"
check_eq "send --summary: data_bytes and hole_bytes are the diff's" "$diff_data $diff_hole" \
	"$(json_num data_bytes <<<"$sum") $(json_num hole_bytes <<<"$sum")"
check_eq "send --summary: data_ranges and hole_ranges are the stream's records" \
	"$(grep -c '^[0-9]* 1 ' <<<"$recs") $(grep -c '^[0-9]* 2 ' <<<"$recs")" \
	"$(json_num data_ranges <<<"$sum") $(json_num hole_ranges <<<"$sum")"
check_eq "send --summary: command, snapshot, base, stream, method" "send s2 s1 incremental extents" \
	"$(json_num command <<<"$sum") $(json_num snapshot <<<"$sum") $(json_num base <<<"$sum") $(json_num stream <<<"$sum") $(json_num method <<<"$sum")"
sv send --summary src/s1 2>"$work/sum.err" | wc -c >"$work/sum.size"
sum=$(cat "$work/sum.err")
check_eq "send --summary (full): stream_bytes is the stream's size, base null" "$(cat "$work/sum.size") null full" \
	"$(json_num stream_bytes <<<"$sum") $(json_num base <<<"$sum") $(json_num method <<<"$sum")"
check_eq "and data_bytes the allocated bytes" "$a1" "$(json_num data_bytes <<<"$sum")"
sv receive --summary tiny <"$ST/sum" >"$work/sum.out" 2>"$work/sum.err"
check_eq "receive --summary s2 into tiny (which holds s1): exit 0" 0 "$?" || show "$(cat "$work/sum.err")"
check "it says so on stdout" grep -q '^Received snapshot tiny/s2 ' "$work/sum.out"
sum=$(cat "$work/sum.err")
check_eq "receive --summary: one line on stderr" 1 "$(grep -c '' "$work/sum.err")"
check_json "receive --summary is JSON" "$sum"
check_eq "receive --summary: stream_bytes, data_bytes, stream, method" "$(size "$ST/sum") $diff_data incremental null" \
	"$(json_num stream_bytes <<<"$sum") $(json_num data_bytes <<<"$sum") $(json_num stream <<<"$sum") $(json_num method <<<"$sum")"
check_eq "its message counts the data and hole records apart, as the summary does" \
	"$(json_num data_ranges <<<"$sum") data and $(json_num hole_ranges <<<"$sum") hole records" \
	"$(sed -n 's/.* in \([0-9]* data and [0-9]* hole records\).*/\1/p' "$work/sum.out")"
check "tiny/s2 is byte-identical to src/s2" cmp "$P/s2.img" "$SM/tiny/s2.img"

echo "# streams: full s1 $s1_stream bytes for $a1 allocated (image 32M);" \
	"incremental s1..s2 $s2_stream bytes for $diff_bytes changed ($diff_data data, $diff_hole hole)"
finish
