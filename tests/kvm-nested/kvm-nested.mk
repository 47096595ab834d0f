# Nested-KVM rig: real KVM (Debian 6.12 kvm_amd on TCG's emulated SVM + NPT)
# inside an L1 guest booted under TCG, running our QEMU with -device cxl-ssd
# and the usual guest as L2 under -accel kvm (tests/kvm-nested/README.md).
#   kvm-nested-image   $(KVM_NESTED_INITRAMFS): L1's initramfs (the L1
#                      kernel is $(GUEST_KERNEL))
#   test-kvm-nested    the rig's checks (TAP; also part of make test)
KVM_NESTED_TESTS := $(TOP)/tests/kvm-nested
KVM_NESTED_DIR := $(BUILD)/kvm-nested
KVM_NESTED_INITRAMFS := $(KVM_NESTED_DIR)/initramfs.cpio
export KVM_NESTED_INITRAMFS

.PHONY: kvm-nested-image test-kvm-nested
kvm-nested-image: $(KVM_NESTED_INITRAMFS)

$(KVM_NESTED_INITRAMFS): $(addprefix $(TOP)/vm-images/nested/,make-l1-initramfs init-l1 l2-run l2-qmp \
		l2-phases) $(GUEST_PKGS)/kernel-release $(GUEST_KERNEL) $(GUEST_INITRAMFS) \
		$(GUEST_APPS_INITRAMFS) $(QEMU)
	$(TOP)/vm-images/nested/make-l1-initramfs $(GUEST_PKGS) $(GUEST_KERNEL) \
		$(GUEST_INITRAMFS) $(GUEST_APPS_INITRAMFS) $(QEMU) $@

test-kvm-nested: $(KVM_NESTED_INITRAMFS) qemu guest-apps-image mio
	@$(TOP)/tests/run $(KVM_NESTED_TESTS)/test-kvm-nested

TESTS += $(KVM_NESTED_TESTS)/test-kvm-nested
TEST_DEPS += kvm-nested-image
