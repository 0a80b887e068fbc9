#!/usr/bin/env python3
"""Area of single modules of the generated SoC with yosys (no Vivado needed).

    area.py VERILOG_DIR|FILE.v MODULE [MODULE ...]

For each module: its Verilog and that of every module it instantiates is cut out of
VERILOG_DIR/UintrSystem.v or FILE.v (plus the black boxes beside it), then yosys runs
`synth_xilinx -family xcup -flatten` (UltraScale+, the board's family) with SYNTHESIS defined
(TileLink monitors, asserts and printfs drop out) and the cells are summed into LUTs (LUT1-6),
flip-flops (FD*), carry chains (CARRY8), wide muxes (MUXF7/8/9) and RAM/DSP. Pre-place-and-route
estimates: Vivado packs LUTs differently, so compare modules with each other, not with a
Vivado report.
"""
import os, re, subprocess, sys, tempfile, time

INST = re.compile(r"^\s+(\w+)\s+(#|\w+\s*\()")   # `Mod inst (` or `Mod #(params) inst (`

def modules(text):
    out, name, buf = {}, None, []
    for line in text.splitlines(keepends=True):
        m = re.match(r"^module (\w+)", line)
        if m:
            name, buf = m.group(1), []
        if name:
            buf.append(line)
            if line.startswith("endmodule"):
                out[name] = "".join(buf)
                name = None
    return out

def closure(mods, top):
    seen, todo = [], [top]
    while todo:
        m = todo.pop()
        if m in seen or m not in mods:
            continue
        seen.append(m)
        for line in mods[m].splitlines():
            i = INST.match(line)
            if i and i.group(1) in mods:
                todo.append(i.group(1))
    return seen

def cells(stat):
    counts = {}
    for name, n in re.findall(r"^\s+(\w+)\s+(\d+)\s*$", stat, re.M):
        counts[name] = counts.get(name, 0) + int(n)
    group = lambda pred: sum(n for c, n in counts.items() if pred(c))
    return {
        "LUT": group(lambda c: re.fullmatch(r"LUT[1-6]", c) is not None),
        "FF": group(lambda c: re.fullmatch(r"FD[RSCP]E?", c) is not None),
        "CARRY8": counts.get("CARRY8", 0),
        "MUXF": group(lambda c: c.startswith("MUXF")),
        "RAM/DSP": group(lambda c: c.startswith("RAM") or c.startswith("DSP")),
    }

def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    vdir, tops = sys.argv[1], sys.argv[2:]
    top_v = vdir if vdir.endswith(".v") else os.path.join(vdir, "UintrSystem.v")   # or one file
    vdir = os.path.dirname(top_v)
    text = open(top_v).read()
    for bb in ("plusarg_reader.v",):
        p = os.path.join(vdir, bb)
        if os.path.exists(p):
            text += "\n" + open(p).read()
    mods = modules(text)
    print(f"{'module':<12} {'LUT':>6} {'FF':>6} {'CARRY8':>7} {'MUXF':>5} {'RAM/DSP':>8}   yosys time")
    for top in tops:
        if top not in mods:
            sys.exit(f"area: no module {top} in {top_v}")
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "in.v")
            with open(src, "w") as f:
                for m in closure(mods, top):
                    f.write(mods[m])
            t0 = time.time()
            p = subprocess.run(["yosys", "-q", "-p",
                                f"read_verilog -DSYNTHESIS {src}; synth_xilinx -family xcup -flatten -top {top}; tee -o {d}/stat.txt stat"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if p.returncode != 0:
                sys.exit(f"area: yosys failed on {top}:\n{p.stdout[-3000:]}")
            c = cells(open(os.path.join(d, "stat.txt")).read())
            print(f"{top:<12} {c['LUT']:>6} {c['FF']:>6} {c['CARRY8']:>7} {c['MUXF']:>5} {c['RAM/DSP']:>8}   {time.time() - t0:.0f} s",
                  flush=True)

if __name__ == "__main__":
    main()
