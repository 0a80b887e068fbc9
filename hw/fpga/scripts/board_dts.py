#!/usr/bin/env python3
"""Board device tree: the SoC's own device tree (the one in its boot ROM), compiled and checked.

  board_dts.py --platform platform.toml --board board.toml [--soc-dts UintrSystem.dts] -o OUT.dts

The board image carries no device tree of its own: the firmware gets the boot ROM's in a1, and
rocket-chip generates it with the PL devices behind the MMIO port described by hw/soc
(BoardDevices.scala: the UART, the AXI DMA `xlnx,axi-dma-1.00.a` and the AXI Ethernet
`xlnx,axi-ethernet-1.00.a`, their PLIC sources bound from platform.toml). The simulation
configs add only the harness's exit device, so the simulation boots the same nodes.

This writes OUT.dts (a copy of the SoC's DTS) and OUT.dtb (dtc), for software that wants the
board description as a file, then reads the DTB back (fdtget) and compares the DMA's and the
Ethernet's compatible, reg, interrupts (in the bindings' order, by interrupt-names) and
interrupt-parent with platform.toml. Without --soc-dts, dts/stub-soc.dts stands in for the SoC.
Any dtc warning in those nodes counts as an error.
"""
import argparse
import os
import re
import subprocess
import sys
import tomllib

FPGA = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# compatible -> (memmap key, interrupt names in the order of their platform.toml [irq] keys)
NODES = {
    "xlnx,axi-dma-1.00.a": ("dma", [("mm2s_introut", "dma_tx"), ("s2mm_introut", "dma_rx")]),
    "xlnx,axi-ethernet-1.00.a": ("ethernet", [("mac_irq", "eth_mac"), ("interrupt", "eth")]),
}


def fields(platform):
    mm, irq = platform["memmap"], platform["irq"]
    out = {f"{k}_{f}": v[f] for k, v in mm.items() for f in ("base", "size")}
    out.update({f"irq_{k}": v for k, v in irq.items()})
    return out


def fdtget(dtb, node, prop, kind="u"):
    r = subprocess.run(["fdtget", "-t", kind, dtb, node, prop], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    return r.stdout.split() if kind == "s" else [int(x) for x in r.stdout.split()]


def find_nodes(dtb):
    """compatible -> node path, for the NODES found under /soc."""
    r = subprocess.run(["fdtget", "-l", dtb, "/soc"], capture_output=True, text=True)
    found = {}
    for child in r.stdout.split():
        path = f"/soc/{child}"
        for c in fdtget(dtb, path, "compatible", "s") or []:
            if c in NODES:
                found[c] = path
    return found


def check_dtb(dtb, platform):
    """Problems with the PL device nodes of `dtb`, one string each."""
    mm, irq = platform["memmap"], platform["irq"]
    plic = f"/soc/interrupt-controller@{mm['plic']['base']:x}"
    plic_phandle = fdtget(dtb, plic, "phandle")
    found = find_nodes(dtb)
    errors = []
    for compat, (key, ints) in NODES.items():
        node = found.get(compat)
        if node is None:
            errors.append(f"no node with compatible \"{compat}\" under /soc")
            continue
        reg = [mm[key]["base"], mm[key]["size"]]
        if fdtget(dtb, node, "reg") != reg:
            errors.append(f"{node}: reg is {fdtget(dtb, node, 'reg')}, platform.toml says {reg}")
        names = fdtget(dtb, node, "interrupt-names", "s")
        have = fdtget(dtb, node, "interrupts") or []
        if names is not None and len(names) == len(have):
            have = [have[names.index(n)] if n in names else None for n, _ in ints]
        want = [irq[k] for _, k in ints]
        if have != want:
            errors.append(f"{node}: interrupts {[n for n, _ in ints]} are {have}, platform.toml says {want}")
        if plic_phandle is None or fdtget(dtb, node, "interrupt-parent") != plic_phandle:
            errors.append(f"{node}: interrupt-parent is not the PLIC at {plic}")
    return errors


def node_lines(text):
    """(first, last) line numbers (1-based) of each dma@/ethernet@ node in DTS text."""
    spans, start, depth = [], None, 0
    for n, line in enumerate(text.splitlines(), 1):
        if start is None and re.search(r"\b(dma|ethernet)@[0-9a-fA-F]+\s*\{", line):
            start, depth = n, 0
        if start is not None:
            depth += line.count("{") - line.count("}")
            if depth <= 0:
                spans.append((start, n))
                start = None
    return spans


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", required=True)
    ap.add_argument("--board", required=True)
    ap.add_argument("--soc-dts")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    with open(args.platform, "rb") as f:
        platform = tomllib.load(f)
    if args.soc_dts:
        with open(args.soc_dts) as f:
            text = f.read()
    else:
        with open(os.path.join(FPGA, "dts", "stub-soc.dts")) as f:
            text = f.read().format(**fields(platform))
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w") as f:
        f.write(text)
    dtb = os.path.splitext(args.output)[0] + ".dtb"
    r = subprocess.run(["dtc", "-I", "dts", "-O", "dtb", "-o", dtb, args.output], capture_output=True, text=True)
    # Warnings about rocket-chip's own nodes are hw/'s business; ones in the PL devices' nodes
    # are errors.
    spans = node_lines(text)
    own = [w for w in r.stderr.splitlines()
           if (m := re.match(r".*?:(\d+)\.\d+-\d+\.\d+: ", w)) and any(a <= int(m.group(1)) <= b for a, b in spans)]
    if r.returncode != 0 or own:
        sys.exit(f"board_dts: dtc on {args.output}:\n" + ("\n".join(own) or r.stderr))
    errors = check_dtb(dtb, platform)
    for e in errors:
        print(f"board_dts: {e}", file=sys.stderr)
    if errors:
        sys.exit(1)
    print(f"board_dts: ok: {dtb} ({'SoC DTS' if args.soc_dts else 'stub SoC'}: AXI DMA and Ethernet as platform.toml says)")


if __name__ == "__main__":
    main()
