# TDM: transparent DAX mappings (tdm/README.md), an LD_PRELOAD library that
# serves read/write calls on DAX files through MAP_SYNC mappings.
# Included by the top-level Makefile.
#
#   $(BUILD)/tdm/libtdm.so          the library (LD_PRELOAD=...)
#   $(BUILD)/tdm/tdm_ops            the semantics test's program (calls
#                                   libc; run with and without the library)
#   $(BUILD)/tdm/tdm_scenarios      short call sequences the statistics
#                                   test checks
#   $(BUILD)/tdm-{asan,tsan}/tdm_ops  tdm_ops with the layer linked in
#                                   (no LD_PRELOAD), under the sanitizers
#   $(BUILD)/tdm-direct/test_tdm_units  TAP: the layer's parts on their own
#                                   (and tdm-{asan,tsan}/test_tdm_units-*)
#   $(BUILD)/tdm/test-tdm-*         TAP wrappers of tdm/tests/test-tdm-*
#   $(BUILD)/tdm-{asan,tsan}/test-tdm-semantics-direct  the same with
#                                   the sanitizer builds of tdm_ops
#
# The plain tests are in UNIT_TESTS, the sanitizer builds in
# SANITIZER_TESTS; `make tdm-tests` builds them, `make test-tdm` runs them.
# tdm/guest/test-tdm-dax runs the semantics test on a DAX filesystem in
# the guest (it needs libtdm.so, tdm_ops, tdm_scenarios and
# tdm/tests/semantics.sh there: tdm/README.md "Tests"): the five are
# copied to $(TDM_GUEST_DIR), /usr/lib/tdm in the persistent-memory image
# (tests/pmem/test-pmem runs the script, bench/crash's stream e preloads
# the library).

TDM_DIR := $(TOP)/tdm
TDM_ENGINE := calls config fdops fdtable files init mapping meta persist \
    policy proc rw safecopy stats stats_interval
TDM_LIB := $(BUILD)/tdm/libtdm.so
TDM_CFLAGS := $(PROJECT_CFLAGS) -U_FORTIFY_SOURCE
TDM_TEST_DIR := $(TDM_DIR)/tests

# $(1) = build subdirectory, $(2) = variable with extra flags, $(3) = the
# engine's sources beyond TDM_ENGINE
define tdm_objs
$$(BUILD)/$(1)/obj/%.o: $$(TDM_DIR)/%.c
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TDM_CFLAGS) $$($(2)) -c $$< -o $$@
$(1)_TDM_OBJS := $$(patsubst %,$$(BUILD)/$(1)/obj/%.o,$$(TDM_ENGINE) $(3))
-include $$($(1)_TDM_OBJS:.o=.d)
endef

TDM_PIC_FLAGS := -fPIC -fvisibility=hidden
$(eval $(call tdm_objs,tdm,TDM_PIC_FLAGS,real_next preload preload_exec))
$(eval $(call tdm_objs,tdm-asan,ASAN_FLAGS,real_direct))
$(eval $(call tdm_objs,tdm-tsan,TSAN_FLAGS,real_direct))
TDM_NOFLAGS :=
$(eval $(call tdm_objs,tdm-direct,TDM_NOFLAGS,real_direct))

$(TDM_LIB): $(tdm_TDM_OBJS)
	$(CC) -shared -Wl,-z,defs -Wl,-soname,libtdm.so $^ -ldl -pthread -o $@

# the test programs, compiled and linked in one command (so they name
# every header as a prerequisite): $(1) = build subdirectory, $(2) = flags,
# $(3) = the calls they make (ops_libc: libc's names; ops_engine: the
# layer's entry points), $(4) = objects linked in
TDM_OPS_SRCS := tdm_ops ops_random ops_threads ops_procs
TDM_HEADERS := $(wildcard $(TDM_DIR)/*.h $(TDM_TEST_DIR)/*.h) \
    $(TOP)/tests/splitmix64.h
TDM_PROG_CFLAGS := $(filter-out -MMD -MP,$(TDM_CFLAGS)) -I$(TDM_DIR) \
    -I$(TOP)/tests
define tdm_prog
$$(BUILD)/$(1)/tdm_ops: $$(patsubst %,$$(TDM_TEST_DIR)/%.c,$$(TDM_OPS_SRCS) $(3)) \
    $$(TDM_HEADERS) $(4)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TDM_PROG_CFLAGS) $$($(2)) $$(filter %.c,$$^) $(4) $$($(2)) \
	    $$(PROJECT_LDLIBS) -o $$@
$$(BUILD)/$(1)/tdm_scenarios: $$(TDM_TEST_DIR)/tdm_scenarios.c \
    $$(TDM_TEST_DIR)/$(3).c $$(TDM_HEADERS) $(4)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TDM_PROG_CFLAGS) $$($(2)) $$(filter %.c,$$^) $(4) $$($(2)) \
	    $$(PROJECT_LDLIBS) -o $$@
endef

$(eval $(call tdm_prog,tdm,TDM_NOFLAGS,ops_libc,))
$(eval $(call tdm_prog,tdm-asan,ASAN_FLAGS,ops_engine,$$(tdm-asan_TDM_OBJS)))
$(eval $(call tdm_prog,tdm-tsan,TSAN_FLAGS,ops_engine,$$(tdm-tsan_TDM_OBJS)))

# the unit test: the engine's parts linked in; $(1) = subdirectory,
# $(2) = flags, $(3) = suffix
define tdm_unit
$$(BUILD)/$(1)/test_tdm_units$(3): $$(TDM_TEST_DIR)/test_tdm_units.c \
    $$(TOP)/tests/tap.h $$($(1)_TDM_OBJS)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(TDM_CFLAGS) $$($(2)) -I$$(TDM_DIR) -I$$(TOP)/tests -MF $$@.d \
	    $$< $$($(1)_TDM_OBJS) $$($(2)) $$(PROJECT_LDLIBS) -o $$@
-include $$(BUILD)/$(1)/test_tdm_units$(3).d
endef

$(eval $(call tdm_unit,tdm-direct,TDM_NOFLAGS,))
$(eval $(call tdm_unit,tdm-asan,ASAN_FLAGS,-asan))
$(eval $(call tdm_unit,tdm-tsan,TSAN_FLAGS,-tsan))

# TAP wrappers (tests/run runs programs without arguments): the scripts
# find the programs through the environment
TDM_PLAIN_PROGS := $(TDM_LIB) $(BUILD)/tdm/tdm_ops $(BUILD)/tdm/tdm_scenarios
TDM_ENV := TDM_LIB="$(TDM_LIB)" TDM_OPS="$(BUILD)/tdm/tdm_ops" \
    TDM_SCENARIOS="$(BUILD)/tdm/tdm_scenarios"

$(BUILD)/tdm/test-tdm-semantics: $(TDM_TEST_DIR)/test-tdm-semantics \
    $(TDM_TEST_DIR)/semantics.sh $(TDM_PLAIN_PROGS)
	printf '#!/bin/sh\n%s exec "%s" "$$@"\n' '$(TDM_ENV)' "$<" >$@
	chmod +x $@

$(BUILD)/tdm/test-tdm-stats: $(TDM_TEST_DIR)/test-tdm-stats \
    $(TDM_TEST_DIR)/semantics.sh $(TDM_DIR)/guest/test-tdm-dax $(TDM_PLAIN_PROGS)
	printf '#!/bin/sh\n%s exec "%s" "$$@"\n' '$(TDM_ENV)' "$<" >$@
	chmod +x $@

$(BUILD)/tdm-%/test-tdm-semantics-direct: $(TDM_TEST_DIR)/test-tdm-semantics \
    $(TDM_TEST_DIR)/semantics.sh $(TDM_PLAIN_PROGS) $(BUILD)/tdm-%/tdm_ops
	printf '#!/bin/sh\n%s TDM_OPS_DIRECT="%s" exec "%s" "$$@"\n' \
	    '$(TDM_ENV)' "$(BUILD)/tdm-$*/tdm_ops" "$<" >$@
	chmod +x $@

TDM_UNIT_TESTS := $(BUILD)/tdm-direct/test_tdm_units \
    $(BUILD)/tdm/test-tdm-semantics $(BUILD)/tdm/test-tdm-stats
TDM_SANITIZER_TESTS := $(BUILD)/tdm-asan/test_tdm_units-asan \
    $(BUILD)/tdm-tsan/test_tdm_units-tsan \
    $(BUILD)/tdm-asan/test-tdm-semantics-direct \
    $(BUILD)/tdm-tsan/test-tdm-semantics-direct
UNIT_TESTS += $(TDM_UNIT_TESTS)
SANITIZER_TESTS += $(TDM_SANITIZER_TESTS)
TEST_AREAS += tdm
TEST_AREA_tdm := $(TDM_UNIT_TESTS) $(TDM_SANITIZER_TESTS)

# the guest's copies, packed into the persistent-memory image
TDM_GUEST_DIR := $(GUEST_PMEM_BIN_DIR)/usr/lib/tdm
TDM_GUEST_PROGS := $(patsubst $(BUILD)/tdm/%,$(TDM_GUEST_DIR)/%,$(TDM_PLAIN_PROGS))
TDM_GUEST_FILES := $(TDM_GUEST_PROGS) $(TDM_GUEST_DIR)/semantics.sh \
    $(TDM_GUEST_DIR)/test-tdm-dax
$(TDM_GUEST_PROGS): $(TDM_GUEST_DIR)/%: $(BUILD)/tdm/%
	@mkdir -p $(@D)
	cp $< $@
$(TDM_GUEST_DIR)/semantics.sh: $(TDM_TEST_DIR)/semantics.sh
	@mkdir -p $(@D)
	cp $< $@
$(TDM_GUEST_DIR)/test-tdm-dax: $(TDM_DIR)/guest/test-tdm-dax
	@mkdir -p $(@D)
	cp $< $@
$(GUEST_PMEM_LAYER): $(TDM_GUEST_FILES)

.PHONY: tdm
all: tdm
tdm: $(TDM_PLAIN_PROGS)
