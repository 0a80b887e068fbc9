"""One round of the profiled region from the instruction trace (+profile-trace): each hart's
runs of one function in time order."""
import sys

from .data import PRIV, read_trace


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
