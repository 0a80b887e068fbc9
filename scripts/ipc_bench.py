#!/usr/bin/env python3
"""The IPC benchmark (sw/apps/ipc-bench): boot its image on the 4-hart RTL (or QEMU), follow
its progress, then write OUT/ipc.csv, OUT/ipc.md (the table with the published numbers beside
ours) and PNG plots mirroring the published figure.

  ipc_bench.py --image build/sw/image-ipc-bench.bin --out build/bench --target rtl --sim SIM
  ipc_bench.py --image build/sw/image-ipc-bench.bin --out build/bench --target qemu
  ipc_bench.py --parse LOG --out build/bench        (tables and plots from an earlier run's log)

Exit status 0 only if the run ended with the benchmark's verdict "ok" (every reply right).
"""
import argparse
import csv
import os
import sys

from uintr import plot as plots, qemu, sim
from uintr.bench import follow
from uintr.results import PREFIX, fields

COLUMNS = ["target", "variant", "concurrency", "work", "cycles_per_ipc", "notifications_per_ipc",
           "kernel_entries_per_ipc", "fastpath_per_ipc", "calls", "published_cycles_per_ipc"]
VARIANTS = ["sync-slow", "sync-fast", "sync-cross", "async-same", "async-cross"]
# The published design's figure (docs/benchmarks.md section 2: FPGA, 4 Rocket cores, 4x4 u64
# matrix multiply per request), read off its charts: cycles per IPC by concurrency.
PUBLISHED = {
    "sync-fast": {1: 3000},
    "sync-slow": {1: 8000},
    "sync-cross": {1: 19500},
    "async-same": {1: 10500, 2: 6000, 4: 3500, 8: 2500, 16: 2000, 32: 1750},
    "async-cross": {1: 10300, 2: 4600, 4: 2300, 8: 1900, 16: 1550, 32: 1450},
}
PUBLISHED_WORK = "matmul4"
LABELS = {
    "sync-slow": "sync slow path", "sync-fast": "sync fastpath (same hart)", "sync-cross": "sync cross-hart",
    "async-same": "async same hart", "async-cross": "async cross-hart",
}
# Simulated cycles allowed for the full sweep (a hang guard: it needs about 80 M) and the
# slowest simulator speed accepted, which turns that into a wall-clock limit.
MAX_CYCLES = 150_000_000
SIM_MIN_HZ = 15_000


def describe_ipc(f):
    return (f"{f['variant']:11s} conc {f['concurrency']:>2s} {f['work']:7s} {f['cycles_per_ipc']:>8s} cycles/IPC  "
            f"{f['notifications_per_ipc']} notif  {f['kernel_entries_per_ipc']} entries")


def parse(text):
    rows = []
    for line in text.splitlines():
        if not line.strip().startswith(PREFIX):
            continue
        f = fields(line.strip())
        conc = int(f["concurrency"])
        pub = PUBLISHED.get(f["variant"], {}).get(conc) if f["work"] == PUBLISHED_WORK else None
        rows.append({**f, "concurrency": conc, "cycles_per_ipc": int(f["cycles_per_ipc"]),
                     "published_cycles_per_ipc": pub if pub is not None else ""})
    return rows


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow(r)


def write_table(rows, path):
    """Markdown: one table per work, variants x concurrency, ours (published)."""
    out = []
    works = sorted({r["work"] for r in rows}, key=["none", "matmul4", "heavy"].index)
    concs = sorted({r["concurrency"] for r in rows})
    for work in works:
        out.append(f"### work = {work} (cycles per IPC; notifications / kernel entries per IPC)\n")
        out.append("| variant | " + " | ".join(f"conc {c}" for c in concs) + " |")
        out.append("| --- |" + " --- |" * len(concs))
        for v in VARIANTS:
            cells = []
            for c in concs:
                r = next((r for r in rows if r["work"] == work and r["variant"] == v and r["concurrency"] == c), None)
                if r is None:
                    cells.append("")
                    continue
                pub = f" (pub. ~{r['published_cycles_per_ipc']:,})" if r["published_cycles_per_ipc"] != "" else ""
                cells.append(f"{r['cycles_per_ipc']:,}{pub}; {r['notifications_per_ipc']} / {r['kernel_entries_per_ipc']}")
            out.append(f"| {v} | " + " | ".join(cells) + " |")
        out.append("")
    open(path, "w").write("\n".join(out))


def plot(rows, out_dir, target):
    plt = plots.pyplot()
    colors = {"sync-slow": "tab:red", "sync-fast": "tab:green", "sync-cross": "tab:purple",
              "async-same": "tab:blue", "async-cross": "tab:orange"}
    written = []
    for work in sorted({r["work"] for r in rows}):
        fig, ax = plt.subplots(figsize=(10.5, 5))
        sel = [r for r in rows if r["work"] == work]
        concs = sorted({r["concurrency"] for r in sel})
        for v in VARIANTS:
            pts = sorted((r["concurrency"], r["cycles_per_ipc"]) for r in sel if r["variant"] == v)
            if not pts:
                continue
            if v.startswith("sync"):
                # Sync IPC has one outstanding call: a level across the figure, as published.
                ax.axhline(pts[0][1], color=colors[v], linestyle="--", label=f"ours: {LABELS[v]}")
            else:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=colors[v], label=f"ours: {LABELS[v]}")
            if work == PUBLISHED_WORK and v in PUBLISHED:
                pub = sorted(PUBLISHED[v].items())
                if v.startswith("sync"):
                    ax.axhline(pub[0][1], color=colors[v], linestyle=":", alpha=0.6, label=f"published: {LABELS[v]}")
                else:
                    ax.plot([p[0] for p in pub], [p[1] for p in pub], "s:", color=colors[v], alpha=0.6,
                            markerfacecolor="none", label=f"published: {LABELS[v]}")
        plots.log2_axis(ax, concs)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent requests (client coroutines)")
        ax.set_ylabel("cycles per IPC")
        ax.set_title(f"IPC ping-pong, work = {work}, target = {target}"
                     + (" (published: FPGA, 4x Rocket)" if work == PUBLISHED_WORK else ""))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
        written.append(plots.save(fig, os.path.join(out_dir, f"ipc-{work}.png")))

    # Notifications and kernel entries per IPC of the async variants (matmul4 where present).
    work = PUBLISHED_WORK if any(r["work"] == PUBLISHED_WORK for r in rows) else rows[0]["work"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, key, title in [(axes[0], "notifications_per_ipc", "U-notifications per IPC"),
                           (axes[1], "kernel_entries_per_ipc", "kernel entries per IPC")]:
        for v in VARIANTS:
            pts = sorted((r["concurrency"], float(r[key])) for r in rows if r["work"] == work and r["variant"] == v)
            if pts and v.startswith("async"):
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=colors[v], label=LABELS[v])
            elif pts:
                ax.axhline(pts[0][1], color=colors[v], linestyle="--", label=LABELS[v])
        plots.log2_axis(ax, sorted({r["concurrency"] for r in rows}))
        ax.set_xlabel("concurrent requests")
        ax.set_title(f"{title} (work = {work})")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    written.append(plots.save(fig, os.path.join(out_dir, "ipc-overheads.png")))
    return written


def main():
    plots.need_matplotlib("bench-ipc")
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image")
    ap.add_argument("--out", required=True)
    ap.add_argument("--target", choices=["rtl", "qemu"], default="rtl")
    ap.add_argument("--sim", help="the Verilator model (target rtl)")
    ap.add_argument("--max-cycles", type=int, default=MAX_CYCLES)
    ap.add_argument("--parse", metavar="LOG", help="skip the run: use this console log")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.parse:
        text = open(args.parse, errors="replace").read()
    else:
        if not args.image:
            ap.error("--image is required (or --parse)")
        log = os.path.join(args.out, f"ipc-{args.target}.log")
        if args.target == "rtl":
            if not args.sim:
                ap.error("--sim is required for target rtl")
            cmd = sim.command(args.sim, args.image, args.max_cycles, nice=sim.NICE)
            timeout = sim.wall_limit(args.max_cycles, SIM_MIN_HZ)
        else:
            cmd, timeout = qemu.command(args.image), 900
        print(f"[bench-ipc] running {' '.join(cmd)} (log: {log})", flush=True)
        text = follow(cmd, log, timeout, "bench-ipc", describe_ipc, ("[ipc-bench]",))
    rows = parse(text)
    if not rows:
        sys.exit("bench-ipc: no result lines")
    target = rows[0]["target"]
    csv_path = os.path.join(args.out, "ipc.csv")
    write_csv(rows, csv_path)
    write_table(rows, os.path.join(args.out, "ipc.md"))
    pngs = plot(rows, args.out, target)
    print(f"[bench-ipc] {len(rows)} points: {csv_path}, {os.path.join(args.out, 'ipc.md')}, {', '.join(pngs)}")
    if "[ipc-bench] verdict: ok" not in text:
        sys.exit("bench-ipc: the run did not end with the verdict ok (see the log)")


if __name__ == "__main__":
    main()
