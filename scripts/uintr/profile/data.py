"""The harness's profile file (+profile=FILE, hw/sim/profiler.h): pc samples with their
shadow-stack node, the stack nodes, region counts; and its instruction trace (+profile-trace)."""
import collections
import sys


# The pc the harness charges cycles asleep in WFI to.
WFI_PC = 1
# Privilege level names by number (U=0, S=1, M=3).
PRIV = "USHM"
Sample = collections.namedtuple("Sample", "hart node prv satp pc cycles retired raw walk")


class Profile:
    def __init__(self, path):
        self.nodes = {0: (0, 0, 0, 0, False)}  # id -> (parent, prv, satp, pc, trap)
        self.samples = []  # Sample
        self.regions = []  # (hart, id, count, total, min, max, walker cycles)
        self.cycles = 0
        self.meta = {}
        with open(path) as f:
            for line in f:
                w = line.split()
                if not w or w[0].startswith("#"):
                    continue
                if w[0] == "cycles":
                    self.meta = dict(zip(w[0::2], w[1::2]))
                    self.cycles = int(self.meta["cycles"])
                elif w[0] == "node":
                    self.nodes[int(w[1])] = (int(w[2]), int(w[3]), int(w[4], 16), int(w[5], 16), w[6] == "1")
                elif w[0] == "pc":
                    self.samples.append(Sample(int(w[1]), int(w[2]), int(w[3]), int(w[4], 16), int(w[5], 16),
                                               int(w[6]), int(w[7]), int(w[8], 16), int(w[9]) if len(w) > 9 else 0))
                elif w[0] == "region":
                    self.regions.append(tuple(int(x) for x in w[1:8]) + ((0,) if len(w) < 8 else ()))
        if not self.meta:
            sys.exit(f"profile: {path} is not a profile (no 'cycles' line)")


def read_trace(path):
    """+profile-trace lines: instructions (cycle, hart, prv, satp, pc) and region markers
    (cycle, hart, id, is_begin)."""
    insts, marks = [], []
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#"):
                continue
            if w[2] == "region":
                marks.append((int(w[0]), int(w[1]), int(w[3]), w[4] == "begin"))
            else:
                insts.append((int(w[0]), int(w[1]), int(w[2]), int(w[3], 16), int(w[4], 16)))
    return insts, marks
