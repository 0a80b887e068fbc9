"""The generator agrees with itself across languages and rejects malformed specs."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "gen.py")


def read(path):
    with open(path) as f:
        return f.read()


def generate(spec_text, *flags):
    with tempfile.TemporaryDirectory() as d:
        spec = os.path.join(d, "spec.toml")
        with open(spec, "w") as f:
            f.write(spec_text)
        outs = {f: os.path.join(d, "out." + f) for f in flags}
        args = [sys.executable, GEN, "--spec", spec]
        for f, path in outs.items():
            args += ["--" + f, path]
        p = subprocess.run(args, capture_output=True, text=True)
        return p, {f: read(path) for f, path in outs.items() if os.path.exists(path)}


class GenTest(unittest.TestCase):
    def test_every_language_carries_the_same_values(self):
        p, out = generate('[memmap]\nuintc = { base = 0x0300_0000, size = 0x4000 }\n[uintc]\ncompatible = "riscv,uintc0"\n',
                          "rust", "c", "scala", "tcl", "dts")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("pub const UINTC_BASE: usize = 0x3000000;", out["rust"])
        self.assertIn('pub const COMPATIBLE: &str = "riscv,uintc0";', out["rust"])
        self.assertIn("#define PLATFORM_MEMMAP_UINTC_SIZE 0x4000ULL", out["c"])
        self.assertIn('val UINTC_BASE: BigInt = BigInt("3000000", 16)', out["scala"])
        self.assertIn("set platform(memmap.uintc_base) 0x03000000", out["tcl"])
        self.assertIn("#define MEMMAP_UINTC_BASE 0x3000000", out["dts"])

    def test_malformed_entries_are_rejected(self):
        for bad in ['top = 1\n', '[s]\nx = { base = 1, length = 2 }\n', '[s]\nflag = true\n']:
            p, _ = generate(bad, "rust")
            self.assertNotEqual(p.returncode, 0, bad)

    def test_the_real_spec_matches_the_uintr_contract(self):
        p, out = generate(read(os.path.join(HERE, "platform.toml")), "rust")
        self.assertEqual(p.returncode, 0, p.stderr)
        for line in ["pub const UINTC_BASE: usize = 0x3000000;", "pub const SUIST: usize = 0x1b0;",
                     "pub const SUIRS: usize = 0x1b1;", "pub const SLOT_BYTES: usize = 0x20;",
                     "pub const OPCODE: usize = 0x7b;", "pub const KERNEL_PHYS_BASE: usize = 0x80200000;"]:
            self.assertIn(line, out["rust"])


if __name__ == "__main__":
    unittest.main()
