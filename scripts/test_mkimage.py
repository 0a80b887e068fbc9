"""mkimage places ELF segments at their physical addresses and refuses ones outside a window."""
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MKIMAGE = os.path.join(HERE, "mkimage.py")


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
    def test_module_table_layout(self):
        sys.path.insert(0, HERE)
        import mkimage
        blob = mkimage.module_table([("roottask", b"\x7fELF" + bytes(100)), ("srv", b"abc")], 0x1234)
        magic, count = struct.unpack_from("<QQ", blob, 0)
        self.assertEqual((magic, count), (0x1234, 2))
        name, off, size = struct.unpack_from("<32sQQ", blob, 16)
        self.assertEqual((name.rstrip(b"\0"), off, size), (b"roottask", 4096, 104))
        self.assertEqual(blob[off:off + 4], b"\x7fELF")
        _, off2, size2 = struct.unpack_from("<32sQQ", blob, 16 + 48)
        self.assertEqual((off2 % 4096, size2, blob[off2:off2 + 3]), (0, 3, b"abc"))


if __name__ == "__main__":
    unittest.main()
