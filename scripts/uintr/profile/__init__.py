"""The cycle profile of the Verilator harness (+profile=FILE, hw/sim/profiler.h), read by
scripts/profile.py: one module per job.

  data       the profile file (samples, shadow-stack nodes, region counts) and the +profile-trace file
  elf        an ELF64's load segments and symbols
  symbols    pcs to functions: DWARF lines with inlining, each address space's ELF
  reports    the tables: summary, flat, folded stacks, source lines, categories, regions
  timeline   one round of the profiled region, hart by hart, from the trace
"""
