#!/bin/bash
# Native test of the subvol tool (build/bin/subvol) on small loop-mounted
# host filesystems: pools and their refusals, the name registry and
# import, create --inactive, metadata in xattrs, snapshot, clone,
# rollback, resize and remove of inactive volumes, list and status.
# Nothing here needs device-mapper.  Needs root (loop mounts).
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

# shellcheck source=SCRIPTDIR/../lib/tooltest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tooltest.sh"

tooltest_start subvol-tool
shm=$(mktemp -d /dev/shm/subvol-tool.XXXXXX)
tooltest_cleanup_hook "rm -rf '$shm'"
reg=$SUBVOL_CONFIG_DIR/pools

# field LABEL: the value of "LABEL: value" in a status text on stdin.
field() { sed -n "s/^$1: *//p"; }
# no_pool_xattr DIR: DIR has no user.subvol.pool.
no_pool_xattr() { ! getfattr --absolute-names -n user.subvol.pool "$1" >/dev/null 2>&1; }

# refused NAME WORD REGEX CMD...: CMD exits 1 with a single line on stderr
# that names WORD (the pool) and matches REGEX (why).
refused() {
	local name=$1 word=$2 re=$3 err status=0 lines named why
	shift 3
	err=$("$@" 2>&1 >/dev/null) || status=$?
	lines=$(printf '%s' "$err" | grep -c '')
	named=no
	[[ $err == *"$word"* ]] && named=yes
	why=no
	[[ $err =~ $re ]] && why=yes
	check_eq "$name" "exit 1, 1 line, names $word: yes, says /$re/: yes" \
		"exit $status, $lines line, names $word: $named, says /$re/: $why" || show "$err"
}

# json_row KEY NAME FIELD: FIELD of the object with "name": NAME in the
# array KEY of the JSON on stdin.
json_row() {
	case $json_tool in
	python3) python3 2>/dev/null -c 'import json, sys
d = json.load(sys.stdin)
print(*[r[sys.argv[3]] for r in d[sys.argv[1]] if r["name"] == sys.argv[2]])' "$@" ;;
	jq) jq 2>/dev/null -r --arg k "$1" --arg n "$2" --arg f "$3" '.[$k][] | select(.name == $n) | .[$f]' ;;
	esac
}
# check_json NAME TEXT: TEXT is valid JSON (or a note when it cannot be told).

# --- host filesystems ------------------------------------------------------
mkdir -p "$work/mnt/xfs" "$work/mnt/noreflink" "$work/mnt/ext4"
truncate -s 1G "$work/xfs.fs"
truncate -s 300M "$work/noreflink.fs"
truncate -s 32M "$work/ext4.fs"
check "mkfs.xfs (default: reflink)" mkfs.xfs -q "$work/xfs.fs" || { finish; exit; }
check "mkfs.xfs -m reflink=0" mkfs.xfs -q -m reflink=0 "$work/noreflink.fs"
check "mkfs.ext4" mkfs.ext4 -q -F "$work/ext4.fs"
for fs in xfs noreflink ext4; do
	check "mount the $fs image" mount -o loop "$work/$fs.fs" "$work/mnt/$fs" || { finish; exit; }
done
X=$work/mnt/xfs
NR=$work/mnt/noreflink
E4=$work/mnt/ext4
check "the host XFS has reflink" grep -q 'reflink=1' <<<"$(xfs_info "$X")" || { finish; exit; }
check_eq "/dev/shm is tmpfs" tmpfs "$(stat -f -c %T "$shm")"

# --- pool create -----------------------------------------------------------
check "pool create on reflink XFS" sv pool create "$X/main"
check_eq "its name is registered (symlink to the directory)" "$X/main" "$(readlink "$reg/main")"
pmeta=$(getfattr --absolute-names --only-values -n user.subvol.pool "$X/main" 2>&1)
check_eq "user.subvol.pool starts with format=1" "format=1" "$(head -n 1 <<<"$pmeta")"
check_eq "user.subvol.pool holds the name" "main" "$(sed -n 's/^name=//p' <<<"$pmeta")"
check "user.subvol.pool holds a 128-bit id" grep -Eq '^id=[0-9a-f]{32}$' <<<"$pmeta"
main_id=$(sed -n 's/^id=//p' <<<"$pmeta")
check "pool create --name other" sv pool create --name other "$X/other-dir"
check_eq "the name given is registered" "$X/other-dir" "$(readlink "$reg/other" 2>&1)"
check_eq "and is in the xattr" "other" "$(getfattr --absolute-names --only-values -n user.subvol.pool "$X/other-dir" | sed -n 's/^name=//p')"

refused "refused on XFS without reflink" "$NR/nr1" 'reflink' sv pool create "$NR/nr1"
check_fails "the directory it made is removed" test -e "$NR/nr1"
check_fails "nothing is registered" test -L "$reg/nr1"
mkdir "$NR/nr2"
refused "refused on XFS without reflink (existing directory)" "$NR/nr2" 'reflink' sv pool create "$NR/nr2"
check "an existing directory is kept" test -d "$NR/nr2"
check "it has no user.subvol.pool" no_pool_xattr "$NR/nr2"
check_fails "nothing is registered" test -L "$reg/nr2"
refused "refused on ext4" "$E4/e1" 'not XFS' sv pool create "$E4/e1"
check_fails "the directory it made is removed" test -e "$E4/e1"
check_fails "nothing is registered" test -L "$reg/e1"
refused "refused on tmpfs" "$shm/t1" 'tmpfs' sv pool create "$shm/t1"
check_fails "the directory it made is removed" test -e "$shm/t1"
check_fails "nothing is registered" test -L "$reg/t1"
refused "refused: a path with a space" "$X/with space" 'whitespace' sv pool create --name spaced "$X/with space"
check_fails "the directory it made is removed" test -e "$X/with space"
check_fails "nothing is registered" test -L "$reg/spaced"
refused "refused: a path with a space, default name" "$X/with space" 'name' sv pool create "$X/with space"
check_fails "the directory it made is removed" test -e "$X/with space"
refused "refused: an invalid --name" 'bad/name' 'not a valid name' sv pool create --name bad/name "$X/badname"
check_fails "the directory it made is removed" test -e "$X/badname"
refused "refused: --name with a leading dash" '-bad' 'not a valid name' sv pool create --name=-bad "$X/badname"
check_fails "the directory it made is removed" test -e "$X/badname"
mkdir "$X/taken"
refused "refused: a name already registered" main 'already registered' sv pool create --name main "$X/taken"
check "an existing directory is kept" test -d "$X/taken"
check "it has no user.subvol.pool" no_pool_xattr "$X/taken"
check_eq "the name stays registered to its pool" "$X/main" "$(readlink "$reg/main")"
refused "refused: a directory that is already a pool" main 'already a pool' sv pool create --name again "$X/main"
check_fails "nothing is registered" test -L "$reg/again"
check_eq "the pool keeps its metadata" "$main_id" "$(getfattr --absolute-names --only-values -n user.subvol.pool "$X/main" | sed -n 's/^id=//p')"
check_status "pool create without DIRECTORY: usage error" 2 sv pool create
check_eq "the registry holds main and other alone" "main other" "$(entries "$reg")"

# --- pool import after a move ----------------------------------------------
check "pool create mover" sv pool create "$X/mover"
check "a volume in it" sv create --inactive --size 1M mover/v
mv "$X/mover" "$X/moved"
check_fails "after the move, the name's directory is gone" sv pool status mover
check "pool import the moved directory" sv pool import "$X/moved"
check_eq "the name now points at the new place" "$X/moved" "$(readlink "$reg/mover" 2>&1)"
check_fails "the name stays the pool's, not the new directory's" test -L "$reg/moved"
check_eq "pool status finds it by name" "$X/moved" "$(sv pool status mover 2>&1 | field Path)"
check_eq "its volume is there" inactive "$(sv status mover/v 2>&1 | field State)"
check_eq "pool import again: nothing to do" "Pool mover at $X/moved is already registered as mover" "$(sv pool import "$X/moved" 2>&1)"
cp -a "$X/moved" "$X/moved-copy"
refused "import of a copy whose name a live pool holds" mover 'already registered' sv pool import "$X/moved-copy"
check_eq "the name stays registered to the live pool" "$X/moved" "$(readlink "$reg/mover")"
mkdir "$X/plain"
refused "import of a directory that is no pool" plain 'not a pool' sv pool import "$X/plain"
check_fails "nothing is registered" test -L "$reg/plain"
refused "pool import --name of a registered pool (export it first)" mover 'export' sv pool import --name x "$X/moved"
check_fails "nothing is registered" test -L "$reg/x"

# --- create --inactive -----------------------------------------------------
M=$X/main
check "create --inactive --size 10001" sv create --inactive --size 10001 main/v1
check_eq "the image is rounded up to whole host blocks" 12288 "$(stat -c %s "$M/v1.img" 2>&1)"
check_eq "the image is sparse" 0 "$(alloc "$M/v1.img")"
check_eq "metadata: format=1 first" "format=1" "$(getfattr --absolute-names --only-values -n user.subvol.volume "$M/v1.img" | head -n 1)"
check "metadata: a 128-bit id" grep -Eq '^[0-9a-f]{32}$' <<<"$(meta id "$M/v1.img")"
check_eq "metadata: kind, size, policies" "volume 12288 full error" \
	"$(meta kind "$M/v1.img") $(meta size "$M/v1.img") $(meta guarantee "$M/v1.img") $(meta no_space "$M/v1.img")"
v1_id=$(meta id "$M/v1.img")
check "create --guarantee none --no-space queue --no-space-timeout 30 --extent-size 1M" \
	sv create --inactive --size 8M --guarantee none --no-space queue --no-space-timeout 30 --extent-size 1M main/v2
check_eq "metadata: the policies given" "none queue 30 1048576" \
	"$(meta guarantee "$M/v2.img") $(meta no_space "$M/v2.img") $(meta no_space_timeout "$M/v2.img") $(meta extent_size "$M/v2.img")"
check_eq "the image has a 1M extent size hint" "[1048576] $M/v2.img" "$(xfs_io -c extsize "$M/v2.img" 2>&1)"
check "create --low-water 1M --ignore-discard" sv create --inactive --size 2M --low-water 1M --ignore-discard main/lw
check_eq "metadata: low_water in sectors, ignore_discard" "2048 1" "$(meta low_water "$M/lw.img") $(meta ignore_discard "$M/lw.img")"
check "remove it" sv remove main/lw
check "create --no-space-timeout 3600 (the limit)" sv create --inactive --size 1M --no-space queue --no-space-timeout 3600 main/t3600
check_eq "metadata: the timeout" 3600 "$(meta no_space_timeout "$M/t3600.img")"
long64=$(printf 'n%.0s' {1..64})
check "create a 64-character name" sv create --inactive --size 1M "main/$long64"
check "remove it" sv remove "main/$long64"

check_status "create: existing name refused" 1 sv create --inactive --size 1M main/v1
check_eq "the existing volume is unchanged" "$v1_id 12288" "$(meta id "$M/v1.img") $(meta size "$M/v1.img")"
check_status "create: name with a leading dash: usage error" 2 sv create --inactive --size 1M main/-x
check_status "create: name with a leading dot: usage error" 2 sv create --inactive --size 1M main/.x
check_status "create: name with a slash (a pool path that is not there) refused" 1 sv create --inactive --size 1M main/a/b
check_status "create: 65-character name: usage error" 2 sv create --inactive --size 1M "main/${long64}x"
check_status "create: --size 0 is a usage error" 2 sv create --inactive --size 0 main/x
check_status "create: --size abc is a usage error" 2 sv create --inactive --size abc main/x
check_status "create: --size 1.5 (bytes) is a usage error" 2 sv create --inactive --size 1.5 main/x
check_status "create: --no-space-timeout without --no-space queue" 2 sv create --inactive --size 1M --no-space-timeout 5 main/x
check_status "create: --no-space-timeout 0" 2 sv create --inactive --size 1M --no-space queue --no-space-timeout 0 main/x
check_status "create: --no-space-timeout 3601" 2 sv create --inactive --size 1M --no-space queue --no-space-timeout 3601 main/x
check_status "create: --extent-size with guarantee full" 2 sv create --inactive --size 1M --extent-size 1M main/x
check_status "create: --extent-size 6000 (not whole blocks)" 2 sv create --inactive --size 1M --guarantee none --extent-size 6000 main/x
check_status "create: --low-water 1000 (not whole sectors)" 2 sv create --inactive --size 1M --low-water 1000 main/x
check_status "create: --low-water 1M on a 1M volume (not below its size)" 2 sv create --inactive --size 1M --low-water 1M main/x
check_status "create: --low-water 1G on a 100M volume" 2 sv create --inactive --size 100M --low-water 1G main/x
check_status "create: --guarantee maybe" 2 sv create --inactive --size 1M --guarantee maybe main/x
check_status "create: no --size" 2 sv create --inactive main/x
check_status "create: no volume" 2 sv create --inactive --size 1M
check_status "create: an unknown option" 2 sv create --inactive --size 1M --bogus main/x
check_status "create: --mkfs with --inactive" 2 sv create --inactive --size 1M --mkfs main/x
if grep -qw device-mapper /proc/misc; then
	echo "# skip: create without --inactive (device-mapper is here)"
else
	refused "create without --inactive: no device-mapper" main/act 'device-mapper is not available' \
		sv create --size 1M main/act
fi
check_eq "the refusals left nothing in the pool" "t3600.img v1.img v2.img" "$(entries "$M")"

# --- metadata survives a copy ----------------------------------------------
check "cp -a an image into another pool" cp -a "$M/v1.img" "$X/other-dir/"
check_eq "the copy keeps user.subvol.volume" "$v1_id" "$(meta id "$X/other-dir/v1.img")"
check_eq "and is listed" "other v1 volume" "$(sv list --noheadings other 2>&1 | awk '{ print $1, $2, $3 }')"

# --- snapshot --------------------------------------------------------------
check "create main/data (8M)" sv create --inactive --size 8M main/data
# 1M of random data at 0, 3M and 6M; holes between and after.
head -c 3M /dev/urandom >"$work/random"
for i in 0 1 2; do
	dd if="$work/random" of="$M/data.img" bs=1M skip=$i seek=$((3 * i)) count=1 conv=notrunc status=none
done
data_id=$(meta id "$M/data.img")
check "a fake sharing record on the origin" setfattr -n trusted.dm-subvol.shared -v fake "$M/data.img"
check "snapshot main/data snap1" sv snapshot main/data snap1
check_fails "the origin's sharing record is gone" getfattr --absolute-names -n trusted.dm-subvol.shared "$M/data.img"
check "the snapshot's content is the origin's" cmp "$M/data.img" "$M/snap1.img"
check_eq "metadata: kind snapshot, origin data" "snapshot data $data_id" \
	"$(meta kind "$M/snap1.img") $(meta origin_name "$M/snap1.img") $(meta origin_id "$M/snap1.img")"
check "metadata: an id of its own" test "$(meta id "$M/snap1.img")" != "$data_id"
check_eq "the snapshot's extents are the origin's (same physical blocks)" \
	"$(xfs_io -c fiemap "$M/data.img" | tail -n +2)" "$(xfs_io -r -c fiemap "$M/snap1.img" 2>&1 | tail -n +2)"
fmap=$(filefrag -v "$M/snap1.img" 2>&1)
check_eq "filefrag: 3 extents, all shared" "3 3" \
	"$(grep -cE '^ *[0-9]+:' <<<"$fmap") $(grep -E '^ *[0-9]+:' <<<"$fmap" | grep -c shared)" || show "$fmap"
check_eq "the holes stay holes (3M allocated, as the origin)" "3145728 3145728" \
	"$(alloc "$M/data.img") $(alloc "$M/snap1.img")"
snap1_id=$(meta id "$M/snap1.img")
refused "snapshot to an existing name" main/snap1 'exists already' sv snapshot main/data snap1
check_eq "the existing snapshot is unchanged" "$snap1_id" "$(meta id "$M/snap1.img")"
refused "snapshot of a nonexistent volume" main/nosuch 'no such volume' sv snapshot main/nosuch s
check_fails "nothing made for it" test -e "$M/s.img"
refused "snapshot into another pool" other/s 'pool main' sv snapshot main/data other/s
check "snapshot main/data main/snap2 (POOL/NAME)" sv snapshot main/data main/snap2
check "snapshot of a path to a path in the same pool" sv snapshot "$M/data" "$M/snap3"
check_eq "it is a snapshot of data" "snapshot data" "$(meta kind "$M/snap3.img") $(meta origin_name "$M/snap3.img")"
check "remove it" sv remove main/snap3
check "snapshot --writable" sv snapshot --writable main/data wsnap
check_eq "a writable snapshot is a volume of origin data" "volume data" \
	"$(meta kind "$M/wsnap.img") $(meta origin_name "$M/wsnap.img")"
check "its content is the origin's" cmp "$M/data.img" "$M/wsnap.img"

# Extent size hints carry over to snapshots, clones and rollbacks.
xfs_io -c 'pwrite -q 0 64k' "$M/v2.img"
check "snapshot main/v2 v2s" sv snapshot main/v2 v2s
check_eq "the snapshot keeps the 1M extent size hint" "[1048576] $M/v2s.img" "$(xfs_io -r -c extsize "$M/v2s.img" 2>&1)"

# --- clone -----------------------------------------------------------------
refused "clone of a volume" main/data 'snapshot --writable' sv clone main/data c0
check_fails "nothing made for it" test -e "$M/c0.img"
check "clone main/snap1 clone1" sv clone main/snap1 clone1
check "the clone's content is the snapshot's" cmp "$M/snap1.img" "$M/clone1.img"
check_eq "metadata: a volume of origin snap1" "volume snap1" \
	"$(meta kind "$M/clone1.img") $(meta origin_name "$M/clone1.img")"
check "clone main/v2s v2c" sv clone main/v2s v2c
check_eq "the clone keeps the 1M extent size hint" "[1048576] $M/v2c.img" "$(xfs_io -c extsize "$M/v2c.img" 2>&1)"

check "create main/fs (300M)" sv create --inactive --size 300M main/fs
check "mkfs.xfs in its image" mkfs.xfs -q "$M/fs.img"
fs_uuid=$(blkid -o value -s UUID "$M/fs.img")
check "snapshot main/fs fs-snap" sv snapshot main/fs fs-snap
check "clone main/fs-snap fs-clone" sv clone main/fs-snap fs-clone
check "snapshot --writable main/fs fs-w" sv snapshot --writable main/fs fs-w
check_eq "the snapshot keeps the origin's XFS UUID" "$fs_uuid" "$(blkid -o value -s UUID "$M/fs-snap.img")"
clone_uuid=$(blkid -o value -s UUID "$M/fs-clone.img")
check "the clone has an XFS UUID" grep -Eq '^[0-9a-f-]{36}$' <<<"$clone_uuid"
check "the clone's XFS UUID is new" test "$clone_uuid" != "$fs_uuid"
check_eq "xfs_admin -u agrees" "UUID = $clone_uuid" "$(xfs_admin -u "$M/fs-clone.img" 2>&1)"
check "the clone's XFS is consistent" xfs_repair -n -f "$M/fs-clone.img"
w_uuid=$(blkid -o value -s UUID "$M/fs-w.img")
check "a writable snapshot's XFS UUID is new too" test -n "$w_uuid" -a "$w_uuid" != "$fs_uuid"

# --- rollback --------------------------------------------------------------
check "grow main/data to 16M" sv resize --size 16M main/data
head -c 2M /dev/urandom | dd of="$M/data.img" bs=1M seek=0 conv=notrunc status=none
check_fails "the origin's content now differs" cmp -s "$M/data.img" "$M/snap1.img"
check "rollback main/data snap1" sv rollback main/data snap1
check "the content is the snapshot's again" cmp "$M/data.img" "$M/snap1.img"
check_eq "and so is the size (file, metadata)" "8388608 8388608" "$(stat -c %s "$M/data.img") $(meta size "$M/data.img")"
check_eq "the volume keeps its id, kind and (no) origin" "$data_id volume " \
	"$(meta id "$M/data.img") $(meta kind "$M/data.img") $(meta origin_name "$M/data.img")"
refused "rollback to a snapshot of another volume" main/snap1 'force' sv rollback main/v1 snap1
check_eq "the volume is unchanged" "12288 12288" "$(stat -c %s "$M/v1.img") $(meta size "$M/v1.img")"
check "rollback --force to it" sv rollback --force main/v1 snap1
check "the content is the snapshot's" cmp "$M/v1.img" "$M/snap1.img"
check_eq "the volume keeps its id" "$v1_id" "$(meta id "$M/v1.img")"
sv snapshot other/v1 osnap >/dev/null
refused "rollback to a snapshot in another pool" other/snap1 'not in pool main' sv rollback --force main/data other/snap1
check_eq "the volume is unchanged" "$data_id 8388608" "$(meta id "$M/data.img") $(stat -c %s "$M/data.img")"
refused "rollback to a snapshot in another pool (named so)" other/osnap 'not in pool main' sv rollback --force main/data other/osnap
check "rollback with SNAPSHOT as a path into the pool" sv rollback main/data "$M/snap1"
refused "rollback of a snapshot" main/snap1 'snapshot cannot be rolled back' sv rollback main/snap1 snap2
refused "rollback to a volume" main/clone1 'not a snapshot' sv rollback main/data clone1
check "rollback main/v2 v2s" sv rollback main/v2 v2s
check_eq "the volume keeps its 1M extent size hint" "[1048576] $M/v2.img" "$(xfs_io -c extsize "$M/v2.img" 2>&1)"
check_eq "no hidden files left" "" "$(hidden "$M")"

# --- resize ----------------------------------------------------------------
check "create main/r (1M)" sv create --inactive --size 1M main/r
check "resize --size +1M" sv resize --size +1M main/r
check_eq "file and metadata 2M" "2097152 2097152" "$(stat -c %s "$M/r.img") $(meta size "$M/r.img")"
check "resize --size 5M" sv resize --size 5M main/r
check_eq "file and metadata 5M" "5242880 5242880" "$(stat -c %s "$M/r.img") $(meta size "$M/r.img")"
check_status "shrink without --yes (stdin no terminal) refused" 1 sv resize --size 3M main/r </dev/null
check_eq "still 5M" "5242880 5242880" "$(stat -c %s "$M/r.img") $(meta size "$M/r.img")"
check "shrink with --yes" sv resize --size 3M --yes main/r
check_eq "file and metadata 3M" "3145728 3145728" "$(stat -c %s "$M/r.img") $(meta size "$M/r.img")"
check "resize --size +5000 rounds up to host blocks" sv resize --size +5000 main/r
check_eq "3M + 8K" "3153920 3153920" "$(stat -c %s "$M/r.img") $(meta size "$M/r.img")"
refused "resize of a snapshot" main/snap1 'snapshot' sv resize --size 16M main/snap1
check_eq "the snapshot is unchanged" "8388608 8388608" "$(stat -c %s "$M/snap1.img") $(meta size "$M/snap1.img")"
check_status "resize --size 0 is a usage error" 2 sv resize --size 0 main/r
check_status "resize without --size is a usage error" 2 sv resize main/r

# --- remove ----------------------------------------------------------------
check "remove main/wsnap" sv remove main/wsnap
check_fails "its image is gone" test -e "$M/wsnap.img"
refused "remove of a missing volume" main/wsnap 'no such volume' sv remove main/wsnap
for v in rm1 rm2 rm3; do sv create --inactive --size 1M "main/$v" >/dev/null; done
check "remove several at once" sv remove main/rm1 main/rm2
check_fails "both images are gone" test -e "$M/rm1.img" -o -e "$M/rm2.img"
check_status "remove with a missing one among them exits 1" 1 sv remove main/nosuch main/rm3
check_fails "the others are removed still" test -e "$M/rm3.img"

# --- list and status -------------------------------------------------------
# A leftover of an interrupted rollback: a hidden complete image.
cp -a "$M/snap1.img" "$M/.data.img.new-123"
imgs=("$M"/*.img)
nimg=${#imgs[@]}
out=$(sv list 2>"$work/err")
check_eq "list: exit 0, nothing on stderr" "0 " "$? $(cat "$work/err")"
check_eq "list: the header" "POOL NAME KIND SIZE ALLOC ORIGIN DEVICE CREATED" "$(head -n 1 <<<"$out" | xargs)"
check_eq "list: snap1 is a snapshot of data, 8M, 3M allocated" "snapshot 8M 3M data -" \
	"$(awk '$1 == "main" && $2 == "snap1" { print $3, $4, $5, $6, $7 }' <<<"$out")" || show "$out"
check_eq "list: clone1 is a volume of origin snap1" "volume snap1" \
	"$(awk '$1 == "main" && $2 == "clone1" { print $3, $6 }' <<<"$out")"
check_eq "list: every pool's volumes, hidden files left out" "$((nimg + 3))" "$(tail -n +2 <<<"$out" | wc -l)" || show "$out"
check "list exits 0 (the hidden file is no error)" sv list main
out=$(sv list --noheadings main 2>&1)
check_eq "list --noheadings: one line a volume" "$nimg" "$(wc -l <<<"$out")"
check_fails "list --noheadings: no header" grep -q '^POOL' <<<"$out"
check_fails "list: not the hidden file" grep -q 'new-123' <<<"$out"
out=$(sv list --bytes --noheadings main 2>&1)
check_eq "list --bytes: sizes in bytes" "8388608 3145728" "$(awk '$2 == "snap1" { print $4, $5 }' <<<"$out")"
out=$(sv list --json 2>/dev/null)
check_json "list --json is JSON" "$out"
if [[ -n $json_tool ]]; then
	check_eq "list --json: snap1's kind, origin, size" "snapshot data 8388608" \
		"$(json_row volumes snap1 kind <<<"$out") $(json_row volumes snap1 origin <<<"$out") $(json_row volumes snap1 size <<<"$out")"
	check_eq "list --json: every volume" "$((nimg + 3))" "$(grep -c '"name":' <<<"$out")"
fi
check_eq "list of a path is list of the name" "$(sv list main 2>&1)" "$(sv list "$M" 2>&1)"

out=$(sv status main/snap1 2>&1)
check_eq "status: State inactive" inactive "$(field State <<<"$out")" || show "$out"
check_eq "status: Kind, Size, Backed, Origin" "snapshot 8M 3M data" \
	"$(field Kind <<<"$out") $(field Size <<<"$out") $(field Backed <<<"$out") $(field Origin <<<"$out")"
check_eq "status: ID is the metadata's" "$snap1_id" "$(field ID <<<"$out")"
check_eq "status: Image" "$M/snap1.img" "$(field Image <<<"$out")"
check_eq "status POOL as an absolute path" "$out" "$(sv status "$M/snap1" 2>&1)"
check_eq "status POOL as a relative path" "$out" "$(cd "$X" && sv status ./main/snap1 2>&1)"
check_eq "status POOL as ." "$out" "$(cd "$M" && sv status ./snap1 2>&1)"
check_eq "status POOL as a path with .." "$out" "$(cd "$M" && sv status ../main/snap1 2>&1)"
out=$(sv status --json main/snap1 2>/dev/null)
check_json "status --json is JSON" "$out"
for kv in '"state": "inactive"' '"kind": "snapshot"' '"size": 8388608' '"backed": 3145728' \
	'"origin": "data"' '"device": null' "\"id\": \"$snap1_id\"" '"guarantee": "full"' '"no_space": "error"'; do
	check "status --json: $kv" grep -qF "$kv" <<<"$out" || show "$out"
done
check "status --json: host_free is a number" grep -Eq '"host_free": [0-9]+' <<<"$out"
refused "status of a missing volume" main/nosuch 'no such volume' sv status main/nosuch
refused "status of a pool that does not exist" nopool 'no such pool' sv status nopool/v

# --- pool list and pool status ---------------------------------------------
out=$(sv pool list 2>"$work/err")
check_eq "pool list: exit 0, nothing on stderr" "0 " "$? $(cat "$work/err")"
check_eq "pool list: the pools and their paths" "main $M
mover $X/moved
other $X/other-dir" "$(tail -n +2 <<<"$out" | awk '{ print $1, $2 }')" || show "$out"
nsnap=$(sv list --noheadings main | awk '$3 == "snapshot"' | wc -l)
check_eq "pool list: main's volumes and snapshots" "$((nimg - nsnap)) $nsnap" \
	"$(awk '$1 == "main" { print $3, $4 }' <<<"$out")"
out=$(sv pool list --json 2>/dev/null)
check_json "pool list --json is JSON" "$out"
[[ -n $json_tool ]] && check_eq "pool list --json: main's path" "$M" "$(json_row pools main path <<<"$out")"
nsnap=$(sv list --noheadings main | awk '$3 == "snapshot"' | wc -l)
out=$(sv pool status main 2>&1)
check_eq "pool status: name, path, id" "main $M $main_id" \
	"$(field Pool <<<"$out") $(field Path <<<"$out") $(field ID <<<"$out")" || show "$out"
check_eq "pool status: volumes, snapshots, active" "$((nimg - nsnap)) $nsnap 0" \
	"$(field Volumes <<<"$out") $(field Snapshots <<<"$out") $(field Active <<<"$out")"
check_eq "pool status of a path is that of the name" "$out" "$(sv pool status "$M" 2>&1)"
out=$(sv pool status --json main 2>/dev/null)
check_json "pool status --json is JSON" "$out"
check "pool status --json: the snapshots" grep -qF "\"snapshots\": $nsnap" <<<"$out"
check "pool status --json: allocated is a number" grep -Eq '"allocated": [0-9]+' <<<"$out"
refused "pool status of a directory that is no pool" "$X/plain" 'not a pool' sv pool status "$X/plain"

finish
