#!/usr/bin/env python3
"""Symbolize a cycle profile of the Verilator harness (+profile=FILE, hw/sim/profiler.h).

    profile.py build/prof/run.prof                       flat profile by function (all harts)
    profile.py run.prof --hart 3 --inline --top 30       one hart, innermost inlined function
    profile.py run.prof --folded out.folded              folded stacks (flamegraph.pl, speedscope)
    profile.py run.prof --lines 'try_fastpath'           cycles per source line of matching functions
    profile.py run.prof --categories cats.toml           cycles per category (first matching rule)
    profile.py run.prof --timeline run.trace [--round K] one round of the profiled region, hart by hart
                                                         (+profile-trace=FILE beside +profile)

ELFs: M-mode pcs are looked up in the firmware, S-mode pcs in the kernel (physical pcs before
the MMU is on through the ELF's load addresses), U-mode pcs in the user ELF whose bytes match
the instructions the hart retired under that satp root (every *.elf of --elf-dir other than
firmware and kernel, plus --elf). Names come from the DWARF line tables (llvm-addr2line -i), so
inlined functions can be told apart (--inline).
"""
import argparse
import os
import sys

from uintr.profile import reports
from uintr.profile.data import Profile
from uintr.profile.elf import Elf
from uintr.profile.symbols import Symbolizer
from uintr.profile.timeline import timeline


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--elf-dir", default="build/sw", help="where firmware.elf, kernel.elf and the user ELFs are")
    ap.add_argument("--firmware")
    ap.add_argument("--kernel")
    ap.add_argument("--elf", action="append", default=[], help="a user ELF (besides those in --elf-dir)")
    ap.add_argument("--satp", action="append", default=[], metavar="ROOT=NAME",
                    help="the user ELF NAME (file name less .elf) for satp root ROOT, as the profile prints it; "
                         "needed for a sampled profile (+profile-every=N), whose samples carry no instructions to match")
    ap.add_argument("--hart", type=int, action="append", help="only this hart (repeatable)")
    ap.add_argument("--priv", help="only these privilege levels, e.g. US")
    ap.add_argument("--wfi", action="store_true", help="include cycles asleep in wfi")
    ap.add_argument("--inline", action="store_true", help="charge the innermost inlined function")
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--folded", help="write folded stacks here (flamegraph.pl / speedscope / inferno)")
    ap.add_argument("--per-hart", action="store_true", help="folded stacks start with the hart")
    ap.add_argument("--lines", help="cycles per source line of functions matching this regex")
    ap.add_argument("--pcs", action="store_true", help="with --lines: per pc, not per line")
    ap.add_argument("--categories", help="TOML file of [[category]] name/match rules")
    ap.add_argument("--timeline", metavar="TRACE", help="the +profile-trace file of this profile: print one round of "
                    "the profiled region as each hart's runs of one function, in time order")
    ap.add_argument("--round", type=int, help="with --timeline: which run of the region (default: the median-long one)")
    ap.add_argument("--min-run", type=int, default=0, help="with --timeline: leave out runs shorter than this (cycles)")
    ap.add_argument("--divide", default="1", help="print cycles divided by this number, or 'region': by how often "
                    "the profiled region (+profile-region) ran")
    args = ap.parse_args()

    prof = Profile(args.profile)
    firmware = Elf(args.firmware or os.path.join(args.elf_dir, "firmware.elf"), "firmware")
    kernel = Elf(args.kernel or os.path.join(args.elf_dir, "kernel.elf"), "kernel")
    skip = {os.path.abspath(firmware.path), os.path.abspath(kernel.path)}
    paths = [os.path.join(args.elf_dir, f) for f in sorted(os.listdir(args.elf_dir)) if f.endswith(".elf")] + args.elf
    users = [Elf(p, os.path.basename(p)[:-4]) for p in dict.fromkeys(paths) if os.path.abspath(p) not in skip]
    given = []
    for kv in args.satp:
        root, _, name = kv.partition("=")
        given.append((int(root, 0), name))
    sym = Symbolizer(prof, firmware, kernel, users, args.inline, given)
    harts = sorted({s.hart for s in prof.samples})
    if args.divide == "region":
        rid = int(prof.meta.get("region", "-1"))
        args.divide = sum(r[2] for r in prof.regions if r[1] == rid)
        if rid < 0 or not args.divide:
            sys.exit("profile: --divide region needs a profile taken with +profile-region=ID of a region that ran")
    else:
        args.divide = int(args.divide)

    reports.summary(prof, len(harts))
    if prof.regions:
        reports.regions(prof)
        print()
    for satp, elf in sorted(sym.user_of.items()):
        print(f"user address space (satp root {satp:#x}): {elf.name}")
    print()
    if args.timeline:
        timeline(prof, sym, args)
    elif args.folded:
        reports.folded(prof, sym, args, args.folded)
    elif args.lines:
        reports.lines(prof, sym, args, args.lines)
    elif args.categories:
        reports.categories(prof, sym, args, args.categories)
    else:
        reports.flat(prof, sym, args, harts if not args.hart else sorted(args.hart))


if __name__ == "__main__":
    main()
