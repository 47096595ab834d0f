# The persistent device under every delivery and namespace type, with
# Debian's fio, across a restart (auto-included by the top-level Makefile).
PMEM_TEST_DIR := $(TOP)/tests/pmem
TESTS += $(PMEM_TEST_DIR)/test-pmem
TEST_DEPS += qemu guest-pmem-image guest-tools-disk
