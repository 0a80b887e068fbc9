"""The GDB helper's pure parts (scripts/gdb/layout.py, threads.py), without GDB: where each
ELF's symbols go for an image manifest, which processes share user addresses, and the thread
table. ELFs are made here (tiny ELF64 files with a .text section); when build/sw holds a built
image's ELFs, the real ones are checked as well."""
import os
import struct
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "gdb"))
import layout  # noqa: E402
import threads  # noqa: E402


def make_elf(path, text, segments):
    """ELF64 with PT_LOAD segments [(vaddr, memsz)] and a .text section at `text`."""
    shstrtab = b"\0.text\0.shstrtab\0"
    phoff, phnum = 64, len(segments)
    strtab_off = phoff + 56 * phnum
    shoff = strtab_off + len(shstrtab)
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 243, 1, text, phoff, shoff, 0, 64, 56, phnum, 64, 3, 2)
    phdrs = b"".join(struct.pack("<IIQQQQQQ", 1, 5, 0, v, v, 0, size, 0x1000) for v, size in segments)
    sections = (bytes(64)
                + struct.pack("<IIQQQQIIQQ", 1, 1, 6, text, 0, 0, 0, 0, 4, 0)
                + struct.pack("<IIQQQQIIQQ", 7, 3, 0, 0, strtab_off, len(shstrtab), 0, 0, 1, 0))
    with open(path, "wb") as f:
        f.write(header + phdrs + shstrtab + sections)


class Layout(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        make_elf(f"{d}/firmware.elf", 0x8000_0000, [(0x8000_0000, 0x8000)])
        make_elf(f"{d}/kernel.elf", 0xFFFF_FFC0_8020_0000, [(0xFFFF_FFC0_8020_0000, 0x20_0000)])
        make_elf(f"{d}/roottask.elf", 0x1_0000, [(0x1_0000, 0x2000)])
        make_elf(f"{d}/hello-proc.elf", 0x1_0000, [(0x1_0000, 0x1000), (0x1_1000, 0x1000)])
        self.manifest = os.path.join(REPO, "sw", "image.toml")

    def tearDown(self):
        self.dir.cleanup()

    def test_elf_layout(self):
        text, ranges = layout.elf_layout(f"{self.dir.name}/hello-proc.elf")
        self.assertEqual(text, 0x1_0000)
        self.assertEqual(ranges, [(0x1_0000, 0x1_1000), (0x1_1000, 0x1_2000)])

    def test_manifest_order_and_layout_indirection(self):
        roles = layout.manifest_programs(self.manifest)
        self.assertEqual([r[:2] for r in roles[:2]], [("firmware", "firmware"), ("kernel", "kernel")])
        self.assertEqual(roles[2][1], "roottask")
        net = layout.manifest_programs(os.path.join(REPO, "sw", "apps", "net-system", "app.toml"))
        self.assertEqual([n for _, n, _ in net], ["firmware", "kernel", "roottask", "net-server", "tcp-server"])

    def test_overlapping_processes_load_one_at_a_time(self):
        programs = layout.resolve(self.manifest, self.dir.name)
        plan = {p.name: took for p, took in layout.symbol_plan(programs)}
        self.assertEqual(plan, {"firmware": True, "kernel": True, "roottask": True, "hello-proc": False})
        plan = {p.name: took for p, took in layout.symbol_plan(programs, "hello-proc")}
        self.assertEqual(plan, {"firmware": True, "kernel": True, "roottask": False, "hello-proc": True})
        with self.assertRaises(KeyError):
            layout.symbol_plan(programs, "nobody")

    def test_disjoint_processes_all_load(self):
        make_elf(f"{self.dir.name}/hello-proc.elf", 0x40_0000, [(0x40_0000, 0x1000)])
        plan = layout.symbol_plan(layout.resolve(self.manifest, self.dir.name))
        self.assertTrue(all(took for _, took in plan))

    def test_gdb_commands(self):
        cmds = layout.gdb_commands(layout.symbol_plan(layout.resolve(self.manifest, self.dir.name)))
        d = self.dir.name
        self.assertEqual(cmds, [f"symbol-file {d}/kernel.elf", f"add-symbol-file {d}/firmware.elf 0x80000000",
                                f"add-symbol-file {d}/roottask.elf 0x10000"])

    def test_missing_and_overridden_elfs(self):
        os.rename(f"{self.dir.name}/roottask.elf", f"{self.dir.name}/suite.elf")
        with self.assertRaisesRegex(FileNotFoundError, "roottask"):
            layout.resolve(self.manifest, self.dir.name)
        programs = layout.resolve(self.manifest, self.dir.name, {"roottask": f"{self.dir.name}/suite.elf"})
        self.assertEqual(programs[2].path, f"{self.dir.name}/suite.elf")

    def test_built_image(self):
        """The ELFs make sw built, where they exist: each where the image layout puts it."""
        elf_dir = os.environ.get("UINTR_ELF_DIR", os.path.join(REPO, "build", "sw"))
        try:
            programs = {p.name: p for p in layout.resolve(self.manifest, elf_dir)}
        except FileNotFoundError:
            self.skipTest(f"no built image ELFs in {elf_dir}")
        import tomllib
        with open(os.path.join(REPO, "platform", "platform.toml"), "rb") as f:
            image = tomllib.load(f)["image"]
        self.assertEqual(programs["firmware"].text, image["firmware_base"])
        # The kernel runs in its Sv39 window: virtual = physical load address + the window offset.
        self.assertEqual(programs["kernel"].text & 0xFFFF_FFFF, image["kernel_phys_base"])
        self.assertGreaterEqual(programs["kernel"].text, 0xFFFF_FFC0_0000_0000)
        self.assertLess(programs["roottask"].text, 0x40_0000_0000)


class Threads(unittest.TestCase):
    def test_short_name(self):
        self.assertEqual(threads.short_name("kernel::object::tcb::State::BlockedOnReceive"), "BlockedOnReceive")
        self.assertEqual(threads.short_name("core::option::Option<usize>::Some(3)"), "3")
        self.assertEqual(threads.short_name("core::option::Option<usize>::None"), "-")

    def test_ready_priorities(self):
        l2 = [1 << 5, 0, 0, (1 << 63) | 1]
        self.assertEqual(threads.ready_priorities(0b1001, l2), [255, 192, 5])
        self.assertEqual(threads.ready_priorities(0, l2), [])

    def test_table(self):
        rows = [{"addr": 0x1000, "state": "Running", "prio": 255, "affinity": 0, "current_on": "0",
                 "queued": False, "pc": 0x10010, "where": "roottask::main"},
                {"addr": 0x2000, "state": "Running", "prio": 100, "affinity": 1, "current_on": "-",
                 "queued": True, "pc": 0x10020, "where": ""},
                {"addr": 0x3000, "state": "BlockedOnReceive", "prio": 100, "affinity": 2, "current_on": "-",
                 "queued": False, "pc": 0x10030, "where": ""}]
        harts = [{"hart": 0, "online": True, "current": 0x1000, "ready": {}},
                 {"hart": 1, "online": True, "current": 0, "ready": {100: [0x2000]}},
                 {"hart": 2, "online": False, "current": 0, "ready": {}}]
        text = threads.format_threads(rows, harts).splitlines()
        self.assertIn("on hart 0", text[1])
        self.assertIn("<roottask::main>", text[1])
        self.assertIn("ready h1 p100 #0", text[2])
        self.assertIn("BlockedOnReceive", text[3])
        self.assertEqual(text[4], "3 thread(s)")
        self.assertEqual(text[5:], ["hart 0: current 0x1000; ready none", "hart 1: current idle; ready p100: 0x2000"])


if __name__ == "__main__":
    unittest.main()
