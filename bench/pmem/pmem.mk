# bench/pmem: the persistent cxl-ssd under fio on ext4 -o dax against stock
# cxl-type3 pmem and DRAM-backed pmem (bench/pmem/README.md).
#   make bench-pmem    one run, cases interleaved: ~15-25 min here
PMEM_BENCH_DIR := $(TOP)/bench/pmem
.PHONY: bench-pmem
bench-pmem: $(QEMU) guest-pmem-image guest-tools-disk
	$(PMEM_BENCH_DIR)/bench-pmem $(PMEM_ARGS)
