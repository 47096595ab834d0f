# Experiments on the real device: make run and the benchmark targets that
# boot guests.  Results land in results/<name or timestamp>/<point>/, each
# point with manifest.json (device properties, QEMU version, guest kernel,
# accelerator, host CPU, git commit) and summary.json.

EXPERIMENT_DEPS := qemu guest-image mio
RUN_STAMP = $(shell date -u +%Y%m%dT%H%M%SZ)

.PHONY: run bench-hit
# The default experiment: random chase on /dev/dax0.0 over 1.5x the cache;
# its CDF plot (cdf.png) and, on the last line, the results folder.
# ACCEL=auto uses KVM when a probe boot works there, TCG otherwise.
ACCEL ?= auto
run: $(EXPERIMENT_DEPS) figures-deps
	@$(TOP)/bench/run $(TOP)/bench/specs/default.spec \
	    --out $(TOP)/results/$(RUN_STAMP) --set guest.accel=$(ACCEL)

bench-hit: $(EXPERIMENT_DEPS)
	@$(TOP)/bench/bench-hit --out $(TOP)/results/bench-hit-$(RUN_STAMP)
BENCHES += bench-hit
