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
#
# KDIR may be overridden too: make KDIR=/path/to/kernel/build

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

.PHONY: all module features registry xfs testmod other-kernel userspace replay-log check demo lint clean

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

# The guest XFS with patches/xfs/6.1 applied (build/xfs/xfs.ko).
xfs: registry
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

clean:
ifneq ($(IN_TREE),)
	$(MAKE) -C $(KDIR) M=$(CURDIR)/block clean
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md clean
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod clean
else
	rm -rf build/modules/$(KVER)
endif
	$(MAKE) -C userspace clean
