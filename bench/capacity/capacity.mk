# bench/capacity: NAND-scale capacity on a DRAM-scale host (issue 14).
#
#   make bench-capacity   the paper's 96 GiB device with a 4.8 GiB cache,
#                         media in a sparse file: host memory, metadata,
#                         media file size, miss latency file vs memory
#                         side by side, restart verification and FTL
#                         continuity (key=value lines; results under
#                         results/bench-capacity-STAMP).  About 30 minutes
#                         under TCG here; BENCH_CAPACITY_ARGS="--dev 8G
#                         --cache 256M" for a short run.
# The small version runs in `make test` (tests/capacity/test-capacity).

bench-capacity: $(EXPERIMENT_DEPS)
	@$(TOP)/bench/capacity/run-capacity \
	    --out $(TOP)/results/bench-capacity-$(RUN_STAMP) $(BENCH_CAPACITY_ARGS)
BENCHES += bench-capacity
.PHONY: bench-capacity
