# dm-subvol: the subvol device-mapper target, its tool, tests and benchmarks.
#
#   make            build the modules (against the Debian 6.1 kernel's headers:
#                   the target, the space registry and the patched xfs) and
#                   the userspace code
#   make KVER=6.12  the same for another installed kernel (a series or a
#                   release; scripts/kernel-version --list): its modules go to
#                   build/modules/RELEASE/ (scripts/build-modules)
#   make check      run the whole test suite (native and in the VM)
#   make demo       run the demo in the VM
#   make lint       checkpatch and sparse on the kernel code
#   make install    install the target and the registry in the kernel's
#                   updates/ (where modprobe prefers them), and the tool
#                   (userspace/Makefile's install); DESTDIR as usual
#   make install-xfs  install the space-aware xfs.ko there too, in place
#                   of the stock one (on purpose only; make uninstall-xfs
#                   brings the stock one back)
#   make uninstall  remove what make install installed
#
# KDIR may be overridden too: make KDIR=/path/to/kernel/build.  DKMS
# builds through the same file (dkms.conf: make KDIR=... module).

# The reference kernel's modules are built in the source directories, where
# scripts/vm-run finds them; any other kernel's under build/modules/.  An
# explicit KDIR (a kernel that is not one of Debian's, as on a real
# machine) builds in the source directories too.
REFERENCE := $(shell KVER= scripts/kernel-version 2>/dev/null)
KVER_ASKED := $(KVER)
override KVER := $(shell scripts/kernel-version $(KVER_ASKED) 2>/dev/null)
ifeq ($(origin KDIR),undefined)
ifeq ($(KVER),)
$(error $(shell scripts/kernel-version $(KVER_ASKED) 2>&1))
endif
KDIR := /lib/modules/$(KVER)/build
IN_TREE := $(filter $(REFERENCE),$(KVER))
else
IN_TREE := yes
endif
CHECKPATCH ?= build/checkpatch/checkpatch.pl

# What the kernel offers, decided by compile tests (drivers/md/compat/).
FEATURES := drivers/md/dm-subvol-features.h

KERNEL_SOURCES := $(filter-out %.mod.c $(FEATURES),$(wildcard drivers/md/*.[ch])) \
		  $(wildcard drivers/md/compat/*.c) \
		  $(filter-out %.mod.c,$(wildcard block/*.[ch])) \
		  include/linux/blk-space.h include/uapi/linux/dm-subvol.h \
		  tests/kmod/subvol-fault.c

# The space provider registry (block/) is a module of its own that the
# target and the patched xfs both link against.
REGISTRY_SYMBOLS := $(CURDIR)/block/Module.symvers

# The kernel release KDIR was built for: where install puts modules.
KRELEASE = $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null)
MODDIR = $(DESTDIR)/lib/modules/$(KRELEASE)/updates/dm-subvol

.PHONY: all module features registry xfs testmod other-kernel userspace replay-log check demo lint \
	clean clean-modules install install-modules install-xfs uninstall uninstall-xfs

all: module xfs testmod userspace replay-log

ifneq ($(IN_TREE),)
module: registry features
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md \
		KBUILD_EXTRA_SYMBOLS=$(REGISTRY_SYMBOLS) modules

registry:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/block modules

features:
	scripts/kernel-compat $(KDIR) $(FEATURES)

# Test-only modules (tests/kmod): fault injection for the VM tests.
testmod:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod modules

# The guest XFS with patches/xfs/SERIES applied (build/xfs/xfs.ko).
xfs:
	KVER=$(KVER) KDIR=$(KDIR) scripts/build-xfs
else
module features registry testmod xfs: other-kernel

other-kernel:
	KVER=$(KVER) KDIR=$(KDIR) scripts/build-modules
endif

userspace:
	$(MAKE) -C userspace

# fstests' dm-log-writes replay tool (build/bin/replay-log, cached), for the
# crash-consistency test and scripts/torture-crash.
replay-log:
	scripts/build-replay-log

check: all
	tests/run

demo: all
	scripts/demo

# The xfs patches follow XFS's own style (function names on a line of
# their own), which --strict flags; they are checked without it.
# In the source tree sparse needs the features header; build-modules
# --sparse writes another kernel's itself.
lint: $(if $(IN_TREE),features)
	scripts/lint-kernel $(KERNEL_SOURCES)
	for series in patches/xfs/*/; do \
		(cd $$series && $(abspath $(CHECKPATCH)) --no-tree --quiet \
			--ignore FILE_PATH_CHANGES *.patch) || exit 1; \
	done
ifneq ($(IN_TREE),)
	$(MAKE) -C $(KDIR) M=$(CURDIR)/block C=2 CF="-D__CHECK_ENDIAN__" modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md C=2 CF="-D__CHECK_ENDIAN__" \
		KBUILD_EXTRA_SYMBOLS=$(REGISTRY_SYMBOLS) modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod C=2 CF="-D__CHECK_ENDIAN__" modules
else
	KVER=$(KVER) KDIR=$(KDIR) scripts/build-modules --sparse
endif

# Modules go where depmod ranks them above the kernel's own (updates/,
# depmod.d(5)); DKMS on Debian uses updates/dkms/ instead.  depmod runs
# unless DESTDIR is set (a package's staging directory).
install: install-modules
	$(MAKE) -C userspace install

install-modules: module
	install -D -m 644 block/blk-space.ko $(MODDIR)/blk-space.ko
	install -D -m 644 drivers/md/dm-subvol.ko $(MODDIR)/dm-subvol.ko
	$(if $(DESTDIR),,depmod $(KRELEASE))

install-xfs: xfs
	install -D -m 644 build/xfs/xfs.ko $(MODDIR)/xfs.ko
	$(if $(DESTDIR),,depmod $(KRELEASE))
	@echo "installed the space-aware xfs.ko for $(KRELEASE): it replaces the stock xfs.ko" \
		"from the next load or boot (update-initramfs -u if / is XFS); make uninstall-xfs undoes it"

uninstall:
	rm -f $(MODDIR)/blk-space.ko $(MODDIR)/dm-subvol.ko
	$(if $(DESTDIR),,depmod $(KRELEASE))
	$(MAKE) -C userspace uninstall

uninstall-xfs:
	rm -f $(MODDIR)/xfs.ko
	$(if $(DESTDIR),,depmod $(KRELEASE))

clean: clean-modules
	$(MAKE) -C userspace clean

clean-modules:
ifneq ($(IN_TREE),)
	$(MAKE) -C $(KDIR) M=$(CURDIR)/block clean
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md clean
	$(if $(wildcard tests/kmod),$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod clean)
	rm -f $(FEATURES)
else
	rm -rf build/modules/$(KVER)
endif
