"""The `result key=value ...` lines the benchmarks print on the console (sw/apps/ipc-bench,
sw/apps/mem-server): one line per point of a sweep."""

PREFIX = "result "


def fields(line):
    """{key: value} of one result line (values are strings)."""
    return dict(kv.split("=", 1) for kv in line.split()[1:])


def all_fields(text):
    """The fields of every result line of a console log, in order."""
    return [fields(l) for l in text.splitlines() if l.startswith(PREFIX)]
