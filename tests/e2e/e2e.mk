# End-to-end tests: real QEMU with -device cxl-ssd, real guest kernel,
# real userfaultfd, under TCG.
E2E_DIR := $(TOP)/tests/e2e
TESTS += $(E2E_DIR)/test-device-props $(E2E_DIR)/test-integrity \
         $(E2E_DIR)/test-kvm $(E2E_DIR)/test-kvm-probe $(E2E_DIR)/test-fresh-host \
         $(E2E_DIR)/test-make-run $(E2E_DIR)/test-tlb-evict \
         $(E2E_DIR)/test-tlb-stores
TEST_DEPS += qemu guest-image guest-apps-image mio
