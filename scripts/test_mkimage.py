"""mkimage places ELF segments at their physical addresses and refuses ones outside a window."""
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import tomllib
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MKIMAGE = os.path.join(HERE, "mkimage.py")


# Where the boot modules start in an image (platform.toml, the one source of truth).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "platform", "platform.toml"), "rb") as f:
    _IMAGE = tomllib.load(f)["image"]
MODULES_OFFSET = _IMAGE["modules_base"] - _IMAGE["firmware_base"]


def elf64(segments, entry=0):
    """A minimal little-endian ELF64 with PT_LOAD segments [(paddr, data, memsz)]."""
    ehsize, phentsize = 64, 56
    offset = ehsize + phentsize * len(segments)
    phdrs, blobs = b"", b""
    for paddr, data, memsz in segments:
        phdrs += struct.pack("<IIQQQQQQ", 1, 5, offset + len(blobs), paddr, paddr, len(data), memsz, 0x1000)
        blobs += data
    ident = b"\x7fELF" + bytes([2, 1, 1]) + bytes(9)
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 243, 1, entry, ehsize, 0, 0, ehsize, phentsize,
                                 len(segments), 64, 0, 0)
    return header + phdrs + blobs


class MkimageTest(unittest.TestCase):
    def run_tool(self, d, parts, manifest):
        paths = []
        for name, segs in parts.items():
            path = os.path.join(d, name + ".elf")
            pathlib.Path(path).write_bytes(elf64(segs))
            paths += ["--elf", f"{name}={path}"]
        man = os.path.join(d, "image.toml")
        pathlib.Path(man).write_text(manifest)
        out = os.path.join(d, "image.bin")
        p = subprocess.run([sys.executable, MKIMAGE, "--manifest", man, "-o", out] + paths,
                           capture_output=True, text=True)
        return p, (pathlib.Path(out).read_bytes() if p.returncode == 0 else None)

    MANIFEST = """[image]\nbase = "image.firmware_base"\n
[[part]]\nname = "fw"\nbase = "image.firmware_base"\nsize = "image.firmware_size"\n
[[part]]\nname = "k"\nbase = "image.kernel_phys_base"\nsize = 0x1000\n"""

    def test_parts_land_at_their_addresses(self):
        with tempfile.TemporaryDirectory() as d:
            p, img = self.run_tool(d, {"fw": [(0x8000_0000, b"FW", 2)], "k": [(0x8020_0000, b"KERNEL", 0x800)]},
                                   self.MANIFEST)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(img[:2], b"FW")
            self.assertEqual(img[0x20_0000:0x20_0006], b"KERNEL")
            self.assertEqual(set(img[2:0x20_0000]), {0}, "the gap is zero-filled")

    def test_a_part_outside_its_window_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            p, _ = self.run_tool(d, {"fw": [(0x8000_0000, b"FW", 2)], "k": [(0x8020_0000, b"K", 0x2000)]},
                                 self.MANIFEST)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("outside its window", p.stdout + p.stderr)

    def test_a_part_below_its_window_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            p, _ = self.run_tool(d, {"fw": [(0x8000_0000, b"FW", 2)], "k": [(0x801f_f000, b"K", 0x10)]},
                                 self.MANIFEST)
            self.assertNotEqual(p.returncode, 0)
            self.assertIn("outside its window", p.stdout + p.stderr)


class ModulesTest(unittest.TestCase):
    def setUp(self):
        sys.path.insert(0, HERE)
        import mkimage
        self.mk = mkimage

    def test_module_table_layout(self):
        rec = self.mk.process_records({"srv": {"hart": 1, "priority": 7, "caps": [{"endpoint": "e", "badge": 9}]}})[0][2]
        blob = self.mk.module_table([("roottask", b"\x7fELF" + bytes(100)), ("srv", b"abc", rec)], 0x1234)
        magic, count = struct.unpack_from("<QQ", blob, 0)
        self.assertEqual((magic, count), (0x1234, 2))
        name, off, size = struct.unpack_from("<32sQQ", blob, 16)
        self.assertEqual((name.rstrip(b"\0"), off, size), (b"roottask", 4096, 104))
        self.assertEqual(blob[off:off + 4], b"\x7fELF")
        e2 = 16 + self.mk.ENTRY_LEN
        _, off2, size2 = struct.unpack_from("<32sQQ", blob, e2)
        self.assertEqual((off2 % 4096, size2, blob[off2:off2 + 3]), (0, 3, b"abc"))
        hart, prio, bits, stack, ncaps, fault = struct.unpack_from("<HBBHBB", blob, e2 + 48)
        self.assertEqual((hart, prio, bits, stack, ncaps, fault), (1, 7, 6, 4, 1, self.mk.NO_FAULT))
        self.assertEqual(struct.unpack_from("<BBHI", blob, e2 + 64), (1, 15, 0, 9))

    def test_named_objects_are_shared_and_numbered_in_order(self):
        recs = self.mk.process_records({
            "a": {"caps": [{"endpoint": "x"}, {"notification": "n", "rights": ["read"]}]},
            "b": {"caps": [{"endpoint": "y", "fault": True}, {"endpoint": "x", "badge": 3}]},
        })
        caps = lambda r, n: [struct.unpack_from("<BBHI", r, 16 + 8 * i) for i in range(n)]
        self.assertEqual(caps(recs[0][2], 2), [(1, 15, 0, 0), (2, 2, 1, 0)])
        self.assertEqual(caps(recs[1][2], 2), [(1, 15, 2, 0), (1, 15, 0, 3)])
        self.assertEqual(recs[1][2][7], 0, "the fault endpoint is cap 0")

    def test_bad_records_are_refused(self):
        for procs in [{"a": {"colour": 1}}, {"a": {"caps": [{"endpoint": "x", "rights": ["fly"]}]}},
                      {"a": {"caps": [{"notification": "x", "fault": True}]}}, {"a": {"priority": 256}},
                      {"a": {"caps": [{"endpoint": str(i)} for i in range(9)]}}]:
            with self.assertRaises(SystemExit, msg=procs):
                self.mk.process_records(procs)

    def test_strip_keeps_what_a_loader_reads(self):
        elf = bytearray(elf64([(0x10000, b"TEXT", 4)]))
        struct.pack_into("<QHH", elf, 0x28, len(elf), 0, 0)   # pretend section headers follow
        struct.pack_into("<HH", elf, 0x3C, 5, 4)
        out = self.mk.strip_elf(bytes(elf) + b"DEBUG" * 100)
        self.assertEqual(out, bytes(elf[:0x28]) + bytes(8) + bytes(elf[0x30:0x3C]) + bytes(4) + bytes(elf[0x40:]))
        with self.assertRaises(SystemExit):
            self.mk.strip_elf(bytes(elf[:-1]))

    def test_manifest_packs_every_process_root_first(self):
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name in ["fw", "k", "root", "p"]:
                path = os.path.join(d, name + ".elf")
                pathlib.Path(path).write_bytes(elf64([(0x8000_0000 if name == "fw" else 0x8020_0000, name.encode(), 4)]))
                paths += ["--elf", f"{name}={path}"]
            base = MkimageTest.MANIFEST + '[[part]]\nname = "modules"\nkind = "modules"\nbase = "image.modules_base"\nsize = "image.modules_max_size"\n'
            man = os.path.join(d, "image.toml")
            out = os.path.join(d, "image.bin")

            def run(text):
                pathlib.Path(man).write_text(text)
                return subprocess.run([sys.executable, MKIMAGE, "--manifest", man, "-o", out] + paths,
                                      capture_output=True, text=True)
            p = run(base + '[process.roottask]\nelf = "root"\n[process.p]\nhart = 2\n')
            self.assertEqual(p.returncode, 0, p.stderr)
            mods = pathlib.Path(out).read_bytes()[MODULES_OFFSET:]
            self.assertEqual(struct.unpack_from("<Q", mods, 8)[0], 2)
            self.assertEqual(mods[16:24], b"roottask")
            self.assertEqual(mods[16 + 128:17 + 128], b"p")
            p = run(base + '[process.p]\n[process.roottask]\nelf = "root"\n')
            self.assertNotEqual(p.returncode, 0, "the root task must come first")
            p = run(base + '[process.roottask]\nelf = "root"\n[process.q]\n')
            self.assertIn("no --elf given", p.stdout + p.stderr)
            # A system's own manifest: its processes, the layout of the manifest it names.
            pathlib.Path(os.path.join(d, "sys")).mkdir()
            own = os.path.join(d, "sys", "app.toml")
            pathlib.Path(own).write_text('layout = "../image.toml"\n[process.roottask]\nelf = "p"\n[process.root]\n')
            pathlib.Path(man).write_text(base)
            p = subprocess.run([sys.executable, MKIMAGE, "--manifest", own, "-o", out] + paths, capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            img = pathlib.Path(out).read_bytes()
            self.assertEqual(img[0x20_0000:0x20_0001], b"k", "the layout's parts are placed")
            mods = img[MODULES_OFFSET:]
            self.assertEqual(struct.unpack_from("<Q", mods, 8)[0], 2)
            self.assertEqual(mods[16 + 128:20 + 128], b"root")


if __name__ == "__main__":
    unittest.main()
