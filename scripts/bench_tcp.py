#!/usr/bin/env python3
"""TCP server benchmark (`make bench-tcp`): boots the network system under QEMU once per variant
(async: channels and coroutines; sync: Call/ReplyRecv and a TCP server thread per connection)
and hart count (1, 4), sweeps the load client's connection count over each, and writes
build/bench/tcp.csv (one row per point: the load client's columns plus the host's 1-minute load
average when the point started), tcp.md (async/sync ratios within this run beside the
published ones and the goals) and tcp_rps.png / tcp_p99.png (requests/s and p99 latency against
connections, the published curves beside ours). QEMU numbers: functional ratios on this host,
not the board's speed; the host is named in tcp.md.

QEMU runs its vCPUs in one host thread (`--tcg single`, the default): with one thread per vCPU
(`--tcg multi`) and fewer host cores than harts, shared with other jobs, a sleeping hart's
wake-up waits for the host to schedule its thread, and the 4-hart points measure the host's
scheduler (tens to hundreds of ms per wake-up, bimodal) rather than the system.

`--target rtl` (`make bench-tcp TARGET=rtl`): the RTL images (`make net-image-rtl`: the same
programs with 24 sockets instead of 136, which keeps the boot short) on the cycle-accurate 4-core RTL
with the NIC model (`rtl_net.RtlSim`: AXI DMA + AXI Ethernet, libslirp on simulated time), one
simulation per variant booted once, then 1, 4 and 16 connections with a bounded number of
requests each. The figure is the TCP server's own: its hart's cycles (rdcycle, which does not
advance while the hart sleeps in WFI) from the first request of a load run received to its last
response sent, divided by the requests (`cycles_per_request`), and the elapsed time between the
same two points from the timer, in core cycles (`elapsed_cycles_per_request`, when the TCP
server has the timer mapped); the load client's wall-clock columns are kept but mean little (the
simulation runs ~2,500x slower than the board). Rows with target=rtl replace the previous RTL
rows of the variants and connection counts run (one `--image` and one count per run keeps a run
short: `make bench-tcp TARGET=rtl NET_BENCH_VARIANTS=async NET_RTL_CONNECTIONS=4`) and leave the
QEMU rows alone (and a QEMU run keeps the RTL rows); each row also has the simulation's boot to
"listening" (`boot_cycles`). The table in tcp.md and tcp_rtl_cycles.png show the elapsed
figure (the server's hart sleeps between requests, so its rdcycle count leaves that time out
and understates a request's cost; the table gives rdcycle's beside it), with the published
board figure and the goal.
"""
import argparse
import csv
import os
import shlex
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rtl_net  # noqa: E402
from uintr import Fail, plot as plots, qemu  # noqa: E402
from uintr.qemu import Qemu  # noqa: E402
from uintr.records import cpu_model  # noqa: E402
from uintr.sim import RtlSim  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONNECTIONS = [1, 2, 4, 8, 16, 32, 64, 128]
# docs/benchmarks.md section 4: requests/s, FPGA, 1 Gbps, Python client, 1-byte requests.
PUBLISHED_RPS = {
    ("sync", 1): {1: 520, 4: 810, 8: 770, 32: 570},
    ("sync", 4): {1: 750, 4: 740, 8: 705, 32: 530},
    ("async", 1): {1: 1010, 4: 1545, 8: 1720, 32: 1270},
    ("async", 4): {1: 1420, 4: 2085, 8: 2075, 32: 1420},
}
# Latency at 16 connections (ms): ~9-10 async, ~23-25 sync.
PUBLISHED_LAT16_MS = {"async": 9.5, "sync": 24.0}
# Issue #19's goals: async/sync requests/s at 4 and 32 connections, async/sync p99 at 16.
GOALS = {"rps4": 3.0, "rps32": 2.5, "p99_16": 0.3}
PUBLISHED_RATIOS = {"rps4": 2.9, "rps32": 2.2, "p99_16": 0.4}
# Issue #20: async, 64 B requests, 4 connections, cycles per request: published (board, 100 MHz)
# and the goal on the RTL.
PUBLISHED_CPR4 = 48_000
GOAL_CPR4 = 10_000
RTL_CONNECTIONS = [1, 4, 16]
# Columns an RTL row adds to the load client's.
RTL_COLUMNS = ["cycles_per_request", "server_requests", "cycles", "elapsed_cycles_per_request"]


def run_point(a, port, conns, variant, harts, out_rows):
    """One point of the sweep: the load client's row, with the load average and TCG mode."""
    load1 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-tcp.") as d:
        path = os.path.join(d, "point.csv")
        cmd = [a.loadgen, "--port", str(port), "-c", str(conns), "-s", str(a.size), "-d", str(a.duration),
               "-w", str(a.warmup), "-t", "30", "-q", "--csv", path, "--target", "qemu", "--variant", variant,
               "--harts", str(harts)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.duration + a.warmup + conns * 30 + 120)
        line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr.strip()[-300:]
        print(f"  {variant} {harts} hart(s), {conns:3d} connections (load {load1:.1f}): {line}", flush=True)
        if os.path.exists(path):
            for row in csv.DictReader(open(path)):
                row["load1"] = f"{load1:.2f}"
                row["tcg"] = a.tcg
                out_rows.append(row)


def read_rows(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def write_rows(path, rows):
    fields = []
    for r in rows:
        fields += [k for k in r if k not in fields]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, restval="")
        w.writeheader()
        w.writerows(rows)


def merge_rows(path, rows, target, points=None):
    """`rows` (all of `target`) in place of the file's rows of that target (of those
    (variant, connections) `points` only, if given: an RTL run measures one or a few); the
    others kept."""
    old = read_rows(path) if os.path.exists(path) else []
    replaced = lambda r: r.get("target", "qemu") == target and (
        points is None or (r.get("variant"), int(r.get("connections", 0))) in points)
    return [r for r in old if not replaced(r)] + rows


def rtl_requests(conns, per_conn):
    """Requests of one RTL point: `per_conn` times the connections, at least 16 in all. The
    load client hands each to whichever connection is free, so a connection serves about
    `per_conn` of them (9/8/8/7 in one 4-connection run), not exactly."""
    return max(16, per_conn * conns)


def run_rtl(a, images):
    """Each variant on the RTL: boot once, then the connection counts; rows with target=rtl."""
    rows = []
    for spec in images:
        variant, _, image = spec.partition("=")
        log = os.path.join(a.out, f"tcp-rtl-{variant}.log")
        sim = RtlSim(a.sim, image, a.guest_port, log, a.max_cycles, a.lock, progress=250_000,
                             extra=shlex.split(a.sim_args))
        try:
            m = sim.wait_for(r"\[tcp-server\] .*listening on", a.boot_timeout)
            boot = sim.cycles_at(m.end())
            print(f"  rtl {variant}: listening after ~{boot / 1e6:.1f} M cycles "
                  f"({time.time() - sim.running_since():.0f} s), host port {sim.host_port}", flush=True)
            at = m.end()
            for k, c in enumerate(int(x) for x in a.rtl_connections.split(",")):
                # The first point always runs (a slow boot on a loaded host must not skip it).
                if k > 0 and time.time() - sim.running_since() > a.rtl_wall:
                    print(f"  rtl {variant}: {a.rtl_wall} s of simulation used up; {c} connections and on not measured", flush=True)
                    break
                n = rtl_requests(c, a.rtl_requests)
                t0 = time.time()
                with tempfile.TemporaryDirectory(prefix="bench-tcp.") as d:
                    path = os.path.join(d, "point.csv")
                    res = rtl_net.loadgen_run(a.loadgen, sim.host_port, c, n, a.size, a.rtl_timeout,
                                          ["--csv", path, "--target", "rtl", "--variant", variant, "--harts", "4"])
                    row = read_rows(path)[-1] if os.path.exists(path) else None
                run = sim.wait_for(rtl_net.RUN.pattern + r"[^\n]*\n", 300, at)
                at = run.end()
                got, conns, cycles, cpr = map(int, run.groups())
                el = rtl_net.ELAPSED.search(run.group(0))
                ecpr = el.group(2) if el else ""
                print(f"  rtl {variant} {c:2d} connections: {res['requests']} requests ({res['errors']} errors) in "
                      f"{time.time() - t0:.0f} s wall; server: {got} requests on {conns} connections, "
                      f"{cycles} cycles, {cpr} cycles per request"
                      + (f"; elapsed (timer) {el.group(1)} cycles, {ecpr} cycles per request" if el else ""), flush=True)
                if row is None or res["errors"] or got != res["requests"]:
                    print(f"  rtl {variant} {c} connections: not recorded (client {res['requests']} answered, "
                          f"{res['errors']} errors; server {got})", flush=True)
                    continue
                row.update({"load1": f"{os.getloadavg()[0]:.2f}", "tcg": "", "cycles_per_request": str(cpr),
                            "server_requests": str(got), "cycles": str(cycles), "boot_cycles": str(boot),
                            "elapsed_cycles_per_request": ecpr})
                rows.append(row)
        except (Fail, subprocess.TimeoutExpired) as e:
            print(f"bench-tcp: rtl {variant}: {e}", flush=True)
        finally:
            sim.stop()
    return rows


def series(rows, variant, harts, metric, target="qemu"):
    return sorted((int(r["connections"]), float(r[metric])) for r in rows
                  if r["variant"] == variant and int(r["harts"]) == harts and r.get("target", "qemu") == target
                  and r.get(metric) not in (None, ""))


def point(rows, variant, harts, conns, metric, target="qemu"):
    for c, v in series(rows, variant, harts, metric, target):
        if c == conns:
            return v
    return None


def ratios(rows, harts):
    """async/sync requests/s at 4 and 32, async/sync p99 at 16 (None where a point is missing)."""
    def ratio(conns, metric):
        x, y = point(rows, "async", harts, conns, metric), point(rows, "sync", harts, conns, metric)
        return x / y if x is not None and y else None
    return {"rps4": ratio(4, "requests_per_s"), "rps32": ratio(32, "requests_per_s"), "p99_16": ratio(16, "p99_us")}


def plot(rows, outdir):
    plt = plots.pyplot()
    styles = {("async", 1): "o-", ("async", 4): "s-", ("sync", 1): "o--", ("sync", 4): "s--"}
    colors = {("async", 1): "C0", ("async", 4): "C1", ("sync", 1): "C2", ("sync", 4): "C3"}
    for metric, fname, ylabel in [("requests_per_s", "tcp_rps.png", "requests/s"), ("p99_us", "tcp_p99.png", "p99 latency (ms)")]:
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        for (variant, harts), st in styles.items():
            pts = series(rows, variant, harts, metric)
            if not pts:
                continue
            if metric == "p99_us":
                pts = [(c, v / 1000) for c, v in pts]
            ax.plot([c for c, _ in pts], [v for _, v in pts], st, color=colors[(variant, harts)], label=f"ours {variant}, {harts} hart(s), QEMU")
        if metric == "requests_per_s":
            for (variant, harts), d in PUBLISHED_RPS.items():
                ks = sorted(d)
                ax.plot(ks, [d[k] for k in ks], ":", alpha=0.7, color=colors[(variant, harts)],
                        label=f"published {variant}, {'1 core' if harts == 1 else 'multi-core'} (FPGA, 1 B)")
            ax.set_yscale("log")
        else:
            for variant, ms in PUBLISHED_LAT16_MS.items():
                ax.plot([16], [ms], "x", markersize=10, label=f"published {variant} latency at 16 (FPGA)")
            ax.set_yscale("log")
        plots.log2_axis(ax, CONNECTIONS)
        ax.set_xlabel("connections")
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        plots.save(fig, os.path.join(outdir, fname))
    if not any(r.get("target") == "rtl" for r in rows):
        return
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    for variant, st in (("async", "o-"), ("sync", "o--")):
        pts = series(rows, variant, 4, "elapsed_cycles_per_request", "rtl")
        if pts:
            ax.plot([c for c, _ in pts], [v for _, v in pts], st, label=f"ours {variant}, 4-core RTL (elapsed cycles per 64 B request, timer)")
    ax.plot([4], [PUBLISHED_CPR4], "x", markersize=10, label="published async at 4 (board, 100 MHz)")
    ax.axhline(GOAL_CPR4, color="gray", linestyle=":", label=f"goal at 4 connections (<= {GOAL_CPR4})")
    plots.log2_axis(ax, RTL_CONNECTIONS)
    ax.set_yscale("log")
    ax.set_xlabel("connections")
    ax.set_ylabel("elapsed cycles per request (RTL, 100 MHz)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    plots.save(fig, os.path.join(outdir, "tcp_rtl_cycles.png"))


def fmt(x, spec=".2f"):
    return "-" if x is None else format(x, spec)


def table(rows, outdir, note):
    lines = ["# TCP server benchmark (QEMU)", "", note, "", "## Goals (async / sync within this run)", "",
             "| measure | published | goal | ours, 1 hart | ours, 4 harts |", "| --- | --- | --- | --- | --- |"]
    r1, r4 = ratios(rows, 1), ratios(rows, 4)
    names = {"rps4": "requests/s at 4 connections", "rps32": "requests/s at 32 connections", "p99_16": "p99 latency at 16 connections"}
    for k, name in names.items():
        op = "<=" if k == "p99_16" else ">="
        lines.append(f"| {name} | {PUBLISHED_RATIOS[k]}x | {op} {GOALS[k]}x | {fmt(r1[k])}x | {fmt(r4[k])}x |")
    lines += ["", "## Every point", "",
              "| harts | connections | async req/s | sync req/s | ratio | async p50/p99/p999 us | sync p50/p99/p999 us | errors a/s | load | published async / sync (same cores) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for h in (1, 4):
        for c in CONNECTIONS:
            ra = [r for r in rows if int(r["harts"]) == h and int(r["connections"]) == c and r["variant"] == "async"]
            rs = [r for r in rows if int(r["harts"]) == h and int(r["connections"]) == c and r["variant"] == "sync"]
            if not ra and not rs:
                continue
            a = ra[0] if ra else None
            s = rs[0] if rs else None
            ratio = float(a["requests_per_s"]) / float(s["requests_per_s"]) if a and s and float(s["requests_per_s"]) else None
            lat = lambda r: f"{r['p50_us']}/{r['p99_us']}/{r['p999_us']}" if r else "-"  # noqa: E731
            pa, ps = PUBLISHED_RPS[("async", h)].get(c, ""), PUBLISHED_RPS[("sync", h)].get(c, "")
            load = "/".join(r["load1"] for r in (a, s) if r and "load1" in r)
            lines.append(f"| {h} | {c} | {fmt(float(a['requests_per_s']) if a else None, '.0f')} | "
                         f"{fmt(float(s['requests_per_s']) if s else None, '.0f')} | {fmt(ratio)} | {lat(a)} | {lat(s)} | "
                         f"{a['errors'] if a else '-'}/{s['errors'] if s else '-'} | {load} | {pa} / {ps} |")
    rtl = [r for r in rows if r.get("target") == "rtl"]
    if rtl:
        lines += ["", "## 4-core RTL (elapsed cycles per 64 B request from the timer, simulated; requests/s at 100 MHz)", "",
                  f"Published (board, 100 MHz): async ~{PUBLISHED_CPR4} cycles per request at 4 connections; goal <= {GOAL_CPR4}. "
                  "Elapsed: the timer between the run's first request in and last response out, in core cycles; "
                  "the server hart's rdcycle (which stops while it sleeps in WFI) in parentheses.", "",
                  "| connections | async cycles/req | sync cycles/req | sync/async | async req/s at 100 MHz | requests (a/s) |",
                  "| --- | --- | --- | --- | --- | --- |"]
        for c in RTL_CONNECTIONS:
            a = point(rtl, "async", 4, c, "elapsed_cycles_per_request", "rtl")
            s = point(rtl, "sync", 4, c, "elapsed_cycles_per_request", "rtl")
            ra = point(rtl, "async", 4, c, "cycles_per_request", "rtl")
            rs = point(rtl, "sync", 4, c, "cycles_per_request", "rtl")
            if a is None and s is None and ra is None and rs is None:
                continue
            na = next((r["server_requests"] for r in rtl if r["variant"] == "async" and int(r["connections"]) == c), "-")
            ns = next((r["server_requests"] for r in rtl if r["variant"] == "sync" and int(r["connections"]) == c), "-")
            lines.append(f"| {c} | {fmt(a, '.0f')} ({fmt(ra, '.0f')}) | {fmt(s, '.0f')} ({fmt(rs, '.0f')}) | "
                         f"{fmt(s / a if a and s else None)} | {fmt(1e8 / a if a else None, '.0f')} | {na}/{ns} |")
    with open(os.path.join(outdir, "tcp.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return r1, r4


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--image", action="append", help="VARIANT=IMAGE (async, sync), repeatable",
                    default=None)
    ap.add_argument("--loadgen", default=os.path.join(ROOT, "build", "cargo-loadgen", "release", "loadgen"))
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "bench"))
    ap.add_argument("--guest-port", type=int, default=5555)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--harts", default="1,4")
    ap.add_argument("--connections", default=",".join(map(str, CONNECTIONS)))
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=1)
    ap.add_argument("--tcg", choices=["single", "multi"], default="single", help="QEMU's TCG threads (see above)")
    ap.add_argument("--plot-only", action="store_true", help="redraw the plots and table from the CSV")
    ap.add_argument("--target", choices=["qemu", "rtl"], default="qemu")
    ap.add_argument("--sim", help="rtl: the 4-core simulator binary")
    ap.add_argument("--lock", help="rtl: flock this file around each simulation")
    ap.add_argument("--sim-args", default="", help="rtl: more simulator arguments (+profile=F +profile-region=70 ...)")
    ap.add_argument("--max-cycles", type=int, default=400_000_000, help="rtl: bound on each simulation")
    ap.add_argument("--boot-timeout", type=int, default=1800, help="rtl: wall seconds until the TCP server listens")
    ap.add_argument("--rtl-connections", default=",".join(map(str, RTL_CONNECTIONS)))
    ap.add_argument("--rtl-requests", type=int, default=8, help="rtl: requests of a point per connection, on average (times the connections, at least 16 in all; each goes to whichever connection is free)")
    ap.add_argument("--rtl-timeout", type=int, default=300, help="rtl: wall seconds a single request may take")
    ap.add_argument("--rtl-wall", type=int, default=720, help="rtl: no new point (after the first) once a simulation has run this many wall seconds")
    a = ap.parse_args()
    plots.need_matplotlib("bench-tcp")
    images = a.image or [f"async={os.path.join(ROOT, 'build', 'sw', 'image-net-async.bin')}",
                         f"sync={os.path.join(ROOT, 'build', 'sw', 'image-net-sync.bin')}"]
    os.makedirs(a.out, exist_ok=True)
    out_csv = os.path.join(a.out, "tcp.csv")
    note_path = os.path.join(a.out, "tcp-note.txt")
    note = ""
    if a.target == "rtl" and not a.plot_only:
        if not a.sim:
            sys.exit("bench-tcp: --target rtl needs --sim")
        print(f"bench-tcp: 4-core RTL, {a.size}-byte requests, connections {a.rtl_connections}", flush=True)
        rows = run_rtl(a, images)
        if not rows:
            sys.exit("bench-tcp: no RTL results")
        points = {(spec.partition("=")[0], int(c)) for spec in images for c in a.rtl_connections.split(",")}
        write_rows(out_csv, merge_rows(out_csv, rows, "rtl", points))
        note = open(note_path).read().strip() if os.path.exists(note_path) else ""
    elif not a.plot_only:
        load = os.getloadavg()
        note = (f"Host: {os.cpu_count()} CPUs ({cpu_model()}), shared with other jobs; load average "
                f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) at the start, each point's 1-minute load in "
                f"its row; {a.size}-byte requests, {a.duration:g} s per point after a {a.warmup:g} s warm-up; "
                f"QEMU {qemu.version()} with "
                f"{'one TCG thread for all vCPUs' if a.tcg == 'single' else 'a TCG thread per vCPU'}. "
                f"On 4 harts the net server and the TCP server run on harts 1 and 2.")
        print(f"bench-tcp: {note}", flush=True)
        rows = []
        for harts in [int(h) for h in a.harts.split(",")]:
            # Every variant of this hart count boots first; then each connection count runs on
            # one after the other, so the points compared are measured a few seconds apart
            # (the host's load drifts). A system waiting for its turn idles in wfi.
            os.environ["SMP"] = str(harts)
            extra = ["-accel", "tcg,thread=single"] if a.tcg == "single" else []
            systems = []
            try:
                for spec in images:
                    variant, _, image = spec.partition("=")
                    q = Qemu(image, a.guest_port, os.path.join(a.out, f"tcp-qemu-{variant}-{harts}.log"), inject=False, extra=extra)
                    systems.append((variant, q))
                    q.wait_for(r"listening on", 600)
                for c in [int(c) for c in a.connections.split(",")]:
                    for variant, q in systems:
                        run_point(a, q.host_port, c, variant, harts, rows)
            except (Fail, subprocess.TimeoutExpired) as e:
                print(f"bench-tcp: {harts} hart(s): {e}")
            finally:
                for _, q in systems:
                    q.stop()
        if not rows:
            sys.exit("bench-tcp: no results")
        write_rows(out_csv, merge_rows(out_csv, rows, "qemu"))
        load = os.getloadavg()
        note += f" Load average at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}."
        with open(note_path, "w") as f:
            f.write(note + "\n")
    elif os.path.exists(note_path):
        note = open(note_path).read().strip()
    if not os.path.exists(out_csv):
        sys.exit("bench-tcp: no results")
    rows = read_rows(out_csv)
    r1, r4 = table(rows, a.out, note)
    for h, r in ((1, r1), (4, r4)) if not a.plot_only and a.target == "qemu" else ():
        print(f"bench-tcp: {h} hart(s): async/sync requests/s at 4 connections {fmt(r['rps4'])}x (goal >= {GOALS['rps4']}x), "
              f"at 32 {fmt(r['rps32'])}x (goal >= {GOALS['rps32']}x); p99 at 16 {fmt(r['p99_16'])}x (goal <= {GOALS['p99_16']}x)")
    plot(rows, a.out)
    rtl_png = ", tcp_rtl_cycles.png" if any(r.get("target") == "rtl" for r in rows) else ""
    print(f"bench-tcp: {out_csv}, tcp.md, tcp_rps.png, tcp_p99.png{rtl_png} in {a.out}")


if __name__ == "__main__":
    main()
