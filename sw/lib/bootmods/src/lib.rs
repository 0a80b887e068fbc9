//! Boot modules: one ELF file per process of the system (the root task first), each with the
//! record of how it runs that the image manifest (`sw/image.toml`) gives it.
//!
//! Layout at `image.modules_base` (all little-endian, written by `scripts/mkimage.py`):
//! ```text
//! u64 magic (image.modules_magic) | u64 count | count x entry (128 bytes):
//!   [u8; 32] name | u64 offset | u64 size
//!   u16 hart | u8 priority | u8 cnode_bits | u16 stack_pages | u8 ncaps | u8 fault | u64 0
//!   8 x { u8 kind, u8 rights, u16 object, u32 badge }
//! ```
//! `offset` is from the table's start; files are 4 KiB aligned. Everything is validated: a
//! corrupt table is reported, never trusted.
#![no_std]

pub const NAME_LEN: usize = 32;
const HEADER: usize = 16;
const ENTRY: usize = 128;
pub const MAX_MODULES: usize = 64;
/// Caps a process record can list.
pub const MAX_CAPS: usize = 8;
/// `Process::hart` when the manifest leaves the choice to the root task.
pub const ANY_HART: u16 = 0xFFFF;
/// `Process::fault` when no given cap is the fault endpoint.
pub const NO_FAULT: u8 = 0xFF;
/// `CapSpec::kind`: a named endpoint or notification of the system.
pub const CAP_ENDPOINT: u8 = 1;
pub const CAP_NOTIFICATION: u8 = 2;

/// A cap the manifest gives a process: `object` indexes the system's named endpoints and
/// notifications (one per name, numbered in order of first mention); `rights` are seL4 rights
/// bits (write 1, read 2, grant 4, grant-reply 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CapSpec {
    pub kind: u8,
    pub rights: u8,
    pub object: u16,
    pub badge: u32,
}

/// How the manifest says a process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Process {
    pub hart: u16,
    pub priority: u8,
    pub cnode_bits: u8,
    pub stack_pages: u16,
    /// Index in `caps` of its fault endpoint, or `NO_FAULT`.
    pub fault: u8,
    ncaps: u8,
    caps_: [CapSpec; MAX_CAPS],
}

impl Process {
    pub fn caps(&self) -> &[CapSpec] {
        &self.caps_[..self.ncaps as usize]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    NoTable,
    TooMany,
    OutOfBounds,
    BadName,
    /// A process record with too many caps, an unknown cap kind or a fault index past them.
    BadRecord,
}

#[derive(Clone, Copy, Debug)]
pub struct Module<'a> {
    pub name: &'a str,
    /// Offset of the file from the table start.
    pub offset: usize,
    pub data: &'a [u8],
    pub process: Process,
}

pub struct Modules<'a> {
    region: &'a [u8],
    count: usize,
}

fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    b.get(off..off + 8).map(|s| u64::from_le_bytes(s.try_into().unwrap()))
}

impl<'a> Modules<'a> {
    /// Parse the table at the start of `region` (the whole modules window).
    pub fn parse(region: &'a [u8]) -> Result<Self, Error> {
        if u64_at(region, 0) != Some(platform::image::MODULES_MAGIC as u64) {
            return Err(Error::NoTable);
        }
        let count = u64_at(region, 8).ok_or(Error::NoTable)? as usize;
        if count > MAX_MODULES {
            return Err(Error::TooMany);
        }
        let m = Modules { region, count };
        for i in 0..count {
            m.get(i)?;
        }
        Ok(m)
    }

    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn get(&self, i: usize) -> Result<Module<'a>, Error> {
        let e = HEADER + i * ENTRY;
        let raw = self.region.get(e..e + NAME_LEN).ok_or(Error::OutOfBounds)?;
        let end = raw.iter().position(|&b| b == 0).unwrap_or(NAME_LEN);
        let name = core::str::from_utf8(&raw[..end]).map_err(|_| Error::BadName)?;
        let offset = u64_at(self.region, e + NAME_LEN).ok_or(Error::OutOfBounds)? as usize;
        let size = u64_at(self.region, e + NAME_LEN + 8).ok_or(Error::OutOfBounds)? as usize;
        let data = offset.checked_add(size).and_then(|end| self.region.get(offset..end)).ok_or(Error::OutOfBounds)?;
        if offset < HEADER + self.count * ENTRY {
            return Err(Error::OutOfBounds); // overlaps the table itself
        }
        let r = self.region.get(e + NAME_LEN + 16..e + ENTRY).ok_or(Error::OutOfBounds)?;
        let ncaps = r[6];
        if ncaps as usize > MAX_CAPS || (r[7] != NO_FAULT && r[7] >= ncaps) {
            return Err(Error::BadRecord);
        }
        let mut caps_ = [CapSpec::default(); MAX_CAPS];
        for (i, c) in caps_.iter_mut().enumerate().take(ncaps as usize) {
            let b = &r[16 + 8 * i..24 + 8 * i];
            *c = CapSpec {
                kind: b[0],
                rights: b[1],
                object: u16::from_le_bytes([b[2], b[3]]),
                badge: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            };
            if !matches!(c.kind, CAP_ENDPOINT | CAP_NOTIFICATION) {
                return Err(Error::BadRecord);
            }
        }
        let process = Process {
            hart: u16::from_le_bytes([r[0], r[1]]),
            priority: r[2],
            cnode_bits: r[3],
            stack_pages: u16::from_le_bytes([r[4], r[5]]),
            fault: r[7],
            ncaps,
            caps_,
        };
        Ok(Module { name, offset, data, process })
    }

    pub fn find(&self, name: &str) -> Option<Module<'a>> {
        (0..self.count).filter_map(|i| self.get(i).ok()).find(|m| m.name == name)
    }

    /// Named endpoints and notifications the processes share: one more than the highest
    /// object index any record mentions.
    pub fn objects(&self) -> usize {
        (0..self.count)
            .filter_map(|i| self.get(i).ok())
            .flat_map(|m| m.process.caps().iter().map(|c| c.object as usize + 1).max())
            .max()
            .unwrap_or(0)
    }

    /// Bytes of the window in use (table and files), for reserving them at boot.
    pub fn used(&self) -> usize {
        (0..self.count).filter_map(|i| self.get(i).ok()).map(|m| m.offset + m.data.len()).max().unwrap_or(HEADER)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    fn table(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(platform::image::MODULES_MAGIC as u64).to_le_bytes());
        out.extend_from_slice(&(entries.len() as u64).to_le_bytes());
        let mut off = 4096;
        for (name, data) in entries {
            let mut n = [0u8; NAME_LEN];
            n[..name.len()].copy_from_slice(name.as_bytes());
            out.extend_from_slice(&n);
            out.extend_from_slice(&(off as u64).to_le_bytes());
            out.extend_from_slice(&(data.len() as u64).to_le_bytes());
            // hart 1, priority 100, 64 slots, 4 stack pages, one cap (endpoint 3, badge 7)
            // that is also the fault endpoint.
            out.extend_from_slice(&[1, 0, 100, 6, 4, 0, 1, 0]);
            out.extend_from_slice(&[0; 8]);
            out.extend_from_slice(&[CAP_ENDPOINT, 2, 3, 0, 7, 0, 0, 0]);
            out.extend_from_slice(&[0; 56]);
            off += data.len().next_multiple_of(4096);
        }
        for (_, data) in entries {
            out.resize(out.len().next_multiple_of(4096), 0);
            out.extend_from_slice(data);
        }
        out
    }

    #[test]
    fn finds_modules_by_name() {
        let t = table(&[("roottask", b"\x7fELFroot"), ("server", b"srv")]);
        let m = Modules::parse(&t).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m.find("roottask").unwrap().data, b"\x7fELFroot");
        assert_eq!(m.find("server").unwrap().offset, 8192);
        assert!(m.find("absent").is_none());
        assert_eq!(m.used(), 8192 + 3);
        let p = m.find("server").unwrap().process;
        assert_eq!((p.hart, p.priority, p.cnode_bits, p.stack_pages, p.fault), (1, 100, 6, 4, 0));
        assert_eq!(p.caps(), &[CapSpec { kind: CAP_ENDPOINT, rights: 2, object: 3, badge: 7 }]);
        assert_eq!(m.objects(), 4);
    }

    #[test]
    fn bad_process_records_are_rejected() {
        let rec = 16 + NAME_LEN + 16;
        let mut t = table(&[("p", b"x")]);
        t[rec + 6] = MAX_CAPS as u8 + 1;
        assert_eq!(Modules::parse(&t).err(), Some(Error::BadRecord), "too many caps");
        let mut t = table(&[("p", b"x")]);
        t[rec + 7] = 1;
        assert_eq!(Modules::parse(&t).err(), Some(Error::BadRecord), "fault index past the caps");
        let mut t = table(&[("p", b"x")]);
        t[rec + 16] = 9;
        assert_eq!(Modules::parse(&t).err(), Some(Error::BadRecord), "unknown cap kind");
    }

    #[test]
    fn corrupt_tables_are_rejected() {
        assert_eq!(Modules::parse(&[0u8; 64]).err(), Some(Error::NoTable));
        let mut t = table(&[("roottask", b"data")]);
        t[16 + NAME_LEN..16 + NAME_LEN + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
        assert_eq!(Modules::parse(&t).err(), Some(Error::OutOfBounds), "offset beyond the window");
        let mut t = table(&[("roottask", b"data")]);
        t[8..16].copy_from_slice(&1000u64.to_le_bytes());
        assert_eq!(Modules::parse(&t).err(), Some(Error::TooMany));
        let mut t = table(&[("roottask", b"data")]);
        t[16 + NAME_LEN..16 + NAME_LEN + 8].copy_from_slice(&8u64.to_le_bytes());
        assert_eq!(Modules::parse(&t).err(), Some(Error::OutOfBounds), "a file inside the table");
    }
}
