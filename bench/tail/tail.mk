# bench/tail: the device's miss tail against the host's own wake-up latency
# (cyclictest) in the same run (bench/tail/README.md).
#
#   make bench-tail   3 rounds: cyclictest, then make run's experiment in
#                     each delivery (about 15 minutes here); BENCH_TAIL_ARGS
#                     passes options (--rounds, --deliveries, --samples)
#   make tail-deps    installs Debian's rt-tests (cyclictest)

TAIL_DIR := $(TOP)/bench/tail
BENCH_TAIL_ARGS ?=

.PHONY: tail-deps bench-tail
tail-deps:
	@$(TAIL_DIR)/install-deps.sh

bench-tail: $(EXPERIMENT_DEPS) tail-deps
	@$(TAIL_DIR)/bench-tail --out $(TOP)/results/bench-tail-$(RUN_STAMP) \
	    $(BENCH_TAIL_ARGS)
BENCHES += bench-tail
TESTS += $(TAIL_DIR)/test-tail
TEST_DEPS += tail-deps
