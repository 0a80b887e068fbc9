"""The kernel's threads as a table: the pure half of uintr-threads (uintr_gdb.py reads the
kernel's memory; this file turns what it read into text, and is tested without GDB)."""


def short_name(text):
    """'kernel::object::tcb::State::Running' -> 'Running'; 'core::option::Option<usize>::Some(2)'
    -> '2'; '...::None' -> '-' (how GDB prints Rust enums and options)."""
    text = text.strip()
    if text.endswith("None"):
        return "-"
    if "::Some(" in text and text.endswith(")"):
        return text[text.index("::Some(") + 7:-1]
    return text.rsplit("::", 1)[-1]


def ready_priorities(l1, l2):
    """Priorities with a ready thread, highest first, from a hart's two-level bitmap
    (sched::HartSched: l1 bit i = l2[i] non-zero, l2[i] bit j = priority 64 i + j)."""
    out = []
    for i in reversed(range(len(l2))):
        if not (l1 >> i) & 1:
            continue
        for j in reversed(range(64)):
            if (l2[i] >> j) & 1:
                out.append(64 * i + j)
    return out


def format_threads(threads, harts):
    """threads: dicts with addr, state, prio, affinity, current_on, queued, pc, where (symbol or
    ''); harts: dicts with hart, online, current (TCB address or 0), ready {prio: [addresses]}.
    One line per thread (the hart it runs on, or its place in a ready queue), then per hart."""
    queue_of = {}
    for h in harts:
        for prio, addrs in h["ready"].items():
            for pos, a in enumerate(addrs):
                queue_of[a] = f"ready h{h['hart']} p{prio} #{pos}"
    running = {h["current"]: h["hart"] for h in harts if h["current"]}
    lines = [f"{'tcb':<18} {'state':<22} {'prio':>4} {'aff':>3} {'where':<16} pc"]
    for t in threads:
        if t["addr"] in running:
            where = f"on hart {running[t['addr']]}"
        else:
            where = queue_of.get(t["addr"], "")
        pc = f"{t['pc']:#x}" + (f" <{t['where']}>" if t.get("where") else "")
        lines.append(f"{t['addr']:#018x} {t['state']:<22} {t['prio']:>4} {t['affinity']:>3} {where:<16} {pc}")
    lines.append(f"{len(threads)} thread(s)")
    for h in harts:
        if not h["online"]:
            continue
        ready = ", ".join(f"p{p}: " + " ".join(f"{a:#x}" for a in addrs) for p, addrs in h["ready"].items())
        cur = f"{h['current']:#x}" if h["current"] else "idle"
        lines.append(f"hart {h['hart']}: current {cur}; ready {ready or 'none'}")
    return "\n".join(lines)
