"""What every benchmark plot shares: matplotlib (the Debian package scripts/deps.sh installs, so
under the system Python when another python3 comes first in PATH), a log2 axis of concurrency or
connections with a tick per point, and the PNG written the same way."""
import os
import sys

SYSTEM_PYTHON = "/usr/bin/python3"
DPI = 120


def need_matplotlib(tool):
    """Import matplotlib, or re-run this script under the system Python that has it."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        # scripts/deps.sh installs the Debian package: use the system Python that has it when
        # another python3 comes first in PATH (pyenv, a venv).
        if os.path.realpath(sys.executable) != os.path.realpath(SYSTEM_PYTHON) and os.path.exists(SYSTEM_PYTHON):
            os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON] + sys.argv)
        sys.exit(f"{tool}: matplotlib is missing (make deps installs python3-matplotlib)")


def pyplot():
    """matplotlib.pyplot drawing to files only (no display)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def log2_axis(ax, ticks):
    """x on a log2 scale with a labelled tick at each of `ticks` (1, 2, 4, ... not 2^0, 2^1)."""
    ax.set_xscale("log", base=2)
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])


def save(fig, path):
    """Lay `fig` out, write it to `path` as PNG and free it; returns `path`."""
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    pyplot().close(fig)
    return path
