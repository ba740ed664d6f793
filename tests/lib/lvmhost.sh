# Helpers for in-VM tests and scripts with real LVM under the host XFS, as
# subvol monitor grows it (sourced after vmtest.sh and subvol.sh).  The VM
# has no udev: scripts/vm-run's lvm.conf turns udev off, and LVM makes the
# /dev/VG/LV nodes and links itself.

# lvm_vg VG: a VG on the whole scratch disk.
lvm_vg() {
	pvcreate -qy "$SCRATCH_DEV" >/dev/null &&
		vgcreate -q "$1" "$SCRATCH_DEV" >/dev/null
}

# lvm_host_xfs VG LV MIB DIR: an LV of MIB MiB with an XFS, mounted at DIR.
lvm_host_xfs() {
	lvcreate -qy -L "$3M" -n "$2" "$1" >/dev/null &&
		mkfs.xfs -q -f "/dev/$1/$2" &&
		mkdir -p "$4" &&
		mount -t xfs "/dev/$1/$2" "$4"
}

# lv_bytes VG/LV: the LV's size in bytes.
lv_bytes() {
	lvs --noheadings --nosuffix --units b -o lv_size "$1" | tr -d ' '
}

# fs_bytes DIR: the size of DIR's filesystem in bytes (as df has it).
fs_bytes() {
	stat -f -c '%b %S' "$1" | awk '{ print $1 * $2 }'
}

# monitor_start LOG [ARGS...]: subvol monitor in the background, its lines
# in LOG; MONITOR_PID.  Waits until it has checked once.
monitor_start() {
	local log=$1 i
	shift
	subvol monitor "$@" 2>"$log" &
	MONITOR_PID=$!
	for i in $(seq 100); do
		grep -q ' started: ' "$log" 2>/dev/null && break
		sleep 0.1
	done
}

# monitor_stop: SIGTERM, and its exit status.
monitor_stop() {
	local st=0
	kill -TERM "$MONITOR_PID" 2>/dev/null || true
	wait "$MONITOR_PID" || st=$?
	return $st
}

# sampler_start FILE DIR: every 0.1 s, "EPOCH FREE_BYTES SIZE_BYTES" of
# DIR's filesystem into FILE; SAMPLER_PID.
sampler_start() {
	(while :; do
		echo "$EPOCHREALTIME $(stat -f -c '%a %b %S' "$2" | awk '{ print $1 * $3, $2 * $3 }')"
		sleep 0.1
	done) >"$1" &
	SAMPLER_PID=$!
}

sampler_stop() {
	kill "$SAMPLER_PID" 2>/dev/null
	wait "$SAMPLER_PID" 2>/dev/null || true
}

# fio_fill FILE MIB RATE OUT [VERIFY]: write FILE, MIB MiB in 1 MiB direct
# writes, each filled with a pattern holding its offset (RATE: fio's
# --rate, e.g. 32m, or 0 for none; VERIFY 0: zeros, no pattern); fio's
# terse line (version 3) in OUT, its messages in OUT.err.  A pattern, not
# a crc32c of random data, which under TCG slows the writer to some
# 35 MiB/s: a lost, stale or misplaced MiB still fails fio_verify.
FIO_PATTERN=(--verify=pattern --verify_pattern=0x5375626f%o)
fio_fill() {
	local limit=() pattern=("${FIO_PATTERN[@]}" --do_verify=0)
	[ "$3" = 0 ] || limit=(--rate="$3")
	[ "${5:-1}" = 1 ] || pattern=(--zero_buffers)
	fio --name=fill --filename="$1" --size="$2M" --bs=1M --rw=write --direct=1 \
		--ioengine=psync "${pattern[@]}" "${limit[@]}" --end_fsync=1 \
		--output-format=terse --terse-version=3 >"$4" 2>"$4.err"
}

# fio_verify FILE MIB: read FILE back and check every MiB's pattern
# (fio --verify_only, the same job as fio_fill's).
fio_verify() {
	fio --name=fill --filename="$1" --size="$2M" --bs=1M --rw=write --direct=1 \
		--ioengine=psync "${FIO_PATTERN[@]}" --verify_only --verify_fatal=1 \
		--output-format=terse --terse-version=3 >/dev/null
}

# fio_field OUT N: field N of fio's terse line (5 error, 47 write KiB, 56
# write completion latency max in us, 80 write total latency max in us);
# after an error fio prints a line of its own before it.
fio_field() {
	grep '^3;' "$1" | cut -d';' -f"$2" | head -n 1
}
