"""The scripts' shared library (named after the project, uintr-soc): one module per job.

  sim       the Verilator simulator's command line, its progress lines, a background run (RtlSim)
  qemu      QEMU's command line (scripts/qemu.sh) and a background run with networking (Qemu)
  hostnet   the host's side of a guest's network: free ports, the load client (tools/loadgen)
  watch     a foreground run with its output watched: each line seen, a tick while it runs, a timeout
  results   the `result key=value ...` lines the benchmarks print
  bench     a benchmark's run followed on the console and kept as a log
  plot      matplotlib, and the axes and files every benchmark plot shares
  records   JSON-lines records of results (bench/results/*.jsonl) and their provenance
  profile   the cycle profile of the simulator (+profile): parse, symbolize, report
"""


class Fail(Exception):
    """A run or one of its checks failed; the message says which."""
