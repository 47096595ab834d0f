# cxl-ssd trap engine (userfaultfd MINOR/WP miss handling; plain C11 +
# Linux + pthreads).  Included by the top-level Makefile.
#
#   $(BUILD)/trap/libcxlssd-trap.a        every hw/cxl-ssd/trap/*.c
#   $(BUILD)/trap/test_<name>             every trap/tests/test_<name>.c,
#                                         linked with the model library
#   $(BUILD)/trap-asan/test_<name>        same, -fsanitize=address,undefined
#                                         (against $(BUILD)/model-asan)
#   $(BUILD)/trap-tsan/test_<name>        same, -fsanitize=thread (against
#                                         $(BUILD)/model-tsan); registered
#                                         for the concurrency-heavy tests
#                                         (TRAP_TSAN_NAMES), all of them with
#                                         `make test-trap-tsan`
#
# The tests need no QEMU: trap/ in UNIT_TESTS, trap-asan/ and trap-tsan/ in
# SANITIZER_TESTS; `make trap-tests` builds trap/ and trap-asan/, `make
# test-trap` runs them.
#
# The QEMU device compiles the same .c files itself (see trap.h).

TRAP_DIR := $(TOP)/hw/cxl-ssd/trap
TRAP_SRCS := $(sort $(wildcard $(TRAP_DIR)/*.c))
TRAP_TEST_SRCS := $(sort $(wildcard $(TRAP_DIR)/tests/test_*.c))
TRAP_TEST_NAMES := $(notdir $(basename $(TRAP_TEST_SRCS)))
TRAP_NOFLAGS :=

# $(1) = trap build subdirectory, $(2) = extra flags variable,
# $(3) = model build subdirectory to link against
define cxlssd_trap_variant
$(1)_OBJS := $$(patsubst $$(TRAP_DIR)/%.c,$$(BUILD)/$(1)/obj/%.o,$$(TRAP_SRCS))

$$(BUILD)/$(1)/obj/%.o: $$(TRAP_DIR)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(PROJECT_CFLAGS) $$($(2)) -I$$(TRAP_DIR) -c $$< -o $$@

$$(BUILD)/$(1)/libcxlssd-trap.a: $$($(1)_OBJS)
	@mkdir -p $$(dir $$@)
	rm -f $$@
	$$(AR) rcs $$@ $$^

$$(BUILD)/$(1)/test_%: $$(TRAP_DIR)/tests/test_%.c \
    $$(TRAP_DIR)/tests/trap_test.h $$(TOP)/tests/tap.h \
    $$(BUILD)/$(1)/libcxlssd-trap.a \
    $$(BUILD)/$(3)/libcxlssd-model.a
	@mkdir -p $$(dir $$@)
	$$(CC) $$(PROJECT_CFLAGS) -MF $$@.d $$($(2)) -I$$(TRAP_DIR) \
	    -I$$(TOP)/tests $$< \
	    $$(BUILD)/$(1)/libcxlssd-trap.a $$(BUILD)/$(3)/libcxlssd-model.a \
	    $$($(2)) $$(PROJECT_LDLIBS) -o $$@

-include $$($(1)_OBJS:.o=.d)
-include $$(patsubst %,$$(BUILD)/$(1)/%.d,$$(TRAP_TEST_NAMES))
endef

$(eval $(call cxlssd_trap_variant,trap,TRAP_NOFLAGS,model))
$(eval $(call cxlssd_trap_variant,trap-asan,ASAN_FLAGS,model-asan))
$(eval $(call cxlssd_trap_variant,trap-tsan,TSAN_FLAGS,model-tsan))

TRAP_LIB := $(BUILD)/trap/libcxlssd-trap.a
TRAP_TESTS := $(patsubst %,$(BUILD)/trap/%,$(TRAP_TEST_NAMES))
TRAP_ASAN_TESTS := $(patsubst %,$(BUILD)/trap-asan/%,$(TRAP_TEST_NAMES))
TRAP_TSAN_TESTS := $(patsubst %,$(BUILD)/trap-tsan/%,$(TRAP_TEST_NAMES))
# basic (~3x slower under TSan) and latency (timing) stay out of `make test`
TRAP_TSAN_NAMES := test_trap_concurrency test_trap_reset test_trap_dirty \
    test_trap_serialize test_trap_fault_clock test_trap_tlb
UNIT_TESTS += $(TRAP_TESTS)
SANITIZER_TESTS += $(TRAP_ASAN_TESTS) \
    $(patsubst %,$(BUILD)/trap-tsan/%,$(TRAP_TSAN_NAMES))
TEST_AREAS += trap trap-tsan
TEST_AREA_trap := $(TRAP_TESTS) $(TRAP_ASAN_TESTS)
TEST_AREA_trap-tsan := $(TRAP_TSAN_TESTS)

.PHONY: trap
all: trap
trap: $(TRAP_LIB)
