# bench/workloads: Debian applications on guest DRAM, on cxl-ssd and on stock
# cxl-type3 as CPU-less NUMA nodes, and a sweep of the cxl-ssd cache size
# (bench/workloads/README.md).
#
#   make bench-workloads   every bench/specs/wl-*.spec (reduced scale, about
#                          20-25 min under TCG here); WORKLOADS_ARGS adds
#                          bench-workloads options (--no-sweep, --setups,
#                          --set guest.smp=2, --via libvirt, specs)

.PHONY: bench-workloads
bench-workloads: qemu guest-apps-image
	$(TOP)/bench/workloads/bench-workloads $(WORKLOADS_ARGS)
BENCHES += bench-workloads
