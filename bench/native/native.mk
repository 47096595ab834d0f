# bench/native: the host-native comparator (cxlssd-native) and
# `make bench-compare` (the same MIO spec on the VM and natively).
#
#   $(BUILD)/bench/cxlssd-native     the tool: model + trap engine + MIO's
#                                    objects (bench/bench.mk), in-process
#   $(BUILD)/bench/test-native       TAP: tiny native runs (integrity over 4x
#                                    the cache per delivery mode, misses
#                                    counted, breakdown sums), in TESTS
#   make native                      build the tool
#   make bench-compare               VM vs native table + plot (see README)

NATIVE_DIR  := $(TOP)/bench/native
NATIVE_OUT  := $(BUILD)/bench
NATIVE_BIN  := $(NATIVE_OUT)/cxlssd-native
NATIVE_SRCS := $(wildcard $(NATIVE_DIR)/*.c)
NATIVE_OBJS := $(patsubst $(NATIVE_DIR)/%.c,$(NATIVE_OUT)/native-obj/%.o,$(NATIVE_SRCS))
NATIVE_TEST := $(NATIVE_OUT)/test-native
NATIVE_CFLAGS := $(CSTD) $(WARN) -O2 -g -pthread -MMD -MP

$(NATIVE_OUT)/native-obj/%.o: $(NATIVE_DIR)/%.c
	@mkdir -p $(@D)
	$(CC) $(NATIVE_CFLAGS) -c -o $@ $<

$(NATIVE_BIN): $(NATIVE_OBJS) $(MIO_OBJS) $(BUILD)/trap/libcxlssd-trap.a \
    $(BUILD)/model/libcxlssd-model.a
	$(CC) $(NATIVE_CFLAGS) -o $@ $(NATIVE_OBJS) $(MIO_OBJS) \
	    $(BUILD)/trap/libcxlssd-trap.a $(BUILD)/model/libcxlssd-model.a \
	    -pthread -lm

-include $(NATIVE_OBJS:.o=.d)

# tests/run runs programs without arguments: a wrapper names the binary.
$(NATIVE_TEST): $(NATIVE_DIR)/test-native.py $(NATIVE_BIN)
	@mkdir -p $(@D)
	printf '#!/bin/sh\nNATIVE=%s exec %s "$$@"\n' '$(NATIVE_BIN)' \
	    '$(NATIVE_DIR)/test-native.py' >$@.tmp
	chmod +x $@.tmp && mv $@.tmp $@

TESTS += $(NATIVE_TEST)

.PHONY: native bench-compare
all: native
native: $(NATIVE_BIN)
BENCHES += $(NATIVE_BIN)

# The same MIO specs (bench/specs/compare*.spec) on the VM and natively;
# table, plot and key=value lines.  About 5-10 minutes here.
bench-compare: $(EXPERIMENT_DEPS) $(NATIVE_BIN)
	@$(NATIVE_DIR)/install-deps.sh
	@$(NATIVE_DIR)/bench-compare --native $(NATIVE_BIN) \
	    --out $(TOP)/results/bench-compare-$(RUN_STAMP)
