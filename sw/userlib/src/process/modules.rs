//! The boot modules as the root task sees them: the bytes the kernel mapped read-only
//! (`BootInfo::modules`) and each process's record from the image manifest (`sw/image.toml`,
//! packed by mkimage into the module table, `sw/lib/bootmods`).
use super::{Error, Give};
use abi::bootinfo::BootInfo;
pub use bootmods::{CapSpec, Process as Record, ANY_HART, CAP_ENDPOINT, CAP_NOTIFICATION, MAX_CAPS, NO_FAULT};

/// A module: its ELF bytes (mapped read-only) and how the manifest says it runs.
#[derive(Clone, Copy, Debug)]
pub struct BootModule {
    pub name: &'static str,
    pub bytes: &'static [u8],
    pub record: Record,
}

/// The module named `name`, if the kernel mapped a valid table with it.
pub fn boot_module(bi: &BootInfo, name: &str) -> Option<BootModule> {
    let m = &bi.modules;
    if m.window_size == 0 {
        return None;
    }
    // SAFETY: the kernel maps the window read-only at this address for the root task's
    // lifetime; the table in it is validated before any entry is used.
    let window = unsafe { core::slice::from_raw_parts(m.window_vaddr as *const u8, m.window_size) };
    let mods = bootmods::Modules::parse(window).ok()?;
    let found = mods.find(name)?;
    Some(BootModule { name: found.name, bytes: found.data, record: found.process })
}

/// Every module of the table, in manifest order (none if the kernel mapped no valid table).
pub fn modules(bi: &BootInfo) -> impl Iterator<Item = BootModule> {
    let m = &bi.modules;
    // SAFETY: as in `boot_module`.
    let window: &'static [u8] = if m.window_size == 0 {
        &[]
    } else {
        unsafe { core::slice::from_raw_parts(m.window_vaddr as *const u8, m.window_size) }
    };
    let mods = bootmods::Modules::parse(window).ok();
    let n = mods.as_ref().map_or(0, |t| t.len());
    (0..n).filter_map(move |i| {
        let found = mods.as_ref()?.get(i).ok()?;
        Some(BootModule { name: found.name, bytes: found.data, record: found.process })
    })
}

/// The caps a record gives, as `Give`s: `objects[i]` is the caller's cap to the system's
/// object number i (the endpoint or notification it made for that manifest name). Returns
/// how many of `out` it filled.
pub fn given_caps(record: &Record, objects: &[usize], out: &mut [Give; MAX_CAPS]) -> Result<usize, Error> {
    for (o, c) in out.iter_mut().zip(record.caps()) {
        let cap = *objects.get(c.object as usize).ok_or(Error::BadSpec("cap names an object the caller lacks"))?;
        *o = Give { cap, rights: c.rights as usize, badge: c.badge as usize };
    }
    Ok(record.caps().len())
}
