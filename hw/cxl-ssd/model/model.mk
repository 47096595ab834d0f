# cxl-ssd device model (plain C11): library, unit tests, sanitizer builds,
# model benchmark.  Included by the top-level Makefile.
#
#   $(BUILD)/model/libcxlssd-model.a      every hw/cxl-ssd/model/*.c
#   $(BUILD)/model/test_<name>            every model/tests/test_<name>.c
#   $(BUILD)/model-asan/test_<name>-asan  same, -fsanitize=address,undefined
#   $(BUILD)/model-tsan/test_<name>-tsan  same, -fsanitize=thread
#   $(BUILD)/model/bench_model            `make bench-model`
#
# The tests are TAP producers that need no QEMU: the plain build in
# UNIT_TESTS, the sanitizer builds in SANITIZER_TESTS; `make model-tests`
# builds all three, `make test-model` runs them.

MODEL_DIR := $(TOP)/hw/cxl-ssd/model
MODEL_SRCS := $(sort $(wildcard $(MODEL_DIR)/*.c))
MODEL_TEST_SRCS := $(sort $(wildcard $(MODEL_DIR)/tests/test_*.c))
MODEL_TEST_NAMES := $(notdir $(basename $(MODEL_TEST_SRCS)))

MODEL_LIB := $(BUILD)/model/libcxlssd-model.a
MODEL_INCLUDES := -I$(MODEL_DIR)

# $(1) = build subdirectory, $(2) = name of the variable holding extra flags,
# $(3) = test binary name suffix
define cxlssd_model_variant
$(1)_OBJS := $$(patsubst $$(MODEL_DIR)/%.c,$$(BUILD)/$(1)/obj/%.o,$$(MODEL_SRCS))

$$(BUILD)/$(1)/obj/%.o: $$(MODEL_DIR)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(PROJECT_CFLAGS) $$($(2)) $$(MODEL_INCLUDES) -c $$< -o $$@

$$(BUILD)/$(1)/libcxlssd-model.a: $$($(1)_OBJS)
	@mkdir -p $$(dir $$@)
	rm -f $$@
	$$(AR) rcs $$@ $$^

$$(BUILD)/$(1)/test_%$(3): $$(MODEL_DIR)/tests/test_%.c $$(TOP)/tests/tap.h \
    $$(BUILD)/$(1)/libcxlssd-model.a
	@mkdir -p $$(dir $$@) $$(BUILD)/$(1)/dep
	$$(CC) $$(PROJECT_CFLAGS) -MF $$(BUILD)/$(1)/dep/$$(notdir $$@).d $$($(2)) $$(MODEL_INCLUDES) \
	    -I$$(TOP)/tests $$< $$(BUILD)/$(1)/libcxlssd-model.a \
	    $$($(2)) $$(PROJECT_LDLIBS) -o $$@

-include $$($(1)_OBJS:.o=.d)
-include $$(patsubst %,$$(BUILD)/$(1)/dep/%$(3).d,$$(MODEL_TEST_NAMES))
endef

MODEL_NOFLAGS :=
$(eval $(call cxlssd_model_variant,model,MODEL_NOFLAGS,))
$(eval $(call cxlssd_model_variant,model-asan,ASAN_FLAGS,-asan))
$(eval $(call cxlssd_model_variant,model-tsan,TSAN_FLAGS,-tsan))

MODEL_TESTS := $(patsubst %,$(BUILD)/model/%,$(MODEL_TEST_NAMES))
MODEL_SANITIZER_TESTS := \
    $(patsubst %,$(BUILD)/model-asan/%-asan,$(MODEL_TEST_NAMES)) \
    $(patsubst %,$(BUILD)/model-tsan/%-tsan,$(MODEL_TEST_NAMES))
UNIT_TESTS += $(MODEL_TESTS)
SANITIZER_TESTS += $(MODEL_SANITIZER_TESTS)
TEST_AREAS += model
TEST_AREA_model := $(MODEL_TESTS) $(MODEL_SANITIZER_TESTS)

.PHONY: model bench-model
all: model
model: $(MODEL_LIB)

# Model benchmark: the cache engine alone, no waiting (see the comment at
# the top of model/bench/bench_model.c for the method).
$(BUILD)/model/bench_model: $(MODEL_DIR)/bench/bench_model.c $(MODEL_LIB)
	@mkdir -p $(dir $@) $(BUILD)/model/dep
	$(CC) $(PROJECT_CFLAGS) -MF $(BUILD)/model/dep/bench_model.d $(MODEL_INCLUDES) $< $(MODEL_LIB) \
	    $(PROJECT_LDLIBS) -o $@
-include $(BUILD)/model/dep/bench_model.d

bench-model: $(BUILD)/model/bench_model
	@$(BUILD)/model/bench_model
BENCHES += bench-model
