# The documentation's references (auto-included by the top-level Makefile).
#   test-doc-refs   every `make` target and repository path that README.md
#                   and docs/*.md name exists (no QEMU: UNIT_TESTS)
UNIT_TESTS += $(TOP)/tests/docs/test-doc-refs
