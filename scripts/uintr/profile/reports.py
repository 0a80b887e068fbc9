"""The profile's tables, each from the samples the command line selects (harts, privilege
levels, wfi): the summary per hart, the flat profile by function, folded stacks, cycles per
source line, per category (TOML rules) and the region counts."""
import collections
import os
import re
import tomllib

from .data import PRIV, WFI_PC
from .symbols import sane


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


def regions(prof):
    for (h, rid, count, total, lo, hi, walk) in sorted(prof.regions, key=lambda r: (r[1], r[0])):
        mean = total / count if count else 0
        print(f"region {rid} hart {h}: {count} times, {total} cycles, mean {mean:.0f}, min {lo}, max {hi}, "
              f"page-table walker busy {walk / max(count, 1):.0f} per time")
