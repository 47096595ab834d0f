# Tests of the cxl-ssd kernel module (hw/cxl-ssd/kmod): the in-guest checks
# under TCG (test-kmod) and the host-side load (test-kmod-host, skipped
# where the host kernel has no module support).
KMOD_TESTS_DIR := $(TOP)/tests/kmod
TESTS += $(KMOD_TESTS_DIR)/test-kmod $(KMOD_TESTS_DIR)/test-kmod-host
TEST_DEPS += qemu kmod-initramfs
