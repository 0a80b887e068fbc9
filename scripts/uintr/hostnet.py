"""The host's side of a guest's network: a free port to forward to it, and the load client
(tools/loadgen) run to completion for its JSON result."""
import json
import socket
import subprocess

from . import Fail


def free_port(kind=socket.SOCK_STREAM):
    """A port of 127.0.0.1 free now (for QEMU's or the simulator's host forward)."""
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def loadgen(binary, port, connections, requests, size, timeout, extra=(), wall=None):
    """The load client's JSON result for `requests` requests over `connections` connections;
    `wall` bounds the whole run (default: four per-request timeouts and two minutes)."""
    r = subprocess.run([binary, "--port", str(port), "-c", str(connections), "-n", str(requests), "-s", str(size),
                        "-w", "0", "-t", str(timeout), "-q", "--json", "-"] + list(extra),
                       capture_output=True, text=True, timeout=wall if wall is not None else timeout * 4 + 120)
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise Fail(f"loadgen gave no result (exit {r.returncode}): {r.stderr.strip()[-500:]}")
    return json.loads(lines[-1])
