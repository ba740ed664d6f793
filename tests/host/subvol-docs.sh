#!/bin/bash
# Host-side test of the subvol tool's documentation: the man page renders
# without warnings and has an entry for every command and option that
# --help lists; every --help exits 0; the udev helper splits device names
# as the udev rules need; the rules file matches our devices and adds the
# /dev/subvol link.  Needs no device-mapper and no root.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

SUBVOL=$ROOT/build/bin/subvol
MAN=$ROOT/userspace/man/subvol.8
RULES=$ROOT/userspace/udev/56-dm-subvol.rules.in

[ -x "$SUBVOL" ] || make -s -C "$ROOT" userspace >/dev/null
check "the tool is built" test -x "$SUBVOL" || { finish; exit; }
check "the man page is there" test -f "$MAN" || { finish; exit; }

# --- the man page renders cleanly
check "groff is installed (groff-base)" command -v groff || { finish; exit; }
out=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
check_eq "groff -man -ww renders it without warnings" "" "$out"
if command -v man >/dev/null; then
	out=$(man --warnings -E UTF-8 -l "$MAN" 2>&1 >/dev/null)
	check_eq "man --warnings renders it without warnings" "" "$out"
fi

# man_text: the page's source without comments, font changes and escapes
# (\- is "-"), so that it can be searched for names and options.
man_text() {
	sed -e '/^\.\\"/d' -e 's/\\f[BIRP]//g' -e 's/\\f(..//g' \
	    -e 's/\\f\[[^]]*\]//g' -e 's/\\-/-/g' -e 's/\\[&%]//g' -e 's/\\c$//' "$MAN"
}

# entries: the text of every .SS heading and .TP tag, quotes dropped.
entries=$(man_text | awk '
	/^\.SS / { sub(/^\.SS +/, ""); gsub(/"/, ""); print; next }
	/^\.TP/ { tp = 1; next }
	tp { tp = 0; sub(/^\.[A-Z]+ +/, ""); gsub(/"/, ""); print }')

# section NAME: the text of the .SS sections (or the .SH section) named
# NAME or "NAME ...", up to the next heading.
section() {
	man_text | awk -v c="$1" '
		/^\.S[HS] / {
			h = $0; sub(/^\.S[HS] +/, "", h); gsub(/"/, "", h)
			on = h == c || index(h, c " ") == 1
			next
		}
		on'
}

# --- every command of --help has an entry
help=$("$SUBVOL" --help 2>&1)
check "subvol --help exits 0" "$SUBVOL" --help
# Command lines of --help: "  pool create [--name NAME] DIRECTORY" is
# "pool create"; "  pool import|status|list ..." three commands.
commands=$(sed -n '/^Commands:/,/^$/s/^  //p' <<<"$help" | awk '
	$2 ~ /^[a-z|]+$/ { n = split($2, s, "|"); for (i = 1; i <= n; i++) print $1 " " s[i]; next }
	{ print $1 }')
check "--help lists commands" test -n "$commands"
while IFS= read -r c; do
	check "the man page has an entry for \"$c\"" grep -qE "^$c( |\$)" <<<"$entries"
done <<<"$commands"

# The tool's own options, in OPTIONS.
# options TEXT: the long options named in TEXT, one a line.
options() { grep -oE -- '--[a-z][a-z-]*' <<<"$1" | sort -u; }
text=$(section OPTIONS)
missing=
while IFS= read -r opt; do
	grep -qE -e "$opt([^a-z-]|\$)" <<<"$text" || missing+=" $opt"
done < <(options "$(sed -n '/^Options:/,$p' <<<"$help")")
check_eq "every option of subvol --help is in OPTIONS" "" "$missing"

# --- every option of each COMMAND --help is in that command's section
rendered=$(groff -man -Tascii -P-cbu "$MAN" 2>/dev/null)
for c in $(awk '{ print $1 }' <<<"$commands" | uniq); do
	check "subvol $c --help exits 0" "$SUBVOL" "$c" --help
	text=$(section "$c")
	missing=
	while IFS= read -r opt; do
		[ -n "$opt" ] || continue
		grep -qE -e "$opt([^a-z-]|\$)" <<<"$text" || missing+=" $opt"
		grep -qF -e "$opt" <<<"$rendered" || missing+=" $opt(not rendered)"
	done < <(options "$("$SUBVOL" "$c" --help 2>/dev/null)")
	check_eq "every option of subvol $c --help is in its man page section" "" "$missing"
done

# --- subvol udev-name, the helper of the udev rules
# udev_name NAME: its output and exit status, as "OUTPUT|STATUS".
udev_name() {
	local out status=0
	out=$("$SUBVOL" udev-name "$1" 2>&1) || status=$?
	echo "$out|$status"
}
check_eq "udev-name subvol-p-v" $'SUBVOL_POOL=p\nSUBVOL_VOLUME=v|0' "$(udev_name subvol-p-v)"
check_eq "udev-name undoubles the dashes inside names" \
	$'SUBVOL_POOL=my-pool\nSUBVOL_VOLUME=vm-1|0' "$(udev_name subvol-my--pool-vm--1)"
for name in vg-lv subvol-novolume subvol--x; do
	check_eq "udev-name refuses $name: exit 1, no output" "|1" "$(udev_name "$name")"
done

# --- the udev rules
check "the udev rules are there" test -f "$RULES" || { finish; exit; }
check "they only take devices whose DM_UUID starts with SUBVOL-" \
	grep -qE '^ENV\{DM_UUID\}!="SUBVOL-\?\*", GOTO=' "$RULES"
check "they skip events without DM_UDEV_RULES_VSN" \
	grep -qF 'ENV{DM_UDEV_RULES_VSN}!="?*", GOTO=' "$RULES"
check "they skip events with DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG" \
	grep -qF 'ENV{DM_UDEV_DISABLE_SUBSYSTEM_RULES_FLAG}=="1", GOTO=' "$RULES"
check "they ignore remove events" grep -qF 'ACTION!="add|change", GOTO=' "$RULES"
# shellcheck disable=SC2016 # $env{...} is udev's, not the shell's
check "they import SUBVOL_POOL, SUBVOL_VOLUME and SUBVOL_HOST_LVM from subvol udev-name" \
	grep -qF 'IMPORT{program}="@SBINDIR@/subvol udev-name $env{DM_NAME} $env{DM_UUID}"' "$RULES"
# shellcheck disable=SC2016
check "they add the /dev/subvol/POOL/VOLUME symlink" \
	grep -qF 'SYMLINK+="subvol/$env{SUBVOL_POOL}/$env{SUBVOL_VOLUME}"' "$RULES"
check_eq "@SBINDIR@ is their only placeholder" "" \
	"$(sed 's|@SBINDIR@|/usr/sbin|g' "$RULES" | grep -n '@')"

finish
