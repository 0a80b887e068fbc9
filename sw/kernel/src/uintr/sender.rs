//! Sender tables (uintr-spec.md section 3): one kernel-owned page per thread that sends, in
//! the format the hardware reads, with a shadow page saying which notification each entry
//! belongs to (so entries can follow their receiver slot). Pages come from a pool reserved at
//! boot, as the UINTC's slots are a fixed resource too; a table goes back to the pool when its
//! last entry is freed or its thread is destroyed.
//!
//! An entry belongs to the Notification cap it was registered through: the cap carries a
//! handle `gen << 32 | (table + 1) << 16 | index`, and the generation makes a handle whose
//! table has since been freed and reused harmless.
use crate::kcell::KCell;
use crate::mm::phys_to_virt;
use crate::object::tcb::Tcb;
use abi::uintr::SENDER_ENTRIES;
use platform::uist;

pub const MAX_TABLES: usize = 64;

#[derive(Clone, Copy)]
struct Table {
    /// Physical address of the entry page and its shadow (0 if the pool ran short at boot).
    page: usize,
    shadow: usize,
    owner: *mut Tcb,
    used: u16,
    /// Entries at or above this index have never been used since the table was taken.
    hwm: u16,
    gen: u32,
}

static TABLES: KCell<[Table; MAX_TABLES]> =
    KCell::new([Table { page: 0, shadow: 0, owner: core::ptr::null_mut(), used: 0, hwm: 0, gen: 0 }; MAX_TABLES]);

fn tables() -> &'static mut [Table; MAX_TABLES] {
    // SAFETY: under the kernel lock (or at boot).
    unsafe { TABLES.get() }
}

fn entries(pa: usize) -> &'static mut [u64; SENDER_ENTRIES] {
    // SAFETY: pool pages are kernel memory, in the window, owned by this module.
    unsafe { &mut *(phys_to_virt(pa) as *mut [u64; SENDER_ENTRIES]) }
}

/// Reserve the pool (two zeroed pages per table).
pub fn init() {
    for t in tables().iter_mut() {
        if let (Some(p), Some(s)) = (crate::mm::frames::alloc_zeroed(), crate::mm::frames::alloc_zeroed()) {
            t.page = p;
            t.shadow = s;
        }
    }
}

pub fn tables_used() -> usize {
    tables().iter().filter(|t| !t.owner.is_null()).count()
}

pub fn entries_used() -> usize {
    tables().iter().filter(|t| !t.owner.is_null()).map(|t| t.used as usize).sum()
}

/// The `suist` value for table `id`: Enable, one page, its PPN.
pub fn suist(id: u16) -> usize {
    let page = tables()[id as usize].page;
    (1 << 63) | (1 << 44) | (page >> 12)
}

pub fn entry_word(slot: Option<u16>, vector: u64) -> u64 {
    match slot {
        Some(s) => (1 << uist::VALID_BIT) | (vector << uist::VECTOR_SHIFT) | ((s as u64) << uist::SLOT_SHIFT),
        // Allocated but not deliverable (the notification has no receiver yet): Valid clear,
        // the vector kept so the entry can be revalidated.
        None => vector << uist::VECTOR_SHIFT,
    }
}

/// A table for `owner` (which has none).
pub fn alloc_table(owner: &mut Tcb) -> Option<u16> {
    let (id, t) = tables().iter_mut().enumerate().find(|(_, t)| t.owner.is_null() && t.page != 0)?;
    t.owner = owner;
    t.used = 0;
    t.hwm = 0;
    t.gen = t.gen.wrapping_add(1);
    Some(id as u16)
}

/// A free entry in table `id` sending `vector` to `slot` for notification `ntfn`; returns
/// (handle, index).
pub fn alloc_entry(id: u16, ntfn: u64, slot: Option<u16>, vector: u64) -> Option<(u64, usize)> {
    let t = &mut tables()[id as usize];
    let shadow = entries(t.shadow);
    let index = shadow.iter().position(|&n| n == 0)?;
    shadow[index] = ntfn;
    entries(t.page)[index] = entry_word(slot, vector);
    t.used += 1;
    t.hwm = t.hwm.max(index as u16 + 1);
    Some(((t.gen as u64) << 32 | (id as u64 + 1) << 16 | index as u64, index))
}

/// Free the entry a cap's handle names, if it is still that cap's. Returns the table's owner
/// if the table became empty and was released (its `suist` must be reloaded).
pub fn free_entry(handle: u64) -> Option<*mut Tcb> {
    let (gen, id, index) = ((handle >> 32) as u32, ((handle >> 16) & 0xffff) as usize, (handle & 0xffff) as usize);
    let t = tables().get_mut(id.checked_sub(1)?)?;
    if t.owner.is_null() || t.gen != gen || index >= SENDER_ENTRIES || entries(t.shadow)[index] == 0 {
        return None;
    }
    // Invalid first: a uipi.send racing with this sees either the old entry or nothing.
    entries(t.page)[index] = 0;
    entries(t.shadow)[index] = 0;
    t.used -= 1;
    if t.used == 0 {
        let owner = t.owner;
        release(id - 1);
        return Some(owner);
    }
    None
}

/// Give table `id` back to the pool (its thread is gone or it has no entries left).
pub fn release(id: usize) {
    let t = &mut tables()[id];
    let hwm = t.hwm as usize;
    entries(t.page)[..hwm].fill(0);
    entries(t.shadow)[..hwm].fill(0);
    t.owner = core::ptr::null_mut();
    t.used = 0;
    t.hwm = 0;
}

/// Point every entry of notification `ntfn` at `slot` (its receiver was registered), or make
/// them undeliverable (None: the receiver went away).
pub fn retarget(ntfn: u64, slot: Option<u16>) {
    for t in tables().iter().filter(|t| !t.owner.is_null()) {
        let (page, shadow) = (entries(t.page), entries(t.shadow));
        for i in 0..t.hwm as usize {
            if shadow[i] == ntfn {
                let vector = (page[i] >> uist::VECTOR_SHIFT) & 0xffff;
                page[i] = entry_word(slot, vector);
            }
        }
    }
}

/// What `uipi.send index` does with table `id` (the checks of uintr-spec.md section 2):
/// the (slot, vector) to signal, if any.
pub fn lookup(id: u16, index: usize) -> Option<(u16, u64)> {
    let t = &tables()[id as usize];
    if index >= SENDER_ENTRIES {
        return None;
    }
    let e = entries(t.page)[index];
    if e & (1 << uist::VALID_BIT) == 0 {
        return None;
    }
    Some(((e >> uist::SLOT_SHIFT) as u16, (e >> uist::VECTOR_SHIFT) & 0x3f))
}
