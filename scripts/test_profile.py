"""Host tests of scripts/profile.py on tiny ELFs built with the cross toolchain and a profile
written by hand in the harness's format (hw/sim/profiler.h)."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(HERE, "profile.py")

# Two user programs linked at the same address with different code, a kernel linked in the
# window with physical load addresses, and a firmware. norvc: known 4-byte encodings.
USER_A = """
.option norvc
.text
.globl main_a
.type main_a, @function
main_a:  addi a0, a0, 1        # 0x00150513
         call helper_a
.size main_a, .-main_a
.type helper_a, @function
helper_a: addi a1, a1, 2       # 0x00258593
         ret
.size helper_a, .-helper_a
"""
USER_B = """
.option norvc
.text
.globl main_b
.type main_b, @function
main_b:  xori a0, a0, 5        # 0x00554513
         ret
.size main_b, .-main_b
"""
KERNEL = """
.option norvc
.text
.globl kfn
.type kfn, @function
kfn:     addi a0, a0, 1
         ret
.size kfn, .-kfn
"""
FIRMWARE = KERNEL.replace("kfn", "mfn")


def build(d, name, src, vaddr, paddr=None):
    s = os.path.join(d, name + ".S")
    with open(s, "w") as f:
        f.write(src)
    ld = os.path.join(d, name + ".ld")
    with open(ld, "w") as f:
        f.write(f"SECTIONS {{ . = {vaddr:#x}; .text : {f'AT({paddr:#x})' if paddr else ''} {{ *(.text) }} }}\n")
    out = os.path.join(d, name + ".elf")
    subprocess.run(["riscv64-unknown-elf-gcc", "-nostdlib", "-march=rv64imac", "-mabi=lp64", "-mcmodel=medany",
                    "-Wl,-e,0", f"-Wl,-T,{ld}", "-o", out, s], check=True)
    return out


class ProfileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.dir = cls.tmp.name
        os.mkdir(os.path.join(d, "sw"))
        sw = os.path.join(d, "sw")
        build(sw, "a", USER_A, 0x10000)
        build(sw, "b", USER_B, 0x10000)
        # The kernel runs in the window but is loaded (and first runs) at physical addresses.
        os.rename(build(d, "kernel", KERNEL, 0xffffffc080200000, 0x80200000), os.path.join(sw, "kernel.elf"))
        os.rename(build(d, "firmware", FIRMWARE, 0x80000000), os.path.join(sw, "firmware.elf"))
        cls.prof = os.path.join(d, "run.prof")
        with open(cls.prof, "w") as f:
            f.write("# test profile\n"
                    "cycles 1000 every 1 region 11 region-any 0 harts 2\n"
                    "node 1 0 0 0x2 0x10000 0\n"
                    "node 2 1 1 0x2 0x80200000 1\n"
                    "pc 0 1 0 0x2 0x10000 10 1 0x00150513 0\n"
                    "pc 0 1 0 0x2 0x10008 5 1 0x00258593 2\n"
                    "pc 1 0 0 0x3 0x10000 7 1 0x00554513 0\n"
                    "pc 0 2 1 0x2 0x80200000 20 1 0x00150513 3\n"
                    "pc 0 0 3 0x0 0x80000000 8 1 0x00150513 0\n"
                    "pc 1 0 1 0x3 0x1 50 0 0 0\n"
                    "region 0 11 2 120 50 70 6\n")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_tool(self, *args):
        r = subprocess.run([sys.executable, TOOL, self.prof, "--elf-dir", os.path.join(self.dir, "sw"), *args],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout

    def rows(self, out):
        """module:function -> cycles, from the flat table."""
        rows = {}
        for line in out.splitlines():
            w = line.split()
            if len(w) >= 6 and w[0].replace(".", "").isdigit() and w[1].endswith("%") and ":" in w[-1]:
                rows[w[-1]] = float(w[0])
        return rows

    def test_each_address_space_gets_the_elf_whose_code_ran_there(self):
        out = self.run_tool()
        self.assertIn("satp root 0x2): a", out)
        self.assertIn("satp root 0x3): b", out)
        rows = self.rows(out)
        self.assertEqual(rows["a:main_a"], 10)
        self.assertEqual(rows["a:helper_a"], 5)
        self.assertEqual(rows["b:main_b"], 7)

    def test_privileged_pcs_use_firmware_and_kernel_physical_pcs_are_translated(self):
        rows = self.rows(self.run_tool())
        self.assertEqual(rows["kernel:kfn"], 20)
        self.assertEqual(rows["firmware:mfn"], 8)

    def test_wfi_only_on_request_and_filters(self):
        self.assertNotIn("wfi:[wfi]", self.rows(self.run_tool()))
        self.assertEqual(self.rows(self.run_tool("--wfi"))["wfi:[wfi]"], 50)
        rows = self.rows(self.run_tool("--hart", "1", "--priv", "U"))
        self.assertEqual(set(rows), {"b:main_b"})

    def test_divide_by_the_profiled_region(self):
        rows = self.rows(self.run_tool("--divide", "region"))
        self.assertEqual(rows["kernel:kfn"], 10.0)  # 20 cycles over 2 times in region 11

    def test_folded_stacks_follow_the_shadow_stack(self):
        path = os.path.join(self.dir, "out.folded")
        self.run_tool("--folded", path)
        with open(path) as f:
            lines = dict(l.rsplit(" ", 1) for l in f.read().splitlines())
        self.assertEqual(lines["a:main_a"], "10")          # leaf is the frame itself
        self.assertEqual(lines["a:main_a;a:helper_a"], "5")
        self.assertEqual(lines["a:main_a;kernel:kfn"], "20")
        self.assertEqual(lines["b:main_b"], "7")

    def test_categories_first_matching_rule_wins(self):
        cats = os.path.join(self.dir, "cats.toml")
        with open(cats, "w") as f:
            f.write("[[category]]\nname = 'helper'\nmatch = ':helper_a$'\n"
                    "[[category]]\nname = 'user a'\nmatch = '^a:'\n")
        out = self.run_tool("--categories", cats)
        got = {l.split(None, 4)[4]: int(l.split()[0]) for l in out.splitlines() if len(l.split()) >= 5 and l.split()[1].endswith("%")}
        self.assertEqual(got["helper"], 5)
        self.assertEqual(got["user a"], 10)  # not kfn: main_a is a caller across a trap only
        self.assertEqual(got["other"], 7 + 8 + 20)


if __name__ == "__main__":
    unittest.main()
