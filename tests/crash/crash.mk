# The persistent device's crash test (bench/crash, small): real QEMU,
# real guest kernel, SIGKILL (auto-included by the top-level Makefile).
CRASH_TEST_DIR := $(TOP)/tests/crash
TESTS += $(CRASH_TEST_DIR)/test-crash
TEST_DEPS += qemu guest-pmem-image
