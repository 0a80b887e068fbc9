"""The Verilator simulator of the SoC (hw/sim, `make -C hw/sim bin-path` names the binary): its
command line, the progress lines it prints, and a run in the background with its console in a
log file (RtlSim, for runs the host talks to over the NIC model)."""
import os
import re
import signal
import subprocess
import time

from . import Fail
from .hostnet import free_port

# "[sim] N cycles, X kHz": the harness's progress line (hw/sim/harness.cc, every +progress=N cycles).
PROGRESS = re.compile(r"\[sim\] (\d+) cycles, ([\d.]+) kHz")
# A simulation beside other work (builds, other simulations) runs at this niceness.
NICE = 5


def command(sim, image, max_cycles, *, hostfwd=None, progress=None, extra=(), nice=None, lock=None):
    """The simulator's argument list: boot `image`, stop after `max_cycles` (0: never);
    `hostfwd` "HOST:GUEST" ports for the NIC model, `progress` cycles between progress lines,
    `extra` more plusargs (+profile=...); run under `nice -n NICE` and `flock LOCK` if given."""
    args = [sim, f"+image={image}"]
    args += [f"+hostfwd={hostfwd}"] if hostfwd else []
    args += [f"+max-cycles={max_cycles}"]
    args += [f"+progress={progress}"] if progress else []
    args += list(extra)
    if nice is not None:
        args = ["nice", "-n", str(nice)] + args
    if lock:
        args = ["flock", lock] + args
    return args


def wall_limit(cycles, min_hz):
    """Wall seconds a run of `cycles` may take at the slowest simulator speed accepted: the
    cycle limit, not the wall clock, is then what ends a hung run."""
    return cycles // min_hz


def latest_progress(text):
    """(cycles, kHz) of the last progress line in `text`, or None."""
    found = list(PROGRESS.finditer(text))
    return (int(found[-1].group(1)), float(found[-1].group(2))) if found else None


# How often RtlSim.wait_for hands its caller the latest progress line (`report`).
REPORT_S = 30


class RtlSim:
    """One simulation of `image` with the host's 127.0.0.1:host_port forwarded to guest_port,
    its console in `log_path`. `lock`: a file to flock for the whole run (the shared RTL lock),
    or None."""

    def __init__(self, sim, image, guest_port, log_path, max_cycles, lock=None, progress=1_000_000, extra=(),
                 report=None):
        """`report(seconds running, (cycles, kHz) or None)` is called every REPORT_S seconds
        while wait_for waits."""
        self.report = report
        self.last_report = time.time()
        self.host_port = free_port()
        args = command(sim, image, max_cycles, hostfwd=f"{self.host_port}:{guest_port}", progress=progress,
                       extra=extra, nice=NICE, lock=lock)
        self.log_path = log_path
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        self.t0 = None

    def running_since(self):
        """Wall time the simulation started (its first output: under `lock` it may wait long
        before), or None while it has not."""
        if self.t0 is None and os.path.getsize(self.log_path) > 0:
            self.t0 = time.time()
        return self.t0

    def text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")

    def wait_for(self, pattern, timeout, start=0):
        """The first match of `pattern` in the log from offset `start` on; `timeout` wall seconds
        counted from now or from when the simulation started, whichever is later."""
        t0 = time.time()
        while True:
            m = re.compile(pattern).search(self.text(), start)
            if m:
                return m
            if self.proc.poll() is not None:
                raise Fail(f"the simulation exited ({self.proc.returncode}) before '{pattern}' (log: {self.log_path})")
            since = self.running_since()
            if since is None:
                t0 = time.time()
            elif time.time() - max(t0, since) > timeout:
                raise Fail(f"no '{pattern}' within {timeout} s (log: {self.log_path})")
            if self.report and since is not None and time.time() - self.last_report >= REPORT_S:
                self.last_report = time.time()
                self.report(time.time() - since, latest_progress(self.text()))
            time.sleep(1)

    def cycles_at(self, offset):
        """The simulated cycle count of the last progress line before log offset `offset`."""
        latest = latest_progress(self.text()[:offset])
        return latest[0] if latest else 0

    def stop(self):
        """SIGINT first: the harness stops after the current cycle and prints each hart's state,
        the region counts and the +profile file; then harder."""
        if self.proc.poll() is None:
            for sig, wait in ((signal.SIGINT, 60), (signal.SIGTERM, 20)):
                self.proc.send_signal(sig)
                try:
                    self.proc.wait(wait)
                    break
                except subprocess.TimeoutExpired:
                    pass
            else:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
