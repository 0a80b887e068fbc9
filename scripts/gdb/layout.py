"""Where each program of an image lives, for the debugger: pure Python, no GDB needed.

An image manifest (sw/image.toml, or a system's app.toml naming it as `layout`) lists the
firmware, the kernel and the processes; mkimage.py packs their ELFs. Each ELF is linked at the
addresses it runs at (the firmware physical, the kernel in its Sv39 window, each process in its
own address space from 0x10000), so its symbols load at its own section addresses. Processes
share user addresses: only one of them can be the debugger's user-space view at a time.
"""
import os
import struct
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import mkimage  # noqa: E402  (process_records: the manifest's processes and their ELF names)


class Program:
    """One ELF of the image: its role, name, file, .text address and loaded address ranges."""

    def __init__(self, role, name, path):
        self.role, self.name, self.path = role, name, path
        self.text, self.ranges = elf_layout(path)

    def overlaps(self, other):
        return any(a < d and c < b for a, b in self.ranges for c, d in other.ranges)

    def __repr__(self):
        return f"Program({self.role}, {self.name}, text={self.text:#x})"


def elf_layout(path):
    """(.text address, [(start, end) of every PT_LOAD segment by virtual address]) of an ELF64."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path}: not a little-endian ELF64 file")
    e_phoff, e_shoff = struct.unpack_from("<QQ", data, 0x20)
    e_phentsize, e_phnum, e_shentsize, e_shnum, e_shstrndx = struct.unpack_from("<HHHHH", data, 0x36)
    ranges = []
    for i in range(e_phnum):
        p_type, _, _, p_vaddr, _, _, p_memsz, _ = struct.unpack_from("<IIQQQQQQ", data, e_phoff + i * e_phentsize)
        if p_type == mkimage.PT_LOAD and p_memsz:
            ranges.append((p_vaddr, p_vaddr + p_memsz))
    sections = [struct.unpack_from("<IIQQQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)]
    strtab = sections[e_shstrndx][4] if e_shnum else 0
    text = None
    for name_off, _, _, addr, _, _ in sections:
        end = data.index(b"\0", strtab + name_off)
        if data[strtab + name_off:end] == b".text":
            text = addr
    if text is None:
        text = min(r[0] for r in ranges) if ranges else 0
    return text, ranges


def manifest_programs(manifest_path):
    """[(role, name, elf name)] in load order: firmware, kernel, then every process."""
    with open(manifest_path, "rb") as f:
        manifest = tomllib.load(f)
    if "layout" in manifest:
        with open(os.path.join(os.path.dirname(manifest_path), manifest["layout"]), "rb") as f:
            manifest = {**manifest, "part": tomllib.load(f)["part"]}
    out = []
    for part in manifest["part"]:
        if part.get("kind") == "modules":
            for name, elf, _ in mkimage.process_records(manifest.get("process", {})):
                out.append(("process", name, elf))
        else:
            out.append((part["name"], part["name"], part["name"]))
    return out


def resolve(manifest_path, elf_dir, overrides=None):
    """The image's Programs: each ELF from overrides {elf name: path} or ELF_DIR/<elf>.elf.
    Raises FileNotFoundError naming every ELF that is missing."""
    overrides = overrides or {}
    entries = manifest_programs(manifest_path)
    paths = {elf: overrides.get(elf, os.path.join(elf_dir, f"{elf}.elf")) for _, _, elf in entries}
    missing = [f"{elf} ({p})" for elf, p in paths.items() if not os.path.exists(p)]
    if missing:
        raise FileNotFoundError("no ELF for " + ", ".join(missing) + "; give NAME=PATH for each")
    return [Program(role, name, paths[elf]) for role, name, elf in entries]


def symbol_plan(programs, user=None):
    """The symbol files to load: (program, loaded?) for each. The firmware and kernel always;
    of processes that overlap in user space only `user` (default the first, the root task),
    and every process that overlaps none of the loaded ones."""
    plan, loaded = [], []
    procs = [p for p in programs if p.role == "process"]
    if user is not None and user not in [p.name for p in procs]:
        raise KeyError(f"no process '{user}'; the image has {[p.name for p in procs]}")
    first = next((p for p in procs if p.name == user), procs[0] if procs else None)
    for p in programs:
        if p.role != "process":
            plan.append((p, True))
            continue
        take = p is first or (not any(p.overlaps(q) for q in loaded) and (first is None or not p.overlaps(first)))
        if take:
            loaded.append(p)
        plan.append((p, take))
    return plan


def gdb_commands(plan):
    """GDB commands that load the plan: the kernel as the main symbol file (its types serve
    uintr-threads), every other loaded program with add-symbol-file at its .text address."""
    cmds = []
    for p, take in plan:
        if not take:
            continue
        if p.role == "kernel":
            cmds.insert(0, f"symbol-file {p.path}")
        else:
            # .text at its own link address: the other sections keep theirs (offset 0).
            cmds.append(f"add-symbol-file {p.path} {p.text:#x}")
    return cmds
