# qemu-patches: build Debian's QEMU source with our device (hw/cxl-ssd).
#
#   make qemu      host packages (qemu-patches/host-deps.sh), source fetch +
#                  patches, configure (each only when stale), then ninja
#                  (always; cheap when nothing changed)
#   make qemu-qtest  build and run QEMU's tests/qtest/cxl-test (TAP)
#
# For other fragments:
#   $(QEMU)               the emulator binary (a prerequisite that changes only
#                         when ninja relinks it)
#   $(QEMU_FIRMWARE_ARGS) -L options for firmware from Debian's packages:
#                         seabios (bios-256k.bin), qemu-system-data
#                         (linuxboot_dma.bin, kvmvapic.bin), ipxe-qemu (NIC
#                         option ROMs, e.g. q35's default e1000e without
#                         -nodefaults)
#   $(QEMU_VERSION_FILE)  one line: the Debian source version QEMU comes from

QEMU_DEB_VERSION ?= 1:10.0.13+ds-0+deb13u1
QEMU_PATCH_DIR := $(TOP)/qemu-patches
QEMU_CXL_SSD_DIR ?= $(TOP)/hw/cxl-ssd
QEMU_SRC := $(BUILD)/qemu-src
QEMU_BUILD := $(BUILD)/qemu
QEMU := $(QEMU_BUILD)/qemu-system-x86_64
QEMU_VERSION_FILE := $(QEMU_BUILD)/VERSION
QEMU_FIRMWARE_ARGS := -L /usr/share/seabios -L /usr/share/qemu -L /usr/lib/ipxe/qemu
QEMU_NINJA_JOBS ?= 2
# Let ccache reuse objects across checkouts in other folders (CI clones the
# repository elsewhere): paths are hashed relative to the top folder.
export CCACHE_BASEDIR := $(TOP)
export CCACHE_NOHASHDIR := 1
export QEMU_FIRMWARE_ARGS

QEMU_SRC_STAMP := $(QEMU_SRC)/.cxl-ssd-stamp
QEMU_CONFIGURED := $(QEMU_BUILD)/build.ninja

TESTS += $(QEMU_PATCH_DIR)/run-qtest-cxl.sh
TEST_DEPS += qemu

.PHONY: qemu qemu-host-deps qemu-qtest qemu-force

qemu: $(QEMU) $(QEMU_VERSION_FILE)

# Fast (dpkg-query only) when everything is installed.
qemu-host-deps:
	@$(QEMU_PATCH_DIR)/host-deps.sh

# The script compares version + patch checksums with the stamp and touches
# the stamp only when it re-extracts the tree.
$(QEMU_SRC_STAMP): qemu-force | qemu-host-deps
	@$(QEMU_PATCH_DIR)/fetch-source.sh '$(QEMU_DEB_VERSION)' $(QEMU_SRC) \
	    $(BUILD)/qemu-dl $(QEMU_CXL_SSD_DIR)

$(QEMU_CONFIGURED): $(QEMU_SRC_STAMP) $(QEMU_PATCH_DIR)/configure.sh
	@$(QEMU_PATCH_DIR)/configure.sh $(QEMU_SRC) $(QEMU_BUILD)

$(QEMU): $(QEMU_CONFIGURED) qemu-force
	@echo "qemu: ninja -j$(QEMU_NINJA_JOBS) qemu-system-x86_64"
	@ninja -C $(QEMU_BUILD) -j$(QEMU_NINJA_JOBS) qemu-system-x86_64

$(QEMU_VERSION_FILE): $(QEMU_CONFIGURED)
	@echo '$(QEMU_DEB_VERSION)' >$@

qemu-qtest: qemu
	@$(QEMU_PATCH_DIR)/run-qtest-cxl.sh
