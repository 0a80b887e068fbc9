#!/usr/bin/env bash
# Generate the Vivado inputs from the SoC port model (no generated Verilog needed), as
# `make prepare` does from the real SoC: constants, a port stub of UintrSystem, the wrapper,
# the file list. Then lint the wrapper against the stub, so every port is connected with the
# right width.
#   model_gen.sh FPGA_DIR REPO_DIR OUT_DIR
set -euo pipefail
fpga=$1 repo=$2 out=$3
platform=$repo/platform/platform.toml board=$fpga/board.toml
mkdir -p "$out"
python3 "$repo/platform/gen.py" --tcl "$out/platform.tcl"
python3 "$repo/platform/gen.py" --spec "$board" --tcl "$out/board.tcl"
python3 "$fpga/scripts/soc_ports.py" --model "$platform" --stub > "$out/UintrSystem.v"
python3 "$fpga/scripts/gen_wrapper.py" --platform "$platform" --board "$board" --model -o "$out/rocket_soc.v"
printf '%s\n' "$out/UintrSystem.v" "$out/rocket_soc.v" > "$out/sources.f"
verilator --lint-only -Wall -Wno-DECLFILENAME -Wno-UNUSEDSIGNAL --top-module rocket_soc \
  "$out/rocket_soc.v" "$out/UintrSystem.v"
echo "model: wrapper lints clean against the port model ($out)"
