#!/usr/bin/env python3
"""Check the Vivado flow without Vivado: run build.tcl under the stub Vivado (vivado_stub.tcl),
then compare the recorded block design with the shared constants and the RTL wrapper.

  check_bd.py --gen GEN_DIR --work WORK_DIR --platform platform.toml --board board.toml [--design D]

GEN_DIR is what the Makefile generated for Vivado (platform.tcl, board.tcl, sources.f,
rocket_soc.v). The stub already fails on unknown cells, pins, interfaces, CONFIG keys, address
overlaps, unconnected required pins, multiply-driven nets and XDC ports that do not exist. This
script adds what needs the constants from platform.toml/board.toml, read here independently of
the generated Tcl: the address map, the interrupt order, the clock frequencies, the reset
wiring, the DRAM remap in the wrapper. --design names the block design (tcl/designs.tcl; default
net, the one with the Ethernet; minimal has no DMA, Ethernet or oscillator clocks, and the check
requires their absence). Exit status 1 and one line per problem on failure.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FPGA = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import soc_ports  # noqa: E402

# PLIC source name (platform.toml [irq]) -> the pin that must drive it. Written here, not read
# from irq.tcl, so that the two are compared.
IRQ_SOURCES = {
    "uart": "uart/ip2intc_irpt",
    "eth_mac": "eth/mac_irq",
    "eth": "eth/interrupt",
    "dma_tx": "dma/mm2s_introut",
    "dma_rx": "dma/s2mm_introut",
}
# What each design has (tcl/designs.tcl): the Ethernet brings the DMA, the MAC and clk_eth.
DESIGNS = ("net", "minimal")
ETHERNET_CELLS = ("dma", "eth", "dma_ic", "clk_eth")
UART16550_REG_OFFSET = 0x1000   # PG143: the 16550 registers sit at +0x1000 of the AXI block


def module_catalog(wrapper):
    """Tcl describing rocket_soc for the stub, parsed from the generated wrapper's attributes.
    Slave interfaces are optional: Vivado ties an unconnected one's inputs to 0 (BD 41-759), an
    idle port; check() requires S_AXI_DMA where the design has a DMA."""
    ports = soc_ports.parse(wrapper, "rocket_soc")
    pins, intfs, seen = [], [], {}
    for p in ports:
        info = p.attrs.get("X_INTERFACE_INFO", "")
        m = re.fullmatch(r"xilinx\.com:interface:aximm:1\.0 (\w+) (\w+)", info)
        if m:
            name, sig = m.groups()
            if sig == "AWVALID":
                seen[name] = "master" if p.direction == "output" else "slave"
        else:
            pins += [p.name, "I!" if p.direction == "input" else "O"]
    for name, mode in seen.items():
        intfs += [name, mode + ("!" if mode == "master" else "")]
    spaces = [n for n, m in seen.items() if m == "master"]
    segs = []
    for n, m in seen.items():
        if m == "slave":
            segs += [n, "reg0"]
    return ("set stub_module(rocket_soc) {\n"
            f"    pins   {{{' '.join(pins)}}}\n    intfs  {{{' '.join(intfs)}}}\n"
            f"    spaces {{{' '.join(spaces)}}}\n    segs   {{{' '.join(segs)}}}\n    config {{}}\n}}\n")


def run_stub(gen, work, env_extra, design="net"):
    os.makedirs(work, exist_ok=True)
    modules = os.path.join(work, "modules.tcl")
    with open(modules, "w") as f:
        f.write(module_catalog(os.path.join(gen, "rocket_soc.v")))
    log = os.path.join(work, "stub-log.jsonl")
    cmd = ["tclsh", os.path.join(HERE, "vivado_stub.tcl"), os.path.join(HERE, "ipcatalog.tcl"), modules, log,
           os.path.join(FPGA, "tcl", "build.tcl"), gen, os.path.join(work, "out"), design]
    env = dict(os.environ, **env_extra)
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stdout + r.stderr)
        return None
    with open(log) as f:
        return [json.loads(line) for line in f]


def check(records, platform, board, wrapper, design="net"):
    errors = []
    ethernet = design == "net"
    mm, ps, irq, clock = platform["memmap"], board["ps"], platform["irq"], platform["clock"]
    cells = {r["name"]: r for r in records if r["kind"] == "cell"}
    cfg = {n: dict(zip(c["config"][::2], c["config"][1::2])) for n, c in cells.items()}
    nets = [set(r["members"]) for r in records if r["kind"] == "net"]

    def net_of(pin):
        for n in nets:
            if "pin:" + pin in n or "port:" + pin in n:
                return n
        return set()

    def same_net(a, b, why):
        if "pin:" + b not in net_of(a) and "port:" + b not in net_of(a):
            errors.append(f"{why}: {a} and {b} are not on one net")

    # Address map: exactly these assignments, at the constants' values.
    expect = {
        ("rocket/M_AXI_MMIO", "uart/S_AXI"): mm["axi_uart"],
        ("rocket/M_AXI_MEM", "ps/SAXIGP2"): ps["ddr_low"],
        ("ps/Data", "reset_gpio/S_AXI"): ps["reset_gpio"],
        ("ps/Data", "console_tap/S_AXI"): ps["console_tap"],
    }
    if ethernet:
        expect[("rocket/M_AXI_MMIO", "dma/S_AXI_LITE")] = mm["dma"]
        expect[("rocket/M_AXI_MMIO", "eth/s_axi")] = mm["ethernet"]
        for space in ("dma/Data_SG", "dma/Data_MM2S", "dma/Data_S2MM"):
            expect[(space, "rocket/S_AXI_DMA")] = mm["dma_port"]
    else:
        for cell in ETHERNET_CELLS:
            if cell in cells:
                errors.append(f"design {design}: has cell {cell}, which only the net design may have")
    got = {}
    for r in records:
        if r["kind"] == "addr":
            key = (r["space"], "/".join(r["seg"].split("/")[:2]))
            got[key] = {"base": int(r["offset"]), "size": int(r["range"])}
    for key, want in expect.items():
        have = got.pop(key, None)
        if have is None:
            errors.append(f"address map: {key[1]} is not mapped in {key[0]}")
        elif have != {"base": want["base"], "size": want["size"]}:
            errors.append(f"address map: {key[1]} in {key[0]} at {have['base']:#x}+{have['size']:#x}, "
                          f"constants say {want['base']:#x}+{want['size']:#x}")
    for key in got:
        errors.append(f"address map: unexpected assignment of {key[1]} in {key[0]}")
    port = mm["mmio_port"]
    for dev in ("axi_uart", "dma", "ethernet"):
        d = mm[dev]
        if not (port["base"] <= d["base"] and d["base"] + d["size"] <= port["base"] + port["size"]):
            errors.append(f"memmap.{dev} lies outside memmap.mmio_port")
    if mm["uart"]["base"] != mm["axi_uart"]["base"] + UART16550_REG_OFFSET:
        errors.append("memmap.uart must be memmap.axi_uart + 0x1000 (AXI UART16550 register offset)")
    win, low = ps["dram_window"], ps["ddr_low"]
    if not (low["base"] <= win["base"] and win["base"] + win["size"] <= low["base"] + low["size"]):
        errors.append("ps.dram_window lies outside ps.ddr_low, the PS DDR segment the memory port reaches")
    if mm["dma_port"] != mm["dram"]:
        errors.append("memmap.dma_port differs from memmap.dram: the DMA window must be exactly DRAM")

    # Interrupts: PLIC source n is line n-1 of rocket/interrupts.
    if int(cfg.get("irq_concat", {}).get("NUM_PORTS", "-1")) != irq["count"]:
        errors.append(f"irq_concat has {cfg.get('irq_concat', {}).get('NUM_PORTS')} inputs, irq.count is {irq['count']}")
    same_net("irq_concat/dout", "rocket/interrupts", "interrupts")
    used = set()
    for name, pin in IRQ_SOURCES.items():
        if not ethernet and name != "uart":
            continue
        line = irq[name] - 1
        used.add(line)
        same_net(pin, f"irq_concat/In{line}", f"PLIC source {irq[name]} ({name})")
    for line in range(irq["count"]):
        if line not in used:
            same_net("const_0/dout", f"irq_concat/In{line}", f"spare PLIC source {line + 1}")

    # Clocks: one fabric clock at core_hz for Rocket, the UART (whose baud divisor software
    # computes from clock.uart_hz) and the PS ports; the Ethernet clocks from the oscillator.
    def mhz(hz):
        return f"{hz / 1e6:.3f}"
    checks = [("clk_fabric", "CLKOUT1_REQUESTED_OUT_FREQ", mhz(clock["core_hz"])),
              ("console_tap", "C_BAUDRATE", str(clock["uart_baud"])),
              ("rst_rocket", "C_AUX_RESET_HIGH", "0")]
    if ethernet:
        checks += [("clk_eth", "PRIM_IN_FREQ", mhz(board["pl"]["osc_hz"])),
                   ("clk_eth", "CLKOUT1_REQUESTED_OUT_FREQ", mhz(board["pl"]["idelay_ref_hz"])),
                   ("clk_eth", "CLKOUT2_REQUESTED_OUT_FREQ", mhz(board["pl"]["gtx_hz"])),
                   ("eth", "PHY_TYPE", "RGMII")]
    for cell, key, want in checks:
        have = cfg.get(cell, {}).get(key)
        if have != want:
            errors.append(f"{cell} CONFIG.{key} is {have}, expected {want}")
    if clock["uart_hz"] != clock["core_hz"]:
        errors.append("clock.uart_hz differs from clock.core_hz, but the UART is clocked by the fabric clock")
    for pin in ("rocket/clock", "uart/s_axi_aclk", "ps/saxihp0_fpd_aclk", "ps/maxihpm0_fpd_aclk"):
        same_net("clk_fabric/clk_out1", pin, "fabric clock")
    if ethernet:
        same_net("clk_fabric/clk_out1", "eth/axis_clk", "fabric clock")
        same_net("clk_eth/clk_out1", "eth/ref_clk", "IDELAY reference clock")
        same_net("clk_eth/clk_out2", "eth/gtx_clk", "GTX clock")
        intf_peers = {(r["a"], r["b"]) for r in records if r["kind"] == "intfnet"}
        if not intf_peers & {("intf:dma_ic/M00_AXI", "intf:rocket/S_AXI_DMA"), ("intf:rocket/S_AXI_DMA", "intf:dma_ic/M00_AXI")}:
            errors.append("DMA: rocket/S_AXI_DMA is not connected to dma_ic/M00_AXI")

    # Resets: the cores only run when the PS sets the GPIO run bit; the GPIO powers up at 0.
    same_net("rst_rocket/peripheral_reset", "rocket/reset", "RISC-V reset")
    same_net("reset_gpio/gpio_io_o", "rst_rocket/aux_reset_in", "RISC-V reset GPIO")
    dout = int(cfg.get("reset_gpio", {}).get("C_DOUT_DEFAULT", "1"), 0)
    if dout >> ps["run_bit"] & 1:
        errors.append("reset_gpio C_DOUT_DEFAULT releases the cores at configuration time")

    # Console: the PS tap listens on the RISC-V console TX line.
    same_net("uart/sout", "console_tap/rx", "console tap")
    same_net("uart/sout", "uart_tx", "console TX pin")

    # The wrapper's DRAM remap constant is the PS window.
    with open(wrapper) as f:
        text = f.read()
    m = re.search(r"PS_DRAM_WINDOW_BASE = \d+'h([0-9a-f]+)", text)
    m2 = re.search(r"DRAM_OFFSET_MASK = \d+'h([0-9a-f]+)", text)
    if not m or int(m.group(1), 16) != ps["dram_window"]["base"]:
        errors.append("rocket_soc.v: PS_DRAM_WINDOW_BASE is not ps.dram_window.base")
    if not m2 or int(m2.group(1), 16) != mm["dram"]["size"] - 1:
        errors.append("rocket_soc.v: DRAM_OFFSET_MASK is not memmap.dram.size - 1")

    # Flow: the timing check happens before the bitstream is written.
    steps = [r["step"] for r in records if r["kind"] == "flow"]
    for step in ("report_timing_summary", "write_bitstream", "write_hw_platform"):
        if step not in steps:
            errors.append(f"flow: {step} never ran")
    if not any(r["kind"] == "done" for r in records):
        errors.append("flow: build.tcl did not run to completion")
    return errors


def check_dtb(records, dtb):
    """The DTB's DMA and Ethernet nodes against the recorded block design."""
    import board_dts
    errors = []
    nets = [set(r["members"]) for r in records if r["kind"] == "net"]
    addr = {}
    for r in records:
        if r["kind"] == "addr" and r["space"] == "rocket/M_AXI_MMIO":
            addr["/".join(r["seg"].split("/")[:2])] = [int(r["offset"]), int(r["range"])]

    def source_of(pin):
        """PLIC source the interrupt pin drives (irq_concat input n is source n+1)."""
        for n in nets:
            if "pin:" + pin in n:
                for m in n:
                    if (x := re.fullmatch(r"pin:irq_concat/In(\d+)", m)):
                        return int(x.group(1)) + 1
        return None

    found = board_dts.find_nodes(dtb)
    bd = {"xlnx,axi-dma-1.00.a": ("dma/S_AXI_LITE", ["dma/mm2s_introut", "dma/s2mm_introut"]),
          "xlnx,axi-ethernet-1.00.a": ("eth/s_axi", ["eth/mac_irq", "eth/interrupt"])}
    for compat, (seg, pins) in bd.items():
        node = found.get(compat)
        if node is None:
            errors.append(f"DTB: no {compat} node")
            continue
        if board_dts.fdtget(dtb, node, "reg") != addr.get(seg):
            errors.append(f"DTB {node}: reg {board_dts.fdtget(dtb, node, 'reg')}, block design maps {seg} at {addr.get(seg)}")
        names = board_dts.fdtget(dtb, node, "interrupt-names", "s") or []
        ints = board_dts.fdtget(dtb, node, "interrupts") or []
        order = [n for n, _ in board_dts.NODES[compat][1]]
        dt = [ints[names.index(n)] if n in names and len(names) == len(ints) else None for n in order]
        want = [source_of(p) for p in pins]
        if dt != want:
            errors.append(f"DTB {node}: interrupts {order} are {dt}, the block design wires {pins} to PLIC sources {want}")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gen", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--platform", required=True)
    ap.add_argument("--board", required=True)
    ap.add_argument("--dtb", help="the board's device tree (board_dts.py output) to compare with the design")
    ap.add_argument("--design", choices=DESIGNS, default="net", help="block design (tcl/designs.tcl)")
    args = ap.parse_args()
    if args.dtb and args.design != "net":
        # The SoC's tree names the DMA and Ethernet whatever the design; only net has them.
        ap.error("--dtb compares the DMA and Ethernet nodes, which only the net design has")
    records = run_stub(args.gen, args.work, {}, args.design)
    if records is None:
        sys.exit("check_bd: the flow failed under the Vivado stub (message above)")
    errors = check(records, soc_ports.load_platform(args.platform), soc_ports.load_platform(args.board),
                   os.path.join(args.gen, "rocket_soc.v"), args.design)
    if args.dtb:
        errors += check_dtb(records, args.dtb)
    for e in errors:
        print(f"check_bd: {e}", file=sys.stderr)
    if errors:
        sys.exit(1)
    n = {k: sum(1 for r in records if r["kind"] == k) for k in ("cell", "net", "intfnet", "addr", "xdc")}
    print(f"check_bd: ok, design {args.design} ({n['cell']} cells, {n['net']} nets, {n['intfnet']} interface nets, "
          f"{n['addr']} address assignments, {n['xdc']} XDC properties{', DTB' if args.dtb else ''}) in {args.gen}")


if __name__ == "__main__":
    main()
