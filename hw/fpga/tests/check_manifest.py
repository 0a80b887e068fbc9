#!/usr/bin/env python3
"""Check a published bitstream folder: manifest.json lists every file with its SHA-256, and the
recorded fields are there, the design among them.   check_manifest.py DIR [DESIGN]"""
import hashlib
import json
import os
import sys

d = sys.argv[1]
with open(os.path.join(d, "manifest.json")) as f:
    m = json.load(f)
want_design = sys.argv[2] if len(sys.argv) > 2 else "net"
errors = [f"manifest lacks '{k}'" for k in ("config", "design", "git_revision", "git_dirty", "vivado_version", "sha256") if k not in m]
if m.get("design", want_design) != want_design:
    errors.append(f"manifest says design {m['design']}, expected {want_design}")
on_disk = {os.path.relpath(os.path.join(r, n), d) for r, _, ns in os.walk(d) for n in ns} - {"manifest.json"}
if set(m.get("sha256", {})) != on_disk:
    errors.append(f"manifest lists {sorted(m.get('sha256', {}))}, folder holds {sorted(on_disk)}")
for rel, digest in m.get("sha256", {}).items():
    with open(os.path.join(d, rel), "rb") as f:
        if hashlib.sha256(f.read()).hexdigest() != digest:
            errors.append(f"{rel}: checksum differs from the manifest")
for required in ("axu15eg.bit", "axu15eg.xsa", "reports/timing_summary.rpt", "reports/utilization.rpt"):
    if required not in on_disk:
        errors.append(f"{required} was not published")
for e in errors:
    print(f"check_manifest: {e}", file=sys.stderr)
if errors:
    sys.exit(1)
print(f"check_manifest: ok ({len(on_disk)} files, Vivado {m['vivado_version']}, revision {m['git_revision']})")
