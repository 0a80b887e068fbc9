//! The part of an ELF64 file a process loader reads, checked before anything is trusted: a
//! module comes from the image, but a malformed one must be refused with an error, never
//! read out of bounds or panic. Pure code, host-tested.

/// What is wrong with an ELF file (the index is the program header's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// Shorter than its header or program header table says.
    Truncated,
    /// Not a little-endian 64-bit ELF file.
    NotElf64,
    /// Not an executable for RISC-V.
    NotRiscvExecutable,
    /// Program headers of an unexpected size.
    BadProgramHeaders,
    /// A segment's file bytes lie past the end of the module.
    SegmentPastEnd(usize),
    /// A segment is larger in the file than in memory, or outside the allowed addresses.
    SegmentOutOfRange(usize),
    /// Segments are not in ascending address order or overlap (beyond sharing a page).
    SegmentsOverlap(usize),
    /// Nothing to load, or the entry point is not in an executable segment.
    BadEntry,
}

pub const PT_LOAD: u32 = 1;
/// `Segment::flags` bits (ELF p_flags).
pub const PF_X: u32 = 1;
pub const PF_W: u32 = 2;
pub const PF_R: u32 = 4;

const EHDR: usize = 64;
const PHDR: usize = 56;
const EM_RISCV: u16 = 243;
const ET_EXEC: u16 = 2;

/// A loadable segment (PT_LOAD with bytes in memory): `file_size` bytes from `offset` in the
/// file, zero-filled up to `mem_size`, at `vaddr`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub vaddr: usize,
    pub mem_size: usize,
    pub offset: usize,
    pub file_size: usize,
    pub flags: u32,
}

impl Segment {
    pub fn end(&self) -> usize {
        self.vaddr + self.mem_size
    }
    /// The segment's file bytes that land in [lo, hi): (destination address, bytes).
    pub fn bytes_in<'a>(&self, file: &'a [u8], lo: usize, hi: usize) -> Option<(usize, &'a [u8])> {
        let (from, to) = (lo.max(self.vaddr), hi.min(self.vaddr + self.file_size));
        (from < to).then(|| (from, &file[self.offset + (from - self.vaddr)..self.offset + (to - self.vaddr)]))
    }
}

/// A validated ELF file: every loadable segment lies in the file and in the address range
/// given to `parse`, in ascending order, and the entry point is in an executable one.
pub struct Elf<'a> {
    pub bytes: &'a [u8],
    pub entry: usize,
    phoff: usize,
    phnum: usize,
}

fn u16_at(b: &[u8], o: usize) -> Option<u16> {
    b.get(o..o + 2).map(|s| u16::from_le_bytes([s[0], s[1]]))
}
fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    b.get(o..o + 4).map(|s| u32::from_le_bytes(s.try_into().unwrap_or([0; 4])))
}
fn u64_at(b: &[u8], o: usize) -> Option<usize> {
    b.get(o..o + 8).map(|s| u64::from_le_bytes(s.try_into().unwrap_or([0; 8])) as usize)
}

impl<'a> Elf<'a> {
    /// Check `bytes` and every loadable segment: each must lie in [lo, hi) of the address
    /// space (page-aligned bounds: the loader's own pages lie outside them).
    pub fn parse(bytes: &'a [u8], lo: usize, hi: usize) -> Result<Elf<'a>, ElfError> {
        if bytes.len() < EHDR {
            return Err(ElfError::Truncated);
        }
        if bytes[..4] != *b"\x7fELF" || bytes[4] != 2 || bytes[5] != 1 {
            return Err(ElfError::NotElf64);
        }
        let t = ElfError::Truncated;
        if u16_at(bytes, 16).ok_or(t)? != ET_EXEC || u16_at(bytes, 18).ok_or(t)? != EM_RISCV {
            return Err(ElfError::NotRiscvExecutable);
        }
        let entry = u64_at(bytes, 24).ok_or(t)?;
        let phoff = u64_at(bytes, 32).ok_or(t)?;
        let phentsize = u16_at(bytes, 54).ok_or(t)? as usize;
        let phnum = u16_at(bytes, 56).ok_or(t)? as usize;
        if phentsize != PHDR {
            return Err(ElfError::BadProgramHeaders);
        }
        if phoff.checked_add(phnum * PHDR).is_none_or(|e| e > bytes.len()) {
            return Err(ElfError::Truncated);
        }
        let elf = Elf { bytes, entry, phoff, phnum };
        let (mut prev_end, mut any, mut entry_ok) = (lo, false, false);
        for i in 0..phnum {
            let Some(s) = elf.raw(i)? else { continue };
            if s.offset.checked_add(s.file_size).is_none_or(|e| e > bytes.len()) {
                return Err(ElfError::SegmentPastEnd(i));
            }
            let end = s.vaddr.checked_add(s.mem_size).ok_or(ElfError::SegmentOutOfRange(i))?;
            if s.file_size > s.mem_size || s.vaddr < lo || end > hi {
                return Err(ElfError::SegmentOutOfRange(i));
            }
            // Ascending and disjoint; two segments may share the page at their boundary.
            if s.vaddr < prev_end {
                return Err(ElfError::SegmentsOverlap(i));
            }
            prev_end = end;
            any = true;
            entry_ok |= s.flags & PF_X != 0 && (s.vaddr..end).contains(&entry);
        }
        if !any || !entry_ok {
            return Err(ElfError::BadEntry);
        }
        Ok(elf)
    }

    /// Program header `i` if it is a loadable segment with bytes in memory (bounds of the
    /// table were checked by `parse`).
    fn raw(&self, i: usize) -> Result<Option<Segment>, ElfError> {
        let (b, o, t) = (self.bytes, self.phoff + i * PHDR, ElfError::Truncated);
        if u32_at(b, o).ok_or(t)? != PT_LOAD {
            return Ok(None);
        }
        let s = Segment {
            flags: u32_at(b, o + 4).ok_or(t)?,
            offset: u64_at(b, o + 8).ok_or(t)?,
            vaddr: u64_at(b, o + 16).ok_or(t)?,
            file_size: u64_at(b, o + 32).ok_or(t)?,
            mem_size: u64_at(b, o + 40).ok_or(t)?,
        };
        Ok((s.mem_size > 0).then_some(s))
    }

    /// The loadable segments, in address order (validated by `parse`).
    pub fn segments(&self) -> impl Iterator<Item = Segment> + '_ {
        (0..self.phnum).filter_map(move |i| self.raw(i).ok().flatten())
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// An ELF64 RISC-V executable with segments (vaddr, flags, data, mem_size).
    pub fn elf(entry: u64, segs: &[(u64, u32, &[u8], u64)]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(b"\x7fELF\x02\x01\x01");
        out.resize(16, 0);
        out.extend_from_slice(&ET_EXEC.to_le_bytes());
        out.extend_from_slice(&EM_RISCV.to_le_bytes());
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&entry.to_le_bytes());
        out.extend_from_slice(&64u64.to_le_bytes()); // phoff
        out.extend_from_slice(&0u64.to_le_bytes()); // shoff
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&64u16.to_le_bytes());
        out.extend_from_slice(&(PHDR as u16).to_le_bytes());
        out.extend_from_slice(&(segs.len() as u16).to_le_bytes());
        out.extend_from_slice(&[0; 6]);
        let mut off = 64 + segs.len() * PHDR;
        for (va, flags, data, mem) in segs {
            out.extend_from_slice(&PT_LOAD.to_le_bytes());
            out.extend_from_slice(&flags.to_le_bytes());
            for v in [off as u64, *va, *va, data.len() as u64, *mem, 4096] {
                out.extend_from_slice(&v.to_le_bytes());
            }
            off += data.len();
        }
        for (_, _, data, _) in segs {
            out.extend_from_slice(data);
        }
        out
    }

    const LO: usize = 0x1000;
    const HI: usize = 0x100_0000;

    #[test]
    fn parses_segments_in_order() {
        let f = elf(0x10000, &[(0x10000, PF_R | PF_X, b"text", 4), (0x11000, PF_R | PF_W, b"dd", 0x2000)]);
        let e = Elf::parse(&f, LO, HI).unwrap();
        assert_eq!(e.entry, 0x10000);
        let s: Vec<Segment> = e.segments().collect();
        assert_eq!(s.len(), 2);
        assert_eq!((s[1].vaddr, s[1].file_size, s[1].mem_size, s[1].flags), (0x11000, 2, 0x2000, PF_R | PF_W));
        assert_eq!(s[0].bytes_in(&f, 0x10000, 0x11000), Some((0x10000, &b"text"[..])));
        assert_eq!(s[1].bytes_in(&f, 0x12000, 0x13000), None, "bss has no file bytes");
    }

    #[test]
    fn malformed_files_are_errors() {
        let good = elf(0x10000, &[(0x10000, PF_R | PF_X, b"text", 4)]);
        assert!(Elf::parse(&good, LO, HI).is_ok());
        assert_eq!(Elf::parse(&good[..40], LO, HI).err(), Some(ElfError::Truncated));
        assert_eq!(Elf::parse(&good[..64 + 20], LO, HI).err(), Some(ElfError::Truncated), "program headers cut off");
        assert_eq!(Elf::parse(&good[..good.len() - 1], LO, HI).err(), Some(ElfError::SegmentPastEnd(0)));
        let mut bad = good.clone();
        bad[4] = 1;
        assert_eq!(Elf::parse(&bad, LO, HI).err(), Some(ElfError::NotElf64));
        let mut bad = good.clone();
        bad[18] = 62; // x86-64
        assert_eq!(Elf::parse(&bad, LO, HI).err(), Some(ElfError::NotRiscvExecutable));
        let mut bad = good.clone();
        bad[64 + 8..64 + 16].copy_from_slice(&u64::MAX.to_le_bytes()); // offset overflows
        assert_eq!(Elf::parse(&bad, LO, HI).err(), Some(ElfError::SegmentPastEnd(0)));
        let mut bad = good.clone();
        bad[54] = 32;
        assert_eq!(Elf::parse(&bad, LO, HI).err(), Some(ElfError::BadProgramHeaders));
        let huge = elf(0x10000, &[(0x10000, PF_R | PF_X, b"text", u64::MAX - 0x1000)]);
        assert_eq!(Elf::parse(&huge, LO, HI).err(), Some(ElfError::SegmentOutOfRange(0)));
        let high = elf(HI as u64, &[(HI as u64, PF_R | PF_X, b"text", 4)]);
        assert_eq!(Elf::parse(&high, LO, HI).err(), Some(ElfError::SegmentOutOfRange(0)));
        let page0 = elf(0, &[(0, PF_R | PF_X, b"text", 4)]);
        assert_eq!(Elf::parse(&page0, LO, HI).err(), Some(ElfError::SegmentOutOfRange(0)));
        let overlap = elf(0x10000, &[(0x10000, PF_R | PF_X, b"text", 0x100), (0x10080, PF_R, b"x", 1)]);
        assert_eq!(Elf::parse(&overlap, LO, HI).err(), Some(ElfError::SegmentsOverlap(1)));
        let no_exec = elf(0x10000, &[(0x10000, PF_R, b"text", 4)]);
        assert_eq!(Elf::parse(&no_exec, LO, HI).err(), Some(ElfError::BadEntry));
        let empty = elf(0x10000, &[]);
        assert_eq!(Elf::parse(&empty, LO, HI).err(), Some(ElfError::BadEntry));
    }
}
