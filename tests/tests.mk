# make test: run every registered TAP program through tests/run.
# Areas append programs to TESTS and their prerequisites (QEMU, guest
# image, ...) to TEST_DEPS.
.PHONY: test
test: $(TESTS) $(TEST_DEPS)
	@$(TOP)/tests/run $(TESTS)
