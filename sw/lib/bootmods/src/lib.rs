//! Boot modules: ELF files the image carries for the kernel (the root task first).
//!
//! Layout at `image.modules_base` (all little-endian, written by `scripts/mkimage.py`):
//! ```text
//! u64 magic (image.modules_magic) | u64 count | count x { [u8; 32] name, u64 offset, u64 size }
//! ```
//! `offset` is from the table's start; files are 4 KiB aligned. Everything is validated: a
//! corrupt table is reported, never trusted.
#![no_std]

pub const NAME_LEN: usize = 32;
const HEADER: usize = 16;
const ENTRY: usize = NAME_LEN + 16;
pub const MAX_MODULES: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    NoTable,
    TooMany,
    OutOfBounds,
    BadName,
}

#[derive(Clone, Copy, Debug)]
pub struct Module<'a> {
    pub name: &'a str,
    /// Offset of the file from the table start.
    pub offset: usize,
    pub data: &'a [u8],
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
        let data = offset
            .checked_add(size)
            .and_then(|end| self.region.get(offset..end))
            .ok_or(Error::OutOfBounds)?;
        if offset < HEADER + self.count * ENTRY {
            return Err(Error::OutOfBounds); // overlaps the table itself
        }
        Ok(Module { name, offset, data })
    }

    pub fn find(&self, name: &str) -> Option<Module<'a>> {
        (0..self.count).filter_map(|i| self.get(i).ok()).find(|m| m.name == name)
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
