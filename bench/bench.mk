# bench/bench.mk: MIO, the pointer-chase benchmark (bench/mio/).
#
#   $(BUILD)/bench/mio          native build
#   $(BUILD)/guest-bin/mio      static build for the guest initramfs
#   $(BUILD)/bench/asan/...     -fsanitize=address,undefined test build
#   tests: test-mio-unit, test-mio (end to end, native + static binary)
#          in UNIT_TESTS, their -asan twins in SANITIZER_TESTS (no QEMU):
#          `make mio-tests` builds all four, `make test-mio` runs them.

MIO_DIR      := $(TOP)/bench/mio
MIO_OUT      := $(BUILD)/bench
MIO_HDRS     := $(wildcard $(MIO_DIR)/*.h)
MIO_LIB_SRCS := $(filter-out $(MIO_DIR)/main.c $(MIO_DIR)/test-%.c,\
                  $(wildcard $(MIO_DIR)/*.c))
MIO_CFLAGS   := $(CSTD) $(WARN) -O2 -g -pthread

MIO_OBJS      := $(patsubst $(MIO_DIR)/%.c,$(MIO_OUT)/obj/%.o,$(MIO_LIB_SRCS))
MIO_ASAN_OBJS := $(patsubst $(MIO_DIR)/%.c,$(MIO_OUT)/asan/obj/%.o,$(MIO_LIB_SRCS))

MIO_BIN        := $(MIO_OUT)/mio
MIO_GUEST_BIN  := $(BUILD)/guest-bin/mio
MIO_ASAN_BIN   := $(MIO_OUT)/asan/mio
MIO_UNIT       := $(MIO_OUT)/test-mio-unit
MIO_UNIT_ASAN  := $(MIO_OUT)/test-mio-unit-asan
MIO_TEST       := $(MIO_OUT)/test-mio
MIO_TEST_ASAN  := $(MIO_OUT)/test-mio-asan

.PHONY: mio
mio: $(MIO_BIN) $(MIO_GUEST_BIN)
all: mio
BENCHES += $(MIO_BIN) $(MIO_GUEST_BIN)
# vm-images/guest.mk packs $(BUILD)/guest-bin/* into the initramfs; make the
# image wait for mio when both are built in one run.
ifneq ($(GUEST_INITRAMFS),)
$(GUEST_INITRAMFS): $(MIO_GUEST_BIN)
endif
UNIT_TESTS += $(MIO_UNIT) $(MIO_TEST)
SANITIZER_TESTS += $(MIO_UNIT_ASAN) $(MIO_TEST_ASAN)
TEST_AREAS += mio
TEST_AREA_mio := $(MIO_UNIT) $(MIO_TEST) $(MIO_UNIT_ASAN) $(MIO_TEST_ASAN)

# test-unit.c reports through the project's TAP helper
$(MIO_OUT)/obj/test-unit.o $(MIO_OUT)/asan/obj/test-unit.o: \
    $(TOP)/tests/tap.h
$(MIO_OUT)/obj/test-unit.o $(MIO_OUT)/asan/obj/test-unit.o: \
    MIO_CFLAGS += -I$(TOP)/tests

$(MIO_OUT)/obj/%.o: $(MIO_DIR)/%.c $(MIO_HDRS)
	@mkdir -p $(@D)
	$(CC) $(MIO_CFLAGS) -c -o $@ $<

$(MIO_OUT)/asan/obj/%.o: $(MIO_DIR)/%.c $(MIO_HDRS)
	@mkdir -p $(@D)
	$(CC) $(MIO_CFLAGS) $(ASAN_FLAGS) -c -o $@ $<

$(MIO_BIN): $(MIO_OUT)/obj/main.o $(MIO_OBJS)
	$(CC) $(MIO_CFLAGS) -o $@ $^ -lm

# glibc static + pthreads, stripped for the initramfs; the same objects
# (PIE code links fine statically).  Debug with $(MIO_BIN).
$(MIO_GUEST_BIN): $(MIO_OUT)/obj/main.o $(MIO_OBJS)
	@mkdir -p $(@D)
	$(CC) $(MIO_CFLAGS) -static -s -o $@ $^ -lm

$(MIO_ASAN_BIN): $(MIO_OUT)/asan/obj/main.o $(MIO_ASAN_OBJS)
	$(CC) $(MIO_CFLAGS) $(ASAN_FLAGS) -o $@ $^ -lm

$(MIO_UNIT): $(MIO_OUT)/obj/test-unit.o $(MIO_OBJS)
	$(CC) $(MIO_CFLAGS) -o $@ $^ -lm

$(MIO_UNIT_ASAN): $(MIO_OUT)/asan/obj/test-unit.o $(MIO_ASAN_OBJS)
	$(CC) $(MIO_CFLAGS) $(ASAN_FLAGS) -o $@ $^ -lm

# The end-to-end script finds the binaries through MIO / MIO_STATIC.
$(MIO_TEST): $(MIO_DIR)/test-mio.sh $(MIO_BIN) $(MIO_GUEST_BIN)
	printf '#!/bin/sh\nMIO=%s MIO_STATIC=%s exec %s "$$@"\n' \
	  '$(MIO_BIN)' '$(MIO_GUEST_BIN)' '$(MIO_DIR)/test-mio.sh' >$@.tmp
	chmod +x $@.tmp && mv $@.tmp $@

$(MIO_TEST_ASAN): $(MIO_DIR)/test-mio.sh $(MIO_ASAN_BIN)
	printf '#!/bin/sh\nMIO=%s MIO_ASAN=1 exec %s "$$@"\n' \
	  '$(MIO_ASAN_BIN)' '$(MIO_DIR)/test-mio.sh' >$@.tmp
	chmod +x $@.tmp && mv $@.tmp $@
