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

# The directory itself is a prerequisite so removing a program rebuilds too.
$(GUEST_INITRAMFS): $(TOP)/vm-images/make-initramfs $(TOP)/vm-images/init \
		$(TOP)/vm-images/emit $(GUEST_PKGS)/kernel-release \
		$(GUEST_DIR)/dax-pattern $(wildcard $(GUEST_BIN_DIR) $(GUEST_BIN_DIR)/*)
	$(TOP)/vm-images/make-initramfs $(GUEST_PKGS) $@ $(GUEST_DIR)/dax-pattern \
		$(wildcard $(GUEST_BIN_DIR))

TESTS += $(TOP)/guest-kernel-config/test-check-config $(TOP)/vm-images/test-guest-boot
TEST_DEPS += guest-image
