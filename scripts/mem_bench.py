#!/usr/bin/env python3
"""The memory-allocator server's benchmark (sw/apps/mem-server): boot its images on the 4-hart
RTL (one image per phase, one after the other) or QEMU, follow their progress, then write
OUT/mem.csv, OUT/mem.md (our figures beside the published ones, and the goals), PNG plots and
OUT/mem.jsonl (one record per point: revision, date, target, placement, variant, concurrency,
cycles and each hart's busy cycles per pair, kernel entries per call).

Placements (sw/apps/mem-server/src/proto.rs, `placement`): one-hart (client, server and the
server's kernel handler on one hart), two-harts (client and server on two, the handler only on
those), dedicated-handler-hart (client and server on two, the handler only on the others).

  mem_bench.py --images IMG... --out build/bench --target rtl --sim SIM [--lock FILE] [--gather]
               [--profile] [--revision REV]
  mem_bench.py --images build/sw/image-mem-bench.bin --out build/bench --target qemu
  mem_bench.py --parse LOG... --out build/bench       (tables and plots from earlier logs)

An RTL image named ...-cN.bin is one point at concurrency N: its cycle budget is start-up plus
that point's pairs at a generous cost each (`point_cycles`). --profile also profiles the
point's measured window on every hart (region 60 sync, 61 async: +profile-region-any) into
OUT/mem-rtl-IMAGE.prof. --revision names the commit the images were built from (the records'
`revision`; default: the tree's HEAD when the script writes them). --gather tabulates every
mem-TARGET-*.log in OUT (earlier calls' points too), so points run one per call add up.

Exit status 0 only if every run ended with the verdict "ok".
"""
import argparse
import csv
import datetime
import glob
import os
import re
import sys

from uintr import plot as plots, qemu, records, sim
from uintr.bench import follow
from uintr.results import PREFIX, fields

COLUMNS = ["target", "mode", "placement", "concurrency", "cycles_per_pair", "kernel_entries_per_syscall", "pairs",
           "published_cycles_per_pair"]
# Then busy_cycles_per_pair_hartN, one per hart index of the rows.
BUSY = "busy_cycles_per_pair_hart"
PLACEMENTS = ["one-hart", "two-harts", "dedicated-handler-hart"]
# The phases a full run makes (the Makefile's BENCH_MEM_ALL): sync with a dedicated handler
# hart would be sync on two harts again (sync calls use no handler).
PHASES = [("sync", "one-hart"), ("sync", "two-harts"), ("async", "one-hart"), ("async", "two-harts"),
          ("async", "dedicated-handler-hart")]
# docs/benchmarks.md section 3 (FPGA, 4 Rocket cores): cycles per map+unmap pair by concurrency;
# sync ~8.1k flat; async single-core (beside one-hart) / multi-core (beside two-harts, the
# issue's comparison; the published placement of its handler is not stated).
PUBLISHED = {
    ("sync", "one-hart"): {c: 8100 for c in (2, 4, 8, 16, 32, 64, 128, 256)},
    ("sync", "two-harts"): {c: 8100 for c in (2, 4, 8, 16, 32, 64, 128, 256)},
    ("async", "one-hart"): {8: 21000, 16: 12300, 32: 7100, 64: 6200, 128: 6000, 256: 6000},
    ("async", "two-harts"): {8: 21000, 16: 9600, 32: 5600, 64: 5300, 128: 5200, 256: 5200},
}
# Kernel entries per async system call: ~1-3 %, and 0.94 % multi-core at >= 256.
PUBLISHED_ENTRIES = {("async", "two-harts"): {256: 0.0094}}
COLORS = {("sync", "one-hart"): "tab:red", ("sync", "two-harts"): "tab:purple",
          ("sync", "dedicated-handler-hart"): "tab:pink", ("async", "one-hart"): "tab:blue",
          ("async", "two-harts"): "tab:orange", ("async", "dedicated-handler-hart"): "tab:green"}


def label(key):
    return f"{key[0]}, {key[1]}"
# Simulated cycles allowed per image (a hang guard: a sync phase of the full sweep needs
# ~130 M at ~40 k cycles per pair, a SHORT=1 phase ~30 M).
MAX_CYCLES = 250_000_000
SIM_MIN_HZ = 15_000
# One point per image (name ...-cN.bin): start-up (firmware, kernel checks, the root task's
# loading: ~30 M cycles) and the point's warm-up, window (max(48, 2 N)) and drain at up to
# 60 k cycles per pair (a sync pair costs ~20-40 k on the RTL).
START_CYCLES = 35_000_000
PAIR_CYCLES = 60_000


def point_cycles(image):
    m = re.search(r"-c(\d+)\.bin$", image)
    if not m:
        return None
    conc = int(m.group(1))
    return START_CYCLES + PAIR_CYCLES * ((conc + 4) + max(48, 2 * conc) + conc)


def describe(f):
    return (f"{f['mode']:5s} {f['placement']} conc {f['concurrency']:>3s} {f['cycles_per_pair']:>8s} cycles/pair  "
            f"{f['kernel_entries_per_syscall']} entries/syscall  busy per hart {f.get('busy_cycles_per_pair', '?')}")


def parse(text):
    rows = []
    for line in text.splitlines():
        if not line.startswith(PREFIX):
            continue
        f = fields(line)
        if "placement" not in f:
            continue  # a log from before placements (mode and harts)
        key, conc = (f["mode"], f["placement"]), int(f["concurrency"])
        busy = [int(b) for b in f.get("busy_cycles_per_pair", "").split("/") if b]
        rows.append({**f, "concurrency": conc, "cycles_per_pair": int(f["cycles_per_pair"]),
                     "kernel_entries_per_syscall": float(f["kernel_entries_per_syscall"]), "busy": busy,
                     "busy_total": sum(busy),
                     **{f"{BUSY}{h}": b for h, b in enumerate(busy)},
                     "published_cycles_per_pair": PUBLISHED.get(key, {}).get(conc, "")})
    return rows


def write_csv(rows, path):
    harts = max((len(r["busy"]) for r in rows), default=0)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS + [f"{BUSY}{h}" for h in range(harts)], extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def goals(rows):
    """The issue's goals, from our rows: async/sync at >= 64, where async starts to win, and
    kernel entries per async system call at >= 256."""
    out = []
    for h in PLACEMENTS:
        sync = {r["concurrency"]: r["cycles_per_pair"] for r in rows if r["mode"] == "sync" and r["placement"] == h}
        # A dedicated handler hart serves no sync call: compare with sync on two harts.
        if h == "dedicated-handler-hart" and not sync:
            sync = {r["concurrency"]: r["cycles_per_pair"] for r in rows
                    if r["mode"] == "sync" and r["placement"] == "two-harts"}
        asyn = {r["concurrency"]: r["cycles_per_pair"] for r in rows if r["mode"] == "async" and r["placement"] == h}
        both = sorted(set(sync) & set(asyn))
        if not both:
            out.append(f"- {h}: no async and sync points to compare")
            continue
        hi = [c for c in both if c >= 64]
        if hi:
            ratio = sum(asyn[c] / sync[c] for c in hi) / len(hi)
            out.append(f"- {h}: async / sync per pair at concurrency >= 64: {ratio:.2f}x (published 0.64x, goal <= 0.4x)")
        # The lowest concurrency from which async wins at every point measured.
        wins = [c for c in both if all(asyn[d] < sync[d] for d in both if d >= c)]
        out.append(f"- {h}: async beats sync from concurrency {wins[0] if wins else 'never'} on (published 32, goal <= 4)")
        ent = [r["kernel_entries_per_syscall"] for r in rows
               if r["mode"] == "async" and r["placement"] == h and r["concurrency"] >= 256]
        if ent:
            out.append(f"- {h}: kernel entries per async system call at >= 256: {100 * max(ent):.2f} % "
                       "(published 0.94 % multi-core, goal <= 0.5 %)")
    return out


def write_table(rows, path, target):
    concs = sorted({r["concurrency"] for r in rows})
    out = [f"### Memory-allocator server, target = {target}: cycles per map+unmap pair "
           "(published); kernel entries per system call; busy cycles per pair of each hart (by index)\n",
           "| mode, placement | " + " | ".join(f"conc {c}" for c in concs) + " |",
           "| --- |" + " --- |" * len(concs)]
    for key in keys(rows):
        cells = []
        for c in concs:
            r = next((r for r in rows if (r["mode"], r["placement"]) == key and r["concurrency"] == c), None)
            if r is None:
                cells.append("")
                continue
            pub = f" (~{r['published_cycles_per_pair']:,})" if r["published_cycles_per_pair"] != "" else ""
            busy = " / ".join(f"{b:,}" for b in r["busy"])
            cells.append(f"{r['cycles_per_pair']:,}{pub}; {100 * r['kernel_entries_per_syscall']:.1f} %; busy {busy}")
        out.append(f"| {label(key)} | " + " | ".join(cells) + " |")
    out += ["", "Goals:", *goals(rows), ""]
    if target == "qemu":
        out.append("QEMU: cycles are host time (only ratios within one run mean anything), and the kernel "
                   "emulates the UINTC, so kernel entries count the emulation's traps too.")
    open(path, "w").write("\n".join(out) + "\n")


def keys(rows):
    """(mode, placement) of the rows, in the order of PHASES, then any other."""
    have = {(r["mode"], r["placement"]) for r in rows}
    return [k for k in PHASES if k in have] + sorted(have - set(PHASES))


def when(log):
    """A run's date: when its log was last written (UTC)."""
    t = datetime.datetime.fromtimestamp(os.path.getmtime(log), datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%MZ")


def write_jsonl(rows, path, target, rev):
    """One record per point (bench/results/mem.jsonl takes these lines); `rev` is the images'
    (a gathered log of another revision is not told apart)."""
    records.write(path, ({
        "revision": rev, "date": r["date"], "target": "rtl-4core" if target == "rtl" else target,
        "placement": r["placement"], "variant": r["mode"], "concurrency": r["concurrency"],
        "cycles_per_pair": r["cycles_per_pair"], "busy_cycles_per_pair": r["busy"],
        "kernel_entries_per_call": r["kernel_entries_per_syscall"], "pairs": int(r["pairs"]),
    } for r in rows))


def plot(rows, out_dir, target):
    plt = plots.pyplot()
    # Ticks at our points and the published ones (a partial RTL sweep still shows the curves).
    concs = sorted({r["concurrency"] for r in rows} | {c for t in PUBLISHED.values() for c in t})
    written = []
    for name, key, pub_table, ylabel, scale in [
            ("mem-cycles.png", "cycles_per_pair", PUBLISHED, "cycles per map+unmap pair", 1),
            ("mem-entries.png", "kernel_entries_per_syscall", PUBLISHED_ENTRIES, "kernel entries per system call (%)", 100),
            # What a placement costs in all: every hart's busy cycles (polling included).
            ("mem-busy.png", "busy_total", {}, "busy cycles per pair, all harts", 1)]:
        fig, ax = plt.subplots(figsize=(10, 5))
        for k in keys(rows) + [k for k in pub_table if k not in keys(rows)]:
            color = COLORS.get(k, "tab:gray")
            pts = sorted((r["concurrency"], r[key] * scale) for r in rows if (r["mode"], r["placement"]) == k)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=color, label=f"ours: {label(k)}")
            pub = sorted(pub_table.get(k, {}).items())
            if pub:
                ax.plot([p[0] for p in pub], [p[1] * scale for p in pub], "s:", color=color, alpha=0.6,
                        markerfacecolor="none", label=f"published: {label(k)}")
        if key == "kernel_entries_per_syscall":
            ax.axhspan(1, 3, color="grey", alpha=0.15, label="published async: ~1-3 %")
        plots.log2_axis(ax, concs)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent client coroutines")
        ax.set_ylabel(ylabel)
        ax.set_title(f"memory-allocator server, target = {target} (published: FPGA, 4x Rocket)"
                     + (" - QEMU: host time, ratios only" if target == "qemu" else ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        written.append(plots.save(fig, os.path.join(out_dir, name)))
    return written


def profile_args(image, log):
    """The simulator's arguments that profile one point's measured window on every hart: the
    client's region 60 (sync phases) or 61 (async), sw/apps/mem-server/src/bin/client.rs."""
    region = 60 if "-sync-" in os.path.basename(image) else 61
    return [f"+profile={log.removesuffix('.log')}.prof", f"+profile-region={region}", "+profile-region-any"]


def main():
    plots.need_matplotlib("bench-mem")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--images", nargs="+", help="the images to run, one after the other")
    ap.add_argument("--out", required=True)
    ap.add_argument("--target", choices=["rtl", "qemu"], default="rtl")
    ap.add_argument("--sim", help="the Verilator model (target rtl)")
    ap.add_argument("--lock", help="run each simulation under flock on this file (a shared machine's RTL lock)")
    ap.add_argument("--max-cycles", type=int, default=MAX_CYCLES, help="per image")
    ap.add_argument("--parse", nargs="+", metavar="LOG", help="skip the runs: use these console logs")
    ap.add_argument("--profile", action="store_true",
                    help="profile each point's measured window on every hart (OUT/mem-rtl-IMAGE.prof)")
    ap.add_argument("--revision", help="the commit the images were built from (default: HEAD now)")
    ap.add_argument("--gather", action="store_true",
                    help="tabulate every mem-TARGET-*.log in OUT (the newest result of each point)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    texts, dates = [], []
    if args.parse:
        texts = [open(p, errors="replace").read() for p in args.parse]
        dates = [when(p) for p in args.parse]
    else:
        if not args.images:
            ap.error("--images is required (or --parse)")
        for image in args.images:
            log = os.path.join(args.out, f"mem-{args.target}-{os.path.basename(image).removesuffix('.bin')}.log")
            if args.target == "rtl":
                if not args.sim:
                    ap.error("--sim is required for target rtl")
                cycles = point_cycles(image) or args.max_cycles
                cmd = sim.command(args.sim, image, cycles, extra=profile_args(image, log) if args.profile else (),
                                  nice=sim.NICE, lock=args.lock)
                # Waiting for the lock counts too: another hour for that.
                timeout = sim.wall_limit(cycles, SIM_MIN_HZ) + (3600 if args.lock else 0)
            else:
                cmd, timeout = qemu.command(image), 900
            print(f"[bench-mem] running {' '.join(cmd)} (log: {log})", flush=True)
            texts.append(follow(cmd, log, timeout, "bench-mem", describe, ("[mem-bench]", "[mem-server]")))
            dates.append(when(log))
    verdicts = texts
    if args.gather:
        # Oldest first, so a point's newest result replaces the earlier ones below.
        logs = sorted(glob.glob(os.path.join(args.out, f"mem-{args.target}-*.log")), key=os.path.getmtime)
        texts = [open(p, errors="replace").read() for p in logs]
        dates = [when(p) for p in logs]
    latest = {}
    for r in (dict(r, date=d) for t, d in zip(texts, dates) for r in parse(t)):
        latest[(r["mode"], r["placement"], r["concurrency"])] = r
    order = {k: i for i, k in enumerate(keys(list(latest.values())))}
    rows = sorted(latest.values(), key=lambda r: (order[(r["mode"], r["placement"])], r["concurrency"]))
    if not rows:
        sys.exit("bench-mem: no result lines")
    target = rows[0]["target"]
    csv_path, md_path = os.path.join(args.out, "mem.csv"), os.path.join(args.out, "mem.md")
    jsonl_path = os.path.join(args.out, "mem.jsonl")
    write_csv(rows, csv_path)
    write_table(rows, md_path, target)
    write_jsonl(rows, jsonl_path, target, args.revision or records.revision())
    pngs = plot(rows, args.out, target)
    print(open(md_path).read())
    print(f"[bench-mem] {len(rows)} points: {csv_path}, {md_path}, {jsonl_path}, {', '.join(pngs)}")
    bad = [i for i, t in enumerate(verdicts) if "[mem-bench] verdict: ok" not in t]
    if bad:
        sys.exit(f"bench-mem: {len(bad)} run(s) did not end with the verdict ok (see the logs)")


if __name__ == "__main__":
    main()
