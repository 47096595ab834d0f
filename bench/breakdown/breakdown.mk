# bench/breakdown: Fig. 1 reproduction (per-miss latency breakdown at
# P50..P99.99) and the measured checks of per-miss recording: recording
# cost, modeled NAND component, latency compensation.  Auto-included by the
# top-level Makefile.
#
#   make bench-breakdown   bench/breakdown/fig1 (every part; ~20 min under
#                          TCG); results in results/breakdown-<stamp>/ or
#                          BREAKDOWN_OUT=DIR (a rerun into the same DIR keeps
#                          finished points)
#   make breakdown-deps    gnuplot-nox + bpftrace from Debian (idempotent)
#   test-breakdown         TAP, registered in TESTS: a small traced run (3 us
#                          profile, uffd + mmio, 2000 samples) and the CSV's
#                          invariants; < 3 min

BREAKDOWN_DIR := $(TOP)/bench/breakdown
BREAKDOWN_ARGS ?=

.PHONY: bench-breakdown breakdown-deps
breakdown-deps:
	@$(BREAKDOWN_DIR)/install-deps.sh

bench-breakdown: qemu guest-image mio breakdown-deps
	@$(BREAKDOWN_DIR)/fig1 --out $(or $(BREAKDOWN_OUT),$(TOP)/results/breakdown-$(RUN_STAMP)) $(BREAKDOWN_ARGS)
BENCHES += bench-breakdown

TESTS += $(BREAKDOWN_DIR)/test-breakdown
TEST_DEPS += qemu guest-image mio breakdown-deps
