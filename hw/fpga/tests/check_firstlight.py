#!/usr/bin/env python3
"""Check the first-light boot pieces that can be checked without Xilinx tools:
  * rvstart.elf: one loadable segment, entry at its start, below the PS DRAM window (so the
    FSBL's copy of the RISC-V image cannot overwrite it), and its literal pool holds the reset
    GPIO's data register and its code stores the run bit (disassembled with objdump);
  * firstlight.bif.in filled by fill_boot.py: every field filled, the image loaded at the DRAM
    window, rvstart the first A53-0 partition after the bitstream (the FSBL hands off to it).

  check_firstlight.py --board board.toml --rvstart ELF --bif-in IN --fill fill_boot.py --work DIR
"""
import argparse
import os
import re
import subprocess
import sys
import tomllib

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
for flag in ("--board", "--rvstart", "--bif-in", "--fill", "--work"):
    ap.add_argument(flag, required=True)
ap.add_argument("--objdump", default="aarch64-linux-gnu-objdump")
args = ap.parse_args()
with open(args.board, "rb") as f:
    ps = tomllib.load(f)["ps"]
errors = []

headers = subprocess.run([args.objdump, "-p", "-f", args.rvstart], capture_output=True, text=True, check=True).stdout
loads = re.findall(r"LOAD off\s+\S+ vaddr (0x[0-9a-f]+)", headers)
entry = int(re.search(r"start address (0x[0-9a-f]+)", headers).group(1), 16)
window = ps["dram_window"]["base"]
if len(loads) != 1 or int(loads[0], 16) != entry:
    errors.append(f"rvstart: want one LOAD segment starting at the entry {entry:#x}, have {loads}")
if entry >= window:
    errors.append(f"rvstart: entry {entry:#x} is not below the DRAM window {window:#x}")
code = subprocess.run([args.objdump, "-d", args.rvstart], capture_output=True, text=True, check=True).stdout
gpio = ps["reset_gpio"]["base"] + ps["gpio_data"]
if not re.search(rf"\.word\s+{gpio:#010x}", code):
    errors.append(f"rvstart: the reset GPIO data register {gpio:#x} is not in its literal pool")
if not re.search(rf"mov\s+w1, #{1 << ps['run_bit']:#x}", code) or not re.search(r"str\s+w1, \[x0\]", code):
    errors.append("rvstart: no store of the run bit")

os.makedirs(args.work, exist_ok=True)
bif = os.path.join(args.work, "firstlight.bif")
fields = [f"{n}=/files/{n.lower()}" for n in ("FSBL", "PMUFW", "BIT", "RVSTART", "IMAGE")]
subprocess.run([sys.executable, args.fill, "--board", args.board, args.bif_in, bif, *fields], check=True)
with open(bif) as f:
    text = f.read()
if "@" in text:
    errors.append("bif: a field is left unfilled")
parts = re.findall(r"^\s*\[([^\]]*)\]\s*(\S+)", text, re.M)
names = [p for _, p in parts]
if names != ["/files/fsbl", "/files/pmufw", "/files/bit", "/files/rvstart", "/files/image"]:
    errors.append(f"bif: partitions in order {names}")
attrs = dict((p, a) for a, p in parts)
if f"load = {window:#010x}" not in attrs.get("/files/image", ""):
    errors.append(f"bif: the image is not loaded at the DRAM window {window:#x}")
if "a53-0" in attrs.get("/files/image", "") and names.index("/files/rvstart") > names.index("/files/image"):
    errors.append("bif: the image comes before rvstart among the A53-0 partitions")

for e in errors:
    print(f"check_firstlight: {e}", file=sys.stderr)
if errors:
    sys.exit(1)
print(f"check_firstlight: ok (rvstart at {entry:#x} releases the cores through {gpio:#x}; bif of {len(parts)} partitions)")
