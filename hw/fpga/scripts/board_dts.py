#!/usr/bin/env python3
"""Board device tree: the SoC's DTS plus the PL devices, compiled and checked.

  board_dts.py --platform platform.toml --board board.toml [--soc-dts UintrSystem.dts] -o OUT.dts

Writes OUT.dts (SoC DTS + dts/pl-devices.dtsi filled from the constants) and OUT.dtb (dtc),
then reads the DTB back (fdtget) and compares the PL device addresses, sizes and interrupts
with platform.toml. Without --soc-dts, dts/stub-soc.dts stands in for the SoC. Any dtc warning
counts as an error: a warning here is a malformed node the kernel would trip over later.
"""
import argparse
import os
import re
import subprocess
import sys
import tomllib

FPGA = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fields(platform, board):
    mm, irq = platform["memmap"], platform["irq"]
    out = {f"{k}_{f}": v[f] for k, v in mm.items() for f in ("base", "size")}
    out.update({f"irq_{k}": v for k, v in irq.items()})
    out["eth_phy_addr"] = board["pl"]["eth_phy_addr"]
    return out


def fdtget(dtb, node, prop):
    r = subprocess.run(["fdtget", "-t", "u", dtb, node, prop], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return [int(x) for x in r.stdout.split()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", required=True)
    ap.add_argument("--board", required=True)
    ap.add_argument("--soc-dts")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    with open(args.platform, "rb") as f:
        platform = tomllib.load(f)
    with open(args.board, "rb") as f:
        board = tomllib.load(f)
    v = fields(platform, board)
    with open(os.path.join(FPGA, "dts", "pl-devices.dtsi.in")) as f:
        fragment = f.read().format(**v)
    if args.soc_dts:
        with open(args.soc_dts) as f:
            base = f.read()
    else:
        with open(os.path.join(FPGA, "dts", "stub-soc.dts")) as f:
            base = f.read().format(**v)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    head = base.rstrip() + "\n\n"
    first_own_line = head.count("\n") + 1
    with open(args.output, "w") as f:
        f.write(head + fragment)
    dtb = os.path.splitext(args.output)[0] + ".dtb"
    r = subprocess.run(["dtc", "-I", "dts", "-O", "dtb", "-o", dtb, args.output], capture_output=True, text=True)
    # Warnings about rocket-chip's own nodes are hw/'s business; ours (from first_own_line on)
    # are errors.
    own = [w for w in r.stderr.splitlines()
           if (m := re.match(r".*?:(\d+)\.\d+-\d+\.\d+: ", w)) and int(m.group(1)) >= first_own_line]
    if r.returncode != 0 or own:
        sys.exit(f"board_dts: dtc on {args.output}:\n" + ("\n".join(own) or r.stderr))

    mm, irq = platform["memmap"], platform["irq"]
    expect = {
        f"/soc/dma@{mm['dma']['base']:x}": ([mm["dma"]["base"], mm["dma"]["size"]], [irq["dma_tx"], irq["dma_rx"]]),
        f"/soc/ethernet@{mm['ethernet']['base']:x}": ([mm["ethernet"]["base"], mm["ethernet"]["size"]], [irq["eth_mac"], irq["eth"]]),
    }
    plic = f"/soc/interrupt-controller@{mm['plic']['base']:x}"
    plic_phandle = fdtget(dtb, plic, "phandle")
    errors = []
    for node, (reg, ints) in expect.items():
        if fdtget(dtb, node, "reg") != reg:
            errors.append(f"{node}: reg is {fdtget(dtb, node, 'reg')}, platform.toml says {reg}")
        if fdtget(dtb, node, "interrupts") != ints:
            errors.append(f"{node}: interrupts are {fdtget(dtb, node, 'interrupts')}, platform.toml says {ints}")
        if plic_phandle is None or fdtget(dtb, node, "interrupt-parent") != plic_phandle:
            errors.append(f"{node}: interrupt-parent is not the PLIC at {plic}")
    for e in errors:
        print(f"board_dts: {e}", file=sys.stderr)
    if errors:
        sys.exit(1)
    print(f"board_dts: ok: {dtb} ({'SoC DTS' if args.soc_dts else 'stub SoC'} + PL devices)")


if __name__ == "__main__":
    main()
