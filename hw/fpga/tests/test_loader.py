#!/usr/bin/env python3
"""Run a host build of the PS loader against a sparse file standing in for /dev/mem.

  test_loader.py RVLOAD_HOST BOARD_TOML WORK_DIR

Checks that the image lands at ps.dram_window.base, that the reset GPIO ends with the run bit
set and all bits as outputs, that --hold clears the run bit, and that an image larger than the
window is refused without touching the GPIO.
"""
import os
import random
import subprocess
import sys
import tomllib

rvload, board_toml, work = sys.argv[1:4]
with open(board_toml, "rb") as f:
    ps = tomllib.load(f)["ps"]
os.makedirs(work, exist_ok=True)
mem = os.path.join(work, "physmem")
end = max(ps["reset_gpio"]["base"] + ps["reset_gpio"]["size"], ps["dram_window"]["base"] + ps["dram_window"]["size"])
with open(mem, "wb") as f:          # sparse: only the pages the loader touches take space
    f.truncate(end)
image = os.path.join(work, "image.bin")
data = random.Random(1).randbytes(12345)   # not a multiple of 8: exercises the padded tail
with open(image, "wb") as f:
    f.write(data)


def word(offset):
    with open(mem, "rb") as f:
        f.seek(offset)
        return int.from_bytes(f.read(4), "little")


failures = []
r = subprocess.run([rvload, "--mem", mem, image], capture_output=True, text=True)
if r.returncode != 0:
    failures.append(f"load failed: {r.stderr.strip()}")
with open(mem, "rb") as f:
    f.seek(ps["dram_window"]["base"])
    if f.read(len(data)) != data:
        failures.append("image is not at ps.dram_window.base")
gpio = ps["reset_gpio"]["base"]
if word(gpio + ps["gpio_data"]) != 1 << ps["run_bit"] or word(gpio + ps["gpio_tri"]) != 0:
    failures.append("reset GPIO does not release the cores after loading")

subprocess.run([rvload, "--mem", mem, "--hold"], capture_output=True, check=True)
if word(gpio + ps["gpio_data"]) != 0:
    failures.append("--hold does not clear the run bit")

with open(mem, "r+b") as f:          # set run bit, then try an oversized image
    f.seek(gpio + ps["gpio_data"])
    f.write((1 << ps["run_bit"]).to_bytes(4, "little"))
big = os.path.join(work, "big.bin")
with open(big, "wb") as f:
    f.truncate(ps["dram_window"]["size"] + 1)
r = subprocess.run([rvload, "--mem", mem, big], capture_output=True, text=True)
if r.returncode == 0 or "does not fit" not in r.stderr:
    failures.append("an image larger than the window was not refused")
if word(gpio + ps["gpio_data"]) != 1 << ps["run_bit"]:
    failures.append("a refused image stopped the running cores")

os.remove(mem)
for msg in failures:
    print(f"test_loader: {msg}", file=sys.stderr)
if failures:
    sys.exit(1)
print("test_loader: ok (load, verify, release, hold, oversize refused)")
