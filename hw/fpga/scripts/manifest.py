#!/usr/bin/env python3
"""Write manifest.json for a published bitstream folder (bitstreams/<config>/).

  manifest.py --repo REPO --config CONFIG --vivado-version-file F --inputs-hash F [--design D] DIR

Records what is needed to tell where the files came from and whether they are intact: the git
revision (and whether the tree had uncommitted changes), the SoC configuration, the Vivado
version that ran (as Vivado reported it), the hash of the Verilog generator's inputs, and the
SHA-256 of every file in DIR.
"""
import argparse
import datetime
import hashlib
import json
import os
import subprocess


def git(repo, *args):
    r = subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--config", required=True)
    ap.add_argument("--vivado-version-file", required=True)
    ap.add_argument("--inputs-hash")
    ap.add_argument("--design", default="net", help="block design (tcl/designs.tcl)")
    ap.add_argument("dir")
    args = ap.parse_args()
    files = {}
    for root, _, names in os.walk(args.dir):
        for name in sorted(names):
            path = os.path.join(root, name)
            rel = os.path.relpath(path, args.dir)
            if rel == "manifest.json":
                continue
            with open(path, "rb") as f:
                files[rel] = hashlib.sha256(f.read()).hexdigest()
    with open(args.vivado_version_file) as f:
        vivado = f.read().strip()
    inputs = None
    if args.inputs_hash and os.path.exists(args.inputs_hash):
        with open(args.inputs_hash) as f:
            inputs = f.read().strip()
    manifest = {
        "config": args.config,
        "design": args.design,
        "git_revision": git(args.repo, "rev-parse", "HEAD"),
        "git_dirty": bool(git(args.repo, "status", "--porcelain", "--untracked-files=no")),
        "vivado_version": vivado,
        "verilog_inputs_hash": inputs,
        "built_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "sha256": dict(sorted(files.items())),
    }
    with open(os.path.join(args.dir, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    main()
