#!/bin/bash
# Native tests of the second tool review's items (shared/review/
# tool-review-2.md): what a snapshot costs (EXCLUSIVE, SHARED), list of one
# volume and its snapshots, sorting and kinds, STATE, status of several
# volumes, sizes as lsblk prints them and --units, relative resize and
# --resizefs, counts a user cannot read, options parsed by getopt alone,
# and the small things (repeated -o, subvol help, udev-name --help, the
# man page's synopsis, labels, an empty list in JSON, one progress form).
# Nothing here needs device-mapper.  Needs root (loop mounts).
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"
# shellcheck source=SCRIPTDIR/../lib/tooltest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tooltest.sh"

tooltest_start subvol-tool-review-2
MAN=$ROOT/userspace/man/subvol.8
COMPLETION=$ROOT/userspace/completion/subvol

# squeeze: the lines on stdin with runs of blanks made one space.
squeeze() { sed -e 's/  */ /g' -e 's/ $//'; }
# rows ARGS...: sv list --noheadings ARGS, blanks squeezed, lines joined by ";".
rows() { sv list --noheadings "$@" 2>&1 | squeeze | paste -sd ';'; }
# py CODE: python3 on the JSON on stdin as d.
py() {
	python3 -c "import json, sys
d = json.load(sys.stdin)
$1" 2>&1
}
MiB=1048576

# --- a host XFS and a pool --------------------------------------------------
mkdir -p "$work/mnt/xfs"
truncate -s 512M "$work/xfs.fs"
check "mkfs.xfs" mkfs.xfs -q "$work/xfs.fs" || { finish; exit; }
check "mount it" mount -o loop "$work/xfs.fs" "$work/mnt/xfs" || { finish; exit; }
X=$work/mnt/xfs
check "pool create vms" sv pool create "$X/vms" || { finish; exit; }
V=$X/vms

# --- item 1: what a snapshot costs, what removing it frees ----------------------
# web: 8 MiB written; a snapshot a shares them; then 2 MiB of web are
# written again, so each has 2 MiB of its own and 6 MiB shared.
check "vms/web" sv create --inactive -s 16M vms/web
head -c 8M /dev/urandom | dd of="$V/web.img" conv=notrunc status=none
check "snapshot vms/web a" sv snapshot vms/web a
head -c 2M /dev/urandom | dd of="$V/web.img" bs=1M seek=2 conv=notrunc status=none
sync
check_eq "list -o name,exclusive,shared --bytes: 2 MiB each alone, 6 MiB shared" \
	"a $((2 * MiB)) $((6 * MiB));web $((2 * MiB)) $((6 * MiB))" \
	"$(rows -o name,exclusive,shared --bytes vms)"
check "a second snapshot b of web" sv snapshot vms/web b
check_eq "then web has nothing of its own, b neither, a still 2 MiB" \
	"a $((2 * MiB));b 0;web 0" "$(rows -o name,exclusive --bytes vms)"
check_eq "in JSON, numbers of bytes" "2097152 6291456" \
	"$(sv list --json -o name,exclusive,shared vms | py 'print(*[v for r in d["volumes"] if r["name"] == "a" for v in (r["exclusive"], r["shared"])])')"
free_before=$(stat -f -c '%a * %S' "$X")
check "remove a" sv remove vms/a
sync
sleep 1
check_eq "removing a freed its EXCLUSIVE, 2 MiB" $((2 * MiB)) $(( $(stat -f -c '%a * %S' "$X") - free_before ))
check "list -o +exclusive,shared: after the defaults" \
	grep -q 'CREATED EXCLUSIVE SHARED$' <<<"$(sv list -o +exclusive,shared vms | head -n 1 | squeeze)"

# --- item 2: one volume and its snapshots; sort; kinds ------------------------------
check "vms/db (4M), with snapshot d1" sv create --inactive -s 4M vms/db
check "snapshot vms/db d1" sv snapshot vms/db d1
check "a clone of b, web2" sv clone vms/b web2
check_eq "list vms/web: web and its snapshots, no other" "b;web" "$(rows -o name vms/web)"
check_eq "list vms/db vms/b: each" "d1;db;b" "$(rows -o name vms/db vms/b)"
check_eq "list -t snapshot vms: the snapshots" "b;d1" "$(rows -o name -t snapshot vms)"
check_eq "list -t volume vms/web: the volume alone" "web" "$(rows -o name -t volume vms/web)"
check_eq "list -t snap,vol: both" "b;d1;db;web;web2" "$(rows -o name -t snap,vol vms)"
err_is "list -t bogus: usage error naming it" 2 '"bogus" is not a kind' sv list -t bogus vms
err_is "list vms/none: no such volume" 1 'volume vms/none: no such volume' sv list vms/none
check_eq "list -O size,name: sorted by size (numbers), then name" "d1 4M;db 4M;b 16M;web 16M;web2 16M" \
	"$(rows -o name,size -O size,name vms)"
check_eq "list -O -name: descending" "web2;web;db;d1;b" "$(rows -o name -O -name vms)"
check_eq "list -O by a column not shown (-kind: volumes first)" "db;web;web2;b;d1" "$(rows -o name -O -kind,name vms)"
check_eq "list -O kind,name --separator" "NAME:KIND;b:snapshot;d1:snapshot;db:volume;web:volume;web2:volume" \
	"$(sv list -o name,kind -O kind,name --separator : vms | paste -sd ';')"
check_eq "list -O -name --json: sorted, only the columns shown" "name:web2,web,db,d1,b" \
	"$(sv list --json -o name -O -name vms | py 'print(",".join(d["volumes"][0]), ",".join(r["name"] for r in d["volumes"]), sep=":")')"
check_eq "list -H: no headings, tabs (zfs -H)" "$(printf 'd1\tsnapshot;db\tvolume')" \
	"$(sv list -H -o name,kind vms/db | paste -sd ';')"
err_is "list -O bogus: usage error naming it" 2 '--sort: unknown column "bogus"' sv list -O bogus vms
err_is "status -O: not a table" 2 'sort' sv status -O name vms/web
check_eq "pool list -O -name" "vms" "$(sv pool list --noheadings -o name -O -name)"

# --- item 3: state and shared in list; status of several volumes ------------------
check_eq "list -o name,state: every one's state" "b inactive;web inactive" "$(rows -o name,state vms/web)"
out=$(sv status vms/web vms/db 2>&1)
check_eq "status vms/web vms/db: both, one after the other" "web db" "$(sed -n 's/^Volume: *//p' <<<"$out" | xargs)" || show "$out"
check_eq "a blank line between them" 1 "$(grep -c '^$' <<<"$out")"
check_eq "status --json of two: one array of two" "web,db" \
	"$(sv status --json vms/web vms/db | py 'print(",".join(r["volume"] for r in d["volume"]))')"
err_is "status vms/web vms/none: the missing one named, exit 1" 1 'volume vms/none: no such volume' sv status vms/web vms/none
check_eq "status vms/web vms/none: web's fields still shown" "web" "$(sv status vms/web vms/none 2>/dev/null | sed -n 's/^Volume: *//p')"

# --- item 4: sizes as lsblk shows them, and --units --------------------------------
out=$(sv create --inactive -s 10.5G vms/big 2>&1)
check "create -s 10.5G says 10.5G" grep -q 'created (10.5G)' <<<"$out" || show "$out"
check_eq "list shows 10.5G" "big 10.5G" "$(rows -o name,size vms/big)"
check "vms/r (1040M)" sv create --inactive -s 1040M vms/r
check_eq "1040M shows as lsblk shows it: 1G" "r 1G" "$(rows -o name,size vms/r)"
loop=$(losetup -f --show "$V/r.img")
check_eq "lsblk agrees" "1G" "$(lsblk -no SIZE "$loop" | xargs)"
losetup -d "$loop"
check_eq "--units g: two decimals, as lvs" "big 10.50g;r 1.02g" "$(rows -o name,size --units g -t volume -O name vms/big vms/r)"
check_eq "--units m --nosuffix" "r 1040.00" "$(rows -o name,size --units m --nosuffix vms/r)"
check_eq "--units G: powers of 1000" "r 1.09G" "$(rows -o name,size --units G vms/r)"
check_eq "--units b; s" "r 1090519040B 2129920s" "$(sv list --noheadings -o name,size --units b vms/r | squeeze) $(sv list --noheadings -o size --units s vms/r | xargs)"
check_eq "status --units k" "1064960.00k" "$(sv status --units k -o size -n vms/r)"
err_is "--units x: usage error" 2 '"x" is not a unit' sv list --units x vms
check_eq "--units does not change JSON: bytes" "1090519040" "$(sv list --json --units g -o size vms/r | py 'print(d["volumes"][0]["size"])')"

# --- item 5: resize as lvresize takes it ------------------------------------------
size_of() { stat -c %s "$1" 2>&1; }
out=$(sv resize vms/r --size -100M --yes 2>&1)
check_eq "resize --size -100M: 100M less" $((940 * MiB)) "$(size_of "$V/r.img")" || show "$out"
check "and says from what to what" grep -q '^Volume vms/r shrunk from 1G to 940M$' <<<"$out" || show "$out"
check "resize -L +60M (lvresize's -L)" sv resize -L +60M vms/r
check_eq "is 1000M" $((1000 * MiB)) "$(size_of "$V/r.img")"
out=$(sv resize -s 1G vms/r 2>&1)
check "growing says from what to what" grep -q '^Volume vms/r grown from 1000M to 1G$' <<<"$out" || show "$out"
err_is "resize --size -2G of a 1G volume: usage error" 2 '"?-2G"? takes away 2G, not less than its size \(1G\)' sv resize --size -2G --yes vms/r
err_is "resize --size -1G: the whole of it: usage error" 2 'not less than its size' sv resize --size -1G --yes vms/r
check_eq "r keeps its size" $((1024 * MiB)) "$(size_of "$V/r.img")"
tty_out=$(script -qec "'$SUBVOL' resize -s -124M vms/r" /dev/null 2>&1 </dev/null | tr -d '\r')
check "the shrink question gives the size now, after and the difference" \
	grep -q 'Shrink vms/r from 1G to 900M (by 124M)?' <<<"$tty_out" || show "$tty_out"
check_eq "not answered: not shrunk" $((1024 * MiB)) "$(size_of "$V/r.img")"
err_is "resize -r of an inactive volume: refused, says why" 1 \
	'volume vms/r: --resizefs: it is inactive' sv resize -r -s +1M vms/r
check_eq "nothing changed" $((1024 * MiB)) "$(size_of "$V/r.img")"
err_is "resize -r --size -1M: usage error" 2 'cannot shrink' sv resize -r --size -1M vms/r
check "rollback --force vms/db to b (16M, of web)" bash -c "'$SUBVOL' rollback --force vms/db b >'$work/out' 2>&1"
check "says the size changed" grep -q '^Volume vms/db rolled back to snapshot vms/b; its size went from 4M to 16M$' "$work/out" || show "$(cat "$work/out")"

# --- first part, item 4: what a user cannot read is not shown as 0 -----------------
chmod 755 "$work" "$work/mnt" "$X" "$V" "$SUBVOL_CONFIG_DIR" "$SUBVOL_CONFIG_DIR/pools" 2>/dev/null
# The volumes' images (snapshots are immutable, and stay readable).
chmod 600 "$V"/web.img "$V"/db.img "$V"/big.img
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$SUBVOL" "$@"; }
err_is "pool status -J as a user who cannot read the images: exit 1, one line says so" 1 \
	'pool vms: [0-9]+ of its [0-9]+ images cannot be read.*Permission denied' nobody pool status -J vms
check_eq "and only one line" 1 "$(nobody pool status -J vms 2>&1 >/dev/null | wc -l)"
out=$(nobody pool status -J vms 2>/dev/null)
check_eq "volumes, snapshots, active, virtual_size, allocated: null, not 0" "None None None None None" \
	"$(py 'r = d["pool"][0]; print(r["volumes"], r["snapshots"], r["active"], r["virtual_size"], r["allocated"])' <<<"$out")" || show "$out"
check_eq "pool list as that user: - for the counts" "vms - -" \
	"$(nobody pool list --noheadings -o name,volumes,snapshots 2>/dev/null | squeeze | grep '^vms ')"
check_eq "pool status as root: the counts" "5 2" \
	"$(sv pool status -J vms | py 'r = d["pool"][0]; print(r["volumes"], r["snapshots"])')"
chmod 644 "$V"/web.img "$V"/db.img "$V"/big.img

# --- item 8: options parsed by getopt alone ------------------------------------------
check_eq "list --separator -v: -v is the separator" "NAME-vKIND;r-vvolume" \
	"$(sv list -o name,kind --separator -v vms/r 2>&1 | paste -sd ';')"
check_eq "list -o name --separator=-v, as before" "r" "$(sv list -n -o name --separator=-v vms/r 2>&1)"
err_is "pool set --autoextend-command -h as a user: needs root (-h is the command)" 1 \
	'^subvol: pool: needs root' nobody pool set --autoextend-command -h vms
check_eq "the policy is unchanged" "-" "$(sv pool status -n -o autoextend_command vms)"
check "as root, pool set --autoextend-command -h sets \"-h\"" sv pool set --autoextend-command -h vms
check_eq "the command is -h" "-h" "$(sv pool status -n -o autoextend_command vms)"
check "pool set --autoextend-command '' (none again)" sv pool set --autoextend-command '' vms
check_eq "-v anywhere still counts (after the arguments)" 0 "$(sv list vms/r -v >/dev/null 2>&1; echo $?)"
check "rename -v traces what it does" grep -q . <<<"$(sv rename vms/big big2 -v 2>&1 >/dev/null)"
check "-vv: twice" sv rename -vv vms/big2 big
check_eq "a -v after -- is a name, not an option" 2 "$(sv remove -- -v >/dev/null 2>&1; echo $?)"
for c in "set --low-water 1M vms/web" "rename vms/web x" "import $work/none vms/i" "receive vms" \
	"pool set --autoextend-threshold 80 vms" "pool export vms" "pool remove vms" "monitor --once"; do
	# shellcheck disable=SC2086
	err_is "as a user: $c: needs root" 1 "^subvol: ${c%% *}: needs root" nobody $c </dev/null
done
check_eq "--help as a user: help, exit 0" 0 "$(nobody set --help >/dev/null 2>&1; echo $?)"
check_eq "-h after the arguments as a user: help too" 0 "$(nobody resize vms/r -h >/dev/null 2>&1; echo $?)"

# --- superblocks probed by libblkid --------------------------------------------------
# An image that only starts with XFS's magic is no XFS: no mount hint, no
# xfs_admin on its clone (the old check read 4 bytes).
check "vms/fake: 4M, XFSB then zeros" sv create --inactive -s 4M vms/fake
printf 'XFSB' | dd of="$V/fake.img" conv=notrunc status=none
out=$(sv snapshot vms/fake fakes 2>&1)
check_eq "its snapshot gets no XFS mount hint" "" "$(grep -i 'nouuid' <<<"$out")"
out=$(sv clone vms/fakes fakec 2>&1)
check_eq "its clone no note about the XFS UUID" "" "$(grep -i 'uuid' <<<"$out")"
check "vms/realxfs: an XFS in it" sv create --inactive -s 300M vms/realxfs
mkfs.xfs -q "$V/realxfs.img"
out=$(sv snapshot vms/realxfs rx 2>&1)
check "a real XFS's snapshot gets the hint" grep -q 'nouuid' <<<"$out" || show "$out"
check "a clone of it" sv clone vms/rx rxc
check "gets a new XFS UUID (blkid reads it)" \
	test "$(blkid -p -o value -s UUID "$V/rx.img")" != "$(blkid -p -o value -s UUID "$V/rxc.img")"
check "remove them" sv remove vms/rxc vms/rx vms/realxfs vms/fakec vms/fakes vms/fake

# --- items 9, 11: repeated -o add up; an empty list in JSON ------------------------
check_eq "list -o name -o size: both, as lvs" "NAME SIZE" "$(sv list -o name -o size vms/r | head -n 1 | squeeze)"
check_eq "list -o +id -o kind: the defaults, id, kind" "CREATED ID KIND" \
	"$(sv list -o +id -o kind vms/r | head -n 1 | squeeze | awk '{ print $(NF - 2), $(NF - 1), $NF }')"
err_is "create --low-water 1G on a 4M volume: usage error" 2 'not below' sv create --inactive -s 4M --low-water 1G vms/lw
err_is "set --low-water 1G on vms/db: usage error too, naming it" 2 'not below the size of vms/db' sv set --low-water 1G vms/db
out=$(sv create --inactive -s 1M vms/.bad 2>&1)
check "an invalid name: the error, then Try --help" grep -q "^Try 'subvol create --help'" <<<"$out" || show "$out"
err_is "rename to an invalid name: usage error as create's" 2 'not a valid name' sv rename vms/db .x
err_is "a pool path that does not exist: no such directory" 1 'pool /nonexistent/pool: no such directory' sv pool status /nonexistent/pool
check "pool create empty" sv pool create "$X/empty"
out=$(sv list --json empty)
check_eq "list --json of an empty pool: an empty array" "[]" "$(py 'print(d["volumes"])' <<<"$out")" || show "$out"
check_eq "without a blank line in it" 0 "$(grep -c '^ *$' <<<"$out")" || show "$out"

# --- item 11: subvol help, udev-name --help, the synopsis, labels, progress --------
check_eq "subvol help: the usage, exit 0" "$(sv --help)" "$(sv help 2>&1)"
check_eq "subvol help resize: resize's" "$(sv resize --help)" "$(sv help resize 2>&1)"
err_is "subvol help bogus: usage error" 2 'help: unknown command "bogus"' sv help bogus
out=$(sv udev-name --help 2>&1)
check_eq "udev-name --help: exit 0" 0 "$(sv udev-name --help >/dev/null 2>&1; echo $?)"
check "with its usage" grep -q '^Usage: subvol udev-name DM_NAME' <<<"$out" || show "$out"
check_eq "udev-name is still left out of --help" 0 "$(sv --help | grep -c udev-name)"
synopsis=$(groff -man -Tascii -P-cbu "$MAN" 2>/dev/null | grep 'subvol snapshot \[')
check "man SYNOPSIS: [--wait | --no-wait]" grep -qF '[--wait | --no-wait]' <<<"$synopsis" || show "$synopsis"
check "status labels: Host LVM" grep -q '^Host LVM: *no$' <<<"$(sv status vms/web)"
check "pool status labels: Host LV" grep -q '^Host LV:' <<<"$(sv pool status vms)"
check "status labels: ID, Origin ID" grep -q '^Origin ID:' <<<"$(sv status vms/b)"
tty_out=$(script -qec "'$SUBVOL' send vms/b >/dev/null" /dev/null 2>&1 </dev/null | tr '\r' '\n')
check "send's progress line has the snapshot copy's form: WHAT: ACTION, N% of M MiB" \
	grep -qE '^send: sending, +[0-9]+% of [0-9]+ MiB' <<<"$tty_out" || show "$tty_out"
check "ending at 100%" grep -qE '^send: sending, 100% of 8 MiB' <<<"$tty_out" || show "$tty_out"
# A snapshot copy runs only on an active volume (device-mapper): its line
# (tests/vm/89 reads "tank/vm: copying, 100% of N MiB") is checked by its
# code, which must be the same function.
check "the snapshot copy's progress line is the same function (progress_line)" \
	grep -q 'progress_line(what' "$ROOT/userspace/subvol/commands/cmd-snapshot.c"

# --- item 7: send --dry-run, one --from --------------------------------------------
out=$(sv send -n vms/b 2>&1)
check "send -n: what it would send, on stdout" grep -qE '^Would send vms/b: [0-9.]+[KMG]? ?of data in [0-9]+ records and [0-9]+ holes, a stream of' <<<"$out" || show "$out"
check_eq "the stream's size is the real one's" "$(sv send vms/b 2>/dev/null | wc -c)" \
	"$(sed -n 's/.*(\([0-9]*\) bytes)$/\1/p' <<<"$out")"
check "send -n to a terminal is fine (nothing is written)" \
	grep -q 'Would send' <<<"$(script -qec "'$SUBVOL' send --dry-run vms/b" /dev/null 2>&1 </dev/null)"
check "send -n --from: the incremental" grep -q '^Would send vms/d1 from vms/b:' <<<"$(sv send -n --from b vms/d1 2>&1)"
err_is "send --from twice: usage error" 2 '--from given twice \(b, d1\)' sv send --from b --from d1 vms/web
err_is "receive -n: usage error" 2 'dry-run is an option of send' sv receive --dry-run vms </dev/null

# --- item 11: a removed cp -a copy of a pool keeps no seal ---------------------------
check "pool cpsrc with a snapshot" sv pool create "$X/cpsrc"
check "cpsrc/v" sv create --inactive -s 1M cpsrc/v
check "cpsrc/s" sv snapshot cpsrc/v s
cp -a "$X/cpsrc" "$X/cpcopy"
check "pool import --name cpcopy (a copy: a new id)" sv pool import --name cpcopy "$X/cpcopy"
check "pool remove --yes cpcopy" sv pool remove --yes cpcopy
check_eq "no user.subvol attribute left on its directory" "" \
	"$(getfattr --absolute-names -d -m 'user.subvol' "$X/cpcopy" 2>/dev/null | grep -v '^#' | grep .)"
check "the original keeps its snapshot's seal" \
	grep -q seal <<<"$(getfattr --absolute-names -d -m 'user.subvol' "$X/cpsrc" 2>/dev/null)"

# --- item 10: completion ---------------------------------------------------------------
# complete_words WORDS...: what the completion offers for the last word.
complete_words() {
	bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _subvol
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " "' _ "$COMPLETION" "$@" | sed 's/ $//'
}
# valid CMD...: the columns the tool's "unknown column" message lists, sorted.
valid() { sv "$@" -o nosuch 2>&1 | sed -n 's/.*(valid: \(.*\))$/\1/p' | tr ',' '\n' | sort | xargs; }
check_eq "list -o ex: the column" "exclusive extent_size" "$(complete_words subvol list -o ex)"
check_eq "list -o name,si: after the comma" "name,size" "$(complete_words subvol list -o name,si)"
check_eq "list -O -na: descending too" "-name" "$(complete_words subvol list -O -na)"
check_eq "list -o +or: after +" "+origin +origin_id" "$(complete_words subvol list -o +or)"
for c in list "status vms/web" "pool status vms" "pool list"; do
	# shellcheck disable=SC2086
	check_eq "the completion's columns of $c are the tool's" "$(valid $c)" \
		"$(complete_words subvol ${c% vms*} -o '' | tr ' ' '\n' | sort | xargs)"
done
check_eq "list -t: the kinds" "all snapshot volume" "$(complete_words subvol list -t '')"
check_eq "--units: the units" "g" "$(complete_words subvol list --units g)"
check_eq "send offers snapshots only" "vms/b vms/d1" "$(complete_words subvol send vms/)"
check_eq "send --from: snapshots" "vms/b vms/d1" "$(complete_words subvol send vms/b --from vms/)"
check_eq "create --mkfs=: xfs ext4" "ext4 xfs" "$(complete_words subvol create --mkfs = '')"
check_eq "short options: resize -" "-L -h -r -s -v -y" "$(complete_words subvol resize - | tr ' ' '\n' | grep -v -- '^--' | xargs)"
check_eq "list POOL or POOL/: both" "vms vms/" "$(complete_words subvol list vm)"

finish
