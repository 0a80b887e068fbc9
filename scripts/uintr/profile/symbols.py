"""pcs to functions: demangled symbols, DWARF line tables with inlined frames (llvm-addr2line
-i), and which ELF an address space runs (firmware for M-mode, kernel for S-mode, the user ELF
whose bytes match the instructions retired under a satp root)."""
import collections
import re
import shutil
import subprocess
import sys

from .data import PRIV, WFI_PC


def tool(*names):
    for n in names:
        if shutil.which(n):
            return n
    sys.exit(f"profile: none of {', '.join(names)} found")


HASH = re.compile(r"::h[0-9a-f]{16}$")
ADDR = re.compile(r"0x[0-9a-f]+")


LEGACY = [("$LT$", "<"), ("$GT$", ">"), ("$u20$", " "), ("$RF$", "&"), ("$BP$", "*"), ("$C$", ","),
          ("$u7b$", "{"), ("$u7d$", "}"), ("$u27$", "'"), ("$u5b$", "["), ("$u5d$", "]"), ("$u3b$", ";"),
          ("$u7e$", "~"), ("..", "::")]


def clean(name):
    """Drop the hash of a legacy-mangled Rust name and undo the escapes a demangler left."""
    name = HASH.sub("", name)
    if "$" in name:
        for a, b in LEGACY:
            name = name.replace(a, b)
        name = name.lstrip("_") if name.startswith("_<") else name
    return name


def sane(name):
    return name not in ("??", "") and not name.startswith(".L")


def demangle(names):
    names = list(names)
    if not names:
        return {}
    out = subprocess.run([tool("llvm-cxxfilt", "c++filt")], input="\n".join(names) + "\n",
                         capture_output=True, text=True, check=True).stdout.splitlines()
    return {n: clean(o) for n, o in zip(names, out)}


def addr2line(elf, addrs):
    """vaddr -> [(function, file:line)] innermost first (DWARF, with inlining)."""
    addrs = sorted(set(addrs))
    if not addrs:
        return {}
    exe = tool("llvm-addr2line", "riscv64-unknown-elf-addr2line")
    out = subprocess.run([exe, "-a", "-f", "-i", "-C", "-e", elf.path],
                         input="".join(f"{a:#x}\n" for a in addrs), capture_output=True, text=True, check=True).stdout
    res, cur, lines = {}, None, out.splitlines()
    i = 0
    while i < len(lines):
        l = lines[i]
        if ADDR.fullmatch(l):
            cur = int(l, 16)
            res[cur] = []
            i += 1
            continue
        if cur is not None and i + 1 < len(lines):
            res[cur].append((clean(l.strip()), lines[i + 1].strip()))
            i += 2
        else:
            i += 1
    return res


class Symbolizer:
    def __init__(self, prof, firmware, kernel, users, inline, given=()):
        self.firmware, self.kernel, self.users, self.inline = firmware, kernel, users, inline
        self.user_of = self.match_users(prof)
        # Address spaces named on the command line (a sampled profile, +profile-every=N, has no
        # retired instructions to match an ELF's bytes against).
        for root, name in given:
            elf = next((e for e in users if e.name == name), None)
            if elf is None:
                sys.exit(f"profile: --satp {root:#x}={name}: no user ELF of that name")
            self.user_of[root] = elf
        self.cache = {}
        # Resolve every pc we will need in one addr2line run per ELF.
        want = collections.defaultdict(set)
        for x in prof.samples:
            self.queue(want, x.prv, x.satp, x.pc)
        for (_, prv, satp, pc, _) in prof.nodes.values():
            self.queue(want, prv, satp, pc)
        self.lines = {}
        for elf, addrs in want.items():
            self.lines[elf] = addr2line(elf, addrs)
        self.demangled = demangle({elf.symbol(a) for elf, addrs in want.items() for a in addrs} - {None})

    def elf_for(self, prv, satp):
        if prv == 3:
            return self.firmware
        if prv == 1:
            return self.kernel
        return self.user_of.get(satp)

    def queue(self, want, prv, satp, pc):
        elf = self.elf_for(prv, satp)
        if elf and pc != WFI_PC:
            va = elf.to_vaddr(pc)
            if va is not None:
                want[elf].add(va)

    def match_users(self, prof):
        """satp root -> the user ELF holding the instructions retired under it."""
        seen = collections.defaultdict(dict)
        for x in prof.samples:
            if x.prv == 0 and x.retired and x.pc != WFI_PC:
                seen[x.satp][x.pc] = x.raw
        out = {}
        for satp, insts in seen.items():
            best, best_score = None, 0.0
            for elf in self.users:
                hit = total = 0
                for pc, raw in list(insts.items())[:4000]:
                    n = 2 if raw & 3 != 3 else 4
                    b = elf.bytes_at(pc, n)
                    total += 1
                    hit += b is not None and int.from_bytes(b, "little") == raw & ((1 << (8 * n)) - 1)
                score = hit / total if total else 0
                if score > best_score:
                    best, best_score = elf, score
            if best and best_score >= 0.9:
                out[satp] = best
            else:
                print(f"profile: no user ELF matches the code run under satp root {satp:#x} "
                      f"(best {best.name if best else '-'} {best_score:.0%}; --satp {satp:#x}=NAME names it)",
                      file=sys.stderr)
        return out

    def frames(self, prv, satp, pc):
        """(module, function, [(inlined function, file:line) innermost first]) for one pc."""
        key = (prv, satp, pc)
        if key in self.cache:
            return self.cache[key]
        if pc == WFI_PC:
            r = ("wfi", "[wfi]", [])
        else:
            elf = self.elf_for(prv, satp)
            va = elf.to_vaddr(pc) if elf else None
            if va is None:
                mod = elf.name if elf else f"{PRIV[prv]}:{satp:#x}"
                r = (mod, f"[{pc:#x}]", [])
            else:
                chain = self.lines.get(elf, {}).get(va, [])
                # The outermost DWARF function is the real one; asm without debug info (trap
                # vectors) has only its symbol.
                fn = chain[-1][0] if chain and sane(chain[-1][0]) else None
                if not fn:
                    sym = elf.symbol(va)
                    fn = self.demangled.get(sym) if sym else f"[{va:#x}]"
                r = (elf.name, fn, chain)
        self.cache[key] = r
        return r

    def leaf(self, prv, satp, pc):
        mod, fn, chain = self.frames(prv, satp, pc)
        if self.inline and chain and sane(chain[0][0]):
            return mod, chain[0][0]
        return mod, fn

    def line(self, prv, satp, pc):
        _, _, chain = self.frames(prv, satp, pc)
        return chain[0][1] if chain else "?"
