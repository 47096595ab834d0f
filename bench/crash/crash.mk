# bench/crash: the persistent device's crash test (bench/crash/README.md).
#
#   $(CRASH_WRITER)          the guest's writer/verifier (links libpmem),
#                            packed into the persistent-memory image
#   $(BUILD)/crash/test_crash_record[-asan]
#                            the record format's unit test (UNIT_TESTS,
#                            SANITIZER_TESTS)
#   make bench-crash         >= 20 SIGKILLs of QEMU mid-write (bench-crash)

CRASH_DIR := $(TOP)/bench/crash
CRASH_OUT := $(BUILD)/crash
CRASH_WRITER := $(GUEST_PMEM_BIN_DIR)/usr/bin/crash-writer
CRASH_RECORD := $(CRASH_DIR)/crash_record.c $(CRASH_DIR)/crash_record.h
CRASH_TEST := $(CRASH_OUT)/test_crash_record
CRASH_TEST_ASAN := $(CRASH_OUT)/test_crash_record-asan

.PHONY: crash-deps bench-crash
crash-deps:
	@$(CRASH_DIR)/install-deps.sh

$(CRASH_WRITER): $(CRASH_DIR)/crash-writer.c $(CRASH_DIR)/crash_pmemobj.c \
    $(CRASH_DIR)/crash_pmemobj.h $(CRASH_DIR)/crash_pace.h $(CRASH_RECORD) \
    | crash-deps
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) -O2 -o $@ $(CRASH_DIR)/crash-writer.c \
	    $(CRASH_DIR)/crash_pmemobj.c $(CRASH_DIR)/crash_record.c -lpmemobj -lpmem
$(GUEST_PMEM_LAYER): $(CRASH_WRITER)

$(CRASH_TEST): $(CRASH_DIR)/test_crash_record.c $(CRASH_RECORD) $(TOP)/tests/tap.h
	@mkdir -p $(@D)
	$(CC) $(PROJECT_CFLAGS) -I$(CRASH_DIR) -I$(TOP)/tests -o $@ \
	    $(CRASH_DIR)/test_crash_record.c $(CRASH_DIR)/crash_record.c
$(CRASH_TEST_ASAN): $(CRASH_DIR)/test_crash_record.c $(CRASH_RECORD) $(TOP)/tests/tap.h
	@mkdir -p $(@D)
	$(CC) $(PROJECT_CFLAGS) $(ASAN_FLAGS) -I$(CRASH_DIR) -I$(TOP)/tests -o $@ \
	    $(CRASH_DIR)/test_crash_record.c $(CRASH_DIR)/crash_record.c
UNIT_TESTS += $(CRASH_TEST)
SANITIZER_TESTS += $(CRASH_TEST_ASAN)

# make bench-crash: >= 20 kills over three persistent devices with
# media=PATH, 16 MiB caches over 512 MiB each, 6 s of writing per round
# (several times the caches: writebacks under way at every kill); about
# 25-40 minutes here.  CRASH_KILLS, CRASH_ARGS override.
CRASH_KILLS ?= 20
CRASH_ARGS ?= --media --cache-size 16M --log-size 384M --write-s 6
bench-crash: $(QEMU) guest-pmem-image $(CRASH_WRITER)
	$(CRASH_DIR)/crash-run --kills $(CRASH_KILLS) $(CRASH_ARGS) \
	    --out $(TOP)/results/bench-crash-$$(date -u +%Y%m%dT%H%M%SZ)
