#!/usr/bin/env python3
"""The port list of the generated SoC top (UintrSystem), from its Verilog or from a model.

The block design depends on the top's ports. Two sources, so that the checks run with and
without `make -C hw verilog` having run:

  parse(path, module)   the ANSI port list of `module` in a Verilog file (FIRRTL's output, or our
                        wrapper; `(* X_INTERFACE_INFO = "... IF SIG" *)` attributes are kept)
  model(platform)       what rocket-chip 1.2.6 emits for hw/soc (UintrSystem with WithUintrPorts):
                        address widths from platform.toml, ID and data widths from Configs.scala

Used as a library by gen_wrapper.py and check_soc.py, and on the command line:
  soc_ports.py --verilog UintrSystem.v [--module UintrSystem]    print the parsed ports
  soc_ports.py --model platform.toml [--stub]                     print the model (as a Verilog stub)
"""
import argparse
import re
import sys
import tomllib
from dataclasses import dataclass, field

# The three AXI4 bundles hw/soc/Configs.scala (WithUintrPorts) asks rocket-chip for. Role is seen
# from the SoC: a "master" bundle drives AW/W/AR. ID and data widths are set in Configs.scala,
# not in platform.toml, so they are repeated here (checked against the Verilog when it exists).
BUNDLES = {
    # rocket prefix            role      ID  data  address range in platform.toml
    "mem_axi4_0":             ("master", 4, 64, "dram"),
    "mmio_axi4_0":            ("master", 4, 64, "mmio_port"),
    "l2_frontend_bus_axi4_0": ("slave",  8, 64, None),     # reaches the whole map: widest address
}

# AXI4 fields per channel as rocket-chip 1.2.6 names them (<prefix>_<ch>_bits_<field>); None =
# width depends on the bundle (id, addr, data, strb).
CHANNELS = {
    "aw": [("id", None), ("addr", None), ("len", 8), ("size", 3), ("burst", 2), ("lock", 1),
           ("cache", 4), ("prot", 3), ("qos", 4)],
    "w":  [("data", None), ("strb", None), ("last", 1)],
    "b":  [("id", None), ("resp", 2)],
    "ar": [("id", None), ("addr", None), ("len", 8), ("size", 3), ("burst", 2), ("lock", 1),
           ("cache", 4), ("prot", 3), ("qos", 4)],
    "r":  [("id", None), ("data", None), ("resp", 2), ("last", 1)],
}
FORWARD = {"aw", "w", "ar"}     # channels the master drives


@dataclass
class Port:
    name: str
    direction: str               # "input" / "output"
    width: int
    attrs: dict = field(default_factory=dict)   # X_INTERFACE_INFO etc., for the wrapper


def _range_width(text):
    if not text:
        return 1
    m = re.fullmatch(r"\[\s*(\d+)\s*:\s*(\d+)\s*\]", text.strip())
    if not m:
        raise ValueError(f"unsupported range {text!r}")
    return abs(int(m.group(1)) - int(m.group(2))) + 1


PORT_RE = re.compile(r"^\s*((?:\(\*.*?\*\)\s*)*)(input|output|inout)\s+(?:wire\s+|reg\s+)?(\[[^\]]+\])?\s*(\w+)\s*,?\s*(//.*)?$")
ATTR_RE = re.compile(r'\(\*\s*(\w+)\s*=\s*"([^"]*)"\s*\*\)')


def parse(path, module):
    """Ports of `module` in `path`, in declaration order. ANSI headers only (what FIRRTL and our
    generator write): one port per line, attributes on the same or the preceding lines."""
    with open(path, errors="replace") as f:
        text = f.read()
    m = re.search(r"^\s*module\s+" + re.escape(module) + r"\s*\(", text, re.M)
    if not m:
        raise ValueError(f"{path}: module {module} not found")
    end = text.find(");", m.end())
    if end < 0:
        raise ValueError(f"{path}: port list of {module} is not closed")
    ports, pending = [], {}
    for line in text[m.end():end].splitlines():
        if not line.strip() or line.strip().startswith("//"):
            continue
        pm = PORT_RE.match(line)
        if pm:
            attrs = dict(pending)
            attrs.update(ATTR_RE.findall(pm.group(1)))
            ports.append(Port(pm.group(4), pm.group(2), _range_width(pm.group(3)), attrs))
            pending = {}
        elif ATTR_RE.search(line) and ATTR_RE.sub("", line).strip() == "":
            pending.update(ATTR_RE.findall(line))
        else:
            raise ValueError(f"{path}: cannot parse port line of {module}: {line.strip()!r}")
    if not ports:
        raise ValueError(f"{path}: {module} has no ports")
    return ports


def load_platform(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def addr_bits(platform, region):
    """Address width rocket-chip gives a port: enough bits for the highest address behind it."""
    mm = platform["memmap"]
    if region is None:
        top = max(v["base"] + v["size"] for v in mm.values() if isinstance(v, dict)) - 1
    else:
        top = mm[region]["base"] + mm[region]["size"] - 1
    return top.bit_length()


def model(platform):
    """The ports UintrSystem should have, in rocket-chip 1.2.6's naming."""
    ports = [Port("clock", "input", 1), Port("reset", "input", 1),
             Port("interrupts", "input", platform["irq"]["count"])]
    for prefix, (role, id_bits, data_bits, region) in BUNDLES.items():
        widths = {"id": id_bits, "addr": addr_bits(platform, region), "data": data_bits,
                  "strb": data_bits // 8}
        for ch, fields in CHANNELS.items():
            drives = (ch in FORWARD) == (role == "master")
            out, inn = ("output", "input") if drives else ("input", "output")
            ports.append(Port(f"{prefix}_{ch}_ready", inn, 1))
            ports.append(Port(f"{prefix}_{ch}_valid", out, 1))
            for name, w in fields:
                ports.append(Port(f"{prefix}_{ch}_bits_{name}", out, w or widths[name]))
    return ports


def split_axi(name):
    """'mem_axi4_0_aw_bits_addr' -> ('mem_axi4_0', 'aw', 'addr'); 'x_aw_valid' -> (.., 'valid')."""
    for prefix in BUNDLES:
        if name.startswith(prefix + "_"):
            rest = name[len(prefix) + 1:]
            m = re.fullmatch(r"(aw|w|b|ar|r)_(?:bits_)?(\w+)", rest)
            if m:
                return prefix, m.group(1), m.group(2)
    return None


def stub(ports, module):
    """An empty module with these ports, so the wrapper can be linted without the real SoC."""
    decl = ",\n".join(f"  {p.direction} {f'[{p.width - 1}:0] ' if p.width > 1 else ''}{p.name}" for p in ports)
    outs = "\n".join(f"  assign {p.name} = {p.width}'d0;" for p in ports if p.direction == "output")
    return f"// port stub of {module} (soc_ports.py model)\nmodule {module} (\n{decl}\n);\n{outs}\nendmodule\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verilog")
    ap.add_argument("--module", default="UintrSystem")
    ap.add_argument("--model", metavar="PLATFORM_TOML")
    ap.add_argument("--stub", action="store_true", help="print an empty Verilog module with these ports")
    args = ap.parse_args()
    if bool(args.verilog) == bool(args.model):
        ap.error("give exactly one of --verilog, --model")
    ports = parse(args.verilog, args.module) if args.verilog else model(load_platform(args.model))
    if args.stub:
        sys.stdout.write(stub(ports, args.module))
        return
    for p in ports:
        print(f"{p.direction:6} {p.width:3} {p.name}")


if __name__ == "__main__":
    try:
        main()
    except ValueError as e:
        sys.exit(f"soc_ports: {e}")
