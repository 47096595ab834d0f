# cxl-ssd: top-level build.  Each area owns a fragment included below;
# build outputs go to $(BUILD), results to results/.
#
#   make run     build what is missing, boot a guest with -device cxl-ssd,
#                run the default experiment, write results/<timestamp>/
#   make test    every test (TAP), ending with "N passed, N failed, N skipped"
#   make unit    the tests that need no QEMU and no guest; make check T=NAME
#                one test (tests/tests.mk, README "Running one test")

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(TOP)/build
CC ?= cc
WARN := -Wall -Wextra -Werror
CSTD := -std=c11 -D_GNU_SOURCE
# the model's and the trap engine's objects, tests and tools
PROJECT_CFLAGS := $(CSTD) $(WARN) -O2 -g -pthread -MMD -MP
PROJECT_LDLIBS := -pthread -lm
# the sanitizer builds of the model, the trap engine and MIO; they are the
# debug builds, with lock-held assertions (model/lock.h)
DEBUG_FLAGS := -DCXLSSD_DEBUG_LOCKS
ASAN_FLAGS := $(DEBUG_FLAGS) -fsanitize=address,undefined -fno-omit-frame-pointer \
    -fno-sanitize-recover=all
TSAN_FLAGS := $(DEBUG_FLAGS) -fsanitize=thread
export TOP BUILD

.PHONY: all run bench clean
all:

# Each fragment appends test programs (TAP producers) to UNIT_TESTS or
# SANITIZER_TESTS (no QEMU, no guest) or TESTS, and benchmark targets to
# BENCHES (the test variables: tests/tests.mk).
UNIT_TESTS :=
SANITIZER_TESTS :=
TESTS :=
TEST_DEPS :=
TEST_AREAS :=
BENCHES :=
include hw/cxl-ssd/model/model.mk
include hw/cxl-ssd/trap/trap.mk
include qemu-patches/qemu.mk
include vm-images/guest.mk
include hw/cxl-ssd/kmod/kmod.mk
include tdm/tdm.mk
# MIO and the native tool first: other fragments name their programs as
# prerequisites, and make expands a rule's prerequisites as it reads it
BENCH_FIRST_MK := bench/bench.mk bench/native/native.mk
include $(BENCH_FIRST_MK)
include $(filter-out $(BENCH_FIRST_MK),$(sort $(wildcard bench/*.mk bench/*/*.mk tracing/*.mk)))
include $(sort $(wildcard tests/*/*.mk))
include tests/tests.mk

bench: $(BENCHES)

clean:
	rm -rf $(BUILD)
