"""The names of a trapped miss's latency components, in the order they
happen: one vocabulary for the joiner (tracing/join.py), the native
tool's breakdown (bench/native/breakdown.c writes the same column names),
bench/breakdown/fig1, bench/native/bench-compare and their tests.

  delivery_ns    host fault (or guest exit) -> the handler starts serving
                 it: kernel fault path, uffd queueing, handler wake-up or
                 signal delivery
  bql_wait_ns    waiting for QEMU's BQL (bql=on; the native tool has none)
  model_ns       routing and the model's decision
  unmap_ns       unmapping the victims on the faulter's path
  nand_wait_ns   the modeled NAND wait
  map_ns         UFFDIO_CONTINUE until the faulting thread is woken
  resume_ns      woken -> back on a CPU (or kvm_entry)
"""

COMPONENTS = ["delivery_ns", "bql_wait_ns", "model_ns", "unmap_ns",
              "nand_wait_ns", "map_ns", "resume_ns"]

# the native tool (no QEMU, no BQL)
NATIVE_COMPONENTS = [c for c in COMPONENTS if c != "bql_wait_ns"]

# legend titles of the plots
TITLES = {"delivery_ns": "delivery (fault->handler)",
          "bql_wait_ns": "BQL wait", "model_ns": "model",
          "unmap_ns": "unmap victims", "nand_wait_ns": "NAND wait",
          "map_ns": "map (CONTINUE)", "resume_ns": "resume (sched)"}
