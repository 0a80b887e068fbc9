# The entry point. `make run` boots the system, `make test` runs every test; both install what
# they need first (scripts/deps.sh). Everything built goes to $(BUILD); every download cache the
# build controls lives in $(CACHE_DIR).
#
#   make run        the system: the network system (root task, net server, TCP server) under
#                   QEMU virt, 4 harts, our firmware; prints `connect to 127.0.0.1:PORT` for the
#                   load client (tools/loadgen) and serves until stopped (= run-net; GDB=1: QEMU
#                   waits for GDB on tcp::1234)
#   make load       the load client (tools/loadgen) against the running system from another terminal:
#                   requests/s and latency percentiles (HOST=127.0.0.1 PORT=NET_PORT CONNS=8 DURATION=10 s
#                   PIPELINE=1; RATE=requests/s: open loop, as wrk2; HGRM=file: HdrHistogram percentiles)
#   make run-tests  the kernel test suite as the root task under QEMU, 4 harts (GDB=1 as above)
#   make test       every test: host units, QEMU boots, FPGA flow checks, UINTC units,
#                   bare-metal RTL tests of the cores, the image's boot on the 4-core RTL
#   make lint       rustfmt check and clippy (warnings are errors) on host, target and PC-client code; part of make test
#   make sw         firmware, kernel and the bootable images only
#   make ktest-filtered  KTEST_ONLY=pat[,pat...]: the kernel test suite with only the tests whose names
#                   contain a pattern, in build/sw/filtered/ (run-tests and sim-uintr take KTEST_ONLY too)
#   make fuzz       the kernel fuzzer alone on QEMU (SEED=n COUNT=steps per thread)
#   make leak       create/destroy cycles of every object kind alone on QEMU (COUNT=cycles)
#   make bench-lock the worst kernel lock hold under a hostile thread, on the 4-hart RTL
#   make bench-cosim  the UINTC reference-model co-simulation, 10 M cycles (build/bench/cosim-long.txt)
#   make area       yosys LUT/FF of the UINTC and the uipi unit beside the CLINT and PLIC
#   make test-net   the network system end to end from the host, and its robustness cases (QEMU)
#   make sim-net    the network system on the 4-core RTL with the NIC model; the host's 127.0.0.1:NET_PORT reaches it
#   make bench-tcp  the TCP server under QEMU, async and sync on 1 and 4 harts, 1..128 connections: build/bench/tcp.csv,
#                   tcp.md and plots (BENCH_DURATION=5 s per point); then open loop at rising rates over 16
#                   connections: latency percentiles against achieved requests/s (tcp_rate.csv, tcp_latency.png;
#                   BENCH_TCP_SWEEP=rate: only that; BENCH_RECORD=bench/results/tcp.jsonl appends the records)
#   make run-net    the network system (sw/apps/net-system) under QEMU, 4 harts, with user-mode
#                   networking: prints `connect to 127.0.0.1:PORT` and serves until stopped
#                   (NET_VARIANT=async|sync NET_PORT=5555 NET_REQUEST=64 bytes NET_WORK=0 rounds NET_SPIN=auto|cycles)
#   make bench-ipc  the IPC benchmark (sync and async, sw/apps/ipc-bench) on the 4-hart RTL
#                   (~80 M cycles: ~40 min at 35 kHz; TARGET=qemu: a quick functional run):
#                   build/bench/ipc.csv, ipc.md and plots
#   make bench-mem  the memory-allocator server (sync and async, placements one-hart, two-harts,
#                   dedicated-handler-hart, 2..512 coroutines, sw/apps/mem-server) on the 4-hart RTL,
#                   one bounded simulation per point (hours; SHORT=1: 5 x 3 points;
#                   BENCH_MEM_RUNS=async-one-hart BENCH_MEM_CONC=64: one; TARGET=qemu;
#                   PROFILE=1: each point's window profiled on every hart):
#                   build/bench/mem.csv, mem.md, mem.jsonl and plots
#   make sim-uintr  the user-interrupt tests and benchmarks on the 4-hart RTL (the suite's
#                   rtl-subset build; prints the latencies next to the kernel-forwarded baseline)
#   make constants  the shared constants in every language (build/gen/)
#   make verilog    the SoC's Verilog, DTS/DTB and constants (CONFIG=UintrQuadConfig|UintrSingleConfig)
#   make sim        boot the image on the cycle-accurate Verilator model of the SoC
#                   (BINARY=flat-or-ELF CORES=4|1 MAX_CYCLES=N FST=file FST_START=N FST_END=N
#                    CHECKED=1 for TileLink monitors and assertions; SIM_ARGS=+plusargs;
#                    PROFILE=file [PROFILE_EVERY=N PROFILE_REGION=id] records where the cycles go,
#                    also for sim-uintr and bench-lock; scripts/profile.py reads it;
#                    DEBUG=1: debug module + JTAG for OpenOCD/GDB, port printed, hw/sim/README.md)
#   make profile-ipc  where the cycles of a Call+ReplyRecv round trip go, per category and function
#                   (4-hart RTL; IPC=same|other|cross|ntfn; build/bench/profile-ipc-*.txt, folded stacks)
#   make ipc-point  chosen points of the IPC benchmark alone on the 4-hart RTL (IPC_POINTS=variant:work:conc,...;
#                   PROFILE=1 [IPC_PROFILE_POINT=one of them]: every hart profiled in the points' windows, build/bench/point-*.{txt,prof,log})
#   make bitstream  FPGA flow (hw/fpga): everything up to Vivado, then Vivado where installed
#                   (DESIGN=minimal: PS, SoC, DDR and UART only, no licensed Ethernet MAC)
#   make flash      FLASH=sd|jtag: put bitstream and the network system's image on the board
#                   (IMAGE=file: that image instead; hw/fpga/README.md)
#   make deps       install toolchains and packages for everything (deps-sw and deps-hw; idempotent)
#   make deps-sw    only what the software and QEMU need (make run, sw, lint, test-net, bench-tcp)
#   make deps-hw    the hardware build, RTL simulation and FPGA checks (JDK, Maven, sbt, Verilator, ...)
#   make deps-debug gdb-multiarch, OpenOCD and yosys (make area)

SHELL := /bin/bash
ROOT := $(abspath .)
BUILD ?= $(ROOT)/build
CACHE_DIR ?= $(HOME)/.cache/uintr-soc
export CACHE_DIR

# The firmware and the kernel are soft-float (they save no FP state of their own: make test-nofp);
# user programs are RV64GC with the hard-float ABI (the kernel switches their F/D state lazily).
KERNEL_TARGET := riscv64imac-unknown-none-elf
RUST_TARGET := riscv64gc-unknown-none-elf
CARGO := cargo
# A rustup installed by scripts/deps.sh on a bare machine lands here (its binaries, not in the
# CARGO_HOME below, which holds only the crate cache; scripts/test_deps.py checks the two agree).
export PATH := $(HOME)/.cargo/bin:$(PATH)
# Crate downloads live with the other caches; toolchains stay where rustup put them.
export CARGO_HOME := $(CACHE_DIR)/cargo
CARGO_FLAGS := --manifest-path sw/Cargo.toml --locked
export CARGO_TARGET_DIR := $(BUILD)/cargo
SW_OUT := $(CARGO_TARGET_DIR)/$(RUST_TARGET)/release
KERNEL_OUT := $(CARGO_TARGET_DIR)/$(KERNEL_TARGET)/release
# The network images' programs: cargo profile `net` (sw/Cargo.toml: release with fat LTO).
NET_OUT := $(CARGO_TARGET_DIR)/$(RUST_TARGET)/net
# The images' builder (scripts/mkimage.py) and the firmware and kernel every image starts from.
MKIMAGE := python3 scripts/mkimage.py
FIRMWARE_ELF := $(BUILD)/sw/firmware.elf
KERNEL_ELF := $(BUILD)/sw/kernel.elf
# The minimal root task's system (sw/apps/roottask): the boot tests' image. (IMAGE= is make
# flash's: the file the board gets.)
ROOT_IMAGE := $(BUILD)/sw/image.bin
KERNEL_BIN := $(BUILD)/sw/kernel.bin
MODULES_BIN := $(BUILD)/sw/modules.bin
# The same firmware and kernel with the kernel test suite (sw/apps/kernel-tests) as root task.
KTEST_IMAGE := $(BUILD)/sw/image-ktest.bin
KTEST_MODULES := $(BUILD)/sw/modules-ktest.bin
# Its `rtl-subset` build (boot basics, every user-interrupt test, the benchmarks): short enough
# for the cycle-accurate simulation.
UINTR_IMAGE := $(BUILD)/sw/image-uintr.bin
COMMA := ,
# A suite filtered at build time (KTEST_ONLY=pat[,pat...]: bootinfo and the tests whose names
# contain a pattern) is a build of its own, never `sw`'s: its own cargo directories and its own
# directory $(BUILD)/sw/filtered/PATTERNS (commas as +) with image-ktest.bin (the whole suite's
# build, for QEMU), image-uintr.bin (the rtl-subset build, for the RTL) and the ELFs they are
# made of. So the default images above stay what `sw` made, even after an interrupted run.
# KTEST_ONLY given to sim-uintr or run-tests runs such an image; make ktest-filtered builds both.
KTEST_ONLY ?=
unexport KTEST_ONLY
ktest_filtered_dir = $(BUILD)/sw/filtered/$(subst $(COMMA),+,$(1))
KTEST_FILTERED_DIR = $(call ktest_filtered_dir,$(KTEST_ONLY))
# $(call ktest_filtered,patterns,rtl or nothing): recipe lines that build one of the two (rtl:
# the rtl-subset one) from `sw`'s firmware, kernel and hello-proc.
define ktest_filtered
@mkdir -p $(call ktest_filtered_dir,$(1))
KTEST_ONLY='$(1)' CARGO_TARGET_DIR=$(BUILD)/cargo-filtered$(if $(2),-rtl) $(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p kernel-tests$(if $(2), --features rtl-subset)
cp $(FIRMWARE_ELF) $(KERNEL_ELF) $(BUILD)/sw/hello-proc.elf $(call ktest_filtered_dir,$(1))/
cp $(BUILD)/cargo-filtered$(if $(2),-rtl)/$(RUST_TARGET)/release/kernel-tests $(call ktest_filtered_dir,$(1))/kernel-tests$(if $(2),-rtl).elf
$(call suite_image,$(call ktest_filtered_dir,$(1))/kernel-tests$(if $(2),-rtl).elf,$(call ktest_filtered_dir,$(1))/image-$(if $(2),uintr,ktest).bin)
endef

SMP ?= 4
export SMP

CONFIG ?= UintrQuadConfig
FLASH ?= sd

# Simulation knobs (hw/sim/README.md).
CORES ?= 4
SIM_CONFIG := $(if $(filter 1,$(CORES)),UintrSingleSimConfig,UintrQuadSimConfig)
# DEBUG=1: the 4-core SoC with the debug module; the harness serves JTAG to OpenOCD (hw/sim/README.md)
SIM_CONFIG := $(if $(DEBUG),UintrQuadSimDebugConfig,$(SIM_CONFIG))
BINARY ?= $(ROOT_IMAGE)
MAX_CYCLES ?= 0
FST ?=
SIM_MAKE = $(MAKE) --no-print-directory -C hw/sim BUILD_DIR=$(BUILD) CACHE_DIR=$(CACHE_DIR)
SIM_OPTS = CONFIG=$(SIM_CONFIG) CHECKED=$(CHECKED) TRACE=$(if $(FST),1,)
# The simulator `make sim` builds for the knobs above; hw/sim's bin-path is the one place its
# path is spelled out, so a recipe asks for it when it runs.
SIM_BIN = $$($(SIM_MAKE) -s bin-path $(SIM_OPTS))
# The simulator every other RTL target runs: 4 cores, the fast build (no TileLink monitors, no
# trace); the rule that builds it, and its path.
RTL_SIM_BUILD = $(MAKE) --no-print-directory sim-build CORES=4 CHECKED= FST=
RTL_SIM = $$($(SIM_MAKE) -s bin-path CONFIG=UintrQuadSimConfig CHECKED= TRACE=)
# The harness's profiler (hw/sim/README.md, "Profiler").
PROFILE ?=
PROFILE_ARGS = $(if $(PROFILE),+profile=$(abspath $(PROFILE)) $(if $(PROFILE_EVERY),+profile-every=$(PROFILE_EVERY),) \
  $(if $(PROFILE_REGION),+profile-region=$(PROFILE_REGION),) $(if $(PROFILE_TRACE),+profile-trace=$(abspath $(PROFILE_TRACE)),),)

.PHONY: load run-tests net-image net-image-rtl run-net test-net loadgen bench-tcp sim-net test-sim-net
.PHONY: bench-cosim area test-nic
.PHONY: lint all deps deps-sw deps-hw deps-debug sw-kernel sw ktest-filtered run fuzz leak bench-lock profile-ipc ipc-point bench-ipc bench-mem test test-loom test-host test-boot test-nofp test-fpga test-hw test-rtl test-sim constants verilog sim sim-build sim-uintr bitstream flash clean help

all: sw

help:
	@sed -n '1,/^$$/p' Makefile

# Markers so each deps phase runs once per build directory (`make deps*` forces a new check).
# deps-sw is what the software and QEMU need (make run installs only this); deps-hw adds the
# hardware build, the RTL simulation and the FPGA checks; deps-debug is asked for by name.
DEPS_SW := $(BUILD)/.deps-sw
DEPS_HW := $(BUILD)/.deps-hw
DEPS_ALL := $(DEPS_SW) $(DEPS_HW)
deps: deps-sw deps-hw

deps-sw:
	@mkdir -p $(BUILD) $(CACHE_DIR)
	@scripts/deps.sh sw
	@touch $(DEPS_SW)

deps-hw:
	@mkdir -p $(BUILD) $(CACHE_DIR)
	@scripts/deps.sh hw
	@echo "deps: hw: sbt launcher and rocket-chip sources from Maven Central (cached in $(CACHE_DIR)/jars)"
	@$(MAKE) -s --no-print-directory -C hw deps CACHE_DIR=$(CACHE_DIR) BUILD_DIR=$(BUILD)
	@touch $(DEPS_HW)

deps-debug:
	@scripts/deps.sh debug

$(DEPS_SW): scripts/deps.sh
	@$(MAKE) --no-print-directory deps-sw

$(DEPS_HW): scripts/deps.sh
	@$(MAKE) --no-print-directory deps-hw

constants: | $(DEPS_SW)
	python3 platform/gen.py --rust $(BUILD)/gen/platform.rs --c $(BUILD)/gen/platform.h \
	  --scala $(BUILD)/gen/Platform.scala --tcl $(BUILD)/gen/platform.tcl --dts $(BUILD)/gen/platform.dtsi
	@echo "constants: $(BUILD)/gen/platform.{rs,h,scala,tcl,dtsi}"

# The processes of sw/image.toml other than the root task, packed into every image.
PROCESS_ELFS := --elf hello-proc=$(BUILD)/sw/hello-proc.elf
# $(call suite_image,root task ELF,image): a system of sw/image.toml (the minimal root task's, or
# the kernel test suite's).
suite_image = $(MKIMAGE) --manifest sw/image.toml --elf firmware=$(FIRMWARE_ELF) \
  $(PROCESS_ELFS) --elf kernel=$(KERNEL_ELF) --elf roottask=$(1) -o $(2)
# The IPC benchmark's own system (sw/apps/ipc-bench/app.toml): full sweep, and the short one
# (`quick` feature) that make test runs on the RTL.
IPC_BENCH_IMAGE := $(BUILD)/sw/image-ipc-bench.bin
IPC_BENCH_QUICK_IMAGE := $(BUILD)/sw/image-ipc-bench-quick.bin
IPC_BENCH_MANIFEST := sw/apps/ipc-bench/app.toml
# $(call ipc_image,client ELF,image)
ipc_image = $(MKIMAGE) --manifest $(IPC_BENCH_MANIFEST) --elf firmware=$(FIRMWARE_ELF) \
  --elf kernel=$(KERNEL_ELF) --elf roottask=$(BUILD)/sw/ipc-bench-root.elf --elf ipc-bench-server=$(BUILD)/sw/ipc-bench-server.elf \
  --elf ipc-bench-client=$(1) -o $(2)
# The memory-allocator server's system (sw/apps/mem-server/app.toml): full sweep, and the short
# run (`quick`) make test boots on QEMU. $(call mem_image,client ELF,image)
MEM_BENCH_IMAGE := $(BUILD)/sw/image-mem-bench.bin
MEM_BENCH_QUICK_IMAGE := $(BUILD)/sw/image-mem-bench-quick.bin
mem_image = $(MKIMAGE) --manifest sw/apps/mem-server/app.toml --elf firmware=$(FIRMWARE_ELF) \
  --elf kernel=$(KERNEL_ELF) --elf roottask=$(BUILD)/sw/mem-bench-root.elf --elf mem-server=$(BUILD)/sw/mem-server.elf \
  --elf mem-client=$(1) -o $(2)

# Cargo tracks its own inputs; this rule always asks it and then re-assembles the image.
sw: | $(DEPS_SW)
	$(CARGO) build $(CARGO_FLAGS) --release --target $(KERNEL_TARGET) -p firmware -p kernel
	$(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p roottask -p kernel-tests -p hello-proc -p ipc-bench -p mem-server
	@mkdir -p $(BUILD)/sw
	for b in root client server; do cp $(SW_OUT)/ipc-bench-$$b $(BUILD)/sw/ipc-bench-$$b.elf; done
	cp $(SW_OUT)/hello-proc $(BUILD)/sw/hello-proc.elf
	cp $(KERNEL_OUT)/firmware $(FIRMWARE_ELF)
	cp $(KERNEL_OUT)/kernel $(KERNEL_ELF)
	cp $(SW_OUT)/roottask $(BUILD)/sw/roottask.elf
	cp $(SW_OUT)/kernel-tests $(BUILD)/sw/kernel-tests.elf
	# Its own target dir: with a shared one, cargo can take the full build's binary for a fresh
	# rtl-subset one (one output path, two feature sets) and the RTL runs the whole suite.
	CARGO_TARGET_DIR=$(BUILD)/cargo-rtl $(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p kernel-tests --features rtl-subset
	cp $(BUILD)/cargo-rtl/$(RUST_TARGET)/release/kernel-tests $(BUILD)/sw/kernel-tests-rtl.elf
	CARGO_TARGET_DIR=$(BUILD)/cargo-rtl $(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p ipc-bench --features quick
	cp $(BUILD)/cargo-rtl/$(RUST_TARGET)/release/ipc-bench-client $(BUILD)/sw/ipc-bench-client-quick.elf
	CARGO_TARGET_DIR=$(BUILD)/cargo-rtl $(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p mem-server --features quick
	cp $(BUILD)/cargo-rtl/$(RUST_TARGET)/release/mem-client $(BUILD)/sw/mem-client-quick.elf
	for b in mem-bench-root mem-server mem-client; do cp $(SW_OUT)/$$b $(BUILD)/sw/$$b.elf; done
	$(call suite_image,$(BUILD)/sw/roottask.elf,$(ROOT_IMAGE)) --part-out modules=$(MODULES_BIN)
	$(call suite_image,$(BUILD)/sw/kernel-tests.elf,$(KTEST_IMAGE)) --part-out modules=$(KTEST_MODULES)
	$(call suite_image,$(BUILD)/sw/kernel-tests-rtl.elf,$(UINTR_IMAGE))
	$(MKIMAGE) --flat $(KERNEL_ELF) -o $(KERNEL_BIN)
	for v in "" -quick; do $(call ipc_image,$(BUILD)/sw/ipc-bench-client$$v.elf,$(BUILD)/sw/image-ipc-bench$$v.bin) || exit 1; done
	for v in "" -quick; do $(call mem_image,$(BUILD)/sw/mem-client$$v.elf,$(BUILD)/sw/image-mem-bench$$v.bin) || exit 1; done

# The firmware and the kernel alone, what every system's image starts from: the network images
# need nothing else of `sw`, so make run builds only these and the network system.
sw-kernel: | $(DEPS_SW)
	$(CARGO) build $(CARGO_FLAGS) --release --target $(KERNEL_TARGET) -p firmware -p kernel
	@mkdir -p $(BUILD)/sw
	cp $(KERNEL_OUT)/firmware $(FIRMWARE_ELF)
	cp $(KERNEL_OUT)/kernel $(KERNEL_ELF)

# The network system: its own manifest (sw/apps/net-system/app.toml), root task and processes;
# the NET_* settings are compiled into its root task.
NET_IMAGE := $(BUILD)/sw/image-net.bin
# $(call net_image_file,VARIANT): a variant's image (async, sync; rtl-async, rtl-sync: the RTL's)
net_image_file = $(BUILD)/sw/image-net-$(1).bin
# $(call net_image,root task ELF,net-server ELF,tcp-server ELF,image)
net_image = $(MKIMAGE) --manifest sw/apps/net-system/app.toml --elf firmware=$(FIRMWARE_ELF) \
  --elf kernel=$(KERNEL_ELF) --elf roottask=$(1) --elf net-server=$(2) \
  --elf tcp-server=$(3) -o $(4)
NET_PORT ?= 5555
NET_REQUEST ?= 64
NET_WORK ?= 0
NET_SPIN ?= auto
# async (channels, coroutines) or sync (Call/ReplyRecv, a TCP server thread per connection)
NET_VARIANT ?= async
export NET_PORT NET_REQUEST NET_WORK NET_SPIN NET_VARIANT
# event_idx=off: virtio-drivers 0.13 compares the 16-bit avail_event without wrap-around, so
# with event indices it stops notifying the device after 65536 buffers; the ring flags it uses
# without them have no such limit.
NET_QEMU_ARGS = -netdev user,id=n0,hostfwd=tcp:127.0.0.1:$(NET_PORT)-:$(NET_PORT) -device virtio-net-device,netdev=n0,event_idx=off
# image-net.bin is the NET_VARIANT one (run-net); image-net-async.bin and image-net-sync.bin are
# both always built (test-net, bench-tcp): only the root task differs.
net-image: sw-kernel
	for v in sync async; do NET_VARIANT=$$v $(CARGO) build $(CARGO_FLAGS) --profile net --target $(RUST_TARGET) -p net-server -p tcp-server -p net-system \
	  && cp $(NET_OUT)/net-root $(BUILD)/sw/net-root-$$v.elf || exit 1; done
	for b in net-server tcp-server; do cp $(NET_OUT)/$$b $(BUILD)/sw/$$b.elf; done
	for v in sync async; do $(call net_image,$(BUILD)/sw/net-root-$$v.elf,$(BUILD)/sw/net-server.elf,$(BUILD)/sw/tcp-server.elf,$(call net_image_file,$$v)) || exit 1; done
	cp $(call net_image_file,$(NET_VARIANT)) $(NET_IMAGE)

# The RTL's network images (image-net-rtl-async.bin, -sync.bin; sim-net, test-sim-net, bench-tcp
# TARGET=rtl): the same programs built with NET_SOCKETS=NET_RTL_SOCKETS (netproto::SOCKETS: 16
# connections and room, not QEMU's 136), in a cargo dir of their own so neither set rebuilds the other.
NET_RTL_SOCKETS ?= 24
NET_RTL_CARGO := $(BUILD)/cargo-net-rtl
net-image-rtl: sw-kernel
	for v in sync async; do NET_SOCKETS=$(NET_RTL_SOCKETS) NET_VARIANT=$$v CARGO_TARGET_DIR=$(NET_RTL_CARGO) $(CARGO) build $(CARGO_FLAGS) --profile net \
	  --target $(RUST_TARGET) -p net-server -p tcp-server -p net-system && cp $(NET_RTL_CARGO)/$(RUST_TARGET)/net/net-root $(BUILD)/sw/net-root-rtl-$$v.elf || exit 1; done
	for b in net-server tcp-server; do cp $(NET_RTL_CARGO)/$(RUST_TARGET)/net/$$b $(BUILD)/sw/$$b-rtl.elf; done
	for v in sync async; do $(call net_image,$(BUILD)/sw/net-root-rtl-$$v.elf,$(BUILD)/sw/net-server-rtl.elf,$(BUILD)/sw/tcp-server-rtl.elf,$(call net_image_file,rtl-$$v)) || exit 1; done

LOADGEN := $(BUILD)/cargo-loadgen/release/loadgen
loadgen: | $(DEPS_SW)
	CARGO_TARGET_DIR=$(BUILD)/cargo-loadgen $(CARGO) build --release --manifest-path tools/loadgen/Cargo.toml --locked

# The load client against a running system (make run in another terminal, or a board): CONNS
# connections for DURATION seconds after a 1 s warm-up; RATE=R: open loop, R requests/s over all
# connections on a fixed schedule, latency from each request's due time (tools/loadgen/README.md);
# PIPELINE=N requests in flight per connection; HGRM=file: the latency distribution. HOST and
# PORT count only from the command line (some shells export a HOST of their own).
CONNS ?= 8
DURATION ?= 10
RATE ?=
PIPELINE ?= 1
HGRM ?=
LOAD_HOST = $(if $(filter command line,$(origin HOST)),$(HOST),127.0.0.1)
LOAD_PORT = $(if $(filter command line,$(origin PORT)),$(PORT),$(NET_PORT))
load: loadgen
	$(LOADGEN) --host $(LOAD_HOST) --port $(LOAD_PORT) -c $(CONNS) -d $(DURATION) -s $(NET_REQUEST) -p $(PIPELINE) \
	  $(if $(RATE),--rate $(RATE),) $(if $(HGRM),--hgrm $(HGRM),)

# End to end from the host through QEMU's network, the net server, async IPC and the TCP server,
# plus the robustness cases (scripts/net_test.py); a few minutes.
test-net: net-image loadgen
	python3 scripts/net_test.py --image async=$(call net_image_file,async) --image sync=$(call net_image_file,sync) --loadgen $(LOADGEN) --guest-port $(NET_PORT) --size $(NET_REQUEST)

BENCH_DURATION ?= 5
# TARGET=rtl: the same images on the 4-core RTL with the NIC model, 1/4/16 connections, cycles per
# request from the TCP server's rdcycle (each variant's simulation under the RTL lock); QEMU
# unless TARGET is given (the global TARGET default is the IPC benchmark's).
BENCH_TCP_TARGET = $(if $(filter command line environment,$(origin TARGET)),$(TARGET),qemu)
NET_BENCH_IMAGES = $(if $(filter rtl,$(BENCH_TCP_TARGET)),rtl-)
# The variants measured (TARGET=rtl: one per run keeps each simulation inside the RTL runner's limit),
# and TARGET=rtl's connection counts (one per run: NET_RTL_CONNECTIONS=4).
NET_BENCH_VARIANTS ?= async sync
NET_RTL_CONNECTIONS ?= 1,4,16
# On QEMU, two sweeps (BENCH_TCP_SWEEP=connections and/or rate): the closed-loop one over the
# connection counts (bench_tcp.py), then the open-loop one (bench_tcp_rate.py): the offered rate
# rises (BENCH_TCP_RATES=r1,r2,...) over 16 connections on 4 harts, latency percentiles against the
# achieved requests/s (tcp_latency.png; BENCH_RECORD=bench/results/tcp.jsonl appends the records).
BENCH_TCP_SWEEP ?= connections rate
BENCH_TCP_RATES ?=
BENCH_RECORD ?=
BENCH_TCP_QEMU_ARGS = --loadgen $(LOADGEN) --guest-port $(NET_PORT) --size $(NET_REQUEST) --duration $(BENCH_DURATION) --out $(BUILD)/bench
bench-tcp: net-image loadgen $(if $(filter rtl,$(BENCH_TCP_TARGET)),net-image-rtl)
	$(if $(filter rtl,$(BENCH_TCP_TARGET)),$(RTL_SIM_BUILD),)
	$(if $(filter rtl,$(BENCH_TCP_TARGET))$(filter connections,$(BENCH_TCP_SWEEP)),python3 scripts/bench_tcp.py $(foreach v,$(NET_BENCH_VARIANTS),--image $(v)=$(call net_image_file,$(NET_BENCH_IMAGES)$(v))) --loadgen $(LOADGEN) --guest-port $(NET_PORT) \
	  --size $(NET_REQUEST) --duration $(BENCH_DURATION) --out $(BUILD)/bench --target $(BENCH_TCP_TARGET) \
	  $(if $(filter rtl,$(BENCH_TCP_TARGET)),--sim $(RTL_SIM) --rtl-connections $(NET_RTL_CONNECTIONS) $(if $(RTL_LOCK),--lock $(RTL_LOCK),),),)
	$(if $(filter rtl,$(BENCH_TCP_TARGET)),,$(if $(filter rate,$(BENCH_TCP_SWEEP)),python3 scripts/bench_tcp_rate.py \
	  $(foreach v,$(NET_BENCH_VARIANTS),--image $(v)=$(call net_image_file,$(v))) $(BENCH_TCP_QEMU_ARGS) \
	  $(if $(BENCH_TCP_RATES),--rates $(BENCH_TCP_RATES),) $(if $(BENCH_RECORD),--record $(abspath $(BENCH_RECORD)),),))

# The same network system on the 4-core RTL with the NIC model (hw/sim: AXI DMA + AXI Ethernet,
# libslirp on simulated time): the host's 127.0.0.1:NET_PORT goes to the TCP server; drive it with
# tools/loadgen. MAX_CYCLES=N bounds the run (0: until stopped).
sim-net: net-image-rtl
	$(RTL_SIM_BUILD)
	@echo "sim-net: connect to 127.0.0.1:$(NET_PORT) once the TCP server says it listens (the RTL runs at ~40 kHz: the boot takes minutes)"
	$(RTL_SIM) +image=$(call net_image_file,rtl-$(NET_VARIANT)) +hostfwd=$(NET_PORT) \
	  +max-cycles=$(MAX_CYCLES) $(PROFILE_ARGS) $(SIM_ARGS)

# A bounded TCP exchange from the host into the RTL (scripts/rtl_net.py): the async network system
# (RTL image) on the 4-core RTL with the NIC model, a few requests over one connection; fails if a
# reply is missing or wrong. make test runs the same exchange inside test-sim (case rtl-4-harts-tcp).
# RTL_LOCK=file runs the simulation under flock.
test-sim-net: net-image-rtl loadgen
	$(RTL_SIM_BUILD)
	python3 scripts/rtl_net.py --sim $(RTL_SIM) \
	  --image $(call net_image_file,rtl-async) --loadgen $(LOADGEN) --guest-port $(NET_PORT) --size $(NET_REQUEST) \
	  --log $(BUILD)/sim-net-test.log $(if $(RTL_LOCK),--lock $(RTL_LOCK),)

run-net: net-image
	$(GDB_NOTE)
	@echo "run-net: connect to 127.0.0.1:$(NET_PORT) once the TCP server says it listens (Ctrl-A X stops QEMU);"
	@echo "run-net: load it from another terminal: make load [PORT=$(NET_PORT) CONNS=$(CONNS) DURATION=$(DURATION) RATE=requests/s PIPELINE=1]"
	scripts/qemu.sh $(NET_IMAGE) $(NET_QEMU_ARGS) $(GDB_QEMU)

# The kernel fuzzer alone (sw/apps/kernel-tests/src/t_fuzz.rs) on QEMU, 4 harts: SEED picks the
# run, COUNT the steps of each of its threads (the main one checks the kernel's invariants after
# each step, scoped to the fuzz CSpace; over everything every FULL_EVERY steps, default 64, and
# after the last). A failure prints the seed and the last steps; the suite runs a short run itself.
# SMP=1 (main thread only) or SMP=2 (one worker) run far faster than 4 harts on a loaded host.
# SPIN_PERCENT: main steps that race the spinner (a spinning Wait) against its address space's
# replacement, in percent. FUZZ_TARGET=rtl runs the same image on the 4-core RTL (the spinning
# Wait's races happen there; QEMU's clock ends every spin first), up to FUZZ_MAX_CYCLES.
# SCOPED=0 drops the scoped check between the full ones (cheaper on the RTL).
SEED ?= 1592594996
COUNT ?= 20000
SPIN_PERCENT ?= 4
FUZZ_TARGET ?= qemu
FUZZ_MAX_CYCLES ?= 400000000
FUZZ_IMAGE := $(BUILD)/sw/image-fuzz.bin
fuzz: sw
	KTEST_ONLY=fuzz FUZZ_SEED=$(SEED) FUZZ_COUNT=$(COUNT) FUZZ_FULL_EVERY=$(FULL_EVERY) FUZZ_SPIN_PERCENT=$(SPIN_PERCENT) FUZZ_SCOPED=$(SCOPED) \
	  CARGO_TARGET_DIR=$(BUILD)/cargo-fuzz $(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p kernel-tests
	cp $(BUILD)/cargo-fuzz/$(RUST_TARGET)/release/kernel-tests $(BUILD)/sw/kernel-tests-fuzz.elf
	$(call suite_image,$(BUILD)/sw/kernel-tests-fuzz.elf,$(FUZZ_IMAGE))
	$(if $(filter rtl,$(FUZZ_TARGET)),$(RTL_SIM_BUILD) && \
	  $(RTL_SIM) +image=$(FUZZ_IMAGE) +max-cycles=$(FUZZ_MAX_CYCLES),\
	  TCG=multi scripts/qemu.sh $(FUZZ_IMAGE) < /dev/null) | tee $(BUILD)/fuzz.log
	@grep -q 'DebugHalt(0)' $(BUILD)/fuzz.log || { echo "fuzz: FAILED (seed $(SEED); see $(BUILD)/fuzz.log)"; exit 1; }

# Create/destroy cycles of every object kind (UINTC slots and sender tables too) with every
# kernel gauge checked back at its start every 1000 cycles, alone on QEMU: COUNT cycles (the run
# is one thread: SMP=1 make leak ... runs it ~5x faster on a loaded host).
LEAK_IMAGE := $(BUILD)/sw/image-leak.bin
# Its own cargo directory, as the fuzzer's: the filtered build never replaces `sw`'s.
leak: sw
	KTEST_ONLY=leak LEAK_COUNT=$(COUNT) CARGO_TARGET_DIR=$(BUILD)/cargo-leak $(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p kernel-tests
	cp $(BUILD)/cargo-leak/$(RUST_TARGET)/release/kernel-tests $(BUILD)/sw/kernel-tests-leak.elf
	$(call suite_image,$(BUILD)/sw/kernel-tests-leak.elf,$(LEAK_IMAGE))
	TCG=multi scripts/qemu.sh $(LEAK_IMAGE) < /dev/null | tee $(BUILD)/leak.log
	@grep -q 'DebugHalt(0)' $(BUILD)/leak.log || { echo "leak: FAILED (see $(BUILD)/leak.log)"; exit 1; }

# The main job: the product, the network system (root task, net server, TCP server) under
# QEMU on 4 harts, served until stopped (same as run-net). The kernel test suite as the root
# task: run-tests.
GDB_QEMU = $(if $(GDB),-s -S,)
GDB_NOTE = $(if $(GDB),@echo "run: QEMU waits for GDB on tcp::1234: gdb-multiarch $(KERNEL_ELF) -ex 'target remote :1234'",)
run: run-net

# The suite's cross-hart spins want a TCG thread per vCPU (scripts/boot_test.py, SUITE_TCG); so do
# the fuzzer's and the leak run's. KTEST_ONLY=pat[,pat...]: the suite filtered (above).
run-tests: sw
	$(if $(KTEST_ONLY),$(call ktest_filtered,$(KTEST_ONLY),))
	$(GDB_NOTE)
	TCG=multi scripts/qemu.sh $(if $(KTEST_ONLY),$(KTEST_FILTERED_DIR)/image-ktest.bin,$(KTEST_IMAGE)) $(GDB_QEMU)

# The suite filtered by KTEST_ONLY=pat[,pat...], both builds, in $(BUILD)/sw/filtered/PATTERNS.
ktest-filtered: sw
	@test -n "$(KTEST_ONLY)" || { echo "ktest-filtered: KTEST_ONLY=pat[,pat...] names the tests to keep"; exit 1; }
	$(call ktest_filtered,$(KTEST_ONLY),)
	$(call ktest_filtered,$(KTEST_ONLY),rtl)
	@echo "ktest-filtered: $(KTEST_FILTERED_DIR)/image-ktest.bin (QEMU), image-uintr.bin (RTL)"

test: lint test-host test-nofp test-boot test-net test-rtl test-sim test-fpga test-hw test-nic
	@echo "make test: all passed"

# Lint gate: rustfmt (rustfmt.toml) and clippy with every warning an error, on the host workspace (tests included), on the
# target binaries as they are built, and on the PC load client. The toolchain is pinned
# (rust-toolchain.toml), so a new clippy lint arrives only when the pin moves.
KERNEL_CRATES := firmware kernel
TARGET_CRATES := roottask kernel-tests hello-proc ipc-bench mem-server net-server tcp-server net-system
lint: | $(DEPS_SW)
	$(CARGO) fmt --manifest-path sw/Cargo.toml --all --check
	$(CARGO) fmt --manifest-path tools/loadgen/Cargo.toml --all --check
	$(CARGO) clippy $(CARGO_FLAGS) --workspace --all-targets -- -D warnings
	$(CARGO) clippy $(CARGO_FLAGS) --release --target $(KERNEL_TARGET) $(addprefix -p ,$(KERNEL_CRATES)) -- -D warnings
	$(CARGO) clippy $(CARGO_FLAGS) --release --target $(RUST_TARGET) $(addprefix -p ,$(TARGET_CRATES)) -- -D warnings
	CARGO_TARGET_DIR=$(BUILD)/cargo-loadgen $(CARGO) clippy --manifest-path tools/loadgen/Cargo.toml --locked --all-targets -- -D warnings

test-host: test-loom | $(DEPS_ALL)
	$(CARGO) test $(CARGO_FLAGS) --workspace
	python3 -m unittest discover -s platform -p 'test_*.py'
	python3 -m unittest discover -s scripts -p 'test_*.py'
	CARGO_TARGET_DIR=$(BUILD)/cargo-loadgen $(CARGO) test --manifest-path tools/loadgen/Cargo.toml --locked

# The ring and wake-up protocol, and the blocking primitives' hand-off, model-checked with loom (every interleaving of the modelled
# races); its own target dir, since --cfg loom changes every crate's build.
test-loom: | $(DEPS_SW)
	RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=$(BUILD)/cargo-loom $(CARGO) test $(CARGO_FLAGS) --release -p aring -p tasksync

# FP instructions in the kernel only in its two routines that move user threads' F/D registers.
test-nofp: sw | $(DEPS_HW)
	python3 scripts/check_no_fp.py --allow fpu_save_regs --allow fpu_load_regs $(FIRMWARE_ELF) $(KERNEL_ELF)

test-boot: sw
	python3 scripts/boot_test.py --image $(ROOT_IMAGE) --kernel $(KERNEL_BIN) --modules $(MODULES_BIN) \
	  --suite-image $(KTEST_IMAGE) --suite-modules $(KTEST_MODULES) --bench-image $(IPC_BENCH_IMAGE) \
	  --mem-image $(MEM_BENCH_QUICK_IMAGE)

# The NIC model's register/descriptor test with real libslirp (hw/sim/tests/nic_test.cc; seconds).
test-nic: | $(DEPS_ALL)
	$(SIM_MAKE) test-nic

verilog: | $(DEPS_ALL)
	$(MAKE) -C hw verilog CONFIG=$(CONFIG) BUILD_DIR=$(BUILD) CACHE_DIR=$(CACHE_DIR)

sim-build: | $(DEPS_ALL)
	$(SIM_MAKE) build $(SIM_OPTS)

# A flat binary is loaded at 0x8000_0000; an ELF is flattened first (it must be linked there).
sim: sw sim-build
	@bin=$(BINARY); if head -c4 $$bin | grep -q ELF; then \
	  $(MKIMAGE) --flat $$bin -o $(BUILD)/sim/binary.bin && bin=$(BUILD)/sim/binary.bin; fi; \
	$(SIM_BIN) +image=$$bin +max-cycles=$(MAX_CYCLES) \
	  $(if $(FST),+fst=$(FST) +fst-start=$(or $(FST_START),0) +fst-end=$(or $(FST_END),0xffffffffffffffff),) $(PROFILE_ARGS) $(SIM_ARGS)

test-hw: | $(DEPS_ALL)
	$(MAKE) -C hw test BUILD_DIR=$(BUILD) CACHE_DIR=$(CACHE_DIR)
	$(MAKE) -C hw/uintc/cosim cosim BUILD_DIR=$(BUILD) CACHE_DIR=$(CACHE_DIR)

# The UINTC reference-model co-simulation's long run (hw/uintc/cosim/README.md): 10 M cycles.
bench-cosim: | $(DEPS_ALL)
	@mkdir -p $(BUILD)/bench
	$(MAKE) -s -C hw/uintc/cosim cosim-long BUILD_DIR=$(BUILD) CACHE_DIR=$(CACHE_DIR) | tee $(BUILD)/bench/cosim-long.txt

# yosys LUT/FF estimates of the UINTC and the uipi unit next to the CLINT and PLIC (minutes).
area: | $(DEPS_ALL)
	@command -v yosys >/dev/null || { echo "area: yosys is missing: make deps-debug installs it"; exit 1; }
	$(MAKE) -s -C hw/uintc/cosim area BUILD_DIR=$(BUILD) CACHE_DIR=$(CACHE_DIR)

# Bare-metal tests of the patched cores and the UINTC on the RTL (hw/tests).
test-rtl: | $(DEPS_ALL)
	$(MAKE) -C hw test-rtl BUILD_DIR=$(BUILD) CACHE_DIR=$(CACHE_DIR)

# The real image on the 4-hart RTL (fast build), checked like the QEMU boots; with the network
# system's bounded TCP exchange from the host (rtl-4-harts-tcp, as make test-sim-net) beside them.
test-sim: sw net-image-rtl loadgen
	$(RTL_SIM_BUILD)
	python3 scripts/boot_test.py --image $(ROOT_IMAGE) --suite-image $(UINTR_IMAGE) --bench-image $(IPC_BENCH_QUICK_IMAGE) --harts 4 --jobs 2 \
	  --net-image $(call net_image_file,rtl-async) --loadgen $(LOADGEN) \
	  --sim $(RTL_SIM)

# The worst kernel lock hold under a hostile thread (bench_lock_hold), alone on the 4-hart RTL.
bench-lock: sw | $(DEPS_ALL)
	$(call ktest_filtered,lock_hold,rtl)
	$(RTL_SIM_BUILD)
	$(RTL_SIM) +image=$(call ktest_filtered_dir,lock_hold)/image-uintr.bin +max-cycles=60000000 $(PROFILE_ARGS) | tee $(BUILD)/bench-lock.log
	@grep -q 'bench: worst kernel lock hold' $(BUILD)/bench-lock.log || { echo "bench-lock: no figure (see $(BUILD)/bench-lock.log)"; exit 1; }

# Where the cycles of an IPC round trip go (hw/sim/README.md, "Profiler"): the suite's benchmark
# alone on the 4-hart RTL (a filtered suite, above), profiled inside its round-trip region
# (t_bench.rs) and symbolized with the ELFs it ran, kept beside the profile. IPC=same: fastpath_call_replyrecv (region 11, the client's
# hart); IPC=other: the same across address spaces (region 13); IPC=cross: bench_round_trip
# (region 12, every hart while it is open); IPC=ntfn: uintr_bench's kernel-forwarded
# Signal/Wait ping-pong across harts (region 14, every hart).
IPC ?= same
IPC_PROF := $(BUILD)/bench/profile-ipc-$(IPC)
IPC_TEST = $(if $(filter cross,$(IPC)),bench_round_trip,$(if $(filter other,$(IPC)),bench_round_trip_other_space,$(if $(filter ntfn,$(IPC)),uintr_bench,fastpath_call)))
IPC_REGION = $(if $(filter cross,$(IPC)),12 +profile-region-any,$(if $(filter other,$(IPC)),13,$(if $(filter ntfn,$(IPC)),14 +profile-region-any,11)))
profile-ipc: sw | $(DEPS_ALL)
	$(call ktest_filtered,$(IPC_TEST),rtl)
	$(RTL_SIM_BUILD)
	@mkdir -p $(BUILD)/bench
	$(RTL_SIM) +image=$(call ktest_filtered_dir,$(IPC_TEST))/image-uintr.bin +max-cycles=60000000 \
	  +profile=$(IPC_PROF).prof +profile-region=$(IPC_REGION) | tee $(IPC_PROF).log
	@# the ELFs it ran, beside the profile for more looks (--elf-dir)
	@rm -rf $(IPC_PROF)-elf && mkdir -p $(IPC_PROF)-elf && cp $(call ktest_filtered_dir,$(IPC_TEST))/*.elf $(IPC_PROF)-elf/
	{ python3 scripts/profile.py $(IPC_PROF).prof --elf-dir $(IPC_PROF)-elf --categories scripts/profile-ipc.toml --divide region; echo; \
	  python3 scripts/profile.py $(IPC_PROF).prof --elf-dir $(IPC_PROF)-elf --inline --divide region --top 60; } > $(IPC_PROF).txt
	python3 scripts/profile.py $(IPC_PROF).prof --elf-dir $(IPC_PROF)-elf --inline --folded $(IPC_PROF).folded > /dev/null
	@cat $(IPC_PROF).txt; echo "profile-ipc: $(IPC_PROF).{txt,folded,prof,log} (ELFs: $(IPC_PROF)-elf)"
# The IPC benchmark (sw/apps/ipc-bench): every variant, concurrency and work on the 4-hart RTL
# (TARGET=qemu: the same sweep under QEMU, functional only), then build/bench/ipc.csv and
# PNG plots beside the published figures (scripts/ipc_bench.py).
TARGET ?= rtl
bench-ipc: sw
	$(if $(filter qemu,$(TARGET)),,$(RTL_SIM_BUILD))
	python3 scripts/ipc_bench.py --image $(IPC_BENCH_IMAGE) --out $(BUILD)/bench --target $(TARGET) \
	  $(if $(filter qemu,$(TARGET)),,--sim $(RTL_SIM))

# Chosen points of the IPC benchmark alone (sw/apps/ipc-bench, src/points.rs): a client built
# with IPC_BENCH_ONLY=$(IPC_POINTS), its own image, one bounded RTL simulation (boot, then only
# those points). PROFILE=1 profiles every hart while the client's measured window (region 30)
# is open, in the points IPC_PROFILE_POINT names (same syntax; default: all of them), and
# writes each server hart's per-category table (scripts/profile-async-ipc.toml) and the flat
# profile, divided by IPC_POINT_CALLS (the window's calls: 64, 4x the concurrency above 16).
IPC_POINTS ?= async-cross:matmul4:8
IPC_PROFILE_POINT ?=
ipc_point_name = $(subst *,all,$(subst :,-,$(subst $(COMMA),+,$(1))))
IPC_POINT_NAME = $(call ipc_point_name,$(IPC_POINTS))$(if $(IPC_PROFILE_POINT),-prof-$(call ipc_point_name,$(IPC_PROFILE_POINT)))
IPC_POINT_OUT = $(BUILD)/bench/point-$(IPC_POINT_NAME)
IPC_POINT_CALLS ?= 64
IPC_POINT_CYCLES ?= 60000000
ipc-point: sw
	IPC_BENCH_ONLY='$(IPC_POINTS)' IPC_BENCH_PROFILE='$(IPC_PROFILE_POINT)' CARGO_TARGET_DIR=$(BUILD)/cargo-point $(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p ipc-bench
	@mkdir -p $(BUILD)/bench $(IPC_POINT_OUT)-elf
	cp $(BUILD)/cargo-point/$(RUST_TARGET)/release/ipc-bench-client $(IPC_POINT_OUT)-elf/ipc-bench-client.elf
	cp $(BUILD)/sw/{firmware,kernel,ipc-bench-root,ipc-bench-server}.elf $(IPC_POINT_OUT)-elf/
	$(call ipc_image,$(IPC_POINT_OUT)-elf/ipc-bench-client.elf,$(IPC_POINT_OUT).bin)
	$(if $(filter qemu,$(TARGET)),scripts/qemu.sh $(IPC_POINT_OUT).bin | tee $(IPC_POINT_OUT).log,\
	$(RTL_SIM_BUILD) && \
	$(RTL_SIM) +image=$(IPC_POINT_OUT).bin +max-cycles=$(IPC_POINT_CYCLES) \
	  $(if $(PROFILE),+profile=$(IPC_POINT_OUT).prof +profile-region=30 +profile-region-any,) | tee $(IPC_POINT_OUT).log)
	$(if $(PROFILE),{ for h in 1 2; do echo "hart $$h"; python3 scripts/profile.py $(IPC_POINT_OUT).prof --elf-dir $(IPC_POINT_OUT)-elf \
	  --categories scripts/profile-async-ipc.toml --wfi --hart $$h --divide $(IPC_POINT_CALLS); echo; done; \
	  python3 scripts/profile.py $(IPC_POINT_OUT).prof --elf-dir $(IPC_POINT_OUT)-elf --inline --divide $(IPC_POINT_CALLS) --top 60; } > $(IPC_POINT_OUT).txt; \
	  cat $(IPC_POINT_OUT).txt,)
	@grep '^result' $(IPC_POINT_OUT).log

# The memory-allocator server (sw/apps/mem-server): phases MODE-PLACEMENT (mode sync or async;
# placement one-hart: client, server and the server's kernel handler on one hart; two-harts: client
# and server on two, the handler only on those; dedicated-handler-hart: the handler only on the
# other harts), concurrency 2..512. On the 4-hart RTL every point is an
# image and a simulation of its own (start-up ~30 M cycles, then that point), each bounded in
# cycles by scripts/mem_bench.py; the table, CSV and
# plots gather every point logged in build/bench so far (the newest log of each point), so one
# point per call adds up: `make bench-mem BENCH_MEM_RUNS=async-one-hart BENCH_MEM_CONC=64`. Full
# set: the defaults (5 phases x 9 concurrencies, ~15-40 min each at 40 kHz); SHORT=1: concurrency 4,
# 64, 256. TARGET=qemu: every phase in one quick functional run. RTL_LOCK=file runs each
# simulation under flock. build/bench/mem.csv, mem.md, mem.jsonl and plots beside the published
# figures; every row names its placement and each hart's busy cycles per pair.
BENCH_MEM_ALL := sync-one-hart,sync-two-harts,async-one-hart,async-two-harts,async-dedicated-handler-hart
BENCH_MEM_RUNS ?= $(subst $(COMMA), ,$(BENCH_MEM_ALL))
BENCH_MEM_CONC ?= $(if $(SHORT),4$(COMMA)64$(COMMA)256,2$(COMMA)4$(COMMA)8$(COMMA)16$(COMMA)32$(COMMA)64$(COMMA)128$(COMMA)256$(COMMA)512)
mem_point = $(BUILD)/sw/image-mem-bench-$(subst $(COMMA),+,$(1))-c$(2).bin
MEM_BENCH_ALL_IMAGE := $(BUILD)/sw/image-mem-bench-all.bin
mem_client = MEM_PHASES=$(1) MEM_CONC=$(2) $(3) CARGO_TARGET_DIR=$(BUILD)/cargo-bench \
  $(CARGO) build $(CARGO_FLAGS) --release --target $(RUST_TARGET) -p mem-server && \
  cp $(BUILD)/cargo-bench/$(RUST_TARGET)/release/mem-client $(4) && $(call mem_image,$(4),$(5))
# PROFILE=1 also profiles each point's measured window on every hart (build/bench/mem-rtl-*.prof,
# the ELFs it ran beside it in ...-elf/; read with scripts/profile.py --categories
# scripts/profile-mem.toml). The records name the tree the images were built from.
mem_elfs = mkdir -p $(2) && cp $(BUILD)/sw/{firmware,kernel,mem-bench-root,mem-server}.elf $(2)/ && cp $(1) $(2)/mem-client.elf
MEM_REVISION := $(shell git rev-parse --short HEAD)$(if $(shell git status --porcelain --untracked-files=no),-dirty,)
RTL_LOCK ?=
bench-mem: sw
	$(if $(filter qemu,$(TARGET)),$(call mem_client,$(BENCH_MEM_ALL),$(BENCH_MEM_CONC),,$(BUILD)/sw/mem-client-all.elf,$(MEM_BENCH_ALL_IMAGE)),\
	for p in $(BENCH_MEM_RUNS); do for c in $(subst $(COMMA), ,$(BENCH_MEM_CONC)); do n=$$(echo $$p | tr , +); \
	  $(call mem_client,$$p,$$c,,$(BUILD)/sw/mem-client-$$n-c$$c.elf,$(BUILD)/sw/image-mem-bench-$$n-c$$c.bin) \
	  || exit 1; $(if $(PROFILE),$(call mem_elfs,$(BUILD)/sw/mem-client-$$n-c$$c.elf,$(BUILD)/bench/mem-rtl-image-mem-bench-$$n-c$$c-elf);,) \
	  done; done)
	$(if $(filter qemu,$(TARGET)),,$(RTL_SIM_BUILD))
	python3 scripts/mem_bench.py --out $(BUILD)/bench --target $(TARGET) $(if $(RTL_LOCK),--lock $(RTL_LOCK),) \
	  --revision $(MEM_REVISION) $(if $(PROFILE),--profile,) \
	  $(if $(filter qemu,$(TARGET)),--images $(MEM_BENCH_ALL_IMAGE),--gather \
	  --images $(foreach p,$(BENCH_MEM_RUNS),$(foreach c,$(subst $(COMMA), ,$(BENCH_MEM_CONC)),$(call mem_point,$(p),$(c)))) \
	  --sim $(RTL_SIM))

# KTEST_ONLY=pat[,pat...]: the suite filtered (above), its rtl-subset build.
sim-uintr: sw
	$(if $(KTEST_ONLY),$(call ktest_filtered,$(KTEST_ONLY),rtl))
	$(RTL_SIM_BUILD)
	$(RTL_SIM) +image=$(if $(KTEST_ONLY),$(KTEST_FILTERED_DIR)/image-uintr.bin,$(UINTR_IMAGE)) +max-cycles=$(MAX_CYCLES) $(PROFILE_ARGS)

# The flow is checked against its port model and the board config's real Verilog.
test-fpga: | $(DEPS_ALL)
	$(MAKE) -C hw/fpga test BUILD_DIR=$(BUILD) CONFIG=$(CONFIG) CACHE_DIR=$(CACHE_DIR)

bitstream: | $(DEPS_ALL)
	$(MAKE) -C hw/fpga bitstream BUILD_DIR=$(BUILD) CONFIG=$(CONFIG)

# The board gets the network system: NET_VARIANT's image-net.bin, the image make run boots (its
# net server drives the NIC the device tree names: the AXI Ethernet on the board). IMAGE=file
# (on the command line) flashes that file instead, and then nothing is built.
FLASH_IMAGE = $(if $(filter command line,$(origin IMAGE)),$(abspath $(IMAGE)),$(NET_IMAGE))
flash: $(if $(filter command line,$(origin IMAGE)),,net-image)
	@echo "flash: $(FLASH_IMAGE) to the board ($(FLASH))"
	$(MAKE) -C hw/fpga flash-$(FLASH) BUILD_DIR=$(BUILD) CONFIG=$(CONFIG) IMAGE=$(FLASH_IMAGE)

clean:
	rm -rf $(BUILD)
