#!/bin/bash
# Native tests of the tool review's items (shared/review/tool-review.md,
# issue 13): answers that were wrong with exit status 0 (diff and send
# across filesystems, sizes that wrapped, an incremental receive onto a
# base that changed, counts), and the conventions (options anywhere, exit
# status and prefixes, refusals up front).  Needs root (loop mounts).
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"
# shellcheck source=SCRIPTDIR/../lib/tooltest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tooltest.sh"

tooltest_start subvol-tool-review

# err_is NAME STATUS REGEX CMD...: CMD exits STATUS, and the first line on
# stderr starts with "subvol" and matches REGEX.
err_is() {
	local name=$1 want=$2 re=$3 err status=0 first ok=no
	shift 3
	err=$("$@" 2>&1 >/dev/null) || status=$?
	first=$(head -n 1 <<<"$err")
	[[ $first == subvol* && $first =~ $re ]] && ok=yes
	check_eq "$name" "exit $want, says /$re/: yes" "exit $status, says /$re/: $ok" || show "$err"
}
size_of() { stat -c %s "$1" 2>&1; }

# --- two host filesystems ----------------------------------------------------
mkdir -p "$work/mnt/a" "$work/mnt/b"
for fs in a b; do
	truncate -s 512M "$work/$fs.fs"
	check "mkfs.xfs $fs" mkfs.xfs -q "$work/$fs.fs" || { finish; exit; }
	check "mount $fs" mount -o loop "$work/$fs.fs" "$work/mnt/$fs" || { finish; exit; }
done
A=$work/mnt/a B=$work/mnt/b
check "pool q1 on the first" sv pool create "$A/q1"
check "pool q2 on the second" sv pool create "$B/q2"
head -c 16M /dev/urandom >"$work/r1"
head -c 16M /dev/urandom >"$work/r2"

# --- item 1: diff and send across filesystems ---------------------------------
# The same placement on two fresh filesystems gives the same physical block
# numbers: extent maps must not be compared across them.
check "q1/a" sv create --inactive -s 16M q1/a
check "q2/b" sv create --inactive -s 16M q2/b
dd if="$work/r1" of="$A/q1/a.img" conv=notrunc status=none
dd if="$work/r2" of="$B/q2/b.img" conv=notrunc status=none
check "snapshot q1/as" sv snapshot q1/a as
check "snapshot q2/bs" sv snapshot q2/b bs
out=$(sv diff q1/as q2/bs 2>"$work/err")
check_eq "diff across filesystems: 16 MiB differ" 16777216 \
	"$(awk '{ n += $2 } END { print n + 0 }' <<<"$out")"
check "and says it compared content because of the two filesystems" \
	grep -q '^subvol: diff: q1/as and q2/bs are on different filesystems' "$work/err"
check "diff --json says method content" grep -q '"method": *"content"' <<<"$(sv diff --json q1/as q2/bs 2>/dev/null)"
sv send --from q2/bs q1/as 2>/dev/null | sv receive q2 a2 >/dev/null 2>&1
check "send --from across filesystems: the received copy is q1/as" cmp "$A/q1/as.img" "$B/q2/a2.img"
# On one filesystem the extent maps still decide.
check "q1/as2 (a snapshot of q1/a, unchanged)" sv snapshot q1/a as2
check_eq "diff of two snapshots sharing every block: nothing" "" "$(sv diff q1/as q1/as2 2>&1)"
check_eq "by their extent maps" extents \
	"$(sv diff --json q1/as q1/as2 2>/dev/null | sed -n 's/.*"method": *"\([a-z]*\)".*/\1/p')"

# --- item 3: snapshots are sealed; an incremental base must be unchanged -------
immutable() { lsattr -d "$1" 2>/dev/null | awk '{ print ($1 ~ /i/) ? "immutable" : "writable" }'; }
seal_of() { getfattr --absolute-names --only-values -n "user.subvol.seal.$(meta id "$1")" "$(dirname "$1")" 2>/dev/null; }
check_eq "a snapshot's image is immutable" immutable "$(immutable "$A/q1/as.img")"
check "its pool keeps its sealed ctime" grep -q '^ctime=[0-9]*\.[0-9]*$' <<<"$(seal_of "$A/q1/as.img")"
check_eq "a volume's image is not" writable "$(immutable "$A/q1/a.img")"
check_eq "a received snapshot is sealed too" immutable "$(immutable "$B/q2/a2.img")"
check_fails "a host write into a snapshot is refused" dd if=/dev/zero of="$A/q1/as.img" bs=4k count=1 conv=notrunc status=none
check "and the snapshot is as it was" cmp "$A/q1/as.img" "$work/r1"
check "clone of a sealed snapshot" sv clone q1/as ac
check "the clone is a copy of it" cmp "$A/q1/ac.img" "$work/r1"
check_eq "and writable" writable "$(immutable "$A/q1/ac.img")"
dd if="$work/r2" of="$A/q1/a.img" bs=4k count=8 conv=notrunc status=none
check "rollback q1/a to a sealed snapshot" sv rollback q1/a as2
check "q1/a has the snapshot's content" cmp "$A/q1/a.img" "$work/r1"
as2_id=$(meta id "$A/q1/as2.img")
check "remove a sealed snapshot" sv remove q1/as2
check_fails "its image is gone" test -e "$A/q1/as2.img"
check_fails "and its seal" getfattr --absolute-names -n "user.subvol.seal.$as2_id" "$A/q1"
# A copy of a snapshot keeps its id; removing the copy keeps the seal.
cp -a "$A/q1/as.img" "$A/q1/ascopy.img"
check "remove a cp -a copy of a snapshot" sv remove q1/ascopy
check "the snapshot keeps its seal" grep -q '^ctime=' <<<"$(seal_of "$A/q1/as.img")"

# Replication q1 -> q2: s1 full, then s2 from s1 onto a base that changed.
check "q1/s1" sv snapshot q1/a s1
check "send q1/s1 | receive q2" bash -c "'$SUBVOL' send q1/s1 2>/dev/null | '$SUBVOL' receive q2 >/dev/null"
dd if="$work/r2" of="$A/q1/a.img" bs=4k count=8 conv=notrunc status=none
check "q1/s2" sv snapshot q1/a s2
sv send --from s1 q1/s2 >"$work/s2.inc" 2>/dev/null
check "an incremental stream s1 -> s2" test -s "$work/s2.inc"
chattr -i "$B/q2/s1.img"
printf 'changed' | dd of="$B/q2/s1.img" bs=1 seek=5000 conv=notrunc status=none
err_is "receive onto a base whose flag was cleared (and written): refused" 1 \
	'base q2/s1 cannot be trusted: its immutable flag was cleared' sv receive q2 <"$work/s2.inc"
chattr +i "$B/q2/s1.img"
err_is "receive onto a base written and sealed again by hand: refused" 1 \
	'base q2/s1 cannot be trusted: it changed since it was sealed' sv receive q2 <"$work/s2.inc"
check_fails "nothing received" test -e "$B/q2/s2.img"
# The sender's base too.
chattr -i "$A/q1/s1.img"
err_is "send --from a base that is no longer sealed: refused" 1 \
	'send: base q1/s1 cannot be trusted' sv send --from s1 q1/s2
chattr +i "$A/q1/s1.img"

# --- item 2: sizes that wrapped -----------------------------------------------
check "q1/v (32 MiB of data)" sv create --inactive -s 32M q1/v
dd if="$work/r1" of="$A/q1/v.img" conv=notrunc status=none
dd if="$work/r2" of="$A/q1/v.img" bs=1M seek=16 conv=notrunc status=none
cat "$work/r1" "$work/r2" >"$work/v.want"
err_is "resize to 2^64-1: usage error, too large" 2 'too large' \
	sv resize --yes -s 18446744073709551615 q1/v
err_is "resize +2^64-1: usage error, too large" 2 'too large' \
	sv resize --yes -s +18446744073709551615 q1/v
err_is "resize +8E: usage error, too large" 2 'too large' sv resize --yes -s +8E q1/v
err_is "resize to 16E: usage error, too large" 2 'too large' sv resize --yes -s 16E q1/v
check_eq "q1/v keeps its size" 33554432 "$(size_of "$A/q1/v.img")"
check "and its data" cmp "$A/q1/v.img" "$work/v.want"
check_eq "and status still reads it" volume "$(sv status q1/v 2>&1 | sed -n 's/^Kind: *//p')"
for s in 18446744073709551615 18446744073709549568 36028797018963967s 16E 99999999999999999999; do
	err_is "create -s $s: usage error, too large" 2 'too large' sv create --inactive -s "$s" q1/z
done
check_fails "nothing named q1/z" test -e "$A/q1/z.img"
err_is "create -s 0: usage error, not a size" 2 'not a size' sv create --inactive -s 0 q1/z
check "create -s 1gb (units in either case)" sv create --inactive -s 1gb q1/g1
check_eq "is 1 GiB" 1073741824 "$(size_of "$A/q1/g1.img")"
check "create -s 1.5GiB" sv create --inactive -s 1.5GiB q1/g2
check_eq "is 1.5 GiB" 1610612736 "$(size_of "$A/q1/g2.img")"
check "create -s 1E (E on input as on output)" sv create --inactive -s 1E q1/e1
check_eq "is 1 EiB, sparse" "1152921504606846976 0" "$(stat -c '%s %b' "$A/q1/e1.img")"
check_eq "list prints it as 1E" 1E "$(sv list q1 2>/dev/null | awk '$2 == "e1" { print $4 }')"
check "remove it" sv remove q1/e1

finish
