# tests/workloads: both region modes with Debian's ndctl tools and numactl
# (test-numa-regions, default image), one short workload end to end
# (test-workload-e2e, applications image).
TESTS += $(TOP)/tests/workloads/test-numa-regions $(TOP)/tests/workloads/test-workload-e2e
TEST_DEPS += guest-apps-image
