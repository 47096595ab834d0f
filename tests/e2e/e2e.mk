# End-to-end tests: real QEMU with -device cxl-ssd, real guest kernel,
# real userfaultfd, under TCG.
E2E_DIR := $(TOP)/tests/e2e
TESTS += $(E2E_DIR)/test-device-props $(E2E_DIR)/test-integrity \
         $(E2E_DIR)/test-kvm $(E2E_DIR)/test-kvm-probe $(E2E_DIR)/test-fresh-host \
         $(E2E_DIR)/test-make-run $(E2E_DIR)/test-tlb-evict
TEST_DEPS += qemu guest-image mio
