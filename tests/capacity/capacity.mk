# Capacity beyond host RAM (issue 14): a cxl-ssd with its data in a sparse
# media file (media=PATH), a real guest, every way QEMU stops.
CAPACITY_TEST_DIR := $(TOP)/tests/capacity
TESTS += $(CAPACITY_TEST_DIR)/test-capacity $(CAPACITY_TEST_DIR)/test-capacity-tlb \
    $(CAPACITY_TEST_DIR)/test-capacity-numa
TEST_DEPS += qemu guest-image
