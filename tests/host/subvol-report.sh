#!/bin/bash
# Native test of the subvol tool's reports (build/bin/subvol) on a small
# loop-mounted host XFS: list, status, pool list and pool status with
# -o/--output (columns chosen and ordered, +COL, unknown names a usage
# error), --noheadings, --separator, --json and --bytes; status showing
# every option a volume was created with; ORIGIN found by the origin's
# id; times with their zone; diff --json laid out as the other JSON; and
# the columns named in --help and subvol(8) being the code's.
# Nothing here needs device-mapper.  Needs root (loop mounts).
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

# shellcheck source=SCRIPTDIR/../lib/tooltest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tooltest.sh"

tooltest_start subvol-report
MAN=$ROOT/userspace/man/subvol.8

# field LABEL: the value of "LABEL: value" in a status text on stdin.
field() { sed -n "s/^$1: *//p"; }
# squeeze: the lines on stdin with runs of blanks made one space.
squeeze() { sed -e 's/  */ /g' -e 's/ $//'; }
# py CODE ARGS...: python3 on the JSON on stdin as d (notes a skip without).
py() {
	python3 -c "import json, sys
d = json.load(sys.stdin)
$1" "${@:2}" 2>&1
}
have_py() { command -v python3 >/dev/null; }
# Python's json.dumps(indent=3), objects in an array joined as "},{":
# libsmartcols' layout (lsblk --json).
layout='import re; print(re.sub(r"\},\n *\{", "},{", json.dumps(d, indent=3)))'


# usage_refused NAME WORD CMD...: CMD exits 2, prints nothing on stdout,
# and one line of stderr names WORD and lists the valid columns.
usage_refused() {
	local name=$1 word=$2 out err status=0 named
	shift 2
	out=$("$@" 2>"$work/err") || status=$?
	err=$(cat "$work/err")
	named=$(grep -cF -- "\"$word\"" <<<"$err")
	check_eq "$name" "exit 2, stdout empty, 1 line names \"$word\" and lists valid ones: yes" \
		"exit $status, stdout ${out:+not }empty, $named line names \"$word\" and lists valid ones: $(grep -qF '(valid: ' <<<"$err" && echo yes || echo no)" ||
		show "$err"
}

# --- a host XFS and a pool --------------------------------------------------
mkdir -p "$work/mnt/xfs"
truncate -s 512M "$work/xfs.fs"
check "mkfs.xfs (default: reflink)" mkfs.xfs -q "$work/xfs.fs" || { finish; exit; }
check "mount it" mount -o loop "$work/xfs.fs" "$work/mnt/xfs" || { finish; exit; }
X=$work/mnt/xfs
M=$X/main
check "pool create main" sv pool create "$X/main" || { finish; exit; }
check "pool create --name other" sv pool create --name other "$X/other-dir"
main_id=$(getfattr --absolute-names --only-values -n user.subvol.pool "$M" | sed -n 's/^id=//p')

check "create main/plain (every option the default)" sv create --inactive --size 1M main/plain
check "create main/opts (every option given)" sv create --inactive --size 8M --guarantee none \
	--no-space queue --no-space-timeout 30 --low-water 1M --ignore-discard --extent-size 64K main/opts
check "create main/q (--no-space queue, no timeout)" sv create --inactive --size 4M --no-space queue main/q
check "snapshot main/opts s1" sv snapshot main/opts s1
check "clone main/s1 c1" sv clone main/s1 c1
nvol=5

# --- the defaults stay --------------------------------------------------------
out=$(sv list main 2>&1)
check_eq "list: the default header" "POOL NAME KIND SIZE ALLOC ORIGIN DEVICE CREATED" "$(head -n 1 <<<"$out" | squeeze)"
check_eq "list: one line a volume" "$nvol" "$(tail -n +2 <<<"$out" | wc -l)"
check_eq "pool list: the default header" "NAME PATH VOLUMES SNAPSHOTS HOST_FREE" "$(sv pool list | head -n 1 | squeeze)"

# --- -o picks and orders columns ---------------------------------------------
check_eq "list -o kind,name: those two, in that order" "KIND NAME
volume c1
volume opts
volume plain
volume q
snapshot s1" "$(sv list -o kind,name main 2>&1 | squeeze)"
check_eq "list --output=size,name --bytes" "1048576 plain" \
	"$(sv list --output=size,name --bytes --noheadings main 2>&1 | squeeze | grep plain)"
check_eq "list -o takes upper case (as lsblk)" "$(sv list -o name,size main 2>&1)" "$(sv list -o NAME,SIZE main 2>&1)"
plain_id=$(meta id "$M/plain.img")
out=$(sv list -o +id main 2>&1)
check_eq "list -o +id: the defaults, then ID" "POOL NAME KIND SIZE ALLOC ORIGIN DEVICE CREATED ID" "$(head -n 1 <<<"$out" | squeeze)"
check_eq "list -o +id: plain's id" "$plain_id" "$(awk '$2 == "plain" { print $NF }' <<<"$out")"
check_eq "list -o +origin_id,image: two more columns" "ORIGIN_ID IMAGE" \
	"$(sv list -o +origin_id,image main | head -n 1 | squeeze | cut -d' ' -f9-)"
check_eq "status -o id,size: those fields, in that order" "ID: $plain_id
Size: 1M" "$(sv status -o id,size main/plain 2>&1 | squeeze)"
out=$(sv status main/plain 2>&1)
check_fails "status: no Mapped line for an inactive volume" grep -q '^Mapped:' <<<"$out"
check_eq "status -o +mapped: added at the end, \"-\" (inactive)" "Mapped: -" "$(sv status -o +mapped main/plain | tail -n 1 | squeeze)"
check_eq "status -o +mapped: the defaults before it" "$(squeeze <<<"$out")" "$(sv status -o +mapped main/plain | head -n -1 | squeeze)"
check_eq "pool list -o name,id" "NAME ID
main $main_id" "$(sv pool list -o name,id | squeeze | grep -v '^other')"
check_eq "pool list -o +created,active: appended" "NAME PATH VOLUMES SNAPSHOTS HOST_FREE CREATED ACTIVE" \
	"$(sv pool list -o +created,active | head -n 1 | squeeze)"
check_eq "pool status -o volumes,snapshots,path" "Volumes: 4
Snapshots: 1
Path: $M" "$(sv pool status -o volumes,snapshots,path main 2>&1 | squeeze)"

# --- unknown columns are usage errors -----------------------------------------
usage_refused "list -o name,bogus: usage error" bogus sv list -o name,bogus main
usage_refused "list -o +bogus: usage error" bogus sv list -o +bogus main
usage_refused "list -o '': usage error" "" sv list -o '' main
usage_refused "status -o bogus: usage error" bogus sv status -o bogus main/plain
usage_refused "status -o name (list's column, not status's)" name sv status -o name main/plain
usage_refused "pool list -o pool (status's field, not list's)" pool sv pool list -o pool
usage_refused "pool status -o bogus: usage error" bogus sv pool status -o bogus main

# --- --noheadings and --separator ----------------------------------------------
check_eq "list --noheadings -o name: no header" "c1 opts plain q s1" "$(sv list --noheadings -o name main | xargs)"
check_eq "list --separator ';': cells apart by it, not aligned" "NAME;SIZE;ORIGIN
c1;8M;s1
opts;8M;-
plain;1M;-
q;4M;-
s1;8M;opts" "$(sv list --separator ';' -o name,size,origin main 2>&1)"
check_eq "list --separator ' | ' --noheadings --bytes" "plain | 1048576" \
	"$(sv list --separator ' | ' --noheadings --bytes -o name,size main | grep '^plain')"
check_eq "status --noheadings: values alone" "8M
none" "$(sv status --noheadings -o size,guarantee main/opts 2>&1)"
check_eq "status --separator =: name=value lines, names as -o takes them" "size=8M
no_space_timeout=30
state=inactive" "$(sv status --separator = -o size,no_space_timeout,state main/opts 2>&1)"
check_eq "status --separator with --noheadings: values alone" "8388608" \
	"$(sv status --separator = --noheadings --bytes -o size main/opts 2>&1)"
check_eq "pool list --separator , --noheadings" "main,$M" "$(sv pool list --separator , --noheadings -o name,path | grep '^main')"
check_eq "pool status --separator :" "pool:main
volumes:4" "$(sv pool status --separator : -o pool,volumes main 2>&1)"

# --- --json on all four ----------------------------------------------------------
# CMD|ARGS: the options go before the arguments.
for c in "list|main" "list -o name,origin_id|main" "status|main/opts" "status -o size,mapped|main/plain" \
	"pool list|" "pool list -o +id,created|" "pool status|main" "pool status -o id|main"; do
	# shellcheck disable=SC2086 # the words are the command's and its arguments
	out=$(sv ${c%%|*} --json ${c#*|} 2>&1)
	check_json "${c/|/ } --json is JSON" "$out"
	# shellcheck disable=SC2086
	check_eq "${c/|/ } --json: ignores --noheadings and --separator" "$out" \
		"$(sv ${c%%|*} --json --noheadings --separator ';' ${c#*|} 2>&1)"
done
if have_py; then
	check_eq "list --json -o name,origin_id: only those keys, in that order" "name,origin_id" \
		"$(sv list --json -o name,origin_id main | py 'print(*{",".join(r) for r in d["volumes"]})')"
	check_eq "status --json -o size,mapped: size, and mapped null (inactive)" "1048576 None" \
		"$(sv status --json -o size,mapped main/plain | py 'r = d["volume"][0]; print(r["size"], r["mapped"])')"
	check_eq "pool list --json -o +id: main's id" "$main_id" \
		"$(sv pool list --json -o +id | py 'print(*[r["id"] for r in d["pools"] if r["name"] == "main"])')"
	check_eq "pool status --json: virtual_size is the volumes' sizes" $((1 + 8 + 4 + 8 + 8))M \
		"$(($(sv pool status --json main | py 'print(d["pool"][0]["virtual_size"])') >> 20))M"
else
	echo "# note: no python3: the JSON's content is not checked"
fi

# --- status shows every option as created ---------------------------------------
# opts STATUS-TEXT: the option fields, as one line.
opts() {
	local t=$1
	echo "$(field Guarantee <<<"$t") $(field 'No space' <<<"$t") $(field 'No space timeout' <<<"$t")" \
		"$(field 'Low water mark' <<<"$t") $(field 'Ignore discard' <<<"$t") $(field 'Extent size' <<<"$t")"
}
check_eq "status main/opts: none queue 30 1M yes 64K" "none queue 30 1M yes 64K" "$(opts "$(sv status main/opts)")"
check_eq "status --bytes main/opts: sizes in bytes" "none queue 30 1048576 yes 65536" "$(opts "$(sv status --bytes main/opts)")"
check_eq "status main/plain: the defaults (no timeout, mark or hint)" "full error - - no -" "$(opts "$(sv status main/plain)")"
check_eq "status main/q: the target's default timeout, 60" "full queue 60 - no -" "$(opts "$(sv status main/q)")"
check_eq "status main/s1: the snapshot has its origin's options" "none queue 30 1M yes 64K" "$(opts "$(sv status main/s1)")"
check_eq "status main/c1: and so has its clone" "none queue 30 1M yes 64K" "$(opts "$(sv status main/c1)")"
check_eq "the options' fields come after Size, before Backed" \
	"Size Guarantee No space No space timeout Low water mark Ignore discard Extent size Host LVM Backed" \
	"$(sv status main/opts | sed -n '/^Size:/,/^Backed:/s/:.*//p' | xargs)"
check_eq "they agree with the metadata (low_water in sectors)" \
	"none queue 30 $(($(meta low_water "$M/opts.img") * 512)) 1 $(meta extent_size "$M/opts.img")" \
	"$(sv status --bytes --separator = -o guarantee,no_space,no_space_timeout,low_water_mark,ignore_discard,extent_size main/opts |
		cut -d= -f2 | sed 's/^yes$/1/' | xargs)"
check_eq "list -o shows them too" "opts none queue 30 1M yes 64K
plain full error - - no -" \
	"$(sv list --noheadings -o name,guarantee,no_space,no_space_timeout,low_water_mark,ignore_discard,extent_size main |
		squeeze | grep -E '^(opts|plain) ')"
if have_py; then
	check_eq "status --json main/opts: numbers and a boolean" "30 1048576 True 65536" \
		"$(sv status --json main/opts | py 'r = d["volume"][0]
print(r["no_space_timeout"], r["low_water_mark"], r["ignore_discard"], r["extent_size"])')"
	check_eq "status --json main/plain: nulls and false" "full error None None False None" \
		"$(sv status --json main/plain | py 'r = d["volume"][0]
print(r["guarantee"], r["no_space"], r["no_space_timeout"], r["low_water_mark"], r["ignore_discard"], r["extent_size"])')"
fi

# --- ORIGIN by id (review item 9) ---------------------------------------------------
check "snapshot main/plain tmpo" sv snapshot main/plain tmpo
check "clone main/tmpo oldclone" sv clone main/tmpo oldclone
tmpo_id=$(meta id "$M/tmpo.img")
check_eq "list: oldclone's ORIGIN is tmpo" "tmpo $tmpo_id" "$(sv list --noheadings -o name,origin,origin_id main | awk '$1 == "oldclone" { print $2, $3 }')"
check "remove main/tmpo" sv remove main/tmpo
check_eq "list: with tmpo gone, ORIGIN is -, ORIGIN_ID still its id" "- $tmpo_id" \
	"$(sv list --noheadings -o name,origin,origin_id main | awk '$1 == "oldclone" { print $2, $3 }')"
check "create an unrelated new main/tmpo" sv create --inactive --size 1M main/tmpo
check_eq "list: oldclone's ORIGIN is not the new tmpo" "-" "$(sv list --noheadings main | awk '$2 == "oldclone" { print $6 }')"
out=$(sv status main/oldclone)
check_eq "status: Origin -, Origin ID the removed snapshot's" "- $tmpo_id" "$(field Origin <<<"$out") $(field 'Origin ID' <<<"$out")"
if have_py; then
	check_eq "list --json: origin null, origin_id kept" "None $tmpo_id" \
		"$(sv list --json -o +origin_id main | py 'print(*[v for r in d["volumes"] if r["name"] == "oldclone" for v in (r["origin"], r["origin_id"])])')"
	check_eq "status --json: origin null" "None $tmpo_id" \
		"$(sv status --json main/oldclone | py 'r = d["volume"][0]; print(r["origin"], r["origin_id"])')"
fi
check_eq "the metadata still holds the old name (it is not what is shown)" tmpo "$(meta origin_name "$M/oldclone.img")"
# An image renamed on the host keeps its id: its snapshots follow it.
check "mv opts.img renamed.img on the host" mv "$M/opts.img" "$M/renamed.img"
check_eq "list: s1's ORIGIN is the current name" "renamed" "$(sv list --noheadings main | awk '$2 == "s1" { print $6 }')"
check_eq "status: the same" "renamed" "$(sv status main/s1 | field Origin)"
mv "$M/renamed.img" "$M/opts.img"
check_eq "and back" "opts" "$(sv list --noheadings main | awk '$2 == "s1" { print $6 }')"
check_eq "a volume made from nothing: Origin and Origin ID -" "- -" \
	"$(sv status main/plain | field Origin) $(sv status main/plain | field 'Origin ID')"

# --- times with their zone ------------------------------------------------------------
iso='^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}$'
created=$(meta created "$M/opts.img")
pcreated=$(getfattr --absolute-names --only-values -n user.subvol.pool "$M" | sed -n 's/^created=//p')
# POSIX TZ strings need no tzdata: UTC+05:30 and UTC-03:00.
for tz in UTC XST-5:30 YST+3; do
	want=$(TZ=$tz date -d "@$created" +%Y-%m-%dT%H:%M:%S%:z)
	check_eq "TZ=$tz list: CREATED is ISO 8601 with the offset ($want)" "$want" \
		"$(TZ=$tz sv list --noheadings -o name,created main | awk '$1 == "opts" { print $2 }')"
	check_eq "TZ=$tz status: Created the same" "$want" "$(TZ=$tz sv status main/opts | field Created)"
	if have_py; then
		check_eq "TZ=$tz status --json: created the same" "$want" \
			"$(TZ=$tz sv status --json main/opts | py 'print(d["volume"][0]["created"])')"
	fi
	want=$(TZ=$tz date -d "@$pcreated" +%Y-%m-%dT%H:%M:%S%:z)
	check_eq "TZ=$tz pool status: Created of the pool ($want)" "$want" "$(TZ=$tz sv pool status main | field Created)"
	check_eq "TZ=$tz pool list -o created: the same" "$want" \
		"$(TZ=$tz sv pool list --noheadings -o name,created | awk '$1 == "main" { print $2 }')"
done
check_eq "every CREATED of list has the form" "" "$(sv list --noheadings -o created | grep -Ev "$iso")"
check_eq "XST-5:30 ends in +05:30" "+05:30" "$(TZ=XST-5:30 sv status main/opts | field Created | grep -o '.\{6\}$')"

# --- diff --json ----------------------------------------------------------------------
dd if=/dev/urandom of="$M/c1.img" bs=4K count=3 seek=5 conv=notrunc status=none
check "snapshot main/c1 s2 (12K written at 20K)" sv snapshot main/c1 s2
out=$(sv diff --json main/s1 main/s2 2>&1)
check_json "diff --json is JSON" "$out"
check "diff --json is on several lines" test "$(wc -l <<<"$out")" -gt 5
check_eq "diff --json: a key a line, indented by three" '   "old": "main/s1",' "$(sed -n 2p <<<"$out")"
text=$(sv diff main/s1 main/s2 2>&1)
check_eq "diff: the text lists the 12K written" "20480 12288 data" "$text"
if have_py; then
	check_eq "diff --json: laid out as libsmartcols lays out list --json" "$out" "$(py "$layout" <<<"$out")"
	out2=$(sv list --json -o name,size main)
	check_eq "list --json: that layout" "$out2" "$(py "$layout" <<<"$out2")"
	check_eq "diff --json: its keys, and the ranges' keys" "old,new,method,bytes,ranges offset,length,kind" \
		"$(py 'print(",".join(d), *{",".join(r) for r in d["ranges"]})' <<<"$out")"
	check_eq "diff --json: the text's ranges, bytes their sum" "main/s1 main/s2 extents 12288 20480 12288 data" \
		"$(py 'print(d["old"], d["new"], d["method"], d["bytes"], *[v for r in d["ranges"] for v in r.values()])' <<<"$out")"
	out=$(sv diff --json main/s1 main/s1 2>&1)
	check_eq "diff --json of a snapshot with itself: no ranges, same layout" "$out" "$(py "$layout" <<<"$out")"
fi

# --- the columns of --help and subvol(8) are the code's ------------------------------------
# valid "CMD" [ARGS]: the column names an unknown one lists, sorted, one a line.
valid() {
	# shellcheck disable=SC2086 # CMD is words
	sv $1 -o nosuch "${@:2}" 2>&1 | sed -n 's/.*(valid: \(.*\))$/\1/p' | tr ',' '\n' | sort
}
# helped TEXT: the comma-separated names in TEXT, sorted, one a line.
helped() { tr -s ',; ' '\n' <<<"$1" | grep -E '^[a-z_]+$' | grep -vx also | sort -u; }
help=$(sv list --help)
check_eq "list --help names every column, no other" "$(valid list)" \
	"$(helped "$(sed -n '/^  Columns:/,$p' <<<"$help" | sed 's/Columns://')")"
help=$(sv status --help)
check_eq "status --help names every field, no other" "$(valid status main/plain)" \
	"$(helped "$(sed -n '/^  Fields:/,$p' <<<"$help" | sed -e 's/Fields://' -e 's/(those.*//')")"
help=$(sv pool --help)
check_eq "pool --help names every pool status field" "$(valid "pool status" main)" \
	"$(helped "$(sed -n '/status fields:/,/list columns:/p' <<<"$help" | sed -e 's/.*fields://' -e '/list columns:/d')")"
check_eq "pool --help names every pool list column" "$(valid "pool list")" \
	"$(helped "$(sed -n '/list columns:/,$p' <<<"$help" | sed 's/.*columns://')")"
# section NAME: the man page's .SS section NAME, as text.
section() {
	sed -e '/^\.\\"/d' -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$MAN" | awk -v c="$1" '
		/^\.S[HS] / { h = $0; sub(/^\.S[HS] +/, "", h); gsub(/"/, "", h); on = h == c; next }
		on'
}
for s in "list:" "status:main/plain" "pool list:" "pool status:main"; do
	text=$(section "${s%%:*}")
	missing=
	# shellcheck disable=SC2086 # the argument, if any
	for col in $(valid "${s%%:*}" ${s#*:}); do
		grep -qiE "(^|[^a-z_])${col}([^a-z_]|\$)" <<<"$text" || missing+=" $col"
	done
	check_eq "subvol(8) ${s%%:*} names every column" "" "$missing"
done

finish
