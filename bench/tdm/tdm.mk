# bench/tdm: MariaDB (sysbench OLTP) and RocksDB (db_bench) on a DAX
# filesystem over the persistent cxl-ssd and over DRAM-backed pmem, with the
# transparent DAX mapping layer (tdm/) off and on (bench/tdm/README.md).
#   make bench-tdm    reduced scale, ~30 min under TCG here (estimated: 25
#                     measured before the --main-pct boot's 10 traced runs,
#                     ~30 s of bpftrace start-up each);
#                     BENCH_TDM_ARGS adds bench-tdm options (--full)
TDM_BENCH_DIR := $(TOP)/bench/tdm
# the guest runs tracing/tdm-syscalls and this (the TDM tooling)
TDM_BENCH_EXTENTS := $(BUILD)/tracing/tdm-extents
.PHONY: bench-tdm
bench-tdm: qemu guest-pmem-apps-image guest-tools-disk $(TDM_LIB) $(TDM_BENCH_EXTENTS)
	$(TDM_BENCH_DIR)/bench-tdm $(BENCH_TDM_ARGS)
BENCHES += bench-tdm

# one boot, every workload tiny with the layer off and on, one traced and
# joined (~4 min here)
TESTS += $(TDM_BENCH_DIR)/test-bench-tdm
TEST_DEPS += qemu guest-pmem-apps-image guest-tools-disk $(TDM_LIB) \
    $(TDM_BENCH_EXTENTS)
