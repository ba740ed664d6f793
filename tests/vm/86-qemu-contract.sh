# The contract a VM disk relies on, through qemu's own block layer: qemu-io
# opens /dev/subvol/POOL/VOLUME as qemu does for
#   -blockdev driver=host_device,filename=...,cache.direct=on,aio=MODE,discard=unmap
# for MODE native, and io_uring where this qemu and kernel have it.  For
# each: a write the host has no space for fails with ENOSPC, never EIO
# (qemu's werror=enospc pauses the guest on exactly that error, and
# reports any other); discard punches holes in the image; once space is
# freed on the host the same write succeeds; reads return what was
# written.  With no_space:queue the write is held instead, and completes
# when space comes back.
. /src/tests/lib/vmtest.sh
. /src/tests/lib/subvol.sh

export SUBVOL_CONFIG_DIR=/tmp/subvol-etc
MIB=$((1 << 20))
host_xfs 320
check "pool create" subvol pool create --name vms $HOST/pool || { finish; exit; }

# opts VOLUME MODE: qemu's options for the volume's device (discard=unmap
# unless $DISCARD says otherwise).
DISCARD=unmap
opts() {
	echo "driver=host_device,filename=/dev/subvol/vms/$1,cache.direct=on,aio=$2,discard=$DISCARD"
}

# qio VOLUME MODE CMD...: one qemu-io run of the qemu-io commands CMD
# (each a -c); prints its output, fails as qemu-io does.
qio() {
	local vol=$1 mode=$2 args=() c
	shift 2
	for c in "$@"; do args+=(-c "$c"); done
	qemu-io --image-opts "$(opts "$vol" "$mode")" "${args[@]}" 2>&1
}

# check_io NAME EXPECTED_TEXT VOLUME MODE CMD...: the run succeeds and
# its output holds EXPECTED_TEXT and no failure.
check_io() {
	local name=$1 text=$2 out s=0
	shift 2
	out=$(qio "$@") || s=$?
	if ((s == 0)) && [[ $out == *"$text"* && $out != *failed* && $out != *"verification failed"* ]]; then
		check_eq "$name" ok ok
	else
		check_eq "$name (exit $s)" "\"$text\", no failure" "$out"
	fi
}

# fill_host: take every block the host has left (dd until ENOSPC, in 1 MiB
# then 4 KiB writes); remove $HOST/fill to give them back.
fill_host() {
	dd if=/dev/zero of=$HOST/fill bs=1M status=none 2>/dev/null
	dd if=/dev/zero of=$HOST/fill bs=4k oflag=append conv=notrunc status=none 2>/dev/null
	sync
}

# The node qemu opens: a block device, group disk, mode 0660, as for
# every disk (libdevmapper's defaults here; the udev rules on a host).
check "subvol create vms/node" subvol create --size 64M vms/node
node=$(readlink -f /dev/subvol/vms/node)
check "/dev/subvol/vms/node is a block device" test -b "$node"
check_eq "owned by root, group disk, mode 0660" "root disk 660" "$(stat -c '%U %G %a' "$node")"

# io_uring where this qemu and kernel have it (qemu says why not).
modes=(native)
if [ "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo 0)" != 0 ]; then
	echo "# skip: aio=io_uring: the kernel has io_uring disabled (kernel.io_uring_disabled=$(cat /proc/sys/kernel/io_uring_disabled))"
elif ! out=$(qio node io_uring 'read 0 4k'); then
	echo "# skip: aio=io_uring: qemu cannot use it here: ${out//$'\n'/ }"
else
	modes+=(io_uring)
fi
check "deactivate and remove vms/node" sh -c "subvol deactivate vms/node && subvol remove vms/node"

for mode in "${modes[@]}"; do
	vol=disk-${mode//_/-}
	img=$HOST/pool/$vol.img
	check "$mode: subvol create --size 512M vms/$vol" subvol create --size 512M vms/$vol || continue
	kmsg_mark

	# Reads return what was written, also a write smaller than the
	# device's 4 KiB block (qemu aligns it, as for a 512-byte guest).
	check_io "$mode: write 8 MiB" "wrote 8388608/8388608" $vol $mode 'write -P 0x5a 0 8M'
	check_io "$mode: a 512-byte write inside a 4 KiB block" "wrote 512/512" $vol $mode 'write -P 0x33 20972032 512'
	check_io "$mode: they read back" "read 512/512" $vol $mode \
		'read -P 0x5a 0 8M' 'read -P 0 20M 512' 'read -P 0x33 20972032 512' 'read -P 0 20972544 3072'

	# Discard punches holes in the image, and the range reads as zeros.
	before=$(allocated_bytes $img)
	if [ $mode = native ]; then
		DISCARD=ignore
		check_io "$mode: discard=ignore: the discard is accepted" "discard 4194304/4194304" \
			$vol $mode 'discard 0 4M'
		DISCARD=unmap
		check_eq "$mode: discard=ignore: qemu drops it, the image keeps its blocks" \
			"$before" "$(allocated_bytes $img)"
	fi
	check_io "$mode: discard 4 MiB (discard=unmap)" "discard 4194304/4194304" $vol $mode 'discard 0 4M'
	after=$(allocated_bytes $img)
	check "$mode: the image's allocated blocks fell by 4 MiB ($before -> $after bytes)" \
		test $((before - after)) -ge $((4 * MIB))
	check_io "$mode: the discarded range reads as zeros, the rest as written" "read 4194304/4194304" \
		$vol $mode 'read -P 0 0 4M' 'read -P 0x5a 4M 4M'

	# Host ENOSPC: ENOSPC, never EIO.
	fill_host
	check "$mode: the host is full (less than 1 MiB free)" test "$(free_bytes $HOST)" -lt $MIB
	out=$(qio $vol $mode 'write -P 0x6b 64M 1M')
	check "$mode: a write the host has no space for fails with ENOSPC" \
		grep -q "write failed: No space left on device" <<<"$out" || echo "# qemu-io: $out"
	check_fails "$mode: not with EIO" grep -q "Input/output error" <<<"$out"
	check "$mode: the device logged the host's ENOSPC (-28)" \
		sh -c "dmesg | grep -q 'failed on $img: -28'"
	check_eq "$mode: no I/O error in the kernel log" "" \
		"$(kernel_errors | grep -v "failed on $img: -28")"
	check_io "$mode: reads still work on the full host" "read 4194304/4194304" $vol $mode 'read -P 0x5a 4M 4M'

	# Space freed: the same write succeeds and reads back.
	rm $HOST/fill
	check_io "$mode: once space is freed the same write succeeds" "wrote 1048576/1048576" \
		$vol $mode 'write -P 0x6b 64M 1M'
	check_io "$mode: everything reads back as written" "read 1048576/1048576" $vol $mode \
		'read -P 0x6b 64M 1M' 'read -P 0 0 4M' 'read -P 0x5a 4M 4M' 'read -P 0x33 20972032 512' \
		'read -P 0 65M 1M'
	check "$mode: deactivate and remove" sh -c "subvol deactivate vms/$vol && subvol remove vms/$vol"
done

# no_space:queue: the write is held while the host is full (a guest sees
# a slow disk, not an error) and completes once space is freed.
check "queue: subvol create --no-space queue --no-space-timeout 120" \
	subvol create --size 512M --no-space queue --no-space-timeout 120 vms/held || { finish; exit; }
check_io "queue: write 1 MiB" "wrote 1048576/1048576" held native 'write -P 0x11 0 1M'
fill_host
qio held native 'write -P 0x77 128M 2M' >/tmp/held.out &
pid=$!
sleep 3
check "queue: the write is held while the host is full" kill -0 $pid
rm $HOST/fill
wait $pid
s=$?
check_eq "queue: it completes once space is freed" "0 wrote 2097152/2097152" \
	"$s $(grep -o 'wrote [0-9/]*' /tmp/held.out)"
check_fails "queue: without an error" grep -qE "failed|error" /tmp/held.out
check_io "queue: both writes read back" "read 2097152/2097152" held native \
	'read -P 0x11 0 1M' 'read -P 0x77 128M 2M'
check "queue: deactivate and remove" sh -c "subvol deactivate vms/held && subvol remove vms/held"

check "pool remove" subvol pool remove --yes vms
finish
