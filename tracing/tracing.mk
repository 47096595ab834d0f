# cxl-ssd host-side tracing (bpftrace on tracepoints) and the breakdown
# joiner.  Included by the top-level Makefile.
#
#   make tracing-deps     install bpftrace from Debian (idempotent)
#   make tracing-tests    build this area's tests; make test-tracing runs them
#   $(BUILD)/tracing/uffd_workload      QEMU-less uffd workload (trap engine
#                                       + model), writes device records
#   $(BUILD)/tracing/test_tracing_joiner   TAP: joiner on synthetic input
#   $(BUILD)/tracing/test_tracing_e2e      TAP: real trace-run + bpftrace +
#                                       joiner on uffd_workload (SKIPs with
#                                       the reason if bpftrace cannot attach)
#   $(BUILD)/tracing/tdm-extents        the files' extents (FIEMAP) for
#                                       tdm-join.py --extents (guest)
#   $(BUILD)/tracing/test_tracing_tdm_join      TAP: tdm-join.py on
#                                       synthetic input, tdm-extents
#   $(BUILD)/tracing/test_tracing_tdm_syscalls  TAP: tdm-syscalls counts a
#                                       program's calls exactly (bpftrace)
#
# The TDM tooling (issue 36; tracing/README.md "TDM tooling"):
#   tracing/tdm-syscalls -o syscalls.csv -- CMD     (guest, bpftrace)
#   tracing/tdm-join.py --layer-stats ... --records ... --out DIR
#
# Usage after a device run (see tracing/README.md):
#   tracing/trace-run -a tcg -o host.csv -- qemu-system-x86_64 ...
#   tracing/join.py --device records.csv --host host.csv -o breakdown.csv

TRACING_DIR := $(TOP)/tracing
TRACING_BUILD := $(BUILD)/tracing
TRACING_CFLAGS := $(CSTD) $(WARN) -O2 -g -pthread

$(TRACING_BUILD)/uffd_workload: $(TRACING_DIR)/tests/uffd_workload.c \
    $(BUILD)/trap/libcxlssd-trap.a $(BUILD)/model/libcxlssd-model.a
	@mkdir -p $(dir $@)
	$(CC) $(TRACING_CFLAGS) -I$(TOP)/hw/cxl-ssd/trap $< \
	    $(BUILD)/trap/libcxlssd-trap.a $(BUILD)/model/libcxlssd-model.a \
	    -pthread -lm -o $@

# TAP wrappers (tests/run runs programs without arguments).
$(TRACING_BUILD)/test_tracing_joiner: $(TRACING_DIR)/tests/test_joiner.sh \
    $(TRACING_DIR)/join.py
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nexec "%s" "$$@"\n' "$<" >$@
	chmod +x $@

$(TRACING_BUILD)/test_tracing_e2e: $(TRACING_DIR)/tests/test_e2e.sh \
    $(TRACING_DIR)/join.py $(TRACING_DIR)/trace-run \
    $(TRACING_BUILD)/uffd_workload
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nTRACING_WORKLOAD="%s" exec "%s" "$$@"\n' \
	    "$(TRACING_BUILD)/uffd_workload" "$<" >$@
	chmod +x $@

$(TRACING_BUILD)/tdm-extents: $(TRACING_DIR)/tdm_extents.c
	@mkdir -p $(dir $@)
	$(CC) $(TRACING_CFLAGS) $< -o $@

$(TRACING_BUILD)/syscall_workload: $(TRACING_DIR)/tests/syscall_workload.c
	@mkdir -p $(dir $@)
	$(CC) $(TRACING_CFLAGS) $< -o $@

$(TRACING_BUILD)/test_tracing_tdm_join: $(TRACING_DIR)/tests/test_tdm_join.sh \
    $(TRACING_DIR)/tdm-join.py $(TRACING_DIR)/tdm_inputs.py \
    $(TRACING_BUILD)/tdm-extents
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nTDM_EXTENTS="%s" exec "%s" "$$@"\n' \
	    "$(TRACING_BUILD)/tdm-extents" "$<" >$@
	chmod +x $@

$(TRACING_BUILD)/test_tracing_tdm_syscalls: \
    $(TRACING_DIR)/tests/test_tdm_syscalls.sh $(TRACING_DIR)/tdm-syscalls \
    $(TRACING_DIR)/bpf/tdm-syscalls.bt $(TRACING_BUILD)/syscall_workload \
    $(TDM_LIB)
	@mkdir -p $(dir $@)
	printf '#!/bin/sh\nTRACING_SYSCALL_WORKLOAD="%s" TDM_LIB="%s" exec "%s" "$$@"\n' \
	    "$(TRACING_BUILD)/syscall_workload" "$(TDM_LIB)" "$<" >$@
	chmod +x $@

# The joiners need no QEMU (UNIT_TESTS); the tests that run bpftrace are
# in TESTS (root, a kernel that lets bpftrace attach).
UNIT_TESTS += $(TRACING_BUILD)/test_tracing_joiner \
    $(TRACING_BUILD)/test_tracing_tdm_join
TESTS += $(TRACING_BUILD)/test_tracing_e2e \
    $(TRACING_BUILD)/test_tracing_tdm_syscalls
TEST_AREAS += tracing
TEST_AREA_tracing := $(TRACING_BUILD)/test_tracing_joiner \
    $(TRACING_BUILD)/test_tracing_e2e $(TRACING_BUILD)/test_tracing_tdm_join \
    $(TRACING_BUILD)/test_tracing_tdm_syscalls

.PHONY: tracing tracing-deps
all: tracing
tracing: $(TRACING_BUILD)/uffd_workload $(TRACING_BUILD)/tdm-extents
tracing-deps:
	$(TRACING_DIR)/install-deps.sh
