# tests/workloads: both region modes with Debian's ndctl tools and numactl
# (test-numa-regions, default image), one short workload end to end
# (test-workload-e2e, applications image), and one through libvirt on two
# vCPUs with the mode=mmio hit-fraction pass (test-workload-libvirt).
TESTS += $(TOP)/tests/workloads/test-numa-regions $(TOP)/tests/workloads/test-workload-e2e \
	$(TOP)/tests/workloads/test-workload-libvirt
TEST_DEPS += guest-apps-image
