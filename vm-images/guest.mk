# Guest image: Debian 6.12 kernel + busybox initramfs with our init.
#   make guest-image   -> $(GUEST_KERNEL) (ELF, boots through PVH),
#                         $(GUEST_VMLINUZ) (the package's bzImage, same kernel),
#                         $(GUEST_INITRAMFS), $(GUEST_KCONFIG)
# Boot it with vm-images/boot-guest (see its --help).
#
# Static guest programs go in $(GUEST_BIN_DIR) (installed as /usr/bin/NAME).
# An area that builds one there in the same make run should also add
#   $(GUEST_INITRAMFS): $(GUEST_BIN_DIR)/NAME
# so the image waits for it (the wildcard below sees only files that exist
# when make starts).

GUEST_DIR := $(BUILD)/guest
GUEST_PKGS := $(GUEST_DIR)/pkgs
GUEST_KERNEL := $(GUEST_DIR)/vmlinux
GUEST_VMLINUZ := $(GUEST_DIR)/vmlinuz
GUEST_INITRAMFS := $(GUEST_DIR)/initramfs.cpio.gz
GUEST_KCONFIG := $(GUEST_DIR)/kernel-config
GUEST_BIN_DIR := $(BUILD)/guest-bin
export GUEST_KERNEL GUEST_INITRAMFS GUEST_KCONFIG

.PHONY: guest-image
guest-image: $(GUEST_KERNEL) $(GUEST_VMLINUZ) $(GUEST_INITRAMFS) $(GUEST_KCONFIG)

# The kernel version is resolved here, once; delete $(GUEST_PKGS) (or
# make clean) to pick up a newer one.
$(GUEST_PKGS)/kernel-release: $(TOP)/vm-images/fetch-guest-packages
	$< $(GUEST_PKGS)

# cxl, daxctl (trixie's ndctl) and numactl with their libraries, for init.
GUEST_TOOLS := $(GUEST_PKGS)/tools/versions
$(GUEST_TOOLS): $(TOP)/vm-images/fetch-guest-tools $(TOP)/vm-images/fetch-debs \
		$(TOP)/vm-images/pack-elf $(GUEST_PKGS)/kernel-release
	$< $(GUEST_PKGS)/tools

# Copies land under a temporary name: a guest booting meanwhile never
# reads a half-written file.
$(GUEST_KERNEL): $(GUEST_PKGS)/kernel-release
	cp $(GUEST_PKGS)/vmlinux $@.tmp && mv $@.tmp $@

$(GUEST_VMLINUZ): $(GUEST_PKGS)/kernel-release
	cp $(GUEST_PKGS)/kernel/boot/vmlinuz-$$(cat $<) $@.tmp && mv $@.tmp $@

$(GUEST_KCONFIG): $(GUEST_PKGS)/kernel-release
	cp $(GUEST_PKGS)/kernel/boot/config-$$(cat $<) $@.tmp && mv $@.tmp $@

# dax-pattern: pattern write/verify through a devdax mmap (no read/write
# on devdax, so busybox dd cannot do it).
$(GUEST_DIR)/dax-pattern: $(TOP)/vm-images/dax-pattern.c $(TOP)/vm-images/guest-util.h
	@mkdir -p $(@D)
	$(CC) -static -O2 $(WARN) $(CSTD) -o $@ $<

# numa-touch: anonymous memory faulted in under numactl's policy, its page
# frame numbers written out, held until killed (tests/workloads).
$(GUEST_DIR)/numa-touch: $(TOP)/vm-images/numa-touch.c $(TOP)/vm-images/guest-util.h
	@mkdir -p $(@D)
	$(CC) -static -O2 $(WARN) $(CSTD) -o $@ $<

# The directory itself is a prerequisite so removing a program rebuilds too.
$(GUEST_INITRAMFS): $(TOP)/vm-images/make-initramfs $(TOP)/vm-images/init \
		$(TOP)/vm-images/init-pmem \
		$(TOP)/vm-images/emit $(GUEST_PKGS)/kernel-release $(GUEST_TOOLS) \
		$(GUEST_DIR)/dax-pattern $(GUEST_DIR)/numa-touch \
		$(wildcard $(GUEST_BIN_DIR) $(GUEST_BIN_DIR)/*)
	$(TOP)/vm-images/make-initramfs $(GUEST_PKGS) $@ $(GUEST_DIR)/dax-pattern \
		$(GUEST_DIR)/numa-touch \
		$(wildcard $(GUEST_BIN_DIR))

# The applications image: the default initramfs with a second archive
# appended (Debian's redis, memcached, sysbench, stress-ng, mbw; see
# fetch-guest-apps).  Jobs that need them boot with --initrd $(GUEST_APPS_INITRAMFS).
GUEST_APPS_LAYER := $(GUEST_DIR)/apps-layer.cpio.gz
GUEST_APPS_INITRAMFS := $(GUEST_DIR)/initramfs-apps.cpio.gz
export GUEST_APPS_INITRAMFS
.PHONY: guest-apps-image
guest-apps-image: guest-image $(GUEST_APPS_INITRAMFS)

$(GUEST_APPS_LAYER): $(TOP)/vm-images/fetch-guest-apps $(TOP)/vm-images/fetch-debs \
		$(TOP)/vm-images/pack-elf $(GUEST_TOOLS)
	$< $(GUEST_PKGS) $@

$(GUEST_APPS_INITRAMFS): $(GUEST_INITRAMFS) $(GUEST_APPS_LAYER)
	cat $^ >$@.tmp && mv $@.tmp $@

# The persistent-memory image: the default initramfs with a second archive
# appended (trixie's ndctl, bookworm's e2fsprogs, xfsprogs and PMDK, see
# fetch-guest-pmem) and the project's guest programs that link them,
# built into $(GUEST_PMEM_BIN_DIR)/usr/bin by their areas (which add
#   $(GUEST_PMEM_LAYER): $(GUEST_PMEM_BIN_DIR)/usr/bin/NAME).
# boot-guest boots it by default when a device is persistent.
GUEST_PMEM_BIN_DIR := $(BUILD)/guest-pmem-bin
GUEST_PMEM_LAYER := $(GUEST_DIR)/pmem-layer.cpio.gz
GUEST_PMEM_INITRAMFS := $(GUEST_DIR)/initramfs-pmem.cpio.gz
export GUEST_PMEM_INITRAMFS
.PHONY: guest-pmem-image
guest-pmem-image: guest-image $(GUEST_PMEM_INITRAMFS)

$(GUEST_PMEM_LAYER): $(TOP)/vm-images/fetch-guest-pmem $(TOP)/vm-images/fetch-debs \
		$(TOP)/vm-images/pack-elf $(GUEST_TOOLS)
	@mkdir -p $(GUEST_PMEM_BIN_DIR)/usr/bin
	$< $(GUEST_PKGS) $(GUEST_PMEM_BIN_DIR) $@

$(GUEST_PMEM_INITRAMFS): $(GUEST_INITRAMFS) $(GUEST_PMEM_LAYER)
	cat $^ >$@.tmp && mv $@.tmp $@

# The persistent-memory and applications image: both layers on the default
# initramfs, for applications on a DAX filesystem over a persistent device
# (bench/tdm boots it with --initrd).
GUEST_PMEM_APPS_INITRAMFS := $(GUEST_DIR)/initramfs-pmem-apps.cpio.gz
export GUEST_PMEM_APPS_INITRAMFS
.PHONY: guest-pmem-apps-image
guest-pmem-apps-image: guest-image $(GUEST_PMEM_APPS_INITRAMFS)

$(GUEST_PMEM_APPS_INITRAMFS): $(GUEST_INITRAMFS) $(GUEST_PMEM_LAYER) $(GUEST_APPS_LAYER)
	cat $^ >$@.tmp && mv $@.tmp $@

# The tools disk: programs too large for an initramfs (fio, bpftrace and
# their libraries), a read-only ext4 image that boot-guest --tools-disk attaches
# and the guest mounts at /opt/tools (see make-tools-disk).
GUEST_TOOLS_DISK := $(GUEST_DIR)/tools.img
export GUEST_TOOLS_DISK
.PHONY: guest-tools-disk
guest-tools-disk: $(GUEST_TOOLS_DISK)
$(GUEST_TOOLS_DISK): $(TOP)/vm-images/make-tools-disk $(TOP)/vm-images/fetch-debs \
		$(TOP)/vm-images/pack-elf $(GUEST_TOOLS)
	$< $(GUEST_PKGS) $@

TESTS += $(TOP)/guest-kernel-config/test-check-config $(TOP)/vm-images/test-guest-boot
TEST_DEPS += guest-image
