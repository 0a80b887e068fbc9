#!/usr/bin/env python3
"""Compare the generated SoC top with the port model the Vivado-less checks use.

  check_soc.py --platform platform.toml --verilog UintrSystem.v --work DIR

Fails when the real UintrSystem has a port the model lacks, lacks one the model has, or differs
in width: then either hw/ changed the SoC's ports (update BUNDLES in soc_ports.py and, if an
interface changed, the block design) or the model was wrong. Also lints the wrapper generated
from the real ports against a port stub of the real top (verilator), which checks the wrapper
connects every port with the right width without elaborating the whole SoC.
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_wrapper  # noqa: E402
import soc_ports  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--platform", required=True)
ap.add_argument("--board", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "board.toml"))
ap.add_argument("--verilog", required=True)
ap.add_argument("--work", required=True)
args = ap.parse_args()

platform = soc_ports.load_platform(args.platform)
real = {p.name: p for p in soc_ports.parse(args.verilog, gen_wrapper.SOC_TOP)}
model = {p.name: p for p in soc_ports.model(platform)}
errors = []
for name in sorted(set(model) - set(real)):
    errors.append(f"{name}: in the model, not in {os.path.basename(args.verilog)}")
for name in sorted(set(real) - set(model)):
    errors.append(f"{name}: in {os.path.basename(args.verilog)}, not in the model")
for name in sorted(set(real) & set(model)):
    r, m = real[name], model[name]
    if (r.direction, r.width) != (m.direction, m.width):
        errors.append(f"{name}: {r.direction} [{r.width}] in the Verilog, {m.direction} [{m.width}] in the model")
for e in errors:
    print(f"check_soc: {e}", file=sys.stderr)
if errors:
    sys.exit(f"check_soc: {len(errors)} difference(s) between {args.verilog} and soc_ports.model()")

os.makedirs(args.work, exist_ok=True)
stub = os.path.join(args.work, "UintrSystem_ports.v")
wrapper = os.path.join(args.work, "rocket_soc.v")
with open(stub, "w") as f:
    f.write(soc_ports.stub(list(real.values()), gen_wrapper.SOC_TOP))
with open(wrapper, "w") as f:
    f.write(gen_wrapper.generate(list(real.values()), platform, soc_ports.load_platform(args.board), args.verilog))
r = subprocess.run(["verilator", "--lint-only", "-Wall", "-Wno-DECLFILENAME", "-Wno-UNUSEDSIGNAL",
                    "--top-module", "rocket_soc", wrapper, stub], capture_output=True, text=True)
if r.returncode != 0:
    sys.exit(f"check_soc: wrapper lint failed:\n{r.stderr}")
print(f"check_soc: {args.verilog}: {len(real)} ports match the model; wrapper lints clean")
