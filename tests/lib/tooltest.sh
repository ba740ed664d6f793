# shellcheck shell=bash
# What the native tests of the subvol tool share (sourced after
# hosttest.sh): the tool, a work directory whose loop mounts a trap
# undoes, metadata and file helpers, and JSON checks.
#
#   tooltest_start NAME   checks root and the built tool, makes $work
#                         (mount loop images at $work/mnt/*, name them
#                         $work/*.fs) and sets SUBVOL_CONFIG_DIR; run
#                         tooltest_cleanup_hook CMD to undo more at exit

SUBVOL=${SUBVOL:-$ROOT/build/bin/subvol}

# show OUTPUT: the output of a failed check, in the checks' format.
show() { while IFS= read -r line; do echo "#   $line"; done <<<"$1"; }
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

_tooltest_hooks=()
tooltest_cleanup_hook() { _tooltest_hooks+=("$*"); }

_tooltest_cleanup() {
	local m f dev hook
	for hook in "${_tooltest_hooks[@]}"; do eval "$hook"; done
	for m in "$work"/mnt/*; do
		mountpoint -q "$m" && { umount "$m" || umount -l "$m"; }
	done
	for f in "$work"/*.fs; do
		[[ -e $f ]] || continue
		for dev in $(losetup -n -O NAME -j "$f"); do losetup -d "$dev"; done
	done
	rm -rf "$work"
}

tooltest_start() {
	check_eq "runs as root (loop mounts)" 0 "$EUID" || { finish; exit; }
	check "the tool is built ($SUBVOL)" test -x "$SUBVOL" || { finish; exit; }
	work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
	trap _tooltest_cleanup EXIT
	export SUBVOL_CONFIG_DIR=$work/config
}

sv() { "$SUBVOL" "$@"; }
# meta KEY IMAGE: a key of the image's user.subvol.volume.
meta() {
	getfattr --absolute-names --only-values -n user.subvol.volume "$2" 2>/dev/null |
		sed -n "s/^$1=//p"
}
# alloc FILE: bytes allocated to FILE on the host.
alloc() { echo $(($(stat -c '%b * %B' "$1"))); }
# entries DIR: the names in DIR, hidden ones too, on one line.
entries() { (cd "$1" && shopt -s dotglob nullglob && names=(*) && echo "${names[*]}"); }
# hidden DIR: the hidden names in DIR.
hidden() { (cd "$1" && shopt -s nullglob && names=(.[!.]*) && echo "${names[*]}"); }

# JSON: validated by python3 or jq, whichever is there.
if command -v python3 >/dev/null; then
	json_tool=python3
elif command -v jq >/dev/null; then
	json_tool=jq
else
	json_tool=
	echo "# note: neither python3 nor jq: JSON output is only checked for its shape"
fi
json_valid() {
	case $json_tool in
	python3) python3 -m json.tool >/dev/null ;;
	jq) jq -e . >/dev/null ;;
	esac
}
# check_json NAME TEXT: TEXT is JSON (without a validator: it starts with
# "{" and ends with "}").
check_json() {
	if [[ -n $json_tool ]]; then
		check "$1" json_valid <<<"$2" || show "$2"
	else
		check "$1 (starts with {, ends with })" \
			test "${2:0:1}${2: -1}" = "{}" || show "$2"
	fi
}
