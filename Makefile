# cxl-ssd: top-level build.  Each area owns a fragment included below;
# build outputs go to $(BUILD), results to results/.
#
#   make run     build what is missing, boot a guest with -device cxl-ssd,
#                run the default experiment, write results/<timestamp>/
#   make test    every test (TAP), ending with "N passed, N failed"

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= $(TOP)/build
CC ?= cc
WARN := -Wall -Wextra -Werror
CSTD := -std=c11 -D_GNU_SOURCE
export TOP BUILD

.PHONY: all run test bench clean
all:

# Each fragment appends test programs (TAP producers) to TESTS and
# benchmark targets to BENCHES.
TESTS :=
BENCHES :=
include hw/cxl-ssd/model/model.mk
include hw/cxl-ssd/trap/trap.mk
include qemu-patches/qemu.mk
include vm-images/guest.mk
include $(sort $(wildcard bench/*.mk bench/*/*.mk tracing/*.mk))
include $(sort $(wildcard tests/*/*.mk))
include tests/tests.mk

bench: $(BENCHES)

clean:
	rm -rf $(BUILD)
