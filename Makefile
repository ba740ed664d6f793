# dm-subvol: the subvol device-mapper target, its tool, tests and benchmarks.
#
#   make            build the modules (against the Debian 6.1 kernel's headers:
#                   the target, the space registry and the patched xfs) and
#                   the userspace code
#   make check      run the whole test suite (native and in the VM)
#   make demo       run the demo in the VM
#   make lint       checkpatch and sparse on the kernel code
#
# KVER and KDIR may be overridden: make KDIR=/path/to/kernel/build

KVER ?= $(shell scripts/kernel-version)
KDIR ?= /lib/modules/$(KVER)/build
CHECKPATCH ?= build/checkpatch/checkpatch.pl

KERNEL_SOURCES := $(filter-out %.mod.c,$(wildcard drivers/md/*.[ch])) \
		  $(filter-out %.mod.c,$(wildcard block/*.[ch])) \
		  include/linux/blk-space.h include/uapi/linux/dm-subvol.h \
		  tests/kmod/subvol-fault.c

# The space provider registry (block/) is a module of its own that the
# target and the patched xfs both link against.
REGISTRY_SYMBOLS := $(CURDIR)/block/Module.symvers

.PHONY: all module registry xfs testmod userspace replay-log check demo lint clean

all: module xfs testmod userspace replay-log

module: registry
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md \
		KBUILD_EXTRA_SYMBOLS=$(REGISTRY_SYMBOLS) modules

registry:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/block modules

# Test-only modules (tests/kmod): fault injection for the VM tests.
testmod:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod modules

# The guest XFS with patches/xfs applied (build/xfs/xfs.ko).
xfs: registry
	KVER=$(KVER) KDIR=$(KDIR) scripts/build-xfs

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
lint:
	scripts/lint-kernel $(KERNEL_SOURCES)
	cd patches/xfs && $(abspath $(CHECKPATCH)) --no-tree --quiet \
		--ignore FILE_PATH_CHANGES *.patch
	$(MAKE) -C $(KDIR) M=$(CURDIR)/block C=2 CF="-D__CHECK_ENDIAN__" modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md C=2 CF="-D__CHECK_ENDIAN__" \
		KBUILD_EXTRA_SYMBOLS=$(REGISTRY_SYMBOLS) modules
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod C=2 CF="-D__CHECK_ENDIAN__" modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/block clean
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md clean
	$(MAKE) -C $(KDIR) M=$(CURDIR)/tests/kmod clean
	$(MAKE) -C userspace clean
