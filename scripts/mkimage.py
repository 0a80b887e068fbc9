#!/usr/bin/env python3
"""Assemble a bootable flat image from ELF files, as described by an image manifest.

The manifest (sw/image.toml) lists the parts in load order; each ELF's PT_LOAD segments are
placed at their physical addresses (p_paddr) relative to the image base, gaps zero-filled.
The result is what QEMU takes as -bios and what the Verilator harness and the board loader
copy to DRAM at 0x8000_0000.

  mkimage.py --manifest sw/image.toml --elf firmware=path --elf kernel=path -o image.bin
  mkimage.py --flat kernel.elf -o kernel.bin     (one ELF to a flat binary, e.g. for -kernel)
"""
import argparse
import struct
import sys
import os
import tomllib

PLATFORM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "platform", "platform.toml")

PT_LOAD = 1


def load_segments(path):
    """(paddr, bytes, memsz) of every PT_LOAD segment of a little-endian ELF64."""
    data = open(path, "rb").read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        sys.exit(f"{path}: not a little-endian ELF64 file")
    (e_phoff,) = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    segs = []
    for i in range(e_phnum):
        p_type, _flags, p_offset, _vaddr, p_paddr, p_filesz, p_memsz, _align = struct.unpack_from(
            "<IIQQQQQQ", data, e_phoff + i * e_phentsize)
        if p_type == PT_LOAD and p_memsz:
            segs.append((p_paddr, data[p_offset:p_offset + p_filesz], p_memsz))
    if not segs:
        sys.exit(f"{path}: no loadable segments")
    return segs


def place(image, base, segs, window, name):
    """Copy segments into the image (which starts at `base`); each must lie inside `window`."""
    lo, hi = window
    for paddr, blob, memsz in segs:
        off = paddr - base
        if paddr < max(lo, base) or paddr + memsz > hi:
            sys.exit(f"{name}: segment {paddr:#x}+{memsz:#x} is outside its window [{lo:#x}, {hi:#x})")
        end = off + len(blob)
        if len(image) < end:
            image.extend(bytes(end - len(image)))
        image[off:end] = blob


NAME_LEN = 32


def module_table(files, magic):
    """The boot-module window: header, entries, then each file 4 KiB aligned (sw/lib/bootmods)."""
    header = struct.pack("<QQ", magic, len(files))
    off = (16 + len(files) * (NAME_LEN + 16) + 4095) & ~4095
    entries, blobs = b"", bytearray()
    for name, data in files:
        if len(name.encode()) >= NAME_LEN:
            sys.exit(f"mkimage: module name '{name}' is too long")
        entries += name.encode().ljust(NAME_LEN, b"\0") + struct.pack("<QQ", off + len(blobs), len(data))
        blobs += data + bytes((-len(data)) % 4096)
    table = header + entries
    return table + bytes(off - len(table)) + bytes(blobs)


def flat(elf):
    segs = load_segments(elf)
    base = min(p for p, _, _ in segs)
    image = bytearray()
    place(image, base, segs, (base, 1 << 64), elf)
    return bytes(image)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--manifest")
    ap.add_argument("--elf", action="append", default=[], metavar="PART=PATH")
    ap.add_argument("--flat", metavar="ELF")
    ap.add_argument("--part-out", action="append", default=[], metavar="PART=PATH",
                    help="also write one part's window (e.g. the boot modules) to its own file")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    if args.flat:
        open(args.output, "wb").write(flat(args.flat))
        return
    if not args.manifest:
        ap.error("--manifest or --flat is required")
    manifest = tomllib.load(open(args.manifest, "rb"))
    consts = tomllib.load(open(PLATFORM, "rb"))

    def value(v):
        # Strings name platform constants ("image.firmware_base"): one source of truth.
        if isinstance(v, str):
            section, key = v.split(".", 1)
            return consts[section][key]
        return v

    paths = dict(e.split("=", 1) for e in args.elf)
    base = value(manifest["image"]["base"])
    image = bytearray()
    part_out = {}
    for part in manifest["part"]:
        name = part["name"]
        window = (value(part["base"]), value(part["base"]) + value(part["size"]))
        if part.get("kind") == "modules":
            # Whole ELF files the kernel loads itself (the root task first).
            missing = [m for m in part["modules"] if m not in paths]
            if missing:
                sys.exit(f"mkimage: no --elf given for modules {missing}")
            blob = module_table([(m, open(paths[m], "rb").read()) for m in part["modules"]],
                                value("image.modules_magic"))
            place(image, base, [(window[0], blob, len(blob))], window, name)
            part_out[name] = blob
            continue
        if name not in paths:
            sys.exit(f"mkimage: no --elf given for part '{name}'")
        place(image, base, load_segments(paths[name]), window, name)
    open(args.output, "wb").write(bytes(image))
    print(f"mkimage: {args.output}: {len(image)} bytes at {base:#x}")
    for spec in args.part_out:
        name, path = spec.split("=", 1)
        if name not in part_out:
            sys.exit(f"mkimage: --part-out: no modules part named '{name}'")
        open(path, "wb").write(part_out[name])


if __name__ == "__main__":
    main()
