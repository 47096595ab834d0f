# bench/floor: the mechanism's floor next to the device (README.md).
#
#   $(BUILD)/floor/cxlssd-floor   the bare userfaultfd MINOR round trip per
#                                 delivery (poll, busy, sigbus)
#   $(BUILD)/floor/test-floor     TAP: the floor program's line per delivery,
#                                 usage errors, one short bench-floor round
#                                 (no guest) with every line it must print
#   make bench-floor              floor, native and VM side by side (3-5
#                                 minutes here, two guest boots;
#                                 BENCH_FLOOR_ARGS=--no-vm skips the guests)

FLOOR_DIR := $(TOP)/bench/floor
FLOOR_OUT := $(BUILD)/floor
FLOOR_BIN := $(FLOOR_OUT)/cxlssd-floor
FLOOR_TEST := $(FLOOR_OUT)/test-floor
BENCH_FLOOR_ARGS ?=

$(FLOOR_BIN): $(FLOOR_DIR)/floor.c
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) -O2 -g -pthread -o $@ $<

$(FLOOR_TEST): $(FLOOR_DIR)/test-floor $(FLOOR_BIN) $(NATIVE_BIN)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nFLOOR=%s NATIVE=%s exec %s "$$@"\n' '$(FLOOR_BIN)' \
	    '$(NATIVE_BIN)' '$(FLOOR_DIR)/test-floor' >$@.tmp
	chmod +x $@.tmp && mv $@.tmp $@

TESTS += $(FLOOR_TEST)
BENCHES += $(FLOOR_BIN)

.PHONY: floor bench-floor
all: floor
floor: $(FLOOR_BIN)

bench-floor: $(EXPERIMENT_DEPS) $(FLOOR_BIN) $(NATIVE_BIN)
	@$(FLOOR_DIR)/bench-floor --floor $(FLOOR_BIN) --native $(NATIVE_BIN) \
	    --out $(TOP)/results/bench-floor-$(RUN_STAMP) $(BENCH_FLOOR_ARGS)
