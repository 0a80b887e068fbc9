//! Sv39 page tables: the entry format and a [`Mapper`] that builds and walks tables through a
//! [`PhysMem`] abstraction. The kernel implements `PhysMem` with its direct map; host tests
//! implement it with ordinary heap pages, so the walking logic is tested off-target.
#![no_std]

pub const PAGE_SIZE: usize = 4096;
pub const ENTRIES: usize = 512;
pub const LEVELS: usize = 3;
/// Virtual addresses must be sign-extended from bit 38.
pub const VA_BITS: u32 = 39;
/// `satp.MODE` value for Sv39.
pub const SATP_MODE_SV39: usize = 8 << 60;

/// Page sizes Sv39 can map with one leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageSize {
    Size4K,
    Size2M,
    Size1G,
}

impl PageSize {
    pub const fn bytes(self) -> usize {
        match self {
            PageSize::Size4K => 1 << 12,
            PageSize::Size2M => 1 << 21,
            PageSize::Size1G => 1 << 30,
        }
    }
    /// Table level whose entries map this size (2 = root).
    const fn level(self) -> usize {
        match self {
            PageSize::Size4K => 0,
            PageSize::Size2M => 1,
            PageSize::Size1G => 2,
        }
    }
}

/// PTE permission and status bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flags(pub u64);

impl Flags {
    pub const V: Flags = Flags(1 << 0);
    pub const R: Flags = Flags(1 << 1);
    pub const W: Flags = Flags(1 << 2);
    pub const X: Flags = Flags(1 << 3);
    pub const U: Flags = Flags(1 << 4);
    pub const G: Flags = Flags(1 << 5);
    pub const A: Flags = Flags(1 << 6);
    pub const D: Flags = Flags(1 << 7);
    pub const RW: Flags = Flags(Self::R.0 | Self::W.0);
    pub const RX: Flags = Flags(Self::R.0 | Self::X.0);
    pub const RWX: Flags = Flags(Self::R.0 | Self::W.0 | Self::X.0);

    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(transparent)]
pub struct Pte(pub u64);

impl Pte {
    const PPN_SHIFT: u32 = 10;
    const PPN_MASK: u64 = (1 << 44) - 1;

    pub const fn new(pa: usize, flags: Flags) -> Pte {
        Pte((((pa >> 12) as u64 & Self::PPN_MASK) << Self::PPN_SHIFT) | flags.0)
    }
    pub const fn is_valid(self) -> bool {
        self.0 & Flags::V.0 != 0
    }
    /// A valid entry with any of R/W/X set is a leaf; otherwise it points to the next table.
    pub const fn is_leaf(self) -> bool {
        self.0 & Flags::RWX.0 != 0
    }
    pub const fn pa(self) -> usize {
        (((self.0 >> Self::PPN_SHIFT) & Self::PPN_MASK) as usize) << 12
    }
    pub const fn flags(self) -> Flags {
        Flags(self.0 & 0x3ff)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    /// Address or size not aligned to the page size.
    Misaligned,
    /// Virtual address not canonical for Sv39.
    NonCanonical,
    /// Something is mapped there already (or a larger page covers it).
    AlreadyMapped,
    /// No frame for an intermediate table.
    OutOfMemory,
    /// Flags without any of R/W/X, or W without R (reserved in Sv39).
    BadFlags,
    NotMapped,
}

/// Access to page-table frames by physical address.
pub trait PhysMem {
    /// A zeroed, page-aligned frame for a new table, by physical address.
    fn alloc_table(&mut self) -> Option<usize>;
    /// The table at physical address `pa`.
    fn table(&mut self, pa: usize) -> &mut [Pte; ENTRIES];
}

pub fn is_canonical(va: usize) -> bool {
    let top = (va as i64) >> (VA_BITS - 1);
    top == 0 || top == -1
}

fn index(va: usize, level: usize) -> usize {
    (va >> (12 + 9 * level)) & (ENTRIES - 1)
}

/// Builds and edits one address space, identified by the physical address of its root table.
pub struct Mapper<'m, M: PhysMem> {
    root: usize,
    mem: &'m mut M,
}

impl<'m, M: PhysMem> Mapper<'m, M> {
    pub fn new(root: usize, mem: &'m mut M) -> Self {
        Mapper { root, mem }
    }

    /// A fresh, empty address space.
    pub fn create(mem: &'m mut M) -> Result<Self, MapError> {
        let root = mem.alloc_table().ok_or(MapError::OutOfMemory)?;
        Ok(Mapper { root, mem })
    }

    pub fn root(&self) -> usize {
        self.root
    }

    /// The `satp` value selecting this address space.
    pub fn satp(&self, asid: u16) -> usize {
        SATP_MODE_SV39 | ((asid as usize) << 44) | (self.root >> 12)
    }

    /// Map one page. Intermediate tables are allocated as needed.
    pub fn map(&mut self, va: usize, pa: usize, size: PageSize, flags: Flags) -> Result<(), MapError> {
        if !va.is_multiple_of(size.bytes()) || !pa.is_multiple_of(size.bytes()) {
            return Err(MapError::Misaligned);
        }
        if !is_canonical(va) {
            return Err(MapError::NonCanonical);
        }
        if !flags.contains(Flags::R) && !flags.contains(Flags::X)
            || flags.contains(Flags::W) && !flags.contains(Flags::R)
        {
            return Err(MapError::BadFlags);
        }
        let mut table = self.root;
        for level in (size.level() + 1..LEVELS).rev() {
            let slot = &mut self.mem.table(table)[index(va, level)];
            let pte = *slot;
            table = if !pte.is_valid() {
                let next = self.mem.alloc_table().ok_or(MapError::OutOfMemory)?;
                self.mem.table(table)[index(va, level)] = Pte::new(next, Flags::V);
                next
            } else if pte.is_leaf() {
                return Err(MapError::AlreadyMapped);
            } else {
                pte.pa()
            };
        }
        let slot = &mut self.mem.table(table)[index(va, size.level())];
        if slot.is_valid() {
            return Err(MapError::AlreadyMapped);
        }
        // A and D preset: Rocket and QEMU may fault instead of setting them in hardware.
        *slot = Pte::new(pa, flags | Flags::V | Flags::A | Flags::D);
        Ok(())
    }

    /// Map `[va, va+len)` to `[pa, pa+len)` using the largest pages alignment allows.
    pub fn map_range(&mut self, va: usize, pa: usize, len: usize, flags: Flags) -> Result<(), MapError> {
        if !va.is_multiple_of(PAGE_SIZE) || !pa.is_multiple_of(PAGE_SIZE) || !len.is_multiple_of(PAGE_SIZE) {
            return Err(MapError::Misaligned);
        }
        let mut off = 0;
        while off < len {
            let size = [PageSize::Size1G, PageSize::Size2M, PageSize::Size4K]
                .into_iter()
                .find(|s| {
                    (va + off).is_multiple_of(s.bytes())
                        && (pa + off).is_multiple_of(s.bytes())
                        && len - off >= s.bytes()
                })
                .unwrap_or(PageSize::Size4K);
            self.map(va + off, pa + off, size, flags)?;
            off += size.bytes();
        }
        Ok(())
    }

    /// Remove the leaf mapping `va`; returns what was mapped. Tables left empty are kept.
    pub fn unmap(&mut self, va: usize) -> Result<(usize, PageSize), MapError> {
        let (table, level) = self.walk(va).ok_or(MapError::NotMapped)?;
        let slot = &mut self.mem.table(table)[index(va, level)];
        let size = [PageSize::Size4K, PageSize::Size2M, PageSize::Size1G][level];
        if !va.is_multiple_of(size.bytes()) {
            return Err(MapError::Misaligned);
        }
        let pa = slot.pa();
        *slot = Pte::default();
        Ok((pa, size))
    }

    /// Translate `va` to its physical address and the leaf's flags.
    pub fn translate(&mut self, va: usize) -> Option<(usize, Flags)> {
        let (table, level) = self.walk(va)?;
        let pte = self.mem.table(table)[index(va, level)];
        let offset_mask = (1usize << (12 + 9 * level)) - 1;
        Some((pte.pa() | (va & offset_mask), pte.flags()))
    }

    /// The table and level holding the valid leaf for `va`.
    fn walk(&mut self, va: usize) -> Option<(usize, usize)> {
        if !is_canonical(va) {
            return None;
        }
        let mut table = self.root;
        for level in (0..LEVELS).rev() {
            let pte = self.mem.table(table)[index(va, level)];
            if !pte.is_valid() {
                return None;
            }
            if pte.is_leaf() {
                return Some((table, level));
            }
            table = pte.pa();
        }
        None
    }
}

#[cfg(test)]
mod tests;
