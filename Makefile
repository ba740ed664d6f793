# dm-subvol: the subvol device-mapper target, its tool, tests and benchmarks.
#
#   make            build the module (against the Debian 6.1 kernel's headers)
#                   and the userspace code
#   make check      run the whole test suite (native and in the VM)
#   make demo       run the demo in the VM
#   make lint       checkpatch and sparse on the kernel code
#
# KVER and KDIR may be overridden: make KDIR=/path/to/kernel/build

KVER ?= $(shell scripts/kernel-version)
KDIR ?= /lib/modules/$(KVER)/build
CHECKPATCH ?= build/checkpatch/checkpatch.pl

KERNEL_SOURCES := $(filter-out %.mod.c,$(wildcard drivers/md/*.[ch])) \
		  include/uapi/linux/dm-subvol.h

.PHONY: all module userspace check demo lint clean

all: module userspace

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md modules

userspace:
	$(MAKE) -C userspace

check: all
	tests/run

demo: all
	scripts/demo

lint:
	scripts/lint-kernel $(KERNEL_SOURCES)
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md C=2 CF="-D__CHECK_ENDIAN__" modules

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR)/drivers/md clean
	$(MAKE) -C userspace clean
