# bench/lib: the Python library of the benchmark, figure and breakdown
# scripts (points, percentiles, tables, gnuplot scripts, manifests, the
# breakdown components); auto-included by the top-level Makefile.
#   test-bench-lib   TAP: the library's definitions (UNIT_TESTS)
UNIT_TESTS += $(TOP)/bench/lib/test-bench-lib
