# In the VM of scripts/debian-chroot: the modules DKMS built in the
# chroot are the ones loaded (vm-run --modules), and the seed scenario
# (tests/vm/70-space-fill.sh) passes with them.
#
# usage: debian-packages-vm.bash MODULE=BUILD-ID...
. /src/tests/lib/vmtest.sh

# The GNU build ID (hex) of a loaded module: the last 20 bytes of its note.
loaded_build_id() {
	tail -c 20 "/sys/module/$1/notes/.note.gnu.build-id" 2>&1 | od -An -tx1 -v | tr -d ' \n'
}
for arg in "$@"; do
	mod=${arg%%=*}
	check_eq "$mod is the module DKMS built" "${arg#*=}" "$(loaded_build_id "$mod")"
done
# Its own checks and closing count.
. /src/tests/vm/70-space-fill.sh
