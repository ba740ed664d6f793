#!/bin/bash
# Native test of the subvol tool's administration commands on a
# loop-mounted host XFS: rename, set, import (reflink and sparse copy),
# pool export, pool import (--name, a cp -a copy), pool remove, and the
# bash completion.  Each refusal exits 1 with one line naming the object
# and the cause, and changes nothing.  Nothing here needs device-mapper,
# so the volumes are all inactive.  Needs root (loop mounts).
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

# shellcheck source=SCRIPTDIR/../lib/tooltest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tooltest.sh"

tooltest_start subvol-admin
reg=$SUBVOL_CONFIG_DIR/pools

# refused NAME WORD REGEX CMD...: CMD exits 1 with a single line on stderr
# that names WORD and matches REGEX (why).
refused() {
	local name=$1 word=$2 re=$3 err status=0 lines named why
	shift 3
	err=$("$@" 2>&1 >/dev/null </dev/null) || status=$?
	lines=$(printf '%s' "$err" | grep -c '')
	named=no
	[[ $err == *"$word"* ]] && named=yes
	why=no
	[[ $err =~ $re ]] && why=yes
	check_eq "$name" "exit 1, 1 line, names $word: yes, says /$re/: yes" \
		"exit $status, $lines line, names $word: $named, says /$re/: $why" || show "$err"
}
# pool_attr DIR: the pool's user.subvol.pool.
pool_attr() { getfattr --absolute-names --only-values -n user.subvol.pool "$1" 2>/dev/null; }
pool_key() { pool_attr "$2" | sed -n "s/^$1=//p"; }
vol_attr() { getfattr --absolute-names --only-values -n user.subvol.volume "$1" 2>/dev/null; }
# shared FILE: whether any extent of FILE is shared (reflinked).
shared() { filefrag -v "$1" 2>/dev/null | grep -q shared; }

mkdir -p "$work/mnt/xfs"
truncate -s 1G "$work/xfs.fs"
check "mkfs.xfs (reflink)" mkfs.xfs -q "$work/xfs.fs" || { finish; exit; }
check "mount it" mount -o loop "$work/xfs.fs" "$work/mnt/xfs" || { finish; exit; }
X=$work/mnt/xfs
check "pool create main" sv pool create "$X/main" || { finish; exit; }
M=$X/main

# --- rename ----------------------------------------------------------------
check "create main/data (8M)" sv create --inactive --size 8M main/data
head -c 2M /dev/urandom >"$work/random"
dd if="$work/random" of="$M/data.img" bs=1M seek=1 conv=notrunc status=none
cp "$M/data.img" "$work/data.content"
data_id=$(meta id "$M/data.img")
check "snapshot main/data snap1" sv snapshot main/data snap1
check "clone main/snap1 c1" sv clone main/snap1 c1
dd if=/dev/urandom of="$M/data.img" bs=4K count=1 seek=10 conv=notrunc status=none
cp "$M/data.img" "$work/data.changed"

out=$(sv rename main/data data2 2>&1)
check_eq "rename main/data data2" "Volume main/data renamed to main/data2" "$out"
check_fails "data.img is gone" test -e "$M/data.img"
check "data2.img holds its content" cmp "$M/data2.img" "$work/data.changed"
check_eq "and its metadata (same id)" "$data_id" "$(meta id "$M/data2.img")"
check_eq "the pool holds c1 data2 snap1" "c1.img data2.img snap1.img" "$(entries "$M")"
check "rollback main/data2 snap1: the snapshot still is its own (by id)" sv rollback main/data2 snap1
check "rolled back to the snapshot's content" cmp "$M/data2.img" "$work/data.content"
check "rename a snapshot: main/snap1 main/s1 (POOL/NEW)" sv rename main/snap1 main/s1
check_eq "it keeps its kind and origin id" "snapshot $data_id" "$(meta kind "$M/s1.img") $(meta origin_id "$M/s1.img")"
check "rollback main/data2 s1 (renamed snapshot, renamed volume)" sv rollback main/data2 s1
check "clone main/s1 c2" sv clone main/s1 c2
check "c2 holds the snapshot's content" cmp "$M/c2.img" "$work/data.content"
check "rename by the pool's path: $M/c2 c2b" sv rename "$M/c2" c2b
check "rename with NEW as the pool's path" sv rename main/c2b "$M/c2c"
check "c2c is there" test -f "$M/c2c.img"

cp "$M/c1.img" "$work/c1.content"
refused "rename onto an existing volume" main/s1 'exists already' sv rename main/c1 s1
check "both images are unchanged (c1)" cmp "$M/c1.img" "$work/c1.content"
check "both images are unchanged (s1)" cmp "$M/s1.img" "$work/data.content"
# An invalid name is a usage error (exit 2, then "Try ... --help"), as create's.
# usage_refused NAME WORD CMD...: exit 2, WORD named, "not a valid name", Try.
usage_refused() {
	local name=$1 word=$2 err status=0
	shift 2
	err=$("$@" 2>&1 >/dev/null </dev/null) || status=$?
	check_eq "$name" "exit 2, names $word: yes, then Try: yes" \
		"exit $status, names $word: $([[ $err == *"$word"*"not a valid name"* ]] && echo yes || echo no), then Try: $(grep -q "^Try 'subvol [a-z]* --help'" <<<"$err" && echo yes || echo no)" ||
		show "$err"
}
usage_refused "rename to a name with a leading dot" main/.c1 sv rename main/c1 .c1
usage_refused "rename to a name with a leading dash" main/-c1 sv rename -- main/c1 -c1
usage_refused "rename to a 65-character name" main/ sv rename main/c1 "$(printf 'n%.0s' {1..65})"
refused "rename into another pool" other/c1 'not in pool main' sv rename main/c1 other/c1
refused "rename of a volume that does not exist" main/nope 'no such volume' sv rename main/nope x
refused "rename to its own name" main/c1 'exists already' sv rename main/c1 c1
check_eq "the refusals changed nothing" "c1.img c2c.img data2.img s1.img" "$(entries "$M")"
check_status "rename without NEW: usage error" 2 sv rename main/c1
check_status "rename with three arguments: usage error" 2 sv rename main/c1 a b
check_status "rename --bogus: usage error" 2 sv rename --bogus main/c1 x
check "rename --help" sv rename --help

# --- set -------------------------------------------------------------------
attrs() { echo "$(meta no_space "$1") $(meta no_space_timeout "$1") $(meta low_water "$1") $(meta ignore_discard "$1")"; }
before=$(vol_attr "$M/data2.img")
out=$(sv set --no-space queue --no-space-timeout 30 --low-water 1M --ignore-discard main/data2 2>&1)
check_eq "set --no-space queue --no-space-timeout 30 --low-water 1M --ignore-discard" \
	"Volume main/data2: no-space queue, no-space-timeout 30, low-water 1M, ignore-discard" "$out"
check_eq "metadata: the options" "queue 30 2048 1" "$(attrs "$M/data2.img")"
check_eq "metadata: id, kind, size, guarantee, origin unchanged" \
	"$(grep -vE '^(no_space|no_space_timeout|low_water|ignore_discard)=' <<<"$before")" \
	"$(vol_attr "$M/data2.img" | grep -vE '^(no_space|no_space_timeout|low_water|ignore_discard)=')"
check "the content is unchanged" cmp "$M/data2.img" "$work/data.content"
check "set --no-space-timeout 60 (queue already)" sv set --no-space-timeout 60 main/data2
check_eq "metadata: timeout 60, the rest kept" "queue 60 2048 1" "$(attrs "$M/data2.img")"
check "set --no-space error: the timeout goes with it" sv set --no-space error main/data2
check_eq "metadata: error, timeout 0" "error 0 2048 1" "$(attrs "$M/data2.img")"
check "set --no-ignore-discard --low-water 0" sv set --no-ignore-discard --low-water 0 main/data2
check_eq "metadata: back to the defaults" "error 0 0 0" "$(attrs "$M/data2.img")"
check "set --low-water 8184K (just below the 8M size)" sv set --low-water 8184K main/data2
check_eq "metadata: low_water 16368 sectors" 16368 "$(meta low_water "$M/data2.img")"

before=$(vol_attr "$M/data2.img")
# A usage error (exit 2), as create's for the same value.
for lw in 8M 1G; do
	out=$(sv set --low-water $lw main/data2 2>&1 >/dev/null </dev/null; echo "rc=$?")
	check_eq "set --low-water $lw on an 8M volume: usage error naming it" "yes rc=2" \
		"$(grep -q "^subvol set: --low-water: $lw is not below the size of main/data2 (8M)" <<<"$out" && echo yes) $(tail -n 1 <<<"$out")" || show "$out"
done
refused "set --no-space-timeout on a volume that errors" main/data2 'needs --no-space queue' \
	sv set --no-space-timeout 5 main/data2
snap_before=$(vol_attr "$M/s1.img")
refused "set on a snapshot" main/s1 'snapshot is read-only' sv set --ignore-discard main/s1
check_eq "the snapshot's metadata is unchanged" "$snap_before" "$(vol_attr "$M/s1.img")"
refused "set on a volume that does not exist" main/nope 'no such volume' sv set --ignore-discard main/nope
check_eq "the refusals left the metadata alone" "$before" "$(vol_attr "$M/data2.img")"
check_status "set without options: usage error" 2 sv set main/data2
check_status "set --no-space maybe: usage error" 2 sv set --no-space maybe main/data2
check_status "set --no-space error --no-space-timeout 5: usage error" 2 sv set --no-space error --no-space-timeout 5 main/data2
check_status "set --no-space-timeout 0: usage error" 2 sv set --no-space-timeout 0 main/data2
check_status "set --low-water 1000 (not whole sectors): usage error" 2 sv set --low-water 1000 main/data2
check_status "set --ignore-discard --no-ignore-discard: usage error" 2 sv set --ignore-discard --no-ignore-discard main/data2
check_status "set --no-ignore-discard --ignore-discard: usage error" 2 sv set --no-ignore-discard --ignore-discard main/data2
check_status "set --guarantee none (not changeable): usage error" 2 sv set --guarantee none main/data2
check_status "set without a volume: usage error" 2 sv set --ignore-discard
check_eq "the usage errors left the metadata alone" "$before" "$(vol_attr "$M/data2.img")"
check "set --low-water 4M on main/c1 (8M)" sv set --low-water 4M main/c1
refused "resize --yes --size 4M below it" main/c1 'low-water mark is not below' sv resize --yes --size 4M main/c1
check_eq "the size is kept" "8388608 8388608" "$(stat -c %s "$M/c1.img") $(meta size "$M/c1.img")"
check "resize --yes --size 5M above it" sv resize --yes --size 5M main/c1
check "set --low-water 0 main/c1" sv set --low-water 0 main/c1
check_status "create --low-water 1G on a 100M volume: usage error (review item 8)" 2 \
	sv create --inactive --size 100M --low-water 1G main/lw
check_fails "nothing made" test -e "$M/lw.img"

# --- import ----------------------------------------------------------------
# A raw file off the pool's filesystem: 1M of data, a 1M hole, 1M of data,
# 1M of written zeros, and 1000 bytes more (not whole host blocks).
raw=$work/disk.raw
truncate -s $((4 * 1048576 + 1000)) "$raw"
dd if="$work/random" of="$raw" bs=1M count=1 conv=notrunc status=none
dd if="$work/random" of="$raw" bs=1M skip=1 seek=2 count=1 conv=notrunc status=none
dd if=/dev/zero of="$raw" bs=1M seek=3 count=1 conv=notrunc status=none
printf 'tail' | dd of="$raw" bs=1 seek=$((4 * 1048576 + 996)) conv=notrunc status=none
check "the raw file is off the pool's filesystem" test "$(stat -c %d "$raw")" != "$(stat -c %d "$X")"
out=$(sv import "$raw" main/disk 2>&1)
check_eq "import (a copy): says it rounds the size and what it copied" \
	"Rounding the size up to 4M (4198400 bytes, whole 4096-byte host blocks)
Volume main/disk imported from $raw (4M, 2M of data copied), inactive" "$out"
check_eq "the image has the rounded size" 4198400 "$(stat -c %s "$M/disk.img")"
check "its first bytes are the file's" cmp -n $((4 * 1048576 + 1000)) "$raw" "$M/disk.img"
check "the rest is zeros" cmp -i $((4 * 1048576 + 1000)):0 -n 3096 "$M/disk.img" /dev/zero
check_eq "the hole and the zeros take no space: 2M + 1 block allocated" $((2 * 1048576 + 4096)) "$(alloc "$M/disk.img")"
check_eq "metadata: a volume of 4198400 bytes, guarantee full, no origin" "volume 4198400 full " \
	"$(meta kind "$M/disk.img") $(meta size "$M/disk.img") $(meta guarantee "$M/disk.img") $(meta origin_id "$M/disk.img")"
check "metadata: a new id" grep -Eq '^[0-9a-f]{32}$' <<<"$(meta id "$M/disk.img")"
check "the file is kept without --move" test -f "$raw"
check_eq "list shows it" "main disk volume" "$(sv list --noheadings main 2>&1 | awk '$2 == "disk" { print $1, $2, $3 }')"
check_eq "nothing hidden is left in the pool" "" "$(hidden "$M")"

# On the pool's filesystem: a reflink.
mkdir "$X/incoming"
cp "$raw" "$X/incoming/vm.raw"
free_before=$(stat -f -c %f "$X")
out=$(sv import "$X/incoming/vm.raw" main/vm 2>&1)
check "import from the pool's filesystem says reflinked" grep -q "^Volume main/vm imported from $X/incoming/vm.raw (4M, reflinked), inactive$" <<<"$out" || show "$out"
check "the image's content is the file's" cmp -n $((4 * 1048576 + 1000)) "$raw" "$M/vm.img"
check "its extents are shared with the file" shared "$M/vm.img"
check "no data was written: free blocks within 16 of before" \
	test $((free_before - $(stat -f -c %f "$X"))) -lt 16
cp "$X/incoming/vm.raw" "$X/incoming/mv.raw"
out=$(sv import --move "$X/incoming/mv.raw" main/mv 2>&1)
check "import --move (reflink)" grep -q "^Removed $X/incoming/mv.raw$" <<<"$out" || show "$out"
check_fails "the file is gone" test -e "$X/incoming/mv.raw"
check "the volume holds its content" cmp -n $((4 * 1048576 + 1000)) "$raw" "$M/mv.img"
cp "$raw" "$work/mv2.raw"
check "import --move (a copy)" sv import --move "$work/mv2.raw" main/mv2
check_fails "the file is gone" test -e "$work/mv2.raw"
check "the volume holds its content" cmp -n $((4 * 1048576 + 1000)) "$raw" "$M/mv2.img"
# An aligned file is not rounded.
head -c 64K /dev/urandom >"$work/aligned.raw"
out=$(sv import "$work/aligned.raw" main/aligned 2>&1)
check_eq "an aligned file: no rounding" "Volume main/aligned imported from $work/aligned.raw (64K, 64K of data copied), inactive" "$out"
check "its content" cmp "$work/aligned.raw" "$M/aligned.img"
# The image of another pool's volume moves with --move (inactive here).
check "pool create second" sv pool create "$X/second"
check "import --move main/aligned.img into pool second" sv import --move "$M/aligned.img" second/moved
check_fails "main/aligned is gone" test -e "$M/aligned.img"
check "second/moved holds its content" cmp "$work/aligned.raw" "$X/second/moved.img"
check_fails "the sharing record is not carried" getfattr --absolute-names -n trusted.dm-subvol.shared "$X/second/moved.img"

listing=$(entries "$M")
refused "import of a directory" "$X/incoming" 'a directory' sv import "$X/incoming" main/d
refused "import of a character device" /dev/null 'character device' sv import /dev/null main/d
refused "import of a missing file" "$work/none.raw" 'No such file' sv import "$work/none.raw" main/d
: >"$work/empty.raw"
refused "import of an empty file" "$work/empty.raw" 'empty' sv import "$work/empty.raw" main/d
mkfifo "$work/fifo"
refused "import of a FIFO (without blocking)" "$work/fifo" 'FIFO' timeout 10 "$SUBVOL" import "$work/fifo" main/d
refused "import onto an existing volume" main/disk 'exists already' sv import "$raw" main/disk
usage_refused "import to an invalid name" main/.d sv import "$raw" main/.d
refused "import into a pool that does not exist" nopool 'no such pool' sv import "$raw" nopool/d
chmod 600 "$raw"
if command -v setpriv >/dev/null; then
	# As a user it is refused before the file is read: import needs root.
	refused "import as a user" "import" 'needs root' \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$SUBVOL" import "$raw" main/d
fi
check_eq "the refusals left the pool as it was" "$listing" "$(entries "$M")"
check "the imported file is unchanged" cmp -n $((4 * 1048576 + 1000)) "$raw" "$M/disk.img"
check_status "import with one argument: usage error" 2 sv import "$raw"
check_status "import --bogus: usage error" 2 sv import --bogus "$raw" main/d

# --- pool export and pool import -------------------------------------------
check "pool create exp" sv pool create "$X/exp"
check "a volume in it" sv create --inactive --size 1M exp/v
printf 'exp data' | dd of="$X/exp/v.img" conv=notrunc status=none
cp "$X/exp/v.img" "$work/expv.content"
exp_attr=$(pool_attr "$X/exp")
exp_id=$(pool_key id "$X/exp")
out=$(sv pool export exp 2>&1)
check_eq "pool export exp" "Pool exp exported: $X/exp is kept (subvol pool import $X/exp brings it back)" "$out"
check_fails "its registration is gone" test -L "$reg/exp"
check_eq "the directory keeps its attribute" "$exp_attr" "$(pool_attr "$X/exp")"
check "and its image" cmp "$X/exp/v.img" "$work/expv.content"
check_eq "its volume keeps its metadata" "volume" "$(meta kind "$X/exp/v.img")"
check_fails "pool status exp: no such pool now" sv pool status exp
refused "pool export again: not registered" exp 'not registered' sv pool export "$X/exp"
refused "pool export of a pool that does not exist" nopool 'no such pool' sv pool export nopool
out=$(sv pool import "$X/exp" 2>&1)
check_eq "pool import brings it back" "Pool exp at $X/exp registered" "$out"
check_eq "registered again" "$X/exp" "$(readlink "$reg/exp")"
check_eq "with its id" "$exp_id" "$(pool_key id "$X/exp")"
out=$(sv pool import "$X/exp" 2>&1)
check_eq "pool import again says it is already registered (review item 13)" \
	"Pool exp at $X/exp is already registered as exp" "$out"
refused "pool import --name of a registered pool" exp 'export' sv pool import --name exp2 "$X/exp"
check_eq "its name stays" "exp" "$(pool_key name "$X/exp")"

# A cp -a copy: the same name and id inside.
cp -a "$X/exp" "$X/exp-copy"
check_eq "the copy has the same pool attribute" "$exp_attr" "$(pool_attr "$X/exp-copy")"
refused "pool import of the copy under its name" exp 'already registered' sv pool import "$X/exp-copy"
check_eq "the name stays the original's" "$X/exp" "$(readlink "$reg/exp")"
check_eq "the copy's attribute is unchanged" "$exp_attr" "$(pool_attr "$X/exp-copy")"
refused "pool import --name with an invalid name" 'bad/name' 'not a valid name' sv pool import --name bad/name "$X/exp-copy"
refused "pool import --name of a name registered to another pool" main 'already registered' \
	sv pool import --name main "$X/exp-copy"
check_eq "the copy's attribute is still unchanged" "$exp_attr" "$(pool_attr "$X/exp-copy")"
out=$(sv pool import --name expcopy "$X/exp-copy" 2>&1)
check_eq "pool import --name expcopy of the copy" \
	"Pool expcopy at $X/exp-copy registered (renamed from exp)
Pool expcopy has a new id: pool exp has its old one (a copy of it), and device-mapper UUIDs must differ" "$out"
check_eq "registered under the new name" "$X/exp-copy" "$(readlink "$reg/expcopy")"
check_eq "the name is in its attribute" expcopy "$(pool_key name "$X/exp-copy")"
copy_id=$(pool_key id "$X/exp-copy")
check "it has a 128-bit id" grep -Eq '^[0-9a-f]{32}$' <<<"$copy_id"
check "a new id" test "$copy_id" != "$exp_id"
check_eq "the original keeps its attribute" "$exp_attr" "$(pool_attr "$X/exp")"
check_eq "and its registration" "$X/exp" "$(readlink "$reg/exp")"
check_eq "the copy's volume is listed" "expcopy v volume" "$(sv list --noheadings expcopy 2>&1 | awk '{ print $1, $2, $3 }')"
check "and holds the data" cmp "$X/exp-copy/v.img" "$work/expv.content"
# Exported, then imported under another name: a rename, the id kept.
check "pool export expcopy" sv pool export expcopy
out=$(sv pool import --name expcopy2 "$X/exp-copy" 2>&1)
check_eq "pool import --name expcopy2 (a rename; its id is its own)" \
	"Pool expcopy2 at $X/exp-copy registered (renamed from expcopy)" "$out"
check_eq "the id is kept" "$copy_id" "$(pool_key id "$X/exp-copy")"
check_fails "the old name is not registered" test -L "$reg/expcopy"
check_status "pool export without POOL: usage error" 2 sv pool export
check_status "pool export --yes: usage error" 2 sv pool export --yes exp

# --- pool remove -----------------------------------------------------------
check "pool create empty" sv pool create "$X/empty"
out=$(sv pool remove empty 2>&1)
check_eq "pool remove of an empty pool needs no --yes" \
	"Pool empty removed (0 volumes deleted); the directory $X/empty is kept" "$out"
check "the directory is kept" test -d "$X/empty"
check_fails "without its attribute" getfattr --absolute-names -n user.subvol.pool "$X/empty"
check_fails "and unregistered" test -L "$reg/empty"
check "pool create full" sv pool create "$X/full"
check "create full/a" sv create --inactive --size 1M full/a
check "snapshot full/a b" sv snapshot full/a b
echo notes >"$X/full/notes.txt"
full_attr=$(pool_attr "$X/full")
refused "pool remove with volumes, no terminal, no --yes" full 'confirm with --yes' sv pool remove full
check_eq "nothing removed" "a.img b.img notes.txt" "$(entries "$X/full")"
check_eq "the attribute stays" "$full_attr" "$(pool_attr "$X/full")"
check "the registration stays" test -L "$reg/full"
out=$(sv pool remove --yes full 2>&1)
check_eq "pool remove --yes" "Pool full removed (2 volumes deleted); the directory $X/full is kept" "$out"
check_eq "only the file that is no image is left" "notes.txt" "$(entries "$X/full")"
check_fails "the attribute is gone" getfattr --absolute-names -n user.subvol.pool "$X/full"
check_fails "the registration is gone" test -L "$reg/full"
refused "pool remove of a directory that is no pool (any more)" "$X/full" 'not a pool' sv pool remove --yes "$X/full"
check "pool export exp" sv pool export exp
check "pool remove --yes of an exported pool, by path" sv pool remove --yes "$X/exp"
check_eq "its image is gone" "" "$(entries "$X/exp")"
check_eq "the other pools are registered as before" "expcopy2 main second" "$(entries "$reg")"
check_status "pool remove without POOL: usage error" 2 sv pool remove
check_status "pool remove with two pools: usage error" 2 sv pool remove main second
check_status "pool bogus: usage error" 2 sv pool bogus

# --- bash completion -------------------------------------------------------
COMPLETION=$ROOT/userspace/completion/subvol
check "the completion is there" test -f "$COMPLETION"
# complete WORD...: the completions of the last word, sorted, on one line.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _subvol
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$COMPLETION" "$@" | sed 's/ $//'
}
check_eq "command names: subvol re" "receive remove rename resize" "$(complete_words subvol re)"
check_eq "subvol --verb" "--verbose" "$(complete_words subvol --verb)"
check_eq "pool subcommands: subvol pool e" "export" "$(complete_words subvol pool e)"
check_eq "an option of create: subvol create --si" "--size" "$(complete_words subvol create --si)"
check_eq "options of set: subvol set --no-" "--no-host-lvm --no-ignore-discard --no-space --no-space-timeout" \
	"$(complete_words subvol set --no-)"
check_eq "a value of --guarantee" "none" "$(complete_words subvol create --guarantee n)"
check_eq "POOL/ names: subvol activate m" "main/" "$(complete_words subvol activate m)"
check_eq "all POOL/ names" "expcopy2/ main/ second/" "$(complete_words subvol status '')"
check_eq "volumes of a pool: subvol rename main/d" "main/data2 main/disk" "$(complete_words subvol rename main/d)"
check_eq "after an option with a value: subvol create --size 1G main/c" "main/c1 main/c2c" \
	"$(complete_words subvol create --size 1G main/c)"
check_eq "pool names: subvol pool export s" "second" "$(complete_words subvol pool export s)"
check_eq "pool remove --y" "--yes" "$(complete_words subvol pool remove --y)"
check_eq "import FILE: files" "$work/disk.raw" "$(complete_words subvol import "$work/disk.")"
check_eq "import FILE POOL/NAME: pools" "second/" "$(complete_words subvol import "$raw" se)"
# Every option of COMMAND --help is completed, and no other.
for c in create import set resize snapshot send receive list status monitor "pool create" \
	"pool import" "pool set" "pool remove"; do
	# shellcheck disable=SC2086 # "pool create" is two words
	want=$("$SUBVOL" ${c} --help 2>/dev/null | grep -oE -- '--[a-z][a-z-]*' | sort -u | tr '\n' ' ' | sed 's/ $//')
	if [[ $c == pool* ]]; then
		# Its synopsis line; AUTOEXTEND there stands for the block of that name.
		synopsis=$("$SUBVOL" pool --help | grep -E "^ *(Usage:)? *subvol $c ")
		[[ $synopsis == *AUTOEXTEND* ]] &&
			synopsis+=$("$SUBVOL" pool --help | sed -n '/^AUTOEXTEND options/,/^$/p')
		want=$(grep -oE -- '--[a-z][a-z-]*' <<<"$synopsis" | sort -u | tr '\n' ' ' | sed 's/ $//')
	fi
	want=$(tr ' ' '\n' <<<"$want --help" | sort -u | tr '\n' ' ' | sed 's/ $//')
	# shellcheck disable=SC2086
	check_eq "completion of subvol $c -- matches its --help" "$want" "$(complete_words subvol $c --)"
done

finish
