# make bench-kmod: the kernel module against -device cxl-ssd in one TCG
# guest boot (bench/kmod/bench-kmod; README.md).
.PHONY: bench-kmod
bench-kmod: qemu kmod-initramfs
	@$(TOP)/bench/kmod/bench-kmod
BENCHES += bench-kmod

# make bench-kmod-fig8: CLOCK/S3-FIFO blind (device, module) vs fed the
# PTEs' accessed bits (module, young_scan_ms), one boot.
.PHONY: bench-kmod-fig8
bench-kmod-fig8: qemu kmod-initramfs
	@$(TOP)/bench/kmod/bench-kmod-fig8
BENCHES += bench-kmod-fig8
