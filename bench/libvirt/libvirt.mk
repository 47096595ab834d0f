# bench/libvirt: cxl-ssd guests as libvirt domains, and experiment sweeps
# across libvirt hosts (auto-included by the top-level Makefile).
#
#   make libvirt-setup  install libvirt from Debian bookworm, configure
#                       qemu.conf, start virtlogd/libvirtd by hand
#                       (bench/libvirt/setup; idempotent)
#   make bench-sweep    12 points over two URIs of the local daemon, then
#                       one after another: sweep_points, sweep_failed,
#                       sweep_hosts_used, sweep_speedup (~15-25 min under
#                       TCG); SWEEP_HOSTS="URI..." SWEEP_PER_HOST=K
#                       SWEEP_OUT=DIR override
#   test-libvirt-boot   TAP: one point through libvirt = the same point
#                       launched directly (same files, properties, misses)
#   test-sweep          TAP: 4 points over 2 good URIs + 1 broken one
#                       (retries, per-host limit, one folder, no reruns)
# Both tests skip with the exact reason where libvirt cannot be installed
# or started.
LIBVIRT_DIR := $(TOP)/bench/libvirt
SWEEP_HOSTS ?= qemu:///system qemu+unix:///system?socket=/run/libvirt/libvirt-sock
SWEEP_PER_HOST ?= 1

.PHONY: libvirt-setup bench-sweep
libvirt-setup:
	@$(LIBVIRT_DIR)/setup

bench-sweep: qemu guest-image mio
	@$(LIBVIRT_DIR)/bench-sweep --hosts '$(SWEEP_HOSTS)' --per-host $(SWEEP_PER_HOST) \
	    --out $(or $(SWEEP_OUT),$(TOP)/results/bench-sweep-$(RUN_STAMP))
BENCHES += bench-sweep

TESTS += $(LIBVIRT_DIR)/test-libvirt-boot $(LIBVIRT_DIR)/test-sweep
TEST_DEPS += qemu guest-image mio
