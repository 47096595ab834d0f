# Reliability (issue #7): configuration fuzz, concurrency stress, QEMU-side
# accesses and faults run in `make test` (TAP, tests/reliability/test-*);
# the soak is a benchmark run by `make soak` only.
#
#   make test-reliability   the four CI tests, then their key=value results:
#                           fuzz_inputs, fuzz_crashes, fuzz_hangs,
#                           integrity_mismatches, deadlocks (and more)
#                           RELIABILITY_FULL=1: full policy x bql x mode cross
#   make soak               SOAK_MINUTES (default 30) of chase + writes with
#                           2 vCPUs: soak_minutes, soak_rss_growth_pct,
#                           soak_errors
#
# relprobe (tests/reliability/relprobe.c) is a static guest helper packed
# into the guest image (vm-images/guest.mk: programs in $(GUEST_BIN_DIR)).

REL_DIR := $(TOP)/tests/reliability
REL_TESTS := $(REL_DIR)/test-fuzz-config $(REL_DIR)/test-concurrency \
    $(REL_DIR)/test-qemu-access $(REL_DIR)/test-faults
REL_PROBE := $(GUEST_BIN_DIR)/relprobe
REL_LOG_DIR = $(or $(TEST_LOG_DIR),$(BUILD)/test-logs)

TESTS += $(REL_TESTS)
TEST_DEPS += qemu guest-image mio

$(REL_PROBE): $(REL_DIR)/relprobe.c $(TOP)/vm-images/guest-util.h
	@mkdir -p $(@D)
	$(CC) -static -O2 $(WARN) $(CSTD) -I$(TOP)/vm-images -o $@ $<
$(GUEST_INITRAMFS): $(REL_PROBE)
all: $(REL_PROBE)

.PHONY: test-reliability soak
test-reliability: qemu guest-image mio
	@TEST_LOG_DIR=$(REL_LOG_DIR) $(TOP)/tests/run $(REL_TESTS); rc=$$?; \
	    $(REL_DIR)/summarize $(REL_LOG_DIR) $(REL_TESTS); exit $$rc

soak: qemu guest-image mio
	@$(REL_DIR)/soak
