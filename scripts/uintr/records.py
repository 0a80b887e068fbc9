"""Results kept as data: JSON-lines records (bench/results/*.jsonl, one record per point) and
what each record says about where it came from (the revision, the host)."""
import json
import os
import platform
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def revision():
    """The tree's commit, short, with "-dirty" if tracked files differ from it; "unknown"
    outside git."""
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return rev + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def cpu_model():
    """The host's CPU, as /proc/cpuinfo names it."""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def write(path, records, append=False):
    """`records` (dicts) to `path`, one JSON object per line; `append` keeps what is there."""
    with open(path, "a" if append else "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
