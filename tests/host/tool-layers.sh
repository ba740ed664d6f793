#!/bin/bash
# The subvol tool's layers (userspace/subvol/, lowest first: model,
# devices, policy, commands), each calling only those below it: no file of
# a layer includes a header of a higher one, and no object of a layer
# (build/userspace/subvol/LAYER/*.o, built here) refers to a symbol that
# only a higher layer defines.  Each check is also shown to catch a
# planted violation, so that it cannot pass by looking at nothing.
set -uo pipefail
# shellcheck source=SCRIPTDIR/../lib/hosttest.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/hosttest.sh"

SRC=$ROOT/userspace/subvol
OBJ=$ROOT/build/userspace/subvol
LAYERS=(model devices policy commands)

# rank LAYER: its place from the bottom, -1 for no layer.
rank() {
	local i
	for i in "${!LAYERS[@]}"; do
		[[ ${LAYERS[i]} == "$1" ]] && { echo "$i"; return; }
	done
	echo -1
}

# include_violations DIR: a line for each source of DIR (a copy of
# userspace/subvol) that is in no layer's folder or includes a header of
# a higher layer.  An include resolves as the compiler's does: beside the
# file first, else from DIR (the Makefile's -I).
include_violations() {
	local dir=$1 f rel layer r inc path incl
	for f in "$dir"/*.[ch]; do
		[[ -e $f ]] && echo "${f#"$dir"/}: in no layer's folder"
	done
	for f in "$dir"/*/*.[ch]; do
		rel=${f#"$dir"/}
		layer=${rel%%/*}
		r=$(rank "$layer")
		if ((r < 0)); then
			echo "$rel: in no layer's folder"
			continue
		fi
		while IFS= read -r inc; do
			if [[ -e $(dirname "$f")/$inc ]]; then
				path=$(realpath -m "$(dirname "$f")/$inc")
			elif [[ -e $dir/$inc ]]; then
				path=$(realpath -m "$dir/$inc")
			else
				continue	# userspace/lib's or the uapi's
			fi
			incl=${path#"$(realpath "$dir")"/}
			(($(rank "${incl%%/*}") > r)) && echo "$rel: includes \"$inc\", of a higher layer"
		done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
	done
}

# symbol_violations DIR: a line for each object DIR/LAYER/*.o that refers
# to a symbol no object of its layer or a lower one defines, but a higher
# one does.
symbol_violations() {
	local dir=$1 l r o name
	for l in "${LAYERS[@]}"; do
		r=$(rank "$l")
		for o in "$dir/$l"/*.o; do
			[[ -e $o ]] || continue
			name=$l/${o##*/}
			nm --defined-only -g "$o" | awk -v r="$r" -v o="$name" 'NF == 3 { print "D", $3, r, o }'
			nm -u "$o" | awk -v r="$r" -v o="$name" 'NF { print "U", $NF, r, o }'
		done
	done | awk '
		$1 == "D" { if (!($2 in low) || $3 < low[$2]) { low[$2] = $3; where[$2] = $4 } next }
		{ u[++n] = $2 " " $3 " " $4 }
		END {
			for (i = 1; i <= n; i++) {
				split(u[i], f, " ")
				if ((f[1] in low) && low[f[1]] > f[2])
					print f[3] ": refers to " f[1] ", defined only in " where[f[1]]
			}
		}' | sort
}

check "the tool builds" make -s -C "$ROOT/userspace" tool

for l in "${LAYERS[@]}"; do
	check "$l/ has its own header" compgen -G "$SRC/$l/*.h"
done
check_eq "every source is in a layer's folder and includes no higher layer's header" "" \
	"$(include_violations "$SRC")"

# Only the objects of today's sources: a removed file's may linger.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sources=0 objects=0
for l in "${LAYERS[@]}"; do
	mkdir -p "$tmp/objs/$l"
	for c in "$SRC/$l"/*.c; do
		sources=$((sources + 1))
		o=$OBJ/$l/$(basename "$c" .c).o
		[[ -e $o ]] && cp "$o" "$tmp/objs/$l/" && objects=$((objects + 1))
	done
done
check "there are sources in the layers" test "$sources" -gt 0
check_eq "every source has its object" "$sources" "$objects"
check_eq "no object refers to a symbol only a higher layer defines" "" \
	"$(symbol_violations "$tmp/objs")"

# The checks catch what they are for: a model file including the
# commands' header (also by a relative path), a file outside the layers,
# and a model object calling a command.
cp -r "$SRC" "$tmp/src"
sed -i '0,/^#include "model\/model.h"$/s||#include "model/model.h"\n#include "commands/commands.h"|' \
	"$tmp/src/model/meta.c"
echo '#include "../commands/report.h"' >>"$tmp/src/devices/dm.c"
touch "$tmp/src/stray.c"
found=$(include_violations "$tmp/src")
check "a model file including commands/commands.h is caught" \
	grep -Fxq 'model/meta.c: includes "commands/commands.h", of a higher layer' <<<"$found"
check "so is a relative include of a higher layer's header" \
	grep -Fxq 'devices/dm.c: includes "../commands/report.h", of a higher layer' <<<"$found"
check "so is a file outside the layers" grep -Fxq 'stray.c: in no layer'"'"'s folder' <<<"$found"
printf 'int cmd_monitor(int argc, char **argv);\nint planted(void) { return cmd_monitor(0, 0); }\n' \
	>"$tmp/planted.c"
check "a planted object builds" cc -c -o "$tmp/objs/model/planted.o" "$tmp/planted.c"
check "a model object calling a command is caught" \
	grep -Fxq "model/planted.o: refers to cmd_monitor, defined only in commands/cmd-monitor.o" \
	<<<"$(symbol_violations "$tmp/objs")"
finish
