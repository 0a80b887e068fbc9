#!/usr/bin/env python3
"""TCP server benchmark (`make bench-tcp`): boots the network system under QEMU once per hart
count, sweeps the load client's connection count over each, and writes build/bench/tcp.csv (one
row per point, the load client's columns), tcp.md (our table beside the published one) and
tcp_rps.png / tcp_p99.png (requests/s and p99 latency against connections, the published curves
beside ours). QEMU numbers: functional ratios on this host, not the board's speed.

Variants: async only for now (the sync servers are not written yet); harts 1 (everything on one
hart) and 4 (net server and TCP server on harts of their own).
"""
import argparse
import csv
import os
import platform
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from net_test import Fail, Qemu  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONNECTIONS = [1, 2, 4, 8, 16, 32, 64, 128]
# benchmarks.md section 4: requests/s, FPGA, 1 Gbps, Python client, 1-byte requests.
PUBLISHED_RPS = {
    ("sync", 1): {1: 520, 4: 810, 8: 770, 32: 570},
    ("sync", 4): {1: 750, 4: 740, 8: 705, 32: 530},
    ("async", 1): {1: 1010, 4: 1545, 8: 1720, 32: 1270},
    ("async", 4): {1: 1420, 4: 2085, 8: 2075, 32: 1420},
}
# Latency at 16 connections (ms): ~9-10 async, ~23-25 sync.
PUBLISHED_LAT16_MS = {"async": 9.5, "sync": 24.0}


def run_point(loadgen, port, conns, size, duration, warmup, harts, out_csv):
    cmd = [loadgen, "--port", str(port), "-c", str(conns), "-s", str(size), "-d", str(duration), "-w", str(warmup),
           "-t", "30", "-q", "--csv", out_csv, "--target", "qemu", "--variant", "async", "--harts", str(harts)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=duration + warmup + conns * 30 + 120)
    line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip()[-300:]
    print(f"  harts {harts}, {conns:3d} connections: {line}", flush=True)


def read_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def plot(rows, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for metric, fname, ylabel in [("requests_per_s", "tcp_rps.png", "requests/s"), ("p99_us", "tcp_p99.png", "p99 latency (ms)")]:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for harts in sorted({r["harts"] for r in rows}):
            pts = sorted((int(r["connections"]), float(r[metric])) for r in rows if r["harts"] == harts and r["variant"] == "async")
            if metric == "p99_us":
                pts = [(c, v / 1000) for c, v in pts]
            ax.plot([c for c, _ in pts], [v for _, v in pts], "o-", label=f"ours async, {harts} hart(s), QEMU")
        if metric == "requests_per_s":
            for (variant, harts), d in PUBLISHED_RPS.items():
                ks = sorted(d)
                ax.plot(ks, [d[k] for k in ks], "--", alpha=0.6, label=f"published {variant}, {'1 core' if harts == 1 else 'multi-core'} (FPGA)")
        else:
            for variant, ms in PUBLISHED_LAT16_MS.items():
                ax.plot([16], [ms], "x", markersize=10, label=f"published {variant} latency at 16 (FPGA)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(CONNECTIONS)
        ax.set_xticklabels([str(c) for c in CONNECTIONS])
        if metric == "p99_us":
            ax.set_yscale("log")
        ax.set_xlabel("connections")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, fname), dpi=120)
        plt.close(fig)


def table(rows, outdir, note):
    lines = ["# TCP server benchmark (QEMU)", "", note, "",
             "| connections | harts | requests/s | p50 us | p99 us | p999 us | errors | published async (same cores) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        h = int(r["harts"])
        pub = PUBLISHED_RPS[("async", 1 if h == 1 else 4)].get(int(r["connections"]), "")
        lines.append(f"| {r['connections']} | {h} | {float(r['requests_per_s']):.0f} | {r['p50_us']} | {r['p99_us']} | {r['p999_us']} | {r['errors']} | {pub} |")
    with open(os.path.join(outdir, "tcp.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", default=os.path.join(ROOT, "build", "sw", "image-net.bin"))
    ap.add_argument("--loadgen", default=os.path.join(ROOT, "build", "cargo-loadgen", "release", "loadgen"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--guest-port", type=int, default=5555)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--harts", default="1,4")
    ap.add_argument("--connections", default=",".join(map(str, CONNECTIONS)))
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--plot-only", action="store_true", help="redraw the plots and table from the CSV")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    out_csv = os.path.join(a.out, "tcp.csv")
    note = ""
    if not a.plot_only:
        if os.path.exists(out_csv):
            os.remove(out_csv)
        load = os.getloadavg()
        note = (f"Host: {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), load average "
                f"{load[0]:.1f} at the start; {a.size}-byte requests, {a.duration:g} s per point after a "
                f"{a.warmup:g} s warm-up; variant async (the sync servers are not written yet).")
        print(f"bench-tcp: {note}", flush=True)
        for harts in [int(h) for h in a.harts.split(",")]:
            os.environ["SMP"] = str(harts)
            q = Qemu(a.image, a.guest_port, os.path.join(a.out, f"tcp-qemu-{harts}.log"), inject=False)
            try:
                q.wait_for(r"listening on", 600)
                for c in [int(c) for c in a.connections.split(",")]:
                    run_point(a.loadgen, q.host_port, c, a.size, a.duration, a.warmup, harts, out_csv)
            except (Fail, subprocess.TimeoutExpired) as e:
                print(f"bench-tcp: harts {harts}: {e}")
            finally:
                q.stop()
        with open(os.path.join(a.out, "tcp-note.txt"), "w") as f:
            f.write(note + "\n")
    elif os.path.exists(os.path.join(a.out, "tcp-note.txt")):
        note = open(os.path.join(a.out, "tcp-note.txt")).read().strip()
    if not os.path.exists(out_csv):
        sys.exit("bench-tcp: no results")
    rows = read_rows(out_csv)
    table(rows, a.out, note)
    try:
        plot(rows, a.out)
    except ImportError:
        # The Debian python has matplotlib (scripts/deps.sh) when this one does not.
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
            subprocess.run(["/usr/bin/python3", __file__, "--plot-only", "--out", a.out], check=True)
            return
        sys.exit("bench-tcp: matplotlib is missing (make deps installs python3-matplotlib)")
    print(f"bench-tcp: {out_csv}, tcp.md, tcp_rps.png, tcp_p99.png in {a.out}")


if __name__ == "__main__":
    main()
