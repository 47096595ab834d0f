# Test entry points (README "Running one test").  tests/run runs the TAP
# programs and prints "N passed, N failed, N skipped".
#
#   make test             every registered test, prerequisites (QEMU, guest
#                         image, ...) built first
#   make unit             the plain builds' tests that need no QEMU and no
#                         guest (model, trap engine, MIO, joiner, bench
#                         library); under a minute
#   make test-sanitizers  the same tests' ASan/UBSan and TSan builds
#   make check T=NAME     one test: NAME as tests/run and `make list-tests`
#                         print it (trap-asan/test_trap_basic), or any path
#                         suffix of it that names one test (test-integrity)
#   make list-tests       the names, one a line
#   make AREA-tests       build an area's tests; make test-AREA runs them
#
# Fragments (included before this file) append QEMU-free programs to
# UNIT_TESTS (plain builds) or SANITIZER_TESTS, the others to TESTS and the
# others' prerequisites to TEST_DEPS; an area with its own pair of targets
# adds its name to TEST_AREAS and its programs to TEST_AREA_<name>.
.PHONY: test unit check list-tests

# the build's own rules: every recipe's programs among its prerequisites
UNIT_TESTS += $(TOP)/tests/test-make-prereqs

QEMU_FREE_TESTS := $(UNIT_TESTS) $(SANITIZER_TESTS)
TESTS := $(QEMU_FREE_TESTS) $(TESTS)
TEST_AREAS += sanitizers
TEST_AREA_sanitizers := $(SANITIZER_TESTS)

test: $(TESTS) $(TEST_DEPS)
	@$(TOP)/tests/run $(TESTS)

unit: $(UNIT_TESTS)
	@$(TOP)/tests/run $(UNIT_TESTS)

list-tests:
	@$(TOP)/tests/run --names $(TESTS)

# $(1) = area: `make $(1)-tests` builds TEST_AREA_$(1), `make test-$(1)`
# runs them (areas of QEMU-free tests need nothing else; the others'
# fragments add their prerequisites to test-$(1))
define test_area
.PHONY: $(1)-tests test-$(1)
$(1)-tests: $$(TEST_AREA_$(1))
test-$(1): $$(TEST_AREA_$(1))
	@$$(TOP)/tests/run $$(TEST_AREA_$(1))
endef
$(foreach a,$(TEST_AREAS),$(eval $(call test_area,$(a))))

ifneq ($(filter check,$(MAKECMDGOALS)),)
CHECK_PROG := $(filter $(T) %/$(T),$(TESTS))
ifeq ($(strip $(T)),)
$(error make check T=NAME: NAME is a test as `make list-tests` prints it)
endif
ifeq ($(CHECK_PROG),)
$(error make check T=$(T): no such test (`make list-tests` lists them))
endif
ifneq ($(words $(CHECK_PROG)),1)
$(error make check T=$(T) names $(words $(CHECK_PROG)) tests: \
    $(shell $(TOP)/tests/run --names $(CHECK_PROG)); give a longer path \
    suffix)
endif
endif
check: $(CHECK_PROG) \
    $(if $(filter $(CHECK_PROG),$(QEMU_FREE_TESTS)),,$(TEST_DEPS))
	@$(TOP)/tests/run $(CHECK_PROG)
