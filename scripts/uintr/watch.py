"""A run in the foreground with its output watched: every line handed to the caller as it
comes, a tick every few seconds while it runs (progress reports), killed at its timeout."""
import subprocess
import threading
import time

# After a kill, how long the output may take to end: a child the killed process started (flock's
# command) can hold the pipe open; its output is then left unread.
DRAIN_S = 10


def run_watched(cmd, timeout, env=None, on_line=None, tick_s=None, on_tick=None):
    """Run `cmd` (stdin empty, stderr merged) to its end or `timeout` seconds (then killed).
    `on_line(line)` sees each line, newline kept, as it comes; `on_tick(seconds running)` is
    called every `tick_s` seconds. Returns (the whole output, exit status or "timeout")."""
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    chunks = []

    def read():
        for raw in p.stdout:
            line = raw.decode(errors="replace")
            chunks.append(line)
            if on_line:
                on_line(line)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    start = time.monotonic()
    deadline = start + timeout
    next_tick = start + tick_s if tick_s else float("inf")
    killed = False
    while True:
        try:
            status = p.wait(timeout=max(0.1, min(deadline, next_tick) - time.monotonic()))
            break
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if now >= deadline:
                p.kill()
                p.wait()
                status, killed = "timeout", True
                break
            if now >= next_tick:
                next_tick += tick_s
                if on_tick:
                    on_tick(now - start)
    reader.join(DRAIN_S if killed else None)
    if not reader.is_alive():
        p.stdout.close()
    return "".join(chunks), status
