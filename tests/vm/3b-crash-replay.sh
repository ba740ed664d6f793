# Crash consistency (issue 25), short: the host XFS under dm-log-writes,
# a pool and a volume by the tool, fsync'ed files on the space-aware guest
# XFS, a table reload and a grow, each fsync and the grow followed by a
# log-writes mark; then the log is replayed to 3 of the marks, the one
# right after xfs_growfs returned, and to 3 random entries (power
# cuts: the writes after the entry are lost, flushed or not) and each
# point is checked on a throwaway dm-snapshot of the replay: the host XFS
# mounts and xfs_repair -n finds nothing, the volume activates, its
# accounting matches the host's extent map, the guest XFS mounts and
# xfs_repair -n finds nothing, and every byte fsync'ed before the point's
# last mark is intact.  scripts/torture-crash is the long version.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh
. /src/tests/lib/crash.sh

RANDOM=25
# The workload runs in this shell (check would run it in a subshell, and
# lose the mark count); each step's status is checked after it.
step() {
	local name=$1 rc=0
	shift
	"$@" || rc=$?
	check_eq "$name" 0 $rc
}
step "set up: log-writes under the host XFS, pool, volume, guest XFS" cc_layout 512 1536 512 || {
	finish
	exit
}
step "fsync'ed files, each with a mark" cc_fsync_work 10
step "table reload" cc_reload_work
step "more fsync'ed files" cc_fsync_work 4
# The mark right after xfs_growfs returns is always checked: the guest's
# secondary superblocks must be durable by then (patch 0012).
step "grow by the tool, xfs_growfs" cc_grow_work
step "more fsync'ed files" cc_fsync_work 2
step "unmount and stop logging" cc_stop
cc_entries >"$CC_DIR/entries"
cp "$CC_DIR/entries" "$CC_DIR/marks" "$CC_DIR/manifest" "$OUT/"
check_eq "every mark is in the log" "$CC_MARKS" "$(cc_mark_entries | wc -l)"
check "replay-log finds the last mark where it was written" test \
	"$(replay-log --log "$CC_LOG" --find --end-mark guest-off | cut -d@ -f1)" = \
	"$(cc_mark_entries | tail -n 1 | cut -d' ' -f1)"
echo "# log: $(wc -l <"$CC_DIR/entries") entries, $CC_MARKS marks"
cc_points 3 3 grown >"$CC_DIR/points"
cc_run_points "$CC_DIR/points"
cc_summary
finish
