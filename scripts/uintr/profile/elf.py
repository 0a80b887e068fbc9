"""An ELF64 file as the profiler needs it: executable load segments (virtual and physical
addresses), the bytes at an address, the symbol covering an address."""
import bisect
import struct
import sys


class Elf:
    def __init__(self, path, name):
        self.path, self.name = path, name
        with open(path, "rb") as f:
            self.data = f.read()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2:
            sys.exit(f"profile: {path} is not an ELF64 file")
        phoff, shoff = struct.unpack_from("<QQ", d, 0x20)
        phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", d, 0x36)
        self.segs = []  # (vaddr, paddr, offset, filesz, executable)
        for i in range(phnum):
            ptype, flags, off, vaddr, paddr, filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
            if ptype == 1:
                self.segs.append((vaddr, paddr, off, filesz, bool(flags & 1)))
        syms = []
        sections = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
        for sh in sections:
            if sh[1] != 2:  # SHT_SYMTAB
                continue
            strtab = sections[sh[6]]
            for j in range(sh[5] // 24):
                st_name, st_info, _, st_shndx, st_value, st_size = struct.unpack_from("<IBBHQQ", d, sh[4] + j * 24)
                if st_shndx == 0 or (st_info & 0xf) not in (0, 2) or not st_name:  # NOTYPE (asm labels), FUNC
                    continue
                end = d.index(b"\0", strtab[4] + st_name)
                name = d[strtab[4] + st_name:end].decode(errors="replace")
                if name.startswith(".L") or name.startswith("$"):
                    continue
                syms.append((st_value, st_size, name, (st_info & 0xf) == 2))
        # A FUNC wins over a label at the same address.
        syms.sort(key=lambda s: (s[0], not s[3]))
        self.syms = []
        for s in syms:
            if self.syms and self.syms[-1][0] == s[0]:
                continue
            self.syms.append(s)
        self.sym_addrs = [s[0] for s in self.syms]

    def to_vaddr(self, pc):
        """pc as the ELF's virtual address (physical pcs, e.g. before paging, through the load address)."""
        for vaddr, paddr, _, size, x in self.segs:
            if x and vaddr <= pc < vaddr + size:
                return pc
        for vaddr, paddr, _, size, x in self.segs:
            if x and paddr <= pc < paddr + size:
                return pc - paddr + vaddr
        return None

    def bytes_at(self, vaddr, n):
        for va, _, off, size, _ in self.segs:
            if va <= vaddr and vaddr + n <= va + size:
                return self.data[off + vaddr - va:off + vaddr - va + n]
        return None

    def symbol(self, vaddr):
        i = bisect.bisect_right(self.sym_addrs, vaddr) - 1
        if i < 0:
            return None
        addr, size, name, _ = self.syms[i]
        if size and vaddr >= addr + size:
            return None
        return name
