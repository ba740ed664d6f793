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
# Renaming a sealed snapshot keeps it sealed; it does not make a changed
# one trusted.
check "rename the changed base q1/s1 to s1r" sv rename q1/s1 s1r
check_eq "it is still immutable" immutable "$(immutable "$A/q1/s1r.img")"
err_is "send --from it is still refused" 1 'base q1/s1r cannot be trusted' sv send --from s1r q1/s2
check "q1/s3, a sound snapshot" sv snapshot q1/a s3
check "rename it to s3r" sv rename q1/s3 s3r
check_eq "it is still immutable" immutable "$(immutable "$A/q1/s3r.img")"
check "send --from the renamed sound base" bash -c "'$SUBVOL' send --from s3r q1/s2 >/dev/null 2>&1"

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

# --- item 4: counts that were wrong with exit status 0 ------------------------
check "pool q3" sv pool create "$A/q3"
check "q3/v" sv create --inactive -s 1M q3/v
check "q3/s" sv snapshot q3/v s
echo junk >"$A/q3/junk.img"
err_is "pool status with a stray junk.img: exit 1, names it" 1 'q3/junk: .*not a subvol image' sv pool status q3
err_is "pool list with it: exit 1" 1 'q3/junk: .*not a subvol image' sv pool list
err_is "list with it: exit 1" 1 'q3/junk: .*not a subvol image' sv list q3
rm -f "$A/q3/junk.img"
check "without it: pool status exits 0" sv pool status q3
chmod 755 "$work" "$SUBVOL_CONFIG_DIR" "$SUBVOL_CONFIG_DIR/pools" 2>/dev/null
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$SUBVOL" "$@"; }
err_is "pool status as a user who cannot read the images: exit 1" 1 'Permission denied' nobody pool status q3
check_eq "while root's exits 0 (it can)" 0 "$(sv pool status q3 >/dev/null 2>&1; echo $?)"

# --- item 7: commands that change things need root, said up front --------------
for c in "create -s 1M q3/n" "snapshot q3/v n" "clone q3/s n" "rollback q3/v s" "resize -s 2M q3/v" \
	"remove q3/v" "pool create $A/q4" "pool import $A/q3" "activate q3/v" "deactivate q3/v"; do
	# shellcheck disable=SC2086
	err_is "as a user: $c: needs root" 1 "^subvol: ${c%% *}: needs root" nobody $c
done
check_fails "nothing was made" test -e "$A/q3/n.img"
chmod 644 "$A/q3/v.img"; chmod 755 "$A/q3"
check_eq "read-only commands work as a user: status of a readable volume" volume \
	"$(nobody status q3/v 2>/dev/null | sed -n 's/^Kind: *//p')"
check_eq "--help works as a user" 0 "$(nobody snapshot --help >/dev/null 2>&1; echo $?)"

# --- item 5: options anywhere, -v too -------------------------------------------
check "create q3/o -s 1M --inactive (options after the name)" sv create q3/o -s 1M --inactive
check "resize q3/o --size +1M" sv resize q3/o --size +1M
check_eq "q3/o is 2 MiB" 2097152 "$(size_of "$A/q3/o.img")"
check_json "list q3 --json" "$(sv list q3 --json 2>&1)"
check "pool status q3 --json" bash -c "'$SUBVOL' pool status q3 --json | python3 -m json.tool >/dev/null"
check_eq "-- ends the options (a name after it is a name)" 2 "$(sv remove -- -x >/dev/null 2>&1; echo $?)"
check "set q3/o --low-water 64K (the newer commands too)" sv set q3/o --low-water 64K
check "rename q3/o o2 -v" sv rename q3/o o2 -v
check "remove q3/o2 -v" sv remove q3/o2 -v

# --- item 12: exit status and prefixes ------------------------------------------
err_is "an invalid volume name: usage error" 2 'not a valid name' sv create --inactive -s 1M q3/.x
err_is "an invalid NAME for snapshot (after --): usage error" 2 'not a valid name' sv snapshot q3/v -- -bad
err_is "status POOL (no volume): usage error" 2 'give it as POOL/VOLUME' sv status q3
err_is "receive POOL NAME with an invalid NAME: usage error" 2 'not a valid name' sv receive q3 .x </dev/null
err_is "a volume that is not there: refused" 1 'no such volume' sv status q3/none

# --- items 10, 11: refused up front ----------------------------------------------
tty_out=$(script -qec "'$SUBVOL' receive q3 x; echo rc=\$?" /dev/null 2>&1 </dev/null | tr -d '\r')
check "receive with a terminal on stdin: refused at once" grep -q 'receive: the stream would come from a terminal' <<<"$tty_out"
check "with exit 1" grep -q 'rc=1' <<<"$tty_out"
if [[ $(sv activate q3/v 2>&1) == *"device-mapper is not available"* ]]; then
	err_is "snapshot --activate without device-mapper: refused" 1 'device-mapper is not available' sv snapshot --activate q3/v sa
	check_fails "before the snapshot is made" test -e "$A/q3/sa.img"
	err_is "clone --activate without device-mapper: refused" 1 'device-mapper is not available' sv clone --activate q3/s ca
	check_fails "before the clone is made" test -e "$A/q3/ca.img"
	check_eq "-v without device-mapper: no libdevmapper backtrace" 0 "$(sv -v list q3 2>&1 | grep -c backtrace)"
else
	echo "# device-mapper is here: the refusals without it are not tried"
fi

# --- item 13: paths, locale, lock waits, hints -------------------------------------
err_is "pool create: a path with a backslash" 1 'backslash' sv pool create --name bs "$A/back\\slash"
check_fails "not made" test -e "$A/back\\slash"
err_is "pool create: a path with a control character" 1 'control character' sv pool create --name cc "$A/ctl$(printf '\001')x"
mkdir "$A/müll"
check "pool create in a UTF-8 directory" sv pool create --name mu "$A/müll"
check "pool list shows the path as text under C.UTF-8" grep -q 'müll' <<<"$(LANG=C.UTF-8 LC_ALL=C.UTF-8 sv pool list 2>&1)"
flock "$A/q3" sleep 3 &
sleep 0.5
out=$(sv create --inactive -s 1M q3/w 2>&1)
check "a command waiting for the pool's lock says so" grep -q 'pool q3: waiting for another subvol command' <<<"$out"
check "and goes on when it is free" test -e "$A/q3/w.img"
wait
flock "$A/q3" sleep 4 &
sleep 0.5
out=$(SUBVOL_LOCK_TIMEOUT=1 sv create --inactive -s 1M q3/w2 2>&1)
check_eq "SUBVOL_LOCK_TIMEOUT=1: gives up, exit 1" 1 "$?"
check "with a message" grep -q '^subvol: pool q3: another subvol command still holds it after 1 s' <<<"$out"
check_fails "nothing made" test -e "$A/q3/w2.img"
wait
check "q3/x (an XFS in it)" sv create --inactive -s 300M q3/x
check "mkfs.xfs in the image" mkfs.xfs -q "$A/q3/x.img"
out=$(sv snapshot q3/x xs 2>&1)
check "an inactive snapshot's hint says to activate it first" grep -q 'subvol activate q3/xs' <<<"$out" || show "$out"
check "pool remove --yes of a pool with sealed snapshots" sv pool remove --yes q3
check_eq "its images are gone" "" "$(cd "$A/q3" && ls)"
check_eq "and its seals" "" "$(getfattr --absolute-names -d -m 'user.subvol' "$A/q3" 2>/dev/null | grep -v '^#' | grep .)"

finish
