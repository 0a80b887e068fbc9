//! Our reader of the flattened device tree (Devicetree Specification v0.4, chapter 5). One
//! pass over the structure block records each node's name, parent, phandle and where its
//! properties lie; every question after that (a property, a path, a compatible node, a
//! phandle) reads only the bytes it needs from that table. The `fdt` crate we used before
//! re-walked the whole tree, checking every property name as UTF-8, for each question: about
//! 3.3 M cycles per parse on the 4-core RTL, paid by the firmware and again by the kernel.
//!
//! Nothing here trusts the blob: every offset and length is checked against the block it
//! points into, and a malformed tree is an error, never a panic or an endless loop.

use crate::Region;

const MAGIC: u32 = 0xd00d_feed;
const BEGIN_NODE: u32 = 1;
const END_NODE: u32 = 2;
const PROP: u32 = 3;
const NOP: u32 = 4;
const END: u32 = 9;
const HEADER_BYTES: usize = 40;
/// A sanity bound on `totalsize` for a blob found by address (QEMU's are 4-8 KiB).
const MAX_BLOB_BYTES: usize = 1 << 20;

/// Nodes the table holds: QEMU `virt` with 8 harts has ~50, our SoC ~40. The table lives on
/// the boot hart's stack (20 bytes a node; the firmware's stack is 16 KiB), so keep it small.
pub const MAX_NODES: usize = 128;
const MAX_DEPTH: usize = 16;
const NO_PARENT: u16 = u16::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlatError {
    /// Bad magic or version, a header offset outside the blob, a token or length that runs
    /// past its block, unbalanced nodes.
    Malformed,
    /// More than [`MAX_NODES`] nodes or deeper than 16 levels.
    TooBig,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Offset of the NUL-terminated name in the structure block.
    name: u32,
    /// The node's properties: from the token after its name to the first token that is not a
    /// property or NOP (its first child or its end).
    props: (u32, u32),
    parent: u16,
    /// 0: none (phandle 0 is not a valid handle).
    phandle: u32,
}

pub struct Tree<'a> {
    structs: &'a [u8],
    strings: &'a [u8],
    rsvmap: &'a [u8],
    nodes: heapless::Vec<Entry, MAX_NODES>,
}

// The firmware parses on a 16 KiB stack, where a tree (and a copy or two of it as it is
// returned) must fit beside the machine description being built.
const _: () = assert!(core::mem::size_of::<Tree>() <= 2700);

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

fn be64(b: &[u8], at: usize) -> Option<u64> {
    Some((u64::from(be32(b, at)?) << 32) | u64::from(be32(b, at + 4)?))
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// `cells` big-endian 32-bit cells at `at` as one number (1 or 2 cells; 0 cells is 0).
fn read_cells(b: &[u8], at: usize, cells: usize) -> Option<u64> {
    match cells {
        0 => Some(0),
        1 => be32(b, at).map(u64::from),
        2 => be64(b, at),
        _ => None,
    }
}

impl<'a> Tree<'a> {
    /// The size a blob at `addr` claims, after checking its magic.
    ///
    /// # Safety
    /// `addr` must point to at least 40 readable bytes.
    pub unsafe fn size_at(addr: usize) -> Result<usize, FlatError> {
        // SAFETY: the caller guarantees the header is readable.
        let header = unsafe { core::slice::from_raw_parts(addr as *const u8, HEADER_BYTES) };
        if be32(header, 0) != Some(MAGIC) {
            return Err(FlatError::Malformed);
        }
        let size = be32(header, 4).ok_or(FlatError::Malformed)? as usize;
        if !(HEADER_BYTES..=MAX_BLOB_BYTES).contains(&size) {
            return Err(FlatError::Malformed);
        }
        Ok(size)
    }

    pub fn parse(blob: &'a [u8]) -> Result<Tree<'a>, FlatError> {
        let word = |i: usize| be32(blob, i * 4).ok_or(FlatError::Malformed).map(|v| v as usize);
        if word(0)? != MAGIC as usize || word(5)? < 17 || word(6)? > 17 {
            return Err(FlatError::Malformed);
        }
        let total = word(1)?;
        let (off_struct, off_strings, off_rsvmap) = (word(2)?, word(3)?, word(4)?);
        let (size_strings, size_struct) = (word(8)?, word(9)?);
        let block = |off: usize, size: usize| {
            let end = off.checked_add(size).filter(|&e| e <= total && e <= blob.len());
            end.map(|e| &blob[off..e]).ok_or(FlatError::Malformed)
        };
        let mut t = Tree {
            structs: block(off_struct, size_struct)?,
            strings: block(off_strings, size_strings)?,
            rsvmap: block(off_rsvmap, total.min(blob.len()).saturating_sub(off_rsvmap))?,
            nodes: heapless::Vec::new(),
        };
        t.walk()?;
        Ok(t)
    }

    fn walk(&mut self) -> Result<(), FlatError> {
        let s = self.structs;
        let bad = FlatError::Malformed;
        let mut stack = [0u16; MAX_DEPTH];
        let (mut depth, mut pos) = (0usize, 0usize);
        loop {
            let token = be32(s, pos).ok_or(bad)?;
            pos += 4;
            match token {
                BEGIN_NODE => {
                    if depth == 0 && !self.nodes.is_empty() {
                        return Err(bad); // a second root
                    }
                    let len = s.get(pos..).and_then(|r| r.iter().position(|&b| b == 0)).ok_or(bad)?;
                    let name = pos as u32;
                    pos = align4(pos + len + 1);
                    let props_start = pos;
                    let mut phandle = 0;
                    loop {
                        match be32(s, pos).ok_or(bad)? {
                            NOP => pos += 4,
                            PROP => {
                                let len = be32(s, pos + 4).ok_or(bad)? as usize;
                                let name_off = be32(s, pos + 8).ok_or(bad)? as usize;
                                let value = pos + 12;
                                let end = value.checked_add(len).filter(|&e| e <= s.len()).ok_or(bad)?;
                                let pname = self.string(name_off).ok_or(bad)?;
                                if len == 4 && (pname == b"phandle" || pname == b"linux,phandle") {
                                    phandle = be32(s, value).ok_or(bad)?;
                                }
                                pos = align4(end);
                            }
                            _ => break,
                        }
                    }
                    if depth == MAX_DEPTH {
                        return Err(FlatError::TooBig);
                    }
                    let parent = if depth == 0 { NO_PARENT } else { stack[depth - 1] };
                    let index = self.nodes.len() as u16;
                    let entry = Entry { name, props: (props_start as u32, pos as u32), parent, phandle };
                    self.nodes.push(entry).map_err(|_| FlatError::TooBig)?;
                    stack[depth] = index;
                    depth += 1;
                }
                END_NODE => depth = depth.checked_sub(1).ok_or(bad)?,
                NOP => {}
                END if depth == 0 && !self.nodes.is_empty() => return Ok(()),
                // END inside a node, a property after a child node, anything else.
                _ => return Err(bad),
            }
        }
    }

    /// The NUL-terminated string at `off` of the strings block, without its NUL.
    fn string(&self, off: usize) -> Option<&'a [u8]> {
        let r = self.strings.get(off..)?;
        Some(&r[..r.iter().position(|&b| b == 0)?])
    }

    /// Is the string at `off` exactly `name`? (No scan for the end of a longer one.)
    fn string_is(&self, off: usize, name: &[u8]) -> bool {
        let end = off.saturating_add(name.len());
        self.strings.get(off..end) == Some(name) && self.strings.get(end) == Some(&0)
    }

    fn node(&self, index: usize) -> Node<'_, 'a> {
        Node { tree: self, index }
    }

    pub fn root(&self) -> Node<'_, 'a> {
        self.node(0)
    }

    /// Every node in document order.
    pub fn nodes(&self) -> impl Iterator<Item = Node<'_, 'a>> + '_ {
        (0..self.nodes.len()).map(|i| self.node(i))
    }

    pub fn by_phandle(&self, phandle: u32) -> Option<Node<'_, 'a>> {
        if phandle == 0 {
            return None;
        }
        self.nodes().find(|n| self.nodes[n.index].phandle == phandle)
    }

    /// The node at an absolute path such as `/cpus` or `/soc/serial@10000000`; a component
    /// without a unit address also matches a node that has one (`/memory` finds `memory@80000000`).
    pub fn find_path(&self, path: &[u8]) -> Option<Node<'_, 'a>> {
        let rest = path.strip_prefix(b"/")?;
        let mut at = self.root();
        for part in rest.split(|&b| b == b'/').filter(|p| !p.is_empty()) {
            at = at.children().find(|c| c.name() == part || (!part.contains(&b'@') && c.base_name() == part))?;
        }
        Some(at)
    }

    /// A path, or an alias of `/aliases` naming one (as `stdout-path` may).
    pub fn resolve(&self, path_or_alias: &[u8]) -> Option<Node<'_, 'a>> {
        if path_or_alias.starts_with(b"/") {
            return self.find_path(path_or_alias);
        }
        let path = self.find_path(b"/aliases")?.prop(path_or_alias)?;
        self.find_path(trim_nul(path))
    }

    /// The first node (document order) compatible with one of `names`.
    pub fn find_compatible(&self, names: &[&str]) -> Option<Node<'_, 'a>> {
        self.nodes().find(|n| n.is_compatible(names))
    }

    /// The memory reservation block's (address, size) entries.
    pub fn reservations(&self) -> impl Iterator<Item = Region> + '_ {
        (0..)
            .map_while(move |i: usize| Some((be64(self.rsvmap, i * 16)?, be64(self.rsvmap, i * 16 + 8)?)))
            .take_while(|&(base, size)| base != 0 || size != 0)
            .map(|(base, size)| Region { base: base as usize, size: size as usize })
    }
}

fn trim_nul(v: &[u8]) -> &[u8] {
    let end = v.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    &v[..end]
}

#[derive(Clone, Copy)]
pub struct Node<'t, 'a> {
    tree: &'t Tree<'a>,
    index: usize,
}

impl<'t, 'a> Node<'t, 'a> {
    fn entry(&self) -> &Entry {
        &self.tree.nodes[self.index]
    }

    pub fn name(&self) -> &'a [u8] {
        let rest = &self.tree.structs[self.entry().name as usize..];
        // The walk found its NUL.
        &rest[..rest.iter().position(|&b| b == 0).unwrap_or(0)]
    }

    /// The name without its unit address (`cpu` of `cpu@1`).
    pub fn base_name(&self) -> &'a [u8] {
        let n = self.name();
        n.split(|&b| b == b'@').next().unwrap_or(n)
    }

    pub fn parent(&self) -> Option<Node<'t, 'a>> {
        let p = self.entry().parent;
        (p != NO_PARENT).then(|| self.tree.node(p as usize))
    }

    pub fn children(&self) -> impl Iterator<Item = Node<'t, 'a>> + 't {
        let (tree, me) = (self.tree, self.index as u16);
        // Children come after their parent in the table.
        (self.index + 1..tree.nodes.len()).filter(move |&i| tree.nodes[i].parent == me).map(move |i| tree.node(i))
    }

    /// The value of property `name`.
    pub fn prop(&self, name: &[u8]) -> Option<&'a [u8]> {
        let s = self.tree.structs;
        let (mut pos, end) = (self.entry().props.0 as usize, self.entry().props.1 as usize);
        // The walk checked every token and length in this range.
        while pos < end {
            if be32(s, pos)? == NOP {
                pos += 4;
                continue;
            }
            let len = be32(s, pos + 4)? as usize;
            if self.tree.string_is(be32(s, pos + 8)? as usize, name) {
                return s.get(pos + 12..pos + 12 + len);
            }
            pos = align4(pos + 12 + len);
        }
        None
    }

    /// A 4- or 8-byte number property.
    pub fn usize_prop(&self, name: &[u8]) -> Option<usize> {
        let v = self.prop(name)?;
        match v.len() {
            4 => be32(v, 0).map(|x| x as usize),
            8 => be64(v, 0).map(|x| x as usize),
            _ => None,
        }
    }

    pub fn u32_prop(&self, name: &[u8]) -> Option<u32> {
        self.prop(name).filter(|v| v.len() == 4).and_then(|v| be32(v, 0))
    }

    /// A string property without its terminating NUL(s).
    pub fn str_prop(&self, name: &[u8]) -> Option<&'a str> {
        core::str::from_utf8(trim_nul(self.prop(name)?)).ok()
    }

    /// The strings of a string-list property (`compatible`, `interrupt-names`).
    pub fn strings(&self, name: &[u8]) -> impl Iterator<Item = &'a [u8]> {
        let v = trim_nul(self.prop(name).unwrap_or(&[]));
        v.split(|&b| b == 0).filter(move |_| !v.is_empty())
    }

    pub fn is_compatible(&self, names: &[&str]) -> bool {
        self.strings(b"compatible").any(|c| names.iter().any(|n| n.as_bytes() == c))
    }

    /// `#address-cells` and `#size-cells` that apply to this node's `reg` (its parent's;
    /// the defaults are 2 and 1).
    fn reg_cells(&self) -> (usize, usize) {
        let p = self.parent();
        let get = |name: &[u8], default| p.and_then(|p| p.u32_prop(name)).map_or(default, |v| v as usize);
        (get(b"#address-cells", 2), get(b"#size-cells", 1))
    }

    /// The (address, size) entries of `reg`; empty when the cells are not 1 or 2 (0 for sizes).
    pub fn regs(&self) -> impl Iterator<Item = Region> + 'a {
        let (ac, sc) = self.reg_cells();
        let v = self.prop(b"reg").unwrap_or(&[]);
        let step = (ac + sc) * 4;
        let usable = (1..=2).contains(&ac) && sc <= 2;
        (0..if usable { v.len() / step } else { 0 }).filter_map(move |i| {
            let base = read_cells(v, i * step, ac)?;
            let size = read_cells(v, i * step + ac * 4, sc)?;
            Some(Region { base: base as usize, size: size as usize })
        })
    }

    pub fn first_reg(&self) -> Option<Region> {
        self.regs().next()
    }

    /// The interrupt controller of this node: `interrupt-parent` here or on the nearest ancestor.
    pub fn interrupt_parent(&self) -> Option<Node<'t, 'a>> {
        let mut at = Some(*self);
        // Bounded by the depth: each step goes one level up.
        while let Some(n) = at {
            if let Some(ph) = n.u32_prop(b"interrupt-parent") {
                return self.tree.by_phandle(ph);
            }
            at = n.parent();
        }
        None
    }

    /// The interrupt numbers of `interrupts`: the first cell of each specifier, whose length is
    /// the controller's `#interrupt-cells`. None without a controller or property.
    pub fn interrupts(&self) -> Option<impl Iterator<Item = u32> + 'a> {
        let cells = self.interrupt_parent()?.u32_prop(b"#interrupt-cells").unwrap_or(1) as usize;
        let v = self.prop(b"interrupts")?;
        let step = cells.clamp(1, 4) * 4;
        Some((0..v.len() / step).filter_map(move |i| be32(v, i * step)))
    }
}
