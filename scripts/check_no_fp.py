#!/usr/bin/env python3
"""Fail if an ELF contains floating-point instructions or FP CSR accesses.

The kernel and firmware never save FP state for themselves, so a single compiler-emitted FP
instruction would corrupt user state. Run with --self-test to prove the detector fires.
"""
import os
import re
import subprocess
import sys
import tempfile

OBJDUMP = "riscv64-unknown-elf-objdump"
# Base FP mnemonics (F/D/Q/Zfh loads, stores, arithmetic, moves, compares, conversions) and
# the FP CSRs. Matched on the mnemonic column of objdump's output.
FP_MNEMONIC = re.compile(r"^f(l[whdq]|s[whdq]|add|sub|mul|div|sqrt|min|max|sgnj|mv|cvt|eq|lt|le|class|madd|msub|nmadd|nmsub|rcsr|scsr|rrm|srm|rflags|sflags)\b|^c\.f(ld|sd|lw|sw)")
FP_CSR = re.compile(r"\b(fcsr|frm|fflags)\b")


def fp_instructions(elf):
    out = subprocess.run([OBJDUMP, "-d", "--no-show-raw-insn", "-M", "no-aliases", elf],
                         check=True, capture_output=True, text=True).stdout
    hits = []
    for line in out.splitlines():
        parts = line.split("\t")
        if len(parts) < 2 or not parts[0].strip().endswith(":"):
            continue
        mnemonic, operands = parts[1].strip(), (parts[2] if len(parts) > 2 else "")
        if FP_MNEMONIC.match(mnemonic) or (mnemonic.startswith("csr") and FP_CSR.search(operands)):
            hits.append(line.strip())
    return hits


def self_test():
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "fp.S"), os.path.join(d, "fp.o")
        open(src, "w").write(".text\n add a0, a0, a1\n fadd.d fa0, fa0, fa1\n csrr a0, fcsr\n")
        subprocess.run(["riscv64-unknown-elf-gcc", "-march=rv64gc", "-mabi=lp64d", "-c", src, "-o", obj], check=True)
        hits = fp_instructions(obj)
        if len(hits) != 2:
            sys.exit(f"check_no_fp self-test: expected 2 FP hits, got {hits}")


def main():
    self_test()
    bad = False
    for elf in sys.argv[1:]:
        hits = fp_instructions(elf)
        if hits:
            bad = True
            print(f"{elf}: {len(hits)} floating-point instructions, e.g.:\n  " + "\n  ".join(hits[:5]))
        else:
            print(f"no-fp: {os.path.basename(elf)} ok")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
