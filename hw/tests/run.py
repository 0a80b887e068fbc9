#!/usr/bin/env python3
"""Run the bare-metal RTL tests (hw/tests/*.c) on the Verilator models of the SoC.

    run.py --sim1 SIM_1CORE --sim4 SIM_4CORE --bins DIR [--only NAME ...] [--jobs N]

Each test is a flat image at 0x8000_0000 that every hart enters; it ends through the
harness's exit device (status 0 = pass). Tests that need several harts run on the 4-core
model, the rest on the 1-core model (faster to run). Prints one line per test, the tests'
`result ...` lines, and writes BINS/results.txt (all result lines) and BINS/summary.txt.
Exit status: 0 when every test passed.
"""
import argparse, concurrent.futures, os, re, subprocess, sys, time

# name: (cores, max cycles[, extra harness arguments])
TESTS = {
    "csr_reset":    (1, 200_000),
    "utrap":        (1, 500_000),
    "uipi_basic":   (1, 1_000_000),
    "ueip_plic":    (1, 500_000),
    "plic_contexts": (4, 2_000_000),
    "uipi_cross":   (4, 2_000_000),
    "uipi_latency": (4, 2_000_000),
    "uret_race":    (1, 1_000_000),
    "rv_int":       (1, 1_000_000),
    "rv_fp":        (1, 1_000_000),
    "rv_csr_irq":   (1, 1_000_000),
    "rv_sv39":      (1, 1_000_000),
    "rv_asid":      (1, 1_000_000),
    "rv_atomic":    (4, 3_000_000),
    "nic_dma":      (4, 1_000_000, ["+nic"]),   # the NIC model with libslirp attached (no port forward); ~55 k cycles
}

def run(name, sim, binpath, max_cycles, extra=()):
    t0 = time.time()
    try:
        p = subprocess.run([sim, f"+image={binpath}", f"+max-cycles={max_cycles}", "+progress=0", *extra],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800)
    except subprocess.TimeoutExpired as e:
        return name, 124, (e.stdout or b"").decode(errors="replace") + "\nwall-clock timeout", time.time() - t0
    return name, p.returncode, p.stdout, time.time() - t0

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sim1", required=True)
    ap.add_argument("--sim4", required=True)
    ap.add_argument("--bins", required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    names = [n for n in TESTS if not a.only or n in a.only]
    missing = [n for n in names if not os.path.exists(os.path.join(a.bins, n + ".bin"))]
    if missing:
        sys.exit(f"test-rtl: missing images: {missing}")
    results, summary, failed = [], [], []
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = []
        for n in names:
            cores, maxc, *extra = TESTS[n]
            futs.append(ex.submit(run, n, a.sim4 if cores == 4 else a.sim1,
                                  os.path.join(a.bins, n + ".bin"), maxc, *extra))
        for f in futs:
            n, rc, out, secs = f.result()
            cyc = re.search(r"\[sim\] (?:exit|timeout) after (\d+) cycles", out)
            harts = re.findall(r"\[sim\] hart (\d+): cycles=(\d+) instret=(\d+)", out)
            ok = rc == 0 and f"PASS {n}" in out
            line = (f"{'PASS' if ok else 'FAIL'} {n:<13} {TESTS[n][0]} core(s)  "
                    f"{cyc.group(1) if cyc else '?'} cycles  {secs:.1f} s  "
                    f"instret/hart {','.join(h[2] for h in harts)}")
            print(line, flush=True)
            summary.append(line)
            for l in out.splitlines():
                if l.startswith("result "):
                    print("  " + l)
                    results.append(l)
            if not ok:
                failed.append(n)
                print("  --- output ---\n  " + "\n  ".join(out.splitlines()[-25:]))
    with open(os.path.join(a.bins, "results.txt"), "w") as f:
        f.write("\n".join(results) + "\n")
    with open(os.path.join(a.bins, "summary.txt"), "w") as f:
        f.write("\n".join(summary) + "\n")
    print(f"test-rtl: {len(names) - len(failed)} passed, {len(failed)} failed" +
          (f" ({', '.join(failed)})" if failed else ""))
    sys.exit(1 if failed else 0)

if __name__ == "__main__":
    main()
