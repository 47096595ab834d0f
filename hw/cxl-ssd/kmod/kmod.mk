# The cxl-ssd kernel module (hw/cxl-ssd/kmod).  Included by the top-level
# Makefile.
#
#   make kmod                 against the guest kernel's headers: Debian's
#                             linux-headers for build/guest/pkgs/kernel-release,
#                             fetched into $(BUILD)/kmod/headers by
#                             fetch-headers -> $(BUILD)/kmod/obj/cxlssd.ko
#   make kmod KDIR=/lib/modules/$(uname -r)/build
#                             against any kernel build tree
#                             -> $(BUILD)/kmod/obj-kdir/cxlssd.ko
#
# The build runs in a folder of links: the module's .c files, kport/, and
# the model library's .c/.h/.def files except wait.c and lazy_array.c
# (kmod_wait.c and kmod_lazy_array.c replace them), record_writer.c (FILE
# output; the module has its records file), model_ratios.c (floating
# point) and the media store's media_*.c (file I/O).  W=1 (the kernel's
# -Wextra set); any compiler warning fails the build.

KMOD_DIR := $(TOP)/hw/cxl-ssd/kmod
KMOD_HEADERS := $(BUILD)/kmod/headers
KMOD_MODEL_LEAVE_OUT := wait.c lazy_array.c record_writer.c model_ratios.c \
    $(notdir $(wildcard $(MODEL_DIR)/media_*.c))
KMOD_MODEL_FILES := $(filter-out $(addprefix $(MODEL_DIR)/,$(KMOD_MODEL_LEAVE_OUT)), \
    $(wildcard $(MODEL_DIR)/*.c $(MODEL_DIR)/*.h $(MODEL_DIR)/*.def)) \
    $(TOP)/hw/cxl-ssd/stats.def
KMOD_OWN_FILES := $(wildcard $(KMOD_DIR)/*.c $(KMOD_DIR)/*.h) $(KMOD_DIR)/Kbuild
KMOD_DEPS := $(KMOD_MODEL_FILES) $(KMOD_OWN_FILES) \
    $(wildcard $(KMOD_DIR)/kport/*.h $(KMOD_DIR)/kport/*/*.h)

ifeq ($(origin KDIR),undefined)
KMOD_KDIR := $(KMOD_HEADERS)/build
KMOD_OBJ := $(BUILD)/kmod/obj
KMOD_PAHOLE := PAHOLE=$(KMOD_HEADERS)/pahole
KMOD_KDIR_DEP := $(KMOD_HEADERS)/kernel-release
else
KMOD_KDIR := $(KDIR)
KMOD_OBJ := $(BUILD)/kmod/obj-kdir
KMOD_PAHOLE :=
KMOD_KDIR_DEP :=
endif
KMOD_KO := $(KMOD_OBJ)/cxlssd.ko

$(KMOD_HEADERS)/kernel-release: $(GUEST_PKGS)/kernel-release $(KMOD_DIR)/fetch-headers
	$(KMOD_DIR)/fetch-headers $$(cat $<) $(KMOD_HEADERS)

$(KMOD_KO): $(KMOD_DEPS) $(KMOD_KDIR_DEP) $(KMOD_DIR)/kmod.mk
	@test -f $(KMOD_KDIR)/Makefile || { echo "kmod: no kernel build tree at $(KMOD_KDIR) (KDIR=)"; exit 1; }
	@mkdir -p $(KMOD_OBJ)
	@find $(KMOD_OBJ) -maxdepth 1 -type l -delete
	@ln -sf $(KMOD_MODEL_FILES) $(KMOD_OWN_FILES) $(KMOD_DIR)/kport $(KMOD_OBJ)/
	@$(MAKE) -C $(KMOD_KDIR) M=$(KMOD_OBJ) W=1 $(KMOD_PAHOLE) modules \
	    >$(KMOD_OBJ)/build.log 2>&1; rc=$$?; cat $(KMOD_OBJ)/build.log; exit $$rc
	@! grep -E 'warning:|error:' $(KMOD_OBJ)/build.log || \
	    { echo "kmod: compiler warnings (see $(KMOD_OBJ)/build.log)"; rm -f $@; exit 1; }
	@test -f $@

.PHONY: kmod kmod-sparse
kmod: $(KMOD_KO)

# sparse over every file of the module (C=2), Debian's sparse 0.6.4.  It
# cannot parse the C11 _Atomic(T) specifier, which model/miss_service_int.h
# uses: the parse errors of the miss_*.c files that include it are
# reported, not fixed.
kmod-sparse: $(KMOD_KO)
	@$(MAKE) -C $(KMOD_KDIR) M=$(KMOD_OBJ) W=1 C=2 CHECK=$(KMOD_HEADERS)/sparse \
	    $(KMOD_PAHOLE) modules 2>&1 | grep -E 'warning:|error:' || echo "kmod-sparse: no reports"

# The guest side of the module's tests and benchmark: cxlssd.ko, the probe
# program and the in-guest test script, packed with the stock guest
# programs (MIO) into an initramfs of its own.
KMOD_GUEST_DIR := $(BUILD)/kmod/guest
KMOD_INITRAMFS := $(BUILD)/kmod/initramfs.cpio.gz

$(KMOD_GUEST_DIR)/kmod-probe: $(KMOD_DIR)/guest/kmod-probe.c
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(WARN) -O2 -static -s -o $@ $<

$(KMOD_GUEST_DIR)/cxlssd.ko: $(BUILD)/kmod/obj/cxlssd.ko
	@mkdir -p $(@D)
	cp $< $@

$(KMOD_GUEST_DIR)/kmod-guest-test: $(KMOD_DIR)/guest/kmod-guest-test
	@mkdir -p $(@D)
	cp $< $@

$(KMOD_INITRAMFS): $(TOP)/vm-images/make-initramfs $(TOP)/vm-images/init \
		$(GUEST_TOOLS) $(BUILD)/guest-bin/mio \
		$(KMOD_GUEST_DIR)/kmod-probe $(KMOD_GUEST_DIR)/cxlssd.ko \
		$(KMOD_GUEST_DIR)/kmod-guest-test
	$(TOP)/vm-images/make-initramfs $(GUEST_PKGS) $@ $(BUILD)/guest-bin \
		$(KMOD_GUEST_DIR)

.PHONY: kmod-initramfs
kmod-initramfs: $(KMOD_INITRAMFS)
