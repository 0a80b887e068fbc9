#!/usr/bin/env bash
# Show that every check of `make test` can fail: run each on a deliberately broken copy of its
# input and require a failure. First the unbroken inputs must pass, or the rest proves nothing.
#   selftest.sh FPGA_DIR REPO_DIR WORK_DIR
set -uo pipefail
fpga=$1 repo=$2 work=$3
platform=$repo/platform/platform.toml board=$fpga/board.toml
rm -rf "$work" && mkdir -p "$work"
caught=0 missed=0

# A copy of hw/fpga to break; scripts find their Tcl relative to themselves.
tree() { local t=$work/tree-$1; cp -r "$fpga" "$t"; echo "$t"; }
gen_copy() { local g=$work/gen-$1; cp -r "$work/gen" "$g"; echo "$g"; }
check_bd() { local t=$1 g=$2 b=${3:-$board}; python3 "$t/scripts/check_bd.py" --gen "$g" --work "$g.work" --platform "$platform" --board "$b"; }

expect_fail() {
  local name=$1; shift
  if "$@" > "$work/$name.log" 2>&1; then
    echo "selftest: $name: NOT caught (log: $work/$name.log)"; missed=$((missed + 1))
  else
    local why; why=$(grep -m1 -E '^(vivado-stub: .*failed: |check_\w+: |gen_wrapper: |test_loader: |board_dts: |/.*: )' "$work/$name.log" | sed 's/^vivado-stub: .* failed: //' | cut -c1-150)
    echo "selftest: $name: caught: $why"; caught=$((caught + 1))
  fi
}

bash "$fpga/tests/model_gen.sh" "$fpga" "$repo" "$work/gen" > "$work/model_gen.log" 2>&1 || { cat "$work/model_gen.log"; exit 1; }
mkdir -p "$work/inc"
python3 "$repo/platform/gen.py" --c "$work/inc/platform.h"
python3 "$repo/platform/gen.py" --spec "$board" --c "$work/inc/board.h"
gcc -O2 -Wall -Wextra -Werror -std=c11 -D_DEFAULT_SOURCE -I"$work/inc" "$fpga/loader/rvload.c" -o "$work/rvload-host"
if ! check_bd "$fpga" "$work/gen" > "$work/sanity.log" 2>&1 \
   || ! python3 "$fpga/tests/test_loader.py" "$work/rvload-host" "$board" "$work/loader" >> "$work/sanity.log" 2>&1 \
   || ! python3 "$fpga/scripts/board_dts.py" --platform "$platform" --board "$board" -o "$work/dts/ok.dts" >> "$work/sanity.log" 2>&1; then
  cat "$work/sanity.log"; echo "selftest: the unbroken inputs fail; fix that first"; exit 1
fi

# 1. An address in the Tcl constants differs from platform.toml.
g=$(gen_copy addr); sed -i 's/^set platform(memmap.dma_base) .*/set platform(memmap.dma_base) 0x60110000/' "$g/platform.tcl"
expect_fail wrong-dma-address check_bd "$fpga" "$g"

# 2. Two interrupt sources swapped in the block design.
t=$(tree irq); sed -i -e 's#dma_tx  dma/mm2s_introut#dma_tx  dma/XX#' -e 's#dma_rx  dma/s2mm_introut#dma_rx  dma/mm2s_introut#' -e 's#dma_tx  dma/XX#dma_tx  dma/s2mm_introut#' "$t/tcl/bd/irq.tcl"
expect_fail swapped-dma-irqs check_bd "$t" "$work/gen"

# 3. A pin name that the IP does not have.
t=$(tree pin); sed -i 's#fpga_net uart/sout port:uart_tx#fpga_net uart/txd port:uart_tx#' "$t/tcl/bd/mmio.tcl"
expect_fail unknown-pin check_bd "$t" "$work/gen"

# 4. A board port without a package pin.
t=$(tree xdc); sed -i '/PACKAGE_PIN D11/d' "$t/constraints/pins.xdc"
expect_fail xdc-missing-pin check_bd "$t" "$work/gen"

# 5. A hex value where Vivado wants a decimal IP parameter.
t=$(tree hex); sed -i 's#\[list NUM_PORTS \[expr {$platform(irq.count)}\]\]#[list NUM_PORTS $platform(irq.count)]#' "$t/tcl/bd/irq.tcl"
expect_fail hex-ip-parameter check_bd "$t" "$work/gen"

# 6. Another Vivado version than version.tcl names.
expect_fail wrong-vivado-version env STUB_VIVADO_VERSION=2023.1 python3 "$fpga/scripts/check_bd.py" --gen "$work/gen" --work "$work/ver.work" --platform "$platform" --board "$board"

# 7. Negative slack after routing.
expect_fail timing-violation env STUB_TIMING=fail python3 "$fpga/scripts/check_bd.py" --gen "$work/gen" --work "$work/timing.work" --platform "$platform" --board "$board"

# 8. The PS DRAM window moved in board.toml but not in the wrapper.
sed 's/^dram_window = { base = 0x1000_0000/dram_window = { base = 0x2000_0000/' "$board" > "$work/board-window.toml"
expect_fail stale-dram-remap check_bd "$fpga" "$work/gen" "$work/board-window.toml"

# 9. The SoC top with a different number of interrupt lines than platform.toml.
sed 's/input \[5:0\] interrupts/input [4:0] interrupts/' "$work/gen/UintrSystem.v" > "$work/UintrSystem-5irq.v"
expect_fail soc-irq-width python3 "$fpga/scripts/gen_wrapper.py" --platform "$platform" --board "$board" --verilog "$work/UintrSystem-5irq.v" -o "$work/w.v"
expect_fail soc-port-model python3 "$fpga/scripts/check_soc.py" --platform "$platform" --verilog "$work/UintrSystem-5irq.v" --work "$work/soc5"

# 10. A Tcl file left with an open brace.
cp "$fpga/tcl/bd/addr.tcl" "$work/broken.tcl"; echo 'proc broken {} {' >> "$work/broken.tcl"
expect_fail tcl-syntax tclsh "$fpga/scripts/tcl_syntax.tcl" "$work/broken.tcl"

# 11. Device tree: interrupts in the wrong order, a syntax error, and a DTB whose Ethernet
# sits elsewhere than the block design maps it (the DTB checked against the design itself).
t=$(tree dts-irq); sed -i 's/interrupts = <{irq_dma_tx} {irq_dma_rx}>/interrupts = <{irq_dma_rx} {irq_dma_tx}>/' "$t/dts/stub-soc.dts"
expect_fail dts-irq-order python3 "$t/scripts/board_dts.py" --platform "$platform" --board "$board" -o "$work/dts/irq.dts"
t=$(tree dts-syntax); sed -i 's/#dma-cells = <1>;/#dma-cells = <1>/' "$t/dts/stub-soc.dts"
expect_fail dts-syntax python3 "$t/scripts/board_dts.py" --platform "$platform" --board "$board" -o "$work/dts/syntax.dts"
sed 's/reg = <{ethernet_base:#x} {ethernet_size:#x}>;/reg = <0x60180000 {ethernet_size:#x}>;/' "$fpga/dts/stub-soc.dts" \
  | python3 -c 'import sys, tomllib; sys.path.insert(0, sys.argv[1]); import board_dts; p = tomllib.load(open(sys.argv[2], "rb")); print(sys.stdin.read().format(**board_dts.fields(p)))' "$fpga/scripts" "$platform" > "$work/dts/eth-moved.dts"
dtc -q -I dts -O dtb -o "$work/dts/eth-moved.dtb" "$work/dts/eth-moved.dts"
expect_fail dtb-vs-design python3 "$fpga/scripts/check_bd.py" --gen "$work/gen" --work "$work/gen-dtb.work" --platform "$platform" --board "$board" --dtb "$work/dts/eth-moved.dtb"

# 12. Loader built for one DRAM window, board.toml saying another.
sed 's/^dram_window = { base = 0x1000_0000/dram_window = { base = 0x1800_0000/' "$board" > "$work/board-loader.toml"
expect_fail loader-window python3 "$fpga/tests/test_loader.py" "$work/rvload-host" "$work/board-loader.toml" "$work/loader-bad"

# 13. The minimal design with an Ethernet part left in (its clock wizard, no licence needed for
# it, but the design must have nothing of the Ethernet).
t=$(tree minimal); sed -i 's/bd  {util ps clocks resets soc mmio ps_ctrl irq addr}/bd  {util ps clocks resets soc mmio eth_clocks ps_ctrl irq addr}/' "$t/tcl/designs.tcl"
sed -i 's/xdc {pins.xdc}$/xdc {pins.xdc eth_pins.xdc}/' "$t/tcl/designs.tcl"
sed -i '/KSZ9031RNX PHY/,$d' "$t/constraints/eth_pins.xdc"
expect_fail minimal-with-eth-clock python3 "$t/scripts/check_bd.py" --gen "$work/gen" --work "$work/minimal.work" --platform "$platform" --board "$board" --design minimal

echo "selftest: $caught broken inputs caught, $missed missed"
[ "$missed" -eq 0 ]
