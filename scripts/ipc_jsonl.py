#!/usr/bin/env python3
"""Append the `result` lines of IPC-benchmark console logs (sw/apps/ipc-bench) to a JSON-lines
file of records (bench/results/ipc.jsonl), one per point, with the revision and date they were
measured at and where each side ran (from the log's `started:` line).

  ipc_jsonl.py --revision REV [--date YYYY-MM-DD] [--out bench/results/ipc.jsonl] LOG...
"""
import argparse
import datetime
import re
import sys

from uintr import records as jsonl
from uintr.results import PREFIX, fields

STARTED = re.compile(r"started: client on hart (\d+), server-near on hart (\d+), server-far on hart (\d+)")
TARGETS = {"rtl": "rtl-4core", "qemu": "qemu"}


def placement(variant, harts):
    """Which harts run what (a side that polls before it sleeps counts as using its hart)."""
    client, near, far = harts
    if variant == "async-same":
        return (f"client and server on hart {client} (one hart, neither polls: each Waits at once); "
                f"the idle far server on hart {far} polls its own channel up to 4 M cycles before it sleeps")
    if variant == "async-cross":
        return f"client on hart {client}, server on hart {far} (two harts, both poll before they sleep)"
    if variant == "sync-cross":
        return f"client on hart {client}, server on hart {far}"
    return f"client and server on hart {near}"


def records(text, revision, date):
    m = STARTED.search(text)
    harts = tuple(int(x) for x in m.groups()) if m else (1, 1, 2)
    for line in text.splitlines():
        if not line.startswith(PREFIX):
            continue
        f = fields(line)
        yield {
            "revision": revision,
            "date": date,
            "target": TARGETS.get(f["target"], f["target"]),
            "variant": f["variant"],
            "work": f["work"],
            "concurrency": int(f["concurrency"]),
            "cycles_per_ipc": int(f["cycles_per_ipc"]),
            "kernel_entries_per_call": float(f["kernel_entries_per_ipc"]),
            "notifications_per_call": float(f["notifications_per_ipc"]),
            "calls": int(f["calls"]),
            "placement": placement(f["variant"], harts),
        }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--revision", required=True)
    ap.add_argument("--date", default=datetime.date.today().isoformat())
    ap.add_argument("--out", default="bench/results/ipc.jsonl")
    ap.add_argument("--note", help="added to every record (what the run was)")
    ap.add_argument("logs", nargs="+")
    args = ap.parse_args()
    n = 0
    for path in args.logs:
        with open(path, errors="replace") as f:
            text = f.read()
        if "verdict: ok" not in text:
            sys.exit(f"ipc_jsonl: {path}: no 'verdict: ok' (a reply was wrong or the run did not finish)")
        points = [dict(r, note=args.note) if args.note else r for r in records(text, args.revision, args.date)]
        jsonl.write(args.out, points, append=True)
        n += len(points)
    print(f"ipc_jsonl: {n} records appended to {args.out}")


if __name__ == "__main__":
    main()
