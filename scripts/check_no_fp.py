#!/usr/bin/env python3
"""Fail if an ELF contains floating-point instructions or FP CSR accesses outside the routines
allowed to hold them.

The firmware never touches FP state; the kernel only moves user threads' F/D registers, in two
assembly routines (sw/kernel/src/arch/fpu.rs), named with --allow. A compiler-emitted FP
instruction anywhere else would corrupt a user thread's state.

Instructions are classified by their encoding, not by objdump's mnemonic: objdump decodes with
the ELF's own ISA attributes, and in a soft-float (rv64imac) image FP instructions show only as
`.4byte`. Run with --self-test (implied) to prove the detector fires.

usage: check_no_fp.py [--allow SYMBOL]... ELF...
"""
import os
import re
import subprocess
import sys
import tempfile

OBJDUMP = "riscv64-unknown-elf-objdump"
# Major opcodes of LOAD-FP, STORE-FP, the fused multiply-adds and OP-FP.
FP_OPCODES = {0x07, 0x27, 0x43, 0x47, 0x4B, 0x4F, 0x53}
# fflags, frm, fcsr
FP_CSRS = {0x001, 0x002, 0x003}
SYMBOL = re.compile(r"^[0-9a-f]+ <(.+)>:$")
INSN = re.compile(r"^\s*[0-9a-f]+:\s+([0-9a-f]{4}|[0-9a-f]{8})\s")


def is_fp(word, size):
    if size == 2:
        # c.fld / c.fsd (quadrant 0) and c.fldsp / c.fsdsp (quadrant 2): funct3 001 and 101.
        return word & 3 in (0, 2) and word >> 13 in (1, 5)
    if word & 0x7F in FP_OPCODES:
        return True
    # SYSTEM with a CSR funct3 on fflags/frm/fcsr.
    return word & 0x7F == 0x73 and (word >> 12) & 7 not in (0, 4) and word >> 20 in FP_CSRS


def fp_instructions(elf, allowed=()):
    """(symbol, line) of each FP instruction outside the allowed symbols; and the allowed
    symbols that held any."""
    out = subprocess.run([OBJDUMP, "-d", elf], check=True, capture_output=True, text=True).stdout
    hits, seen_allowed, symbol = [], set(), None
    for line in out.splitlines():
        m = SYMBOL.match(line)
        if m:
            symbol = m.group(1)
            continue
        m = INSN.match(line)
        if not m:
            continue
        raw = m.group(1)
        if is_fp(int(raw, 16), len(raw) // 2):
            if symbol in allowed:
                seen_allowed.add(symbol)
            else:
                hits.append((symbol, line.strip()))
    return hits, seen_allowed


def self_test():
    with tempfile.TemporaryDirectory() as d:
        def build(name, march, body):
            src, obj = os.path.join(d, name + ".S"), os.path.join(d, name + ".o")
            open(src, "w").write(body)
            subprocess.run(["riscv64-unknown-elf-gcc", f"-march={march}", "-mabi=lp64", "-c", src, "-o", obj],
                           check=True)
            return obj
        # Decoded by objdump (rv64gc attributes): two FP instructions among integer ones.
        gc = build("gc", "rv64gc", ".text\nf:\n add a0, a0, a1\n fadd.d fa0, fa0, fa1\n csrr a0, fcsr\n"
                   " csrr a0, sstatus\n c.fld fa0, 0(a0)\n")
        hits, _ = fp_instructions(gc)
        if len(hits) != 3:
            sys.exit(f"check_no_fp self-test: expected 3 FP hits in an rv64gc object, got {hits}")
        # Soft-float attributes (objdump prints .4byte): fsd f0, 0(a0) and fscsr t0, one allowed.
        imac = build("imac", "rv64imac", ".text\nok:\n .4byte 0x00053027\n ret\nbad:\n .4byte 0x00329073\n ret\n")
        hits, seen = fp_instructions(imac, {"ok"})
        if [s for s, _ in hits] != ["bad"] or seen != {"ok"}:
            sys.exit(f"check_no_fp self-test: expected one hit in 'bad' and 'ok' allowed, got {hits}, {seen}")


def main():
    args, allowed = sys.argv[1:], set()
    while args and args[0] == "--allow":
        allowed.add(args[1])
        args = args[2:]
    self_test()
    bad = False
    for elf in args:
        hits, seen = fp_instructions(elf, allowed)
        if hits:
            bad = True
            print(f"{elf}: {len(hits)} floating-point instructions, e.g.:\n  "
                  + "\n  ".join(f"{s}: {l}" for s, l in hits[:5]))
        else:
            note = f" (FP only in {', '.join(sorted(seen))})" if seen else ""
            print(f"no-fp: {os.path.basename(elf)} ok{note}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
