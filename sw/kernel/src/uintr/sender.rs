//! Sender tables (docs/uintr-spec.md section 3): kernel objects retyped from an Untyped
//! (`abi::object::UINTR_SENDER_TABLE`, 16 KiB), so what a domain sends with is charged to its
//! own memory. Page 0 is the entry page in the format the hardware reads (`suist` names it);
//! page 1 says which notification each entry serves, page 2 which capability slot holds the
//! sender cap the entry belongs to, page 3 holds the header and, in its upper half, each
//! entry's link to the next entry of the same notification. A table is bound to at most one
//! thread (SenderTableBind); unbinding it (or destroying it or its thread) frees every entry
//! in it.
//!
//! Every notification heads a list of its entries, across all tables, at most
//! `abi::uintr::MAX_SENDERS_PER_NOTIFICATION` long: when its receiver slot changes, only those
//! entries are rewritten, and freeing an entry walks only that list, so what one operation
//! does under the kernel lock does not grow with the tables other domains made. (A link is a
//! handle packed into 32 bits, so the list fits the table's four pages.)
//!
//! An entry belongs to the Notification cap it was registered through: the cap carries the
//! handle `table | index`, and the table keeps the cap's slot (updated when the cap moves).
//! The handle stays valid exactly as long as the entry: freeing an entry from the table's
//! side clears the handle in the cap, so a handle never outlives its table.
use crate::kcell::KCell;
use crate::mm::phys_to_virt;
use crate::object::{at, notification::Notification, tcb::Tcb, KSlots};
use abi::uintr::SENDER_ENTRIES;
use caps::{Cap, SlotRef, Slots};
use platform::uist;

const PAGE: u64 = 4096;
const NTFNS: u64 = PAGE;
const SLOTS: u64 = 2 * PAGE;
const HEADER: u64 = 3 * PAGE;
const NEXT: u64 = HEADER + PAGE / 2;
const _: () = assert!(SENDER_ENTRIES * 8 == PAGE as usize && 4 * PAGE == 1 << abi::object::UINTR_SENDER_TABLE_BITS);
const _: () =
    assert!(core::mem::size_of::<Header>() <= (PAGE / 2) as usize && SENDER_ENTRIES * 4 == (PAGE / 2) as usize);
/// Tables lie below this physical address (checked at boot against the RAM), so a packed
/// link (`table >> 14` and the index) fits 32 bits.
pub const LINKABLE_LIMIT: u64 = 1 << (32 - 9 + abi::object::UINTR_SENDER_TABLE_BITS);
/// Handles: the table's address with the entry index in the bits its alignment leaves free.
const INDEX_MASK: u64 = (1 << abi::object::UINTR_SENDER_TABLE_BITS) - 1;

#[repr(C)]
struct Header {
    /// The thread whose `suist` names this table (null: unbound).
    owner: *mut Tcb,
    /// Every live table is on one list (the consistency checker walks it).
    next: u64,
    prev: u64,
    used: u16,
    /// Entries at or above this index have never been used since the table was made or
    /// last emptied.
    hwm: u16,
}

/// First table on the list of live tables (0: none), and the gauges DebugStat reports.
struct Registry {
    head: u64,
    tables: usize,
    entries: usize,
}

static REGISTRY: KCell<Registry> = KCell::new(Registry { head: 0, tables: 0, entries: 0 });

fn registry() -> &'static mut Registry {
    // SAFETY: under the kernel lock.
    unsafe { REGISTRY.get() }
}

fn header(table: u64) -> &'static mut Header {
    at::<Header>(table + HEADER)
}

fn words(pa: u64) -> &'static mut [u64; SENDER_ENTRIES] {
    // SAFETY: a live table's pages are kernel memory in the window, owned by this module.
    unsafe { &mut *(phys_to_virt(pa as usize) as *mut [u64; SENDER_ENTRIES]) }
}

pub fn tables_used() -> usize {
    registry().tables
}

pub fn entries_used() -> usize {
    registry().entries
}

/// Untyped_Retype made a table at `table` (zeroed memory): put it on the list.
pub fn create(table: u64) {
    let r = registry();
    at::<core::mem::MaybeUninit<Header>>(table + HEADER).write(Header {
        owner: core::ptr::null_mut(),
        next: r.head,
        prev: 0,
        used: 0,
        hwm: 0,
    });
    if r.head != 0 {
        header(r.head).prev = table;
    }
    r.head = table;
    r.tables += 1;
}

/// The table's last cap went: unbind it (freeing its entries) and take it off the list.
pub fn destroy(table: u64) {
    unbind(table);
    let h = header(table);
    let (next, prev) = (h.next, h.prev);
    let r = registry();
    if prev == 0 {
        r.head = next;
    } else {
        header(prev).next = next;
    }
    if next != 0 {
        header(next).prev = prev;
    }
    r.tables -= 1;
}

/// The thread table `table` is bound to, if any.
pub fn owner(table: u64) -> Option<&'static mut Tcb> {
    // SAFETY: an owner is live (its destruction unbinds the table first).
    unsafe { header(table).owner.as_mut() }
}

pub fn set_owner(table: u64, t: *mut Tcb) {
    header(table).owner = t;
}

/// Free every entry of `table` and detach it from its thread (which must reload its state
/// and drain sends: `register::unbind_table`). Returns the thread it was bound to.
pub fn unbind(table: u64) -> Option<&'static mut Tcb> {
    let hwm = header(table).hwm as usize;
    for i in 0..hwm {
        if words(table + NTFNS)[i] != 0 {
            let slot = words(table + SLOTS)[i];
            // The cap keeps no handle to an entry that is gone.
            let mut s = KSlots.get(slot);
            if let Cap::Notification { obj, badge, rights, uintr } = s.cap {
                if uintr == handle(table, i) {
                    s.cap = Cap::Notification { obj, badge, rights, uintr: 0 };
                    KSlots.set(slot, s);
                }
            }
            free_at(table, i);
        }
    }
    header(table).hwm = 0;
    let t = owner(table);
    header(table).owner = core::ptr::null_mut();
    if let Some(t) = t {
        t.uintr.set_table(0);
        return Some(t);
    }
    None
}

fn handle(table: u64, index: usize) -> u64 {
    table | index as u64
}

/// The `suist` value for table `table`: Enable, one page, its PPN.
pub fn suist(table: u64) -> usize {
    (1 << 63) | (1 << 44) | (table as usize >> 12)
}

pub fn entry_word(slot: Option<u16>, vector: u64) -> u64 {
    match slot {
        Some(s) => (1 << uist::VALID_BIT) | (vector << uist::VECTOR_SHIFT) | ((s as u64) << uist::SLOT_SHIFT),
        // Allocated but not deliverable (the notification has no receiver yet): Valid clear,
        // the vector kept so the entry can be revalidated.
        None => vector << uist::VECTOR_SHIFT,
    }
}

/// Why an entry could not be made.
pub enum AllocError {
    /// The sender's table has no free entry.
    TableFull,
    /// The notification has its `MAX_SENDERS_PER_NOTIFICATION` entries already.
    TooManySenders,
}

fn links(table: u64) -> &'static mut [u32; SENDER_ENTRIES] {
    // SAFETY: the upper half of a live table's header page, owned by this module.
    unsafe { &mut *(phys_to_virt((table + NEXT) as usize) as *mut [u32; SENDER_ENTRIES]) }
}

/// Handles packed into a link word (0: the end of the list) and back.
fn pack(h: u64) -> u32 {
    let (table, index) = decode(h);
    ((table >> abi::object::UINTR_SENDER_TABLE_BITS) << 9 | index as u64) as u32
}

fn unpack(w: u32) -> u64 {
    if w == 0 {
        return 0;
    }
    ((w as u64 >> 9) << abi::object::UINTR_SENDER_TABLE_BITS) | (w as u64 & 0x1ff)
}

/// The entry after `h` on its notification's list (0: none).
pub fn next_of(h: u64) -> u64 {
    let (table, index) = decode(h);
    unpack(links(table)[index])
}

fn set_next(h: u64, next: u64) {
    let (table, index) = decode(h);
    links(table)[index] = if next == 0 { 0 } else { pack(next) };
}

/// A free entry in `table` sending `vector` to `slot` for notification `n` (at `ntfn`),
/// owned by the cap in `cap_slot`; returns (handle, index).
pub fn alloc_entry(
    table: u64,
    ntfn: u64,
    n: &mut Notification,
    slot: Option<u16>,
    vector: u64,
    cap_slot: SlotRef,
) -> Result<(u64, usize), AllocError> {
    if n.senders as usize >= abi::uintr::MAX_SENDERS_PER_NOTIFICATION {
        return Err(AllocError::TooManySenders);
    }
    let index = words(table + NTFNS).iter().position(|&n| n == 0).ok_or(AllocError::TableFull)?;
    let me = handle(table, index);
    words(table + NTFNS)[index] = ntfn;
    words(table + SLOTS)[index] = cap_slot;
    set_next(me, n.sender_head);
    n.sender_head = me;
    n.senders += 1;
    words(table)[index] = entry_word(slot, vector);
    let h = header(table);
    h.used += 1;
    h.hwm = h.hwm.max(index as u16 + 1);
    registry().entries += 1;
    Ok((me, index))
}

fn free_at(table: u64, index: usize) {
    // Invalid first: a uipi.send racing with this sees either the old entry or nothing.
    words(table)[index] = 0;
    // Off its notification's list (the notification is live: its caps, this entry's among
    // them, go before it does). The walk is at most the list's bounded length.
    let n = at::<Notification>(words(table + NTFNS)[index]);
    let me = handle(table, index);
    let next = next_of(me);
    if n.sender_head == me {
        n.sender_head = next;
    } else {
        let mut e = n.sender_head;
        while e != 0 && next_of(e) != me {
            e = next_of(e);
        }
        if e != 0 {
            set_next(e, next);
        }
    }
    n.senders -= 1;
    words(table + NTFNS)[index] = 0;
    words(table + SLOTS)[index] = 0;
    links(table)[index] = 0;
    header(table).used -= 1;
    registry().entries -= 1;
}

/// The cap holding `handle` was deleted: free its entry. Returns the table's owner (whose
/// sends must drain before the entry is reused).
pub fn free_entry(handle: u64) -> Option<&'static mut Tcb> {
    let (table, index) = (handle & !INDEX_MASK, (handle & INDEX_MASK) as usize);
    free_at(table, index);
    let h = header(table);
    if h.used == 0 {
        h.hwm = 0;
    }
    owner(table)
}

/// The cap holding `handle` moved to `slot`.
pub fn cap_moved(handle: u64, slot: SlotRef) {
    words((handle & !INDEX_MASK) + SLOTS)[(handle & INDEX_MASK) as usize] = slot;
}

/// Point every entry of notification `n` at `slot` (its receiver was registered), or make
/// them undeliverable (None: the receiver went away). Walks only `n`'s own list.
pub fn retarget(n: &Notification, slot: Option<u16>) {
    let mut e = n.sender_head;
    while e != 0 {
        let (table, index) = decode(e);
        let page = words(table);
        let vector = (page[index] >> uist::VECTOR_SHIFT) & 0xffff;
        page[index] = entry_word(slot, vector);
        e = next_of(e);
    }
}

/// What `uipi.send index` does with table `table` (the checks of docs/uintr-spec.md section 2):
/// the (slot, vector) to signal, if any.
pub fn lookup(table: u64, index: usize) -> Option<(u16, u64)> {
    if index >= SENDER_ENTRIES {
        return None;
    }
    let e = words(table)[index];
    if e & (1 << uist::VALID_BIT) == 0 {
        return None;
    }
    Some(((e >> uist::SLOT_SHIFT) as u16, (e >> uist::VECTOR_SHIFT) & 0x3f))
}

/// For the consistency checker: every live table as (table, owner, used, hwm); its entries
/// through `entry_meta`.
pub fn for_each(mut f: impl FnMut(u64, *mut Tcb, u16, u16)) {
    let mut table = registry().head;
    while table != 0 {
        let h = header(table);
        f(table, h.owner, h.used, h.hwm);
        table = h.next;
    }
}

/// Decode a cap's handle: (table, index).
pub fn decode(handle: u64) -> (u64, usize) {
    (handle & !INDEX_MASK, (handle & INDEX_MASK) as usize)
}

/// For the consistency checker: the (notification, cap slot) recorded for entry `index` of
/// live table `table`.
pub fn entry_meta(table: u64, index: usize) -> (u64, u64) {
    (words(table + NTFNS)[index], words(table + SLOTS)[index])
}
