#!/usr/bin/env python3
"""Latency against throughput for the TCP server (`make bench-tcp`, after the connection sweep):
boots the network system under QEMU once per variant (async, sync), then drives it with the
load client in open loop (`loadgen --rate`, as wrk2: requests on a fixed schedule, latency from
each request's due time) at rising offered rates over a fixed number of connections, until the
server falls well behind twice in a row. Writes build/bench/tcp_rate.csv (one row per point),
tcp_rate.jsonl (one record per point, bench/results/README.md's fields; --record FILE appends
them there too), each point's latency distribution (tcp_rate-VARIANT-RATE.hgrm) and
tcp_latency.png: p50, p99 and p99.9 against the achieved requests/s, with the published
latency at 16 connections beside them.

QEMU runs every vCPU on one host thread (as bench_tcp.py): the figures are this host's, named in
each record with the load average at the start of its point.
"""
import argparse
import csv
import datetime
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_tcp import PUBLISHED_LAT16_MS  # noqa: E402
from uintr import Fail, plot as plots, qemu, records  # noqa: E402
from uintr.qemu import Qemu  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RATES = [250, 500, 1000, 2000, 4000, 8000, 16000, 32000]
# A point "falls behind" when it achieves less than this share of the offered rate; the sweep
# stops after two such points in a row (the knee and one beyond it are on the plot).
BEHIND = 0.8
FIELDS = ["variant", "harts", "connections", "offered_rate", "requests_per_s", "requests", "unsent", "p50_us", "p90_us",
          "p99_us", "p999_us", "max_us", "errors", "load1"]


def run_point(a, port, variant, rate):
    """One open-loop point: the load client's JSON result, plus the host load at its start."""
    load1 = os.getloadavg()[0]
    hgrm = os.path.join(a.out, f"tcp_rate-{variant}-{rate}.hgrm")
    cmd = [a.loadgen, "--port", str(port), "-c", str(a.connections), "-s", str(a.size), "-d", str(a.duration),
           "-w", str(a.warmup), "-t", "30", "-q", "--rate", str(rate), "--json", "-", "--hgrm", hgrm]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.duration + a.warmup + a.connections * 30 + 120)
    lines = r.stdout.strip().splitlines()
    if not lines:
        raise Fail(f"loadgen gave no result (exit {r.returncode}): {r.stderr.strip()[-300:]}")
    res = json.loads(lines[-1])
    res.update(variant=variant, harts=a.harts, load1=round(load1, 2))
    print(f"  {variant} at {rate:6d}/s offered: {res['requests_per_s']:8.0f}/s achieved ({res['unsent']} unsent), p50 {res['p50_us']} us, "
          f"p99 {res['p99_us']} us, p99.9 {res['p999_us']} us, {res['errors']} dead (load {load1:.1f})", flush=True)
    return res


def sweep(a, variant, image):
    """Every rate on one booted system, until it falls behind twice in a row."""
    rows = []
    q = Qemu(image, a.guest_port, os.path.join(a.out, f"tcp_rate-qemu-{variant}.log"), inject=False,
             extra=["-accel", "tcg,thread=single"])
    try:
        q.wait_for(r"listening on", 600)
        behind = 0
        for rate in a.rates:
            row = run_point(a, q.host_port, variant, rate)
            rows.append(row)
            behind = behind + 1 if row["requests_per_s"] < BEHIND * rate else 0
            if behind == 2:
                break
    finally:
        q.stop()
    return rows


def record(row, a, rev, qemu_version):
    """The point as a bench/results record."""
    return {
        "revision": rev, "date": datetime.date.today().isoformat(), "target": f"qemu-{a.harts}",
        "bench": "tcp-rate (open loop)",
        "configuration": (f"{row['variant']} network system, {a.harts} harts, QEMU {qemu_version} with one TCG thread; loadgen open loop "
                          f"--rate {row['offered_rate']} over {a.connections} connections, {a.size} B requests, "
                          f"{a.duration:g} s after {a.warmup:g} s warm-up, latency from each request's due time; host "
                          f"{os.cpu_count()} CPUs ({records.cpu_model()}) shared with other jobs, load average {row['load1']} at the start"),
        **{k: row[k] for k in ("variant", "offered_rate", "requests_per_s", "requests", "unsent", "p50_us", "p90_us",
                               "p99_us", "p999_us", "max_us", "errors")},
    }


def plot(rows, out):
    plt = plots.pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    colors = {"async": "C0", "sync": "C3"}
    for variant in sorted({r["variant"] for r in rows}):
        # In the order of the sweep: past the knee the achieved rate falls back as latency climbs.
        pts = [(float(r["requests_per_s"]), r) for r in sorted((r for r in rows if r["variant"] == variant),
                                                                key=lambda r: float(r["offered_rate"]))]
        for key, style, name in (("p50_us", "o-", "p50"), ("p99_us", "s--", "p99"), ("p999_us", "^:", "p99.9")):
            ax.plot([x for x, _ in pts], [int(r[key]) / 1000 for _, r in pts], style, color=colors.get(variant),
                    label=f"ours {variant} {name} (QEMU)")
    for variant, ms in PUBLISHED_LAT16_MS.items():
        ax.axhline(ms, color=colors.get(variant), alpha=0.4, linestyle="-.",
                   label=f"published {variant} latency at 16 connections (FPGA)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("achieved requests/s (open loop)")
    ax.set_ylabel("latency from the due time (ms)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    plots.save(fig, os.path.join(out, "tcp_latency.png"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image", action="append", default=[], help="VARIANT=IMAGE (async, sync), repeatable")
    ap.add_argument("--loadgen", default=os.path.join(ROOT, "build", "cargo-loadgen", "release", "loadgen"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--guest-port", type=int, default=5555)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--harts", type=int, default=4)
    ap.add_argument("--connections", type=int, default=16)
    ap.add_argument("--rates", default=",".join(map(str, RATES)), help="offered requests/s, rising")
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--record", help="also append the records to this JSONL file (bench/results/tcp.jsonl)")
    ap.add_argument("--plot-only", action="store_true", help="redraw tcp_latency.png from tcp_rate.csv")
    a = ap.parse_args()
    plots.need_matplotlib("bench-tcp")
    if a.plot_only:
        with open(os.path.join(a.out, "tcp_rate.csv")) as f:
            plot(list(csv.DictReader(f)), a.out)
        return
    a.rates = [int(r) for r in a.rates.split(",")]
    os.makedirs(a.out, exist_ok=True)
    os.environ["SMP"] = str(a.harts)
    qemu_version = qemu.version().split()[0]
    print(f"bench-tcp: open loop, {a.harts} harts, {a.connections} connections, rates {a.rates} requests/s", flush=True)
    rows = []
    for spec in a.image:
        variant, _, image = spec.partition("=")
        try:
            rows += sweep(a, variant, image)
        except Fail as e:
            print(f"bench-tcp: {variant}: {e}", flush=True)
    if not rows:
        sys.exit("bench-tcp: no open-loop results")
    with open(os.path.join(a.out, "tcp_rate.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    rev = records.revision()
    points = [record(r, a, rev, qemu_version) for r in rows]
    paths = [os.path.join(a.out, "tcp_rate.jsonl")] + ([a.record] if a.record else [])
    records.write(paths[0], points)
    if a.record:
        records.write(a.record, points, append=True)
    plot(rows, a.out)
    print(f"bench-tcp: {', '.join(paths)}, tcp_rate.csv, tcp_latency.png, tcp_rate-*.hgrm in {a.out}")


if __name__ == "__main__":
    main()
