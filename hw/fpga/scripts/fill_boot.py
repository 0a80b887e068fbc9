#!/usr/bin/env python3
"""Fill a boot template (@NAME@ fields) with addresses from board.toml.

  fill_boot.py --board board.toml IN OUT [NAME=TEXT ...]

Fields: GPIO_DATA, GPIO_TRI (absolute PS addresses of the reset GPIO registers), RUN_MASK,
DRAM_WINDOW (PS address of RISC-V DRAM), and each NAME=TEXT given (filled verbatim: the file
paths of a .bif). An unknown or unfilled @FIELD@ is an error.
"""
import argparse
import re
import sys
import tomllib

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--board", required=True)
ap.add_argument("input")
ap.add_argument("output")
ap.add_argument("fields", nargs="*", metavar="NAME=TEXT")
args = ap.parse_args()
with open(args.board, "rb") as f:
    ps = tomllib.load(f)["ps"]
values = {
    "GPIO_DATA": ps["reset_gpio"]["base"] + ps["gpio_data"],
    "GPIO_TRI": ps["reset_gpio"]["base"] + ps["gpio_tri"],
    "RUN_MASK": 1 << ps["run_bit"],
    "DRAM_WINDOW": ps["dram_window"]["base"],
}
texts = dict(field.split("=", 1) for field in args.fields)
with open(args.input) as f:
    text = f.read()


def sub(m):
    if m.group(1) in texts:
        return texts[m.group(1)]
    if m.group(1) not in values:
        sys.exit(f"fill_boot: {args.input}: unknown field @{m.group(1)}@")
    return f"{values[m.group(1)]:#010x}"


with open(args.output, "w") as f:
    f.write(re.sub(r"@(\w+)@", sub, text))
