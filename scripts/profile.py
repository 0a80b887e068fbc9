#!/usr/bin/env python3
"""Symbolize a cycle profile of the Verilator harness (+profile=FILE, hw/sim/profiler.h).

    profile.py build/prof/run.prof                       flat profile by function (all harts)
    profile.py run.prof --hart 3 --inline --top 30       one hart, innermost inlined function
    profile.py run.prof --folded out.folded              folded stacks (flamegraph.pl, speedscope)
    profile.py run.prof --lines 'try_fastpath'           cycles per source line of matching functions
    profile.py run.prof --categories cats.toml           cycles per category (first matching rule)
    profile.py run.prof --timeline run.trace [--round K] one round of the profiled region, hart by hart
                                                         (+profile-trace=FILE beside +profile)

ELFs: M-mode pcs are looked up in the firmware, S-mode pcs in the kernel (physical pcs before
the MMU is on through the ELF's load addresses), U-mode pcs in the user ELF whose bytes match
the instructions the hart retired under that satp root (every *.elf of --elf-dir other than
firmware and kernel, plus --elf). Names come from the DWARF line tables (llvm-addr2line -i), so
inlined functions can be told apart (--inline).
"""
import argparse
import bisect
import collections
import os
import re
import shutil
import struct
import subprocess
import sys
import tomllib

WFI_PC = 1
PRIV = "USHM"
Sample = collections.namedtuple("Sample", "hart node prv satp pc cycles retired raw walk")


# ---- the profile file ------------------------------------------------------------------------
class Profile:
    def __init__(self, path):
        self.nodes = {0: (0, 0, 0, 0, False)}  # id -> (parent, prv, satp, pc, trap)
        self.samples = []  # Sample
        self.regions = []  # (hart, id, count, total, min, max, walker cycles)
        self.cycles = 0
        self.meta = {}
        with open(path) as f:
            for line in f:
                w = line.split()
                if not w or w[0].startswith("#"):
                    continue
                if w[0] == "cycles":
                    self.meta = dict(zip(w[0::2], w[1::2]))
                    self.cycles = int(self.meta["cycles"])
                elif w[0] == "node":
                    self.nodes[int(w[1])] = (int(w[2]), int(w[3]), int(w[4], 16), int(w[5], 16), w[6] == "1")
                elif w[0] == "pc":
                    self.samples.append(Sample(int(w[1]), int(w[2]), int(w[3]), int(w[4], 16), int(w[5], 16),
                                               int(w[6]), int(w[7]), int(w[8], 16), int(w[9]) if len(w) > 9 else 0))
                elif w[0] == "region":
                    self.regions.append(tuple(int(x) for x in w[1:8]) + ((0,) if len(w) < 8 else ()))
        if not self.meta:
            sys.exit(f"profile: {path} is not a profile (no 'cycles' line)")


# ---- ELF files -------------------------------------------------------------------------------
class Elf:
    def __init__(self, path, name):
        self.path, self.name = path, name
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2:
            sys.exit(f"profile: {path} is not an ELF64 file")
        phoff, shoff = struct.unpack_from("<QQ", d, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", d, 0x36)
        self.segs = []  # (vaddr, paddr, offset, filesz, executable)
        for i in range(phnum):
            ptype, flags, off, vaddr, paddr, filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
            if ptype == 1:
                self.segs.append((vaddr, paddr, off, filesz, bool(flags & 1)))
        syms = []
        sections = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
        for sh in sections:
            if sh[1] != 2:  # SHT_SYMTAB
                continue
            strtab = sections[sh[6]]
            for j in range(sh[5] // 24):
                st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", d, sh[4] + j * 24)
                if st_shndx == 0 or (st_info & 0xf) not in (0, 2) or not st_name:  # NOTYPE (asm labels), FUNC
                    continue
                end = d.index(b"\0", strtab[4] + st_name)
                name = d[strtab[4] + st_name:end].decode(errors="replace")
                if name.startswith(".L") or name.startswith("$"):
                    continue
                syms.append((st_value, st_size, name, (st_info & 0xf) == 2))
        # A FUNC wins over a label at the same address.
        syms.sort(key=lambda s: (s[0], not s[3]))
        self.syms = []
        for s in syms:
            if self.syms and self.syms[-1][0] == s[0]:
                continue
            self.syms.append(s)
        self.sym_addrs = [s[0] for s in self.syms]

    def to_vaddr(self, pc):
        """pc as the ELF's virtual address (physical pcs, e.g. before paging, through the load address)."""
        for vaddr, paddr, _, size, x in self.segs:
            if x and vaddr <= pc < vaddr + size:
                return pc
        for vaddr, paddr, _, size, x in self.segs:
            if x and paddr <= pc < paddr + size:
                return pc - paddr + vaddr
        return None

    def bytes_at(self, vaddr, n):
        for va, _, off, size, _ in self.segs:
            if va <= vaddr and vaddr + n <= va + size:
                return self.data[off + vaddr - va:off + vaddr - va + n]
        return None

    def symbol(self, vaddr):
        i = bisect.bisect_right(self.sym_addrs, vaddr) - 1
        if i < 0:
            return None
        addr, size, name, _ = self.syms[i]
        if size and vaddr >= addr + size:
            return None
        return name


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


# ---- address spaces -> ELFs ------------------------------------------------------------------
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


# ---- reports ---------------------------------------------------------------------------------
def selected(prof, args):
    harts = set(args.hart) if args.hart else None
    privs = set(PRIV.index(p) for p in args.priv) if args.priv else None
    for s in prof.samples:
        if harts is not None and s.hart not in harts:
            continue
        if privs is not None and s.prv not in privs and s.pc != WFI_PC:
            continue
        if s.pc == WFI_PC and not args.wfi:
            continue
        yield s


def summary(prof, nharts):
    print(f"profile: {prof.cycles} cycles, {nharts} harts, every {prof.meta.get('every')} cycle(s)"
          + (f", only inside region {prof.meta['region']}" if prof.meta.get("region", "-1") != "-1" else ""))
    per = collections.defaultdict(lambda: collections.Counter())
    for x in prof.samples:
        per[x.hart]["wfi" if x.pc == WFI_PC else PRIV[x.prv]] += x.cycles
        per[x.hart]["ret"] += x.retired
        per[x.hart]["walk"] += x.walk
    print(f"{'hart':>4} {'cycles':>12} {'U':>12} {'S':>12} {'M':>12} {'wfi':>12} {'retired':>12} {'PTW busy':>12}")
    for h in sorted(per):
        c = per[h]
        tot = sum(c[k] for k in "USM") + c["wfi"]
        print(f"{h:>4} {tot:>12} {c['U']:>12} {c['S']:>12} {c['M']:>12} {c['wfi']:>12} {c['ret']:>12} {c['walk']:>12}")
    print()


def num(v, div):
    return f"{v:>12}" if div == 1 else f"{v / div:>12.1f}"


def flat(prof, sym, args, harts):
    rows = collections.defaultdict(lambda: [0, 0, 0, collections.Counter()])
    total = 0
    for x in selected(prof, args):
        r = rows[sym.leaf(x.prv, x.satp, x.pc)]
        r[0] += x.cycles
        r[1] += x.retired
        r[2] += x.walk
        r[3][x.hart] += x.cycles
        total += x.cycles
    d = args.divide
    hcols = "".join(f" {'hart' + str(h):>12}" for h in harts) if len(harts) > 1 else ""
    print(f"{'cycles':>12} {'share':>6} {'retired':>12} {'CPI':>5} {'PTW busy':>12}{hcols}  module:function"
          + (f"   (per {d})" if d != 1 else ""))
    for (mod, fn), (cyc, ret, walk, ph) in sorted(rows.items(), key=lambda kv: -kv[1][0])[:args.top]:
        cpi = f"{cyc / ret:5.1f}" if ret else "    -"
        hv = "".join(f" {num(ph[h], d)}" for h in harts) if len(harts) > 1 else ""
        print(f"{num(cyc, d)} {100 * cyc / max(total, 1):5.1f}% {num(ret, d)} {cpi} {num(walk, d)}{hv}  {mod}:{fn}")
    print(f"{num(total, d)} 100.0%  (total of the selection)")


def stack_of(prof, sym, node, cache, same_level=False):
    """Frames from the root to `node`; with same_level only those above the last trap (the
    callers at the sample's own privilege level)."""
    key = (node, same_level)
    if key in cache:
        return cache[key]
    out = []
    n = node
    while n:
        parent, prv, satp, pc, trap = prof.nodes[n]
        if trap and same_level:
            break
        mod, fn, _ = sym.frames(prv, satp, pc)
        out.append(f"{mod}:{fn}")
        n = parent
    out.reverse()
    cache[key] = out
    return out


def folded(prof, sym, args, path):
    acc = collections.Counter()
    cache = {}
    for x in selected(prof, args):
        h, node, prv, satp, pc, cyc = x.hart, x.node, x.prv, x.satp, x.pc, x.cycles
        if not cyc:
            continue
        frames = list(stack_of(prof, sym, node, cache))
        mod, fn, chain = sym.frames(prv, satp, pc)
        leaf = [f"{mod}:{fn}"]
        if args.inline:
            leaf += [f"{mod}:{f}" for f, _ in reversed(chain[:-1]) if f not in ("??", "")]
        if frames and frames[-1] == leaf[0]:
            leaf = leaf[1:]
        if args.per_hart:
            frames = [f"hart{h}"] + frames
        acc[";".join(x.replace(";", ",").replace(" ", "_") for x in frames + leaf)] += cyc
    with open(path, "w") as f:
        for k, v in sorted(acc.items()):
            f.write(f"{k} {v}\n")
    print(f"profile: {len(acc)} folded stacks written to {path}")


def lines(prof, sym, args, pattern):
    rx = re.compile(pattern)
    rows = collections.defaultdict(lambda: [0, 0, 0])
    for x in selected(prof, args):
        mod, fn, chain = sym.frames(x.prv, x.satp, x.pc)
        names = [fn] + [f for f, _ in chain]
        if not any(rx.search(n) for n in names):
            continue
        inner = chain[0][0] if chain and sane(chain[0][0]) else fn
        key = (f"{mod}:{fn}", sym.line(x.prv, x.satp, x.pc), inner, x.pc if args.pcs else None)
        rows[key][0] += x.cycles
        rows[key][1] += x.retired
        rows[key][2] += x.walk
    total = sum(r[0] for r in rows.values())
    d = args.divide
    order = sorted(rows.items(), key=lambda kv: (kv[0][3], kv[0][1]) if args.pcs else -kv[1][0])
    for (fn, line, inner, pc), (cyc, ret, walk) in order[:args.top]:
        where = f"{pc:#x} " if pc is not None else ""
        line = os.path.relpath(line) if line.startswith("/") else line
        print(f"{num(cyc, d)} {100 * cyc / max(total, 1):5.1f}% {num(ret, d)} {num(walk, d)}  {where}{line}  [{inner}]  in {fn}")
    print(f"{num(total, d)} total")


def categories(prof, sym, args, path):
    """Cycles per category: the first rule whose regex matches one of the sample's frames (its
    inlined functions, its function, its callers up to the trap that entered its privilege
    level) wins; unmatched cycles are 'other'."""
    with open(path, "rb") as f:
        rules = [(c["name"], re.compile(c["match"])) for c in tomllib.load(f)["category"]]
    acc, ret, walk, total = collections.Counter(), collections.Counter(), collections.Counter(), 0
    cache = {}
    for x in selected(prof, args):
        mod, fn, chain = sym.frames(x.prv, x.satp, x.pc)
        callers = stack_of(prof, sym, x.node, cache, same_level=True)
        cands = [f"{mod}:{f}@{l}" for f, l in chain] + [f"{mod}:{fn}"] + list(reversed(callers))
        name = next((n for n, rx in rules for c in cands if rx.search(c)), "other")
        acc[name] += x.cycles
        ret[name] += x.retired
        walk[name] += x.walk
        total += x.cycles
    d = args.divide
    print(f"{'cycles':>12} {'share':>6} {'retired':>12} {'PTW busy':>12}  category" + (f"   (per {d})" if d != 1 else ""))
    for n in dict.fromkeys([n for n, _ in rules] + ["other"]):
        if acc[n]:
            print(f"{num(acc[n], d)} {100 * acc[n] / max(total, 1):5.1f}% {num(ret[n], d)} {num(walk[n], d)}  {n}")
    print(f"{num(total, d)} 100.0%  total")


def read_trace(path):
    """+profile-trace lines: instructions (cycle, hart, prv, satp, pc) and region markers
    (cycle, hart, id, is_begin)."""
    insts, marks = [], []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[2] == "region":
                marks.append((int(w[0]), int(w[1]), int(w[3]), w[4] == "begin"))
            else:
                insts.append((int(w[0]), int(w[1]), int(w[2]), int(w[3], 16), int(w[4], 16)))
    return insts, marks


def rounds_of(marks, rid):
    """(begin, end, hart) of each closed run of region rid, in order."""
    open_at, out = {}, []
    for cycle, hart, i, begin in marks:
        if i != rid:
            continue
        if begin:
            open_at[hart] = cycle
        elif hart in open_at:
            out.append((open_at.pop(hart), cycle, hart))
    return out


def timeline(prof, sym, args):
    """One round of the profiled region as each hart's runs of instructions of one function, in
    time order: what waits for what when work crosses harts (a lock hand-over, a wake-up)."""
    rid = int(prof.meta.get("region", "-1"))
    if rid < 0:
        sys.exit("profile: --timeline needs a profile taken with +profile-region=ID")
    insts, marks = read_trace(args.timeline)
    rounds = rounds_of(marks, rid)
    if not rounds:
        sys.exit(f"profile: no complete run of region {rid} in {args.timeline} (is it cut short? +profile-trace-max)")
    if args.round is None:
        # The round of median length: typical, not the first (cold) or an outlier.
        k = sorted(range(len(rounds)), key=lambda j: rounds[j][1] - rounds[j][0])[len(rounds) // 2]
    else:
        k = args.round
        if not 0 <= k < len(rounds):
            sys.exit(f"profile: --round {k}: region {rid} has {len(rounds)} complete runs in the trace")
    t0, t1, owner = rounds[k]
    print(f"region {rid}, run {k} of {len(rounds)} (hart {owner}): cycles {t0}..{t1}, {t1 - t0} long")
    harts = sorted({h for (_, h, _, _, _) in insts})
    if args.hart:
        harts = [h for h in harts if h in args.hart]
    col = {h: i for i, h in enumerate(harts)}
    print(f"{'offset':>7} {'cycles':>6} {'insts':>5}  " + "   ".join(f"hart {h}" for h in harts))
    # Each hart's runs: consecutive retired instructions charged to one function; a run's cycles
    # count from the retirement before it (what it waited for is its own), as in the profile.
    runs = []
    last = {h: t0 for h in harts}
    cur = {}
    for cycle, h, prv, satp, pc in insts:
        if h not in col or cycle <= t0 or cycle > t1:
            continue
        mod, fn = sym.leaf(prv, satp, pc)
        name = f"{PRIV[prv]} {fn if mod == 'kernel' else mod + ':' + fn}"
        run = cur.get(h)
        if run and run[3] == name:
            run[1] = cycle
            run[2] += 1
        else:
            run = [last[h], cycle, 1, name, h]
            cur[h] = run
            runs.append(run)
        last[h] = cycle
    for start, end, n, name, h in sorted(runs, key=lambda r: (r[0], col[r[4]])):
        if end - start < args.min_run:
            continue
        print(f"{start - t0:>7} {end - start:>6} {n:>5}  {'    ' * col[h]}[{h}] {name}")


def regions(prof):
    for (h, rid, count, total, lo, hi, walk) in sorted(prof.regions, key=lambda r: (r[1], r[0])):
        mean = total / count if count else 0
        print(f"region {rid} hart {h}: {count} times, {total} cycles, mean {mean:.0f}, min {lo}, max {hi}, "
              f"page-table walker busy {walk / max(count, 1):.0f} per time")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--elf-dir", default="build/sw", help="where firmware.elf, kernel.elf and the user ELFs are")
    ap.add_argument("--firmware")
    ap.add_argument("--kernel")
    ap.add_argument("--elf", action="append", default=[], help="a user ELF (besides those in --elf-dir)")
    ap.add_argument("--satp", action="append", default=[], metavar="ROOT=NAME",
                    help="the user ELF NAME (file name less .elf) for satp root ROOT, as the profile prints it; "
                         "needed for a sampled profile (+profile-every=N), whose samples carry no instructions to match")
    ap.add_argument("--hart", type=int, action="append", help="only this hart (repeatable)")
    ap.add_argument("--priv", help="only these privilege levels, e.g. US")
    ap.add_argument("--wfi", action="store_true", help="include cycles asleep in wfi")
    ap.add_argument("--inline", action="store_true", help="charge the innermost inlined function")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--folded", help="write folded stacks here (flamegraph.pl / speedscope / inferno)")
    ap.add_argument("--per-hart", action="store_true", help="folded stacks start with the hart")
    ap.add_argument("--lines", help="cycles per source line of functions matching this regex")
    ap.add_argument("--pcs", action="store_true", help="with --lines: per pc, not per line")
    ap.add_argument("--categories", help="TOML file of [[category]] name/match rules")
    ap.add_argument("--timeline", metavar="TRACE", help="the +profile-trace file of this profile: print one round of "
                    "the profiled region as each hart's runs of one function, in time order")
    ap.add_argument("--round", type=int, help="with --timeline: which run of the region (default: the median-long one)")
    ap.add_argument("--min-run", type=int, default=0, help="with --timeline: leave out runs shorter than this (cycles)")
    ap.add_argument("--divide", default="1", help="print cycles divided by this number, or 'region': by how often "
                    "the profiled region (+profile-region) ran")
    args = ap.parse_args()

    prof = Profile(args.profile)
    firmware = Elf(args.firmware or os.path.join(args.elf_dir, "firmware.elf"), "firmware")
    kernel = Elf(args.kernel or os.path.join(args.elf_dir, "kernel.elf"), "kernel")
    skip = {os.path.abspath(firmware.path), os.path.abspath(kernel.path)}
    paths = [os.path.join(args.elf_dir, f) for f in sorted(os.listdir(args.elf_dir)) if f.endswith(".elf")] + args.elf
    users = [Elf(p, os.path.basename(p)[:-4]) for p in dict.fromkeys(paths) if os.path.abspath(p) not in skip]
    given = []
    for kv in args.satp:
        root, _, name = kv.partition("=")
        given.append((int(root, 0), name))
    sym = Symbolizer(prof, firmware, kernel, users, args.inline, given)
    harts = sorted({s.hart for s in prof.samples})
    if args.divide == "region":
        rid = int(prof.meta.get("region", "-1"))
        args.divide = sum(r[2] for r in prof.regions if r[1] == rid)
        if rid < 0 or not args.divide:
            sys.exit("profile: --divide region needs a profile taken with +profile-region=ID of a region that ran")
    else:
        args.divide = int(args.divide)

    summary(prof, len(harts))
    if prof.regions:
        regions(prof)
        print()
    for satp, elf in sorted(sym.user_of.items()):
        print(f"user address space (satp root {satp:#x}): {elf.name}")
    print()
    if args.timeline:
        timeline(prof, sym, args)
    elif args.folded:
        folded(prof, sym, args, args.folded)
    elif args.lines:
        lines(prof, sym, args, args.lines)
    elif args.categories:
        categories(prof, sym, args, args.categories)
    else:
        flat(prof, sym, args, harts if not args.hart else sorted(args.hart))


if __name__ == "__main__":
    main()
