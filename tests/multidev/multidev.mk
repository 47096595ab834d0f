# Several cxl-ssd devices per VM and file-backed persistence: real QEMU,
# real guest kernel, under TCG (auto-included by the top-level Makefile).
#   test-multidev     two devices, integrity check on both (uffd+uffd at
#                     once, uffd+mmio), per-device stats and records
#   test-persistence  memory-backend-file on /dev/shm: data written before a
#                     clean shutdown reads back after a restart; metadata
#                     starts cold/empty (precondition=on: consistent)
MULTIDEV_DIR := $(TOP)/tests/multidev
TESTS += $(MULTIDEV_DIR)/test-multidev $(MULTIDEV_DIR)/test-persistence
TEST_DEPS += qemu guest-image mio
