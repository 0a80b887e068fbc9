#!/usr/bin/env python3
"""The network system on the 4-core RTL with the NIC model (hw/sim: AXI DMA + AXI Ethernet,
libslirp on simulated time, `+hostfwd`), driven from the host by tools/loadgen.

As a script: the bounded TCP exchange of `make test` (`make test-sim-net`): boot the async
network image, wait for the TCP server to listen, send a few requests over one connection, fail
if any reply is missing or wrong, or if the TCP server's own count of the run disagrees. It
prints the simulated cycles the boot and the exchange took (from the harness's progress lines
and the TCP server's rdcycle figures).

`bench_tcp.py --target rtl` uses its patterns (RUN, ELAPSED) and loadgen_run.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from uintr import Fail  # noqa: E402
from uintr import hostnet  # noqa: E402
from uintr.sim import RtlSim  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# "[tcp-server] run: N requests on C connections in X cycles, Y cycles per request"
RUN = re.compile(r"\[tcp-server\] run: (\d+) requests on (\d+) connections in (\d+) cycles, (\d+) cycles per request")
# ... "; elapsed E cycles, P cycles per request (timer)": the same run on the timer (rdcycle does
# not count a hart's cycles asleep in WFI; the timer does), when the TCP server has it mapped.
ELAPSED = re.compile(r"elapsed (\d+) cycles, (\d+) cycles per request \(timer\)")


def loadgen_run(binary, port, connections, requests, size, timeout, extra=()):
    """The load client's run, its wall bound scaled to the simulation (each request may
    take up to `timeout` seconds of host time)."""
    return hostnet.loadgen(binary, port, connections, requests, size, timeout, extra,
                           wall=timeout * (requests + connections) + 120)


def exchange(sim_bin, image, loadgen, log, guest_port=5555, size=64, requests=4, max_cycles=30_000_000,
             boot_timeout=1200, timeout=120, lock=None, extra=(), report=None):
    """Boot `image` on the RTL, send `requests` over one connection once the TCP server listens,
    check every reply and the server's own count. (passed, report lines)."""
    lines = []
    sim = RtlSim(sim_bin, image, guest_port, log, max_cycles, lock, progress=500_000, extra=extra, report=report)
    try:
        m = sim.wait_for(r"\[tcp-server\] .*listening on", boot_timeout)
        boot = sim.cycles_at(m.end())
        t_boot = time.time() - sim.running_since()
        lines.append(f"sim-net test: TCP server listening after ~{boot / 1e6:.1f} M cycles ({t_boot:.0f} s), host port {sim.host_port}")
        res = loadgen_run(loadgen, sim.host_port, 1, requests, size, timeout)
        if res["requests"] != requests or res["errors"] != 0:
            raise Fail(f"{res['requests']} of {requests} requests answered correctly, {res['errors']} dead connections")
        run = sim.wait_for(RUN.pattern, 120, m.end())
        n, conns, cycles, cpr = map(int, run.groups())
        if (n, conns) != (requests, 1):
            raise Fail(f"the TCP server counted {n} requests on {conns} connections, the client sent {requests} on 1")
        end = sim.cycles_at(len(sim.text()))
        lines.append(f"sim-net test: {requests} requests over 1 connection answered correctly on the RTL: "
                     f"{cycles} cycles from the first request in to the last response out ({cpr} per request); "
                     f"the run so far ~{end / 1e6:.1f} M cycles, {time.time() - sim.running_since():.0f} s wall")
        return True, lines
    except (Fail, subprocess.TimeoutExpired) as e:
        lines.append(f"sim-net test: FAILED: {e}")
        lines += sim.text().splitlines()[-40:]
        return False, lines
    finally:
        sim.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sim", required=True, help="the 4-core simulator binary (make -C hw/sim bin-path)")
    ap.add_argument("--image", required=True, help="the async network system image")
    ap.add_argument("--loadgen", required=True)
    ap.add_argument("--guest-port", type=int, default=5555)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--requests", type=int, default=4)
    ap.add_argument("--max-cycles", type=int, default=30_000_000, help="bound on the whole run")
    ap.add_argument("--boot-timeout", type=int, default=1200, help="wall seconds until the TCP server listens")
    ap.add_argument("--timeout", type=int, default=120, help="wall seconds a single request may take")
    ap.add_argument("--log", default=os.path.join(ROOT, "build", "sim-net-test.log"))
    ap.add_argument("--lock", help="flock this file around the simulation")
    ap.add_argument("--sim-args", default="", help="more simulator arguments (+profile=F +profile-region=70 ...)")
    a = ap.parse_args()
    os.makedirs(os.path.dirname(os.path.abspath(a.log)), exist_ok=True)
    ok, lines = exchange(a.sim, a.image, a.loadgen, a.log, a.guest_port, a.size, a.requests, a.max_cycles,
                         a.boot_timeout, a.timeout, a.lock, shlex.split(a.sim_args))
    print("\n".join(lines), flush=True)
    if not ok:
        sys.exit(1)
    print("sim-net test: passed")


if __name__ == "__main__":
    main()
