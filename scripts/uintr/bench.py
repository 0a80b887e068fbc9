"""A benchmark's run followed on the console: each point (result line) described as it comes,
chosen lines echoed, the whole console kept in a log file."""
import time

from .results import PREFIX, fields
from .watch import run_watched


def follow(cmd, log_path, timeout, tag, describe, echo):
    """Run `cmd` to its end or `timeout` seconds, writing its console to `log_path`; print
    "[tag] MIN min  point N: describe(fields)" per result line and the lines starting with one
    of the prefixes `echo` (and panics, and the simulator's own lines). Returns the console."""
    start = time.monotonic()
    points, lines = [0], []
    with open(log_path, "w") as log:
        def on_line(raw):
            if log.closed:
                return  # a killed run's straggler (watch.DRAIN_S)
            line = raw.rstrip("\n")
            lines.append(line)
            log.write(line + "\n")
            log.flush()
            t = time.monotonic() - start
            if line.startswith(PREFIX):
                points[0] += 1
                print(f"[{tag}] {t / 60:5.1f} min  point {points[0]:2d}: {describe(fields(line))}", flush=True)
            elif line.startswith(echo) or "PANIC" in line or line.startswith("[sim]"):
                print(f"[{tag}] {t / 60:5.1f} min  {line}", flush=True)

        _, status = run_watched(cmd, timeout, on_line=on_line)
    if status == "timeout":
        print(f"[{tag}] timed out after {time.monotonic() - start:.0f} s", flush=True)
    return "\n".join(lines)
