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
PT_PHDR = 6


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
ENTRY_LEN = 128
MAX_CAPS = 8
ANY_HART = 0xFFFF
NO_FAULT = 0xFF
CAP_KINDS = {"endpoint": 1, "notification": 2}
RIGHTS = {"write": 1, "read": 2, "grant": 4, "grant-reply": 8}


def strip_elf(data, name="module"):
    """What a loader reads of an ELF file: the headers and the bytes of its segments. Section
    headers, symbols and debug info (most of a release build with debug = true) stay behind,
    so the kernel maps a few pages per module instead of megabytes."""
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1 or len(data) < 64:
        sys.exit(f"mkimage: {name}: not a little-endian ELF64 file")
    (e_phoff,) = struct.unpack_from("<Q", data, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", data, 0x36)
    keep = max(64, e_phoff + e_phentsize * e_phnum)
    if keep > len(data):
        sys.exit(f"mkimage: {name}: program headers past the end of the file")
    phdrs = [(e_phoff + i * e_phentsize,) + struct.unpack_from("<IIQQQQ", data, e_phoff + i * e_phentsize)
             for i in range(e_phnum)]
    for _at, p_type, _f, p_offset, _v, _p, p_filesz in phdrs:
        if p_type in (PT_LOAD, PT_PHDR):
            keep = max(keep, p_offset + p_filesz)
    if keep > len(data):
        sys.exit(f"mkimage: {name}: a segment lies past the end of the file")
    out = bytearray(data[:keep])
    for at, p_type, _f, p_offset, _v, _p, p_filesz in phdrs:
        # Other segments (e.g. RISC-V attributes) point at sections left behind: PT_NULL.
        if p_type not in (PT_LOAD, PT_PHDR) and p_offset + p_filesz > keep:
            struct.pack_into("<I", out, at, 0)
    struct.pack_into("<Q", out, 0x28, 0)        # e_shoff: no section headers
    struct.pack_into("<HH", out, 0x3C, 0, 0)    # e_shnum, e_shstrndx
    return bytes(out)


def process_records(processes):
    """Each process of the manifest as a module-table record (sw/lib/bootmods): how it runs
    and which named endpoints/notifications it is given. Names of those objects become indices
    in order of first mention, so every process naming "hello" shares one endpoint."""
    objects, records = {}, []
    for name, p in processes.items():
        unknown = set(p) - {"elf", "hart", "priority", "stack-pages", "cnode-bits", "caps"}
        if unknown:
            sys.exit(f"mkimage: process '{name}': unknown keys {sorted(unknown)}")
        caps, fault = [], NO_FAULT
        for i, c in enumerate(p.get("caps", [])):
            kinds = [k for k in CAP_KINDS if k in c]
            if len(kinds) != 1:
                sys.exit(f"mkimage: process '{name}': cap {i} must name one of {sorted(CAP_KINDS)}")
            kind = kinds[0]
            key = (kind, c[kind])
            if key in objects and objects[key][0] != kind:
                sys.exit(f"mkimage: '{c[kind]}' is both an endpoint and a notification")
            objects.setdefault(key, (kind, len(objects)))
            rights = 0
            for r in c.get("rights", list(RIGHTS)):
                if r not in RIGHTS:
                    sys.exit(f"mkimage: process '{name}': unknown right '{r}'")
                rights |= RIGHTS[r]
            badge = c.get("badge", 0)
            if not 0 <= badge < 1 << 32:
                sys.exit(f"mkimage: process '{name}': badge {badge} does not fit 32 bits")
            if c.get("fault", False):
                if kind != "endpoint" or fault != NO_FAULT:
                    sys.exit(f"mkimage: process '{name}': one fault endpoint at most, and an endpoint")
                fault = i
            caps.append((CAP_KINDS[kind], rights, objects[key][1], badge))
        if len(caps) > MAX_CAPS:
            sys.exit(f"mkimage: process '{name}': more than {MAX_CAPS} caps")
        hart = p.get("hart", ANY_HART)
        prio = p.get("priority", 100)
        stack = p.get("stack-pages", 4)
        bits = p.get("cnode-bits", 6)
        if not (0 <= hart <= ANY_HART and 0 <= prio <= 255 and 1 <= stack <= 256 and 4 <= bits <= 12):
            sys.exit(f"mkimage: process '{name}': hart, priority, stack-pages or cnode-bits out of range")
        rec = struct.pack("<HBBHBBQ", hart, prio, bits, stack, len(caps), fault, 0)
        rec += b"".join(struct.pack("<BBHI", *c) for c in caps)
        records.append((name, p.get("elf", name), rec.ljust(ENTRY_LEN - NAME_LEN - 16, b"\0")))
    return records


def module_table(files, magic):
    """The boot-module window: header, entries, then each file 4 KiB aligned (sw/lib/bootmods).
    `files` are (name, bytes) or (name, bytes, process record)."""
    header = struct.pack("<QQ", magic, len(files))
    off = (16 + len(files) * ENTRY_LEN + 4095) & ~4095
    entries, blobs = b"", bytearray()
    for f in files:
        name, data = f[0], f[1]
        rec = f[2] if len(f) > 2 else process_records({name: {}})[0][2]
        if len(name.encode()) >= NAME_LEN:
            sys.exit(f"mkimage: module name '{name}' is too long")
        entries += name.encode().ljust(NAME_LEN, b"\0") + struct.pack("<QQ", off + len(blobs), len(data)) + rec
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
    if "layout" in manifest:
        # A system's own manifest (Hubris's app.toml): its processes, with the image layout
        # ([image], [[part]]) of the manifest it names (relative to its own folder).
        layout = tomllib.load(open(os.path.join(os.path.dirname(args.manifest), manifest["layout"]), "rb"))
        manifest = {**manifest, "image": layout["image"], "part": layout["part"]}
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
            # Every process of the manifest, the root task first (the kernel starts it; it
            # starts the others from the boot info with userlib::process).
            procs = manifest.get("process", {})
            if next(iter(procs), None) != "roottask":
                sys.exit("mkimage: the first [process.*] must be 'roottask'")
            records = process_records(procs)
            missing = [elf for _, elf, _ in records if elf not in paths]
            if missing:
                sys.exit(f"mkimage: no --elf given for processes {missing}")
            blob = module_table([(n, strip_elf(open(paths[elf], "rb").read(), elf), rec) for n, elf, rec in records],
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
