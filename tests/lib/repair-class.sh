# shellcheck shell=bash
# What xfs_repair -n may report after a power cut inside xfs_growfs, and
# nothing else.  growfs writes the secondary superblocks outside the log
# after its transaction commits (the new AGs' first, marked in progress,
# then every one with the new geometry: xfs_update_secondary_sbs(), stock
# XFS too), so a cut in between leaves some with the old geometry, which
# xfs_repair resets from the primary; it skips their AGs meanwhile, so
# its free counts differ too.  The kernel never reads them.

# repair_stale_secondaries DEV OUTPUT: OUTPUT, of `xfs_repair -n DEV`
# that exited 1, reports stale secondary superblocks and nothing else,
# and a real xfs_repair of DEV then leaves it clean.  Prints those AGs.
# Writes to DEV.
repair_stale_secondaries() {
	local dev=$1 out=$2 ags
	# In AG order: xfs_repair checks AGs in parallel, so its lines are not.
	ags=$(sed -n 's/^would reset bad sb for ag \([0-9]*\)$/\1/p' <<<"$out" | sort -n | xargs)
	[[ -n $ags ]] || return 1
	grep -vqE '^$|^Phase [0-9] - |^        - |^No modify flag set|^primary/secondary superblock [0-9]+ conflict - AG superblock geometry info conflicts with filesystem geometry$|^would reset bad sb for ag [0-9]+$|^bad uncorrected agheader [0-9]+, skipping ag\.\.\.$|^sb_(fdblocks|icount|ifree) [0-9]+, counted [0-9]+$' <<<"$out" &&
		return 1
	xfs_repair "$dev" >/dev/null 2>&1 && xfs_repair -n "$dev" >/dev/null 2>&1 || return 1
	echo "$ags"
}
