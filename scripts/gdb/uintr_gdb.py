"""GDB commands for this system; load with  source scripts/gdb/uintr_gdb.py  (gdb-multiarch).

  uintr-load [MANIFEST [ELF_DIR]] [ELF=PATH ...]   symbols of the firmware, the kernel and the
        processes at their addresses (default sw/image.toml and build/sw; ELF=PATH for an ELF
        elsewhere, e.g. roottask=build/sw/kernel-tests.elf for the test suite's image)
  uintr-process NAME     make NAME the user-space symbols (processes share user addresses)
  uintr-threads          every kernel thread (the kernel's TCB list), each hart's current
                         thread and ready queues
The address computation is layout.py, the table threads.py; this file only talks to GDB.
"""
import os
import sys

import gdb

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import layout  # noqa: E402
import threads  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
state = {"programs": None, "loaded": []}


def _load(plan):
    for path in state["loaded"]:
        gdb.execute(f"remove-symbol-file {path}", to_string=True)
    state["loaded"] = []
    for cmd in layout.gdb_commands(plan):
        gdb.execute(cmd, to_string=True)
        if cmd.startswith("add-symbol-file"):
            state["loaded"].append(cmd.split()[1])
    for p, take in plan:
        print(f"{p.role:<9} {p.name:<18} {'.text ' + hex(p.text) if take else '(not loaded: shares user addresses; uintr-process ' + p.name + ')'}")


class Load(gdb.Command):
    """uintr-load [MANIFEST [ELF_DIR]] [ELF=PATH ...]: load the image's symbols."""

    def __init__(self):
        super().__init__("uintr-load", gdb.COMMAND_FILES)

    def invoke(self, arg, from_tty):
        args = gdb.string_to_argv(arg)
        overrides = dict(a.split("=", 1) for a in args if "=" in a)
        plain = [a for a in args if "=" not in a]
        manifest = plain[0] if plain else os.path.join(REPO, "sw", "image.toml")
        elf_dir = plain[1] if len(plain) > 1 else os.path.join(REPO, "build", "sw")
        gdb.execute("set confirm off")
        try:
            state["programs"] = layout.resolve(manifest, elf_dir, overrides)
        except (FileNotFoundError, ValueError) as e:
            raise gdb.GdbError(str(e))
        _load(layout.symbol_plan(state["programs"]))


class Process(gdb.Command):
    """uintr-process NAME: the user-space symbols become NAME's."""

    def __init__(self):
        super().__init__("uintr-process", gdb.COMMAND_FILES)

    def invoke(self, arg, from_tty):
        if not state["programs"]:
            raise gdb.GdbError("run uintr-load first")
        try:
            _load(layout.symbol_plan(state["programs"], arg.strip()))
        except KeyError as e:
            raise gdb.GdbError(str(e))


def _inner(value):
    """Descend through single-field wrappers (KCell, UnsafeCell, Atomic*) to the value inside."""
    while value.type.strip_typedefs().code == gdb.TYPE_CODE_STRUCT:
        fields = value.type.strip_typedefs().fields()
        if len(fields) != 1:
            break
        value = value[fields[0]]
    return value


def _symbol(pc):
    block = gdb.current_progspace().block_for_pc(pc)
    while block is not None and block.function is None:
        block = block.superblock
    return block.function.print_name if block is not None else ""


class Threads(gdb.Command):
    """uintr-threads: every thread the kernel has, where it is, and each hart's ready queues."""

    def __init__(self):
        super().__init__("uintr-threads", gdb.COMMAND_DATA)

    def invoke(self, arg, from_tty):
        try:
            tcb = gdb.parse_and_eval("'kernel::object::tcb::ALL'")
            cpus = _inner(gdb.parse_and_eval("'kernel::percpu::CPUS'"))
            sched = _inner(gdb.parse_and_eval("'kernel::sched::SCHED'"))
        except gdb.error as e:
            raise gdb.GdbError(f"kernel symbols missing ({e}); uintr-load first")
        rows = []
        while int(tcb) != 0 and len(rows) < 4096:   # bounded: a corrupt list must not hang GDB
            t = tcb.dereference()
            pc = int(t["ctx"]["sepc"])
            rows.append({"addr": int(tcb), "state": threads.short_name(str(t["state"])), "prio": int(t["prio"]),
                         "affinity": int(t["affinity"]), "current_on": threads.short_name(str(t["current_on"])),
                         "queued": bool(t["queued"]), "pc": pc, "where": _symbol(pc)})
            tcb = t["dbg_next"]
        harts = []
        lo, hi = cpus.type.strip_typedefs().range()
        for h in range(lo, hi + 1):
            cpu, hs = cpus[h], sched[h]
            l2 = [int(hs["l2"][i]) for i in range(hs["l2"].type.strip_typedefs().range()[1] + 1)]
            ready = {}
            for prio in threads.ready_priorities(int(hs["l1"]), l2):
                addrs, p = [], hs["queues"][prio]["__0"]
                while int(p) != 0 and len(addrs) < 1024:
                    addrs.append(int(p))
                    p = p.dereference()["sched_next"]
                ready[prio] = addrs
            harts.append({"hart": h, "online": bool(int(_inner(cpu["online"]))),
                          "current": int(_inner(cpu["current"])), "ready": ready})
        print(threads.format_threads(rows, harts))


Load()
Process()
Threads()
