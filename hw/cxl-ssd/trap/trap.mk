# cxl-ssd trap engine (userfaultfd MINOR/WP miss handling; plain C11 +
# Linux + pthreads).  Included by the top-level Makefile.
#
#   $(BUILD)/trap/libcxlssd-trap.a        every hw/cxl-ssd/trap/*.c
#   $(BUILD)/trap/test_<name>             every trap/tests/test_<name>.c,
#                                         linked with the model library
#   $(BUILD)/trap-asan/test_<name>        same, -fsanitize=address,undefined
#                                         (against $(BUILD)/model-asan)
#   $(BUILD)/trap-tsan/test_<name>        same, -fsanitize=thread (against
#                                         $(BUILD)/model-tsan); in TESTS for
#                                         the concurrency-heavy tests
#                                         (TRAP_TSAN_NAMES), all of them with
#                                         `make trap-tsan`
#
# The QEMU device compiles the same .c files itself (see trap.h).

TRAP_DIR := $(TOP)/hw/cxl-ssd/trap
TRAP_SRCS := $(sort $(wildcard $(TRAP_DIR)/*.c))
TRAP_TEST_SRCS := $(sort $(wildcard $(TRAP_DIR)/tests/test_*.c))
TRAP_TEST_NAMES := $(notdir $(basename $(TRAP_TEST_SRCS)))
TRAP_CFLAGS := $(CSTD) $(WARN) -O2 -g -pthread -MMD -MP
TRAP_LDLIBS := -pthread -lm
TRAP_ASAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
    -fno-sanitize-recover=all
TRAP_TSAN_FLAGS := -fsanitize=thread
TRAP_NOFLAGS :=

# $(1) = trap build subdirectory, $(2) = extra flags variable,
# $(3) = model build subdirectory to link against
define cxlssd_trap_variant
$(1)_OBJS := $$(patsubst $$(TRAP_DIR)/%.c,$$(BUILD)/$(1)/obj/%.o,$$(TRAP_SRCS))

$$(BUILD)/$(1)/obj/%.o: $$(TRAP_DIR)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TRAP_CFLAGS) $$($(2)) -I$$(TRAP_DIR) -c $$< -o $$@

$$(BUILD)/$(1)/libcxlssd-trap.a: $$($(1)_OBJS)
	@mkdir -p $$(dir $$@)
	rm -f $$@
	$$(AR) rcs $$@ $$^

$$(BUILD)/$(1)/test_%: $$(TRAP_DIR)/tests/test_%.c \
    $$(TRAP_DIR)/tests/trap_test.h $$(BUILD)/$(1)/libcxlssd-trap.a \
    $$(BUILD)/$(3)/libcxlssd-model.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TRAP_CFLAGS) -MF $$@.d $$($(2)) -I$$(TRAP_DIR) $$< \
	    $$(BUILD)/$(1)/libcxlssd-trap.a $$(BUILD)/$(3)/libcxlssd-model.a \
	    $$($(2)) $$(TRAP_LDLIBS) -o $$@

-include $$($(1)_OBJS:.o=.d)
-include $$(patsubst %,$$(BUILD)/$(1)/%.d,$$(TRAP_TEST_NAMES))
endef

$(eval $(call cxlssd_trap_variant,trap,TRAP_NOFLAGS,model))
$(eval $(call cxlssd_trap_variant,trap-asan,TRAP_ASAN_FLAGS,model-asan))
$(eval $(call cxlssd_trap_variant,trap-tsan,TRAP_TSAN_FLAGS,model-tsan))

TRAP_LIB := $(BUILD)/trap/libcxlssd-trap.a
TRAP_TESTS := $(patsubst %,$(BUILD)/trap/%,$(TRAP_TEST_NAMES)) \
    $(patsubst %,$(BUILD)/trap-asan/%,$(TRAP_TEST_NAMES))
TRAP_TSAN_TESTS := $(patsubst %,$(BUILD)/trap-tsan/%,$(TRAP_TEST_NAMES))
# basic (~3x slower under TSan) and latency (timing) stay out of `make test`
TRAP_TSAN_NAMES := test_trap_concurrency test_trap_reset test_trap_dirty \
    test_trap_serialize test_trap_fault_clock
TESTS += $(TRAP_TESTS) $(patsubst %,$(BUILD)/trap-tsan/%,$(TRAP_TSAN_NAMES))

.PHONY: trap trap-tests trap-test trap-tsan
all: trap
trap: $(TRAP_LIB)
trap-tests: $(TRAP_TESTS)
# Run only the trap engine's tests.
trap-test: $(TRAP_TESTS)
	@$(TOP)/tests/run $(TRAP_TESTS)
trap-tsan: $(TRAP_TSAN_TESTS)
	@$(TOP)/tests/run $(TRAP_TSAN_TESTS)
