# The entry point. `make run` boots the system, `make test` runs every test; both install what
# they need first (scripts/deps.sh). Everything built goes to $(BUILD); every download cache the
# build controls lives in $(CACHE_DIR).
#
#   make run        build the image and boot it under QEMU virt, 4 harts, our firmware
#   make test       host unit tests + QEMU boot tests (+ hardware tests)
#   make sw         firmware, kernel and the bootable image only
#   make constants  the shared constants in every language (build/gen/)
#   make bitstream  FPGA flow (hw/fpga): everything up to Vivado, then Vivado where installed
#   make flash      FLASH=sd|jtag: put bitstream and image on the board (hw/fpga/README.md)
#   make deps       install toolchains and packages (idempotent)

SHELL := /bin/bash
ROOT := $(abspath .)
BUILD ?= $(ROOT)/build
CACHE_DIR ?= $(HOME)/.cache/uintr-soc
export CACHE_DIR

RUST_TARGET := riscv64imac-unknown-none-elf
CARGO := cargo
# Crate downloads live with the other caches; toolchains stay where rustup put them.
export CARGO_HOME := $(CACHE_DIR)/cargo
CARGO_FLAGS := --manifest-path sw/Cargo.toml --locked
export CARGO_TARGET_DIR := $(BUILD)/cargo
SW_OUT := $(CARGO_TARGET_DIR)/$(RUST_TARGET)/release
IMAGE := $(BUILD)/sw/image.bin
KERNEL_BIN := $(BUILD)/sw/kernel.bin

SMP ?= 4
export SMP

CONFIG ?= UintrQuadConfig
FLASH ?= sd

.PHONY: all deps sw run test test-host test-boot test-nofp test-fpga constants bitstream flash clean help

all: sw

help:
	@sed -n '1,12p' Makefile

# Marker so deps run once per make invocation, not once per target.
DEPS_DONE := $(BUILD)/.deps-ok
deps:
	@mkdir -p $(BUILD) $(CACHE_DIR)
	@scripts/deps.sh
	@touch $(DEPS_DONE)

$(DEPS_DONE): scripts/deps.sh
	@$(MAKE) --no-print-directory deps

constants: | $(DEPS_DONE)
	python3 platform/gen.py --rust $(BUILD)/gen/platform.rs --c $(BUILD)/gen/platform.h \
	  --scala $(BUILD)/gen/Platform.scala --tcl $(BUILD)/gen/platform.tcl --dts $(BUILD)/gen/platform.dtsi
	@echo "constants: $(BUILD)/gen/platform.{rs,h,scala,tcl,dtsi}"

# Cargo tracks its own inputs; this rule always asks it and then re-assembles the image.
sw: | $(DEPS_DONE)
	$(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p firmware -p kernel
	@mkdir -p $(BUILD)/sw
	cp $(SW_OUT)/firmware $(BUILD)/sw/firmware.elf
	cp $(SW_OUT)/kernel $(BUILD)/sw/kernel.elf
	python3 scripts/mkimage.py --manifest sw/image.toml \
	  --elf firmware=$(BUILD)/sw/firmware.elf --elf kernel=$(BUILD)/sw/kernel.elf -o $(IMAGE)
	python3 scripts/mkimage.py --flat $(BUILD)/sw/kernel.elf -o $(KERNEL_BIN)

run: sw
	scripts/qemu.sh $(IMAGE)

test: test-host test-nofp test-boot test-fpga
	@echo "make test: all passed"

test-host: | $(DEPS_DONE)
	$(CARGO) test $(CARGO_FLAGS) --workspace
	python3 -m unittest discover -s platform -p 'test_*.py'
	python3 -m unittest discover -s scripts -p 'test_*.py'

test-nofp: sw
	python3 scripts/check_no_fp.py $(BUILD)/sw/firmware.elf $(BUILD)/sw/kernel.elf

test-boot: sw
	python3 scripts/boot_test.py --image $(IMAGE) --kernel $(KERNEL_BIN)

test-fpga: | $(DEPS_DONE)
	$(MAKE) -C hw/fpga test BUILD_DIR=$(BUILD) CONFIG=$(CONFIG)

bitstream: | $(DEPS_DONE)
	$(MAKE) -C hw/fpga bitstream BUILD_DIR=$(BUILD) CONFIG=$(CONFIG)

flash: sw
	$(MAKE) -C hw/fpga flash-$(FLASH) BUILD_DIR=$(BUILD) CONFIG=$(CONFIG) IMAGE=$(IMAGE)

clean:
	rm -rf $(BUILD)
