extern crate std;
use super::*;
use std::{boxed::Box, collections::HashMap};

/// Host stand-in for physical memory: tables are heap pages keyed by fake physical addresses.
struct HostMem {
    tables: HashMap<usize, Box<[Pte; ENTRIES]>>,
    next: usize,
    limit: usize,
}

impl HostMem {
    fn new(limit: usize) -> Self {
        HostMem { tables: HashMap::new(), next: 0x8000_0000, limit }
    }
}

impl PhysMem for HostMem {
    fn alloc_table(&mut self) -> Option<usize> {
        if self.tables.len() >= self.limit {
            return None;
        }
        let pa = self.next;
        self.next += PAGE_SIZE;
        self.tables.insert(pa, Box::new([Pte::default(); ENTRIES]));
        Some(pa)
    }
    fn table(&mut self, pa: usize) -> &mut [Pte; ENTRIES] {
        self.tables.get_mut(&pa).expect("walked to a frame that is not a table")
    }
}

const KWIN: usize = 0xFFFF_FFC0_0000_0000;

#[test]
fn map_translate_unmap_4k() {
    let mut mem = HostMem::new(16);
    let mut m = Mapper::create(&mut mem).unwrap();
    m.map(0x1000, 0x8765_4000, PageSize::Size4K, Flags::RW | Flags::U).unwrap();
    assert_eq!(m.translate(0x1abc), Some((0x8765_4abc, Flags::V | Flags::RW | Flags::U | Flags::A | Flags::D)));
    assert_eq!(m.translate(0x2000), None);
    assert_eq!(m.map(0x1000, 0x9000_0000, PageSize::Size4K, Flags::R), Err(MapError::AlreadyMapped));
    assert_eq!(m.unmap(0x1000), Ok((0x8765_4000, PageSize::Size4K)));
    assert_eq!(m.translate(0x1abc), None);
    assert_eq!(m.unmap(0x1000), Err(MapError::NotMapped));
}

#[test]
fn high_half_gigapages_and_satp() {
    let mut mem = HostMem::new(4);
    let mut m = Mapper::create(&mut mem).unwrap();
    m.map(KWIN + 0x8000_0000, 0x8000_0000, PageSize::Size1G, Flags::RWX | Flags::G).unwrap();
    assert_eq!(m.translate(KWIN + 0x8020_1234).map(|t| t.0), Some(0x8020_1234));
    // root index of 0xFFFFFFC0_80000000 is 258; only the root table was needed
    assert_eq!(mem.tables.len(), 1);
    let root = *mem.tables.keys().next().unwrap();
    assert!(mem.table(root)[258].is_leaf());
    let m = Mapper::new(root, &mut mem);
    assert_eq!(m.satp(5), (8 << 60) | (5 << 44) | (root >> 12));
}

#[test]
fn map_range_uses_largest_pages() {
    let mut mem = HostMem::new(16);
    let mut m = Mapper::create(&mut mem).unwrap();
    // 4K head, 2M middle, 4K tail
    let va = 0x4000_0000 - 0x1000;
    let len = 0x1000 + 0x20_0000 + 0x1000;
    m.map_range(va, va, len, Flags::RW).unwrap();
    for probe in [va, 0x4000_0000, 0x4010_0000, 0x4020_0000] {
        assert_eq!(m.translate(probe).map(|t| t.0), Some(probe));
    }
    assert_eq!(m.unmap(0x4000_0000), Ok((0x4000_0000, PageSize::Size2M)));
    assert_eq!(m.unmap(0x4010_0000), Err(MapError::NotMapped));
}

#[test]
fn rejects_bad_requests() {
    let mut mem = HostMem::new(2);
    let mut m = Mapper::create(&mut mem).unwrap();
    assert_eq!(m.map(0x1001, 0, PageSize::Size4K, Flags::R), Err(MapError::Misaligned));
    assert_eq!(m.map(0x20_1000, 0x20_1000, PageSize::Size2M, Flags::R), Err(MapError::Misaligned));
    assert_eq!(m.map(0x0000_0040_0000_0000, 0, PageSize::Size4K, Flags::R), Err(MapError::NonCanonical));
    assert_eq!(m.map(0x1000, 0, PageSize::Size4K, Flags::W), Err(MapError::BadFlags));
    assert_eq!(m.map(0x1000, 0, PageSize::Size4K, Flags(0)), Err(MapError::BadFlags));
    // one table left: a 4K map needs two more levels
    assert_eq!(m.map(0x1000, 0, PageSize::Size4K, Flags::R), Err(MapError::OutOfMemory));
}

#[test]
fn a_superpage_blocks_smaller_maps_inside_it() {
    let mut mem = HostMem::new(8);
    let mut m = Mapper::create(&mut mem).unwrap();
    m.map(0x20_0000, 0x20_0000, PageSize::Size2M, Flags::R).unwrap();
    assert_eq!(m.map(0x20_1000, 0x1000, PageSize::Size4K, Flags::R), Err(MapError::AlreadyMapped));
    assert_eq!(m.unmap(0x20_1000), Err(MapError::Misaligned));
}
