//! The kernel's consistency checker (DebugCheckInvariants, the fuzzer's oracle). Under the
//! kernel lock it walks every capability slot reachable from a live thread (its TCB slots and
//! every CNode reachable from them) and every live VSpace, and checks:
//!
//! * derivation tree: a non-empty slot's neighbours link back to it and hold caps; an empty
//!   slot has no links;
//! * Untyped: every descendant lies inside the Untyped and below its watermark;
//! * memory: no two distinct objects overlap (a frame over a CNode is how isolation breaks);
//! * address spaces: every user page-table entry is vouched for by a capability that records
//!   that very mapping (a table by a PageTable cap, a page by a Frame cap of its size), so no
//!   freed table or kernel memory is reachable from user mode; a page table mapped nowhere has
//!   no valid entry (it is made zero and emptied when unmapped);
//! * sender tables: every registered sender cap's handle names a live table whose entry
//!   records that very cap slot and notification, and every entry of every live table is
//!   owned by such a cap; a table's thread names it back, its count is right, and it is an
//!   object some cap vouches for;
//! * memory reuse: no memory was handed out (`Untyped_Retype`, `ASIDControl_MakePool`) while
//!   a TLB shootdown of this hart's async batch was still deferred (`asyscall::tlb`): another
//!   hart could have stored through the removed translation into the new object. Recorded
//!   where memory is handed out (`memory_handed_out`), reported and cleared by the next check;
//! * harts' address spaces: no online hart's `satp` names memory that is not a page table
//!   (the kernel's own, or one a cap vouches for): a hart out of user mode keeps its root, and
//!   a freed root's page may become a frame a user writes (`mm::root_retire`). Full checks only;
//! * kernel deadlines: each hart's list is well linked, sorted, made of live threads that say
//!   they are on it, and its head is what the hart's timer expects
//!   (`deadline::check`).
//!
//! The tables it fills are bounded; running out is reported, not a violation.
//!
//! A *scoped* check (`check(Some(cnode))`, the fuzzer's per-step oracle) does the same for
//! what is reachable from one CNode instead of from every thread: those slots and the slots of
//! the TCBs and CNodes found there, overlaps among the objects found, and the VSpaces whose
//! root cap was found. It costs what the scope holds, not the whole system; what it cannot see
//! (a table or mapping vouched for by a cap outside the scope) it does not judge, and the full
//! check, run every so often and at the end, covers that.
use crate::kcell::KCell;
use crate::kprintln;
use crate::object::{asid, at, notification::Notification, tcb, KSlots};
use abi::layout::USER_TOP;
use caps::{cap::PT_ROOT, cdt, Cap, SlotRef, Slots, NO_SLOT};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use sv39::{Pte, ENTRIES};

/// Memory handed out with a deferred shootdown outstanding: how often since the last check, and
/// the last such address.
static UNFLUSHED_REUSES: AtomicUsize = AtomicUsize::new(0);
static UNFLUSHED_AT: AtomicU64 = AtomicU64::new(0);

/// Memory at `pa` is about to become a new object (kernel lock held): record it if a
/// translation removed by this hart's batch may still be live somewhere.
pub fn memory_handed_out(pa: u64) {
    if crate::asyscall::tlb::outstanding() {
        UNFLUSHED_REUSES.fetch_add(1, Ordering::Relaxed);
        UNFLUSHED_AT.store(pa, Ordering::Relaxed);
    }
}

const MAX_CNODES: usize = 1024;
const MAX_TABLES: usize = 1024;
const MAX_TCBS: usize = 256;
const MAX_OBJECTS: usize = 8192;

/// One capability to an object with memory, as the memory and mapping checks need it.
#[derive(Clone, Copy, Default)]
struct Obj {
    base: u64,
    len: u64,
    /// `Cap::object()`'s type tag.
    kind: u8,
    /// Frame size bits (0 for other kinds).
    size_bits: u8,
    mapped: Option<(u16, u64)>,
}

struct Tables {
    /// (base, radix) of every CNode found.
    cnodes: [(u64, u8); MAX_CNODES],
    ncnodes: usize,
    objs: [Obj; MAX_OBJECTS],
    nobjs: usize,
    /// Live sender tables, sorted (from the kernel's list, before the slots are walked).
    tables: [u64; MAX_TABLES],
    ntables: usize,
    /// Scoped check: the TCBs found (their own slots are walked too); None in a full check.
    tcbs: Option<([u64; MAX_TCBS], usize)>,
    truncated: bool,
}

// Outside .bss (the boot does not zero it): `check` zeroes it on first use, which gives it
// exactly this all-zero initial value.
#[link_section = ".noinit.checker"]
static TABLES: KCell<Tables> = KCell::new(Tables {
    cnodes: [(0, 0); MAX_CNODES],
    ncnodes: 0,
    objs: [Obj { base: 0, len: 0, kind: 0, size_bits: 0, mapped: None }; MAX_OBJECTS],
    nobjs: 0,
    tables: [0; MAX_TABLES],
    ntables: 0,
    tcbs: None,
    truncated: false,
});

/// What a check found.
pub struct Report {
    pub slots: usize,
    pub violations: usize,
    /// A table filled up: some objects went unchecked.
    pub truncated: bool,
}

struct Checker {
    report: Report,
}

impl Checker {
    fn violation(&mut self, args: core::fmt::Arguments) {
        if self.report.violations < 8 {
            kprintln!("[kernel] invariant violated: {}", args);
        }
        self.report.violations += 1;
    }
}

/// Run every check (kernel lock held): over the whole system, or (`scope`) over what is
/// reachable from one CNode.
pub fn check(scope: Option<Cap>) -> Report {
    static ZEROED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);
    if !ZEROED.swap(true, core::sync::atomic::Ordering::Relaxed) {
        // SAFETY: under the kernel lock, before any reference to the tables exists.
        unsafe { core::ptr::write_bytes(TABLES.as_ptr(), 0, 1) };
    }
    // SAFETY: under the kernel lock, and nothing else uses these tables.
    let tb = unsafe { TABLES.get() };
    tb.ncnodes = 0;
    tb.nobjs = 0;
    tb.truncated = false;
    tb.tcbs = scope.map(|_| ([0; MAX_TCBS], 0));
    let mut c = Checker { report: Report { slots: 0, violations: 0, truncated: false } };
    tb.ntables = 0;
    crate::uintr::for_each_sender_table(|table, _, _, _| {
        if tb.ntables < MAX_TABLES {
            tb.tables[tb.ntables] = table;
            tb.ntables += 1;
        } else {
            tb.truncated = true;
        }
    });
    tb.tables[..tb.ntables].sort_unstable();

    // Slots: each thread's own (or the scope's CNode), then the CNodes reachable from them,
    // breadth first; a scoped check walks the slots of the TCBs it finds as it goes.
    match scope {
        None => tcb::for_each(|t| {
            for i in 0..tcb::SLOTS {
                visit_slot(&mut c, tb, t.slot(i));
            }
            // A satp kept in the TCB as current must be what its caps say now.
            if let Some((kept, now)) = crate::object::vspace::stale_satp(t) {
                c.violation(format_args!("tcb {:#x}: kept satp/asid {:x?}, its caps say {:x?}", t.pa(), kept, now));
            }
        }),
        Some(cn) => record(tb, cn),
    }
    let (mut next, mut next_tcb) = (0, 0);
    loop {
        if next < tb.ncnodes {
            let (base, radix) = tb.cnodes[next];
            next += 1;
            for i in 0..(1u64 << radix) {
                visit_slot(&mut c, tb, KSlots.cnode_slot(base, i));
            }
        } else if let Some(t) = tb.tcbs.as_ref().and_then(|(t, n)| (next_tcb < *n).then(|| t[next_tcb])) {
            next_tcb += 1;
            let t = at::<tcb::Tcb>(t);
            for i in 0..tcb::SLOTS {
                visit_slot(&mut c, tb, t.slot(i));
            }
        } else {
            break;
        }
    }
    check_overlaps(&mut c, tb);
    check_sender_tables(&mut c, tb, scope.is_none());
    let objs = &tb.objs[..tb.nobjs];
    asid::for_each_vspace(|a, root| {
        // A scoped check judges only the address spaces whose root cap it saw.
        if scope.is_none() || caps_at(objs, root).iter().any(|o| o.kind == PT_KIND && o.mapped == Some((a, PT_ROOT))) {
            check_vspace(&mut c, tb, a, root)
        }
    });
    if scope.is_none() && !tb.truncated {
        check_hart_roots(&mut c, objs);
    }
    crate::deadline::check(&mut |a| c.violation(a));
    let reuses = UNFLUSHED_REUSES.swap(0, Ordering::Relaxed);
    if reuses != 0 {
        c.violation(format_args!(
            "memory handed out {reuses} time(s) while a deferred TLB shootdown was outstanding (last at {:#x})",
            UNFLUSHED_AT.load(Ordering::Relaxed)
        ));
    }
    c.report.truncated = tb.truncated;
    c.report
}

const FRAME_KIND: u8 = 6;
const PT_KIND: u8 = 8;

fn visit_slot(c: &mut Checker, tb: &mut Tables, s: SlotRef) {
    let slot = KSlots.get(s);
    if slot.cap.is_null() {
        if slot.mdb.prev != NO_SLOT || slot.mdb.next != NO_SLOT {
            c.violation(format_args!(
                "empty slot {s:#x} is linked (prev {:#x}, next {:#x})",
                slot.mdb.prev, slot.mdb.next
            ));
        }
        return;
    }
    c.report.slots += 1;
    if slot.mdb.prev != NO_SLOT {
        let p = KSlots.get(slot.mdb.prev);
        if p.mdb.next != s || p.cap.is_null() {
            c.violation(format_args!(
                "slot {s:#x}: prev {:#x} does not link back (its next {:#x}, empty {})",
                slot.mdb.prev,
                p.mdb.next,
                p.cap.is_null()
            ));
        }
    }
    if slot.mdb.next != NO_SLOT {
        let n = KSlots.get(slot.mdb.next);
        if n.mdb.prev != s || n.cap.is_null() {
            c.violation(format_args!(
                "slot {s:#x}: next {:#x} does not link back (its prev {:#x}, empty {})",
                slot.mdb.next,
                n.mdb.prev,
                n.cap.is_null()
            ));
        }
    }
    if let Cap::Untyped { base, size_bits, free_index, .. } = slot.cap {
        check_untyped(c, s, base, size_bits, free_index);
    }
    if let Cap::Notification { obj, uintr, .. } = slot.cap {
        if uintr != 0 {
            check_sender_cap(c, tb, s, obj, uintr);
        }
    }
    if let Cap::PageTable { base, mapped: None } = slot.cap {
        // Made zero, and emptied when unmapped: an entry here was written from elsewhere.
        if let Some(i) = at::<[Pte; ENTRIES]>(base).iter().position(|p| p.is_valid()) {
            c.violation(format_args!("page table {base:#x} is mapped nowhere but its entry {i} is valid"));
        }
    }
    record(tb, slot.cap);
}

/// A registered sender cap's entry is live and records this cap.
fn check_sender_cap(c: &mut Checker, tb: &Tables, s: SlotRef, ntfn: u64, handle: u64) {
    let (table, index) = crate::uintr::decode_sender_handle(handle);
    if tb.tables[..tb.ntables].binary_search(&table).is_err() {
        if tb.ntables < MAX_TABLES {
            c.violation(format_args!("sender cap in {s:#x}: handle {handle:#x} names no live sender table"));
        }
        return;
    }
    if index >= abi::uintr::SENDER_ENTRIES {
        c.violation(format_args!("sender cap in {s:#x}: handle {handle:#x} past the table"));
        return;
    }
    let (n, slot) = crate::uintr::sender_entry_meta(table, index);
    if n != ntfn || slot != s {
        c.violation(format_args!("sender cap in {s:#x} (notification {ntfn:#x}): its entry {handle:#x} records notification {n:#x}, slot {slot:#x}"));
        return;
    }
    check_sender_list(c, tb, ntfn, handle);
}

/// The entry `handle` of notification `ntfn` delivers where the notification's receiver is
/// and is on the notification's list; the list holds only the notification's live entries, as
/// many as it counts.
fn check_sender_list(c: &mut Checker, tb: &Tables, ntfn: u64, handle: u64) {
    let live = |h: u64| {
        let (t, i) = crate::uintr::decode_sender_handle(h);
        i < abi::uintr::SENDER_ENTRIES && tb.tables[..tb.ntables].binary_search(&t).is_ok()
    };
    let n = at::<Notification>(ntfn);
    let (table, index) = crate::uintr::decode_sender_handle(handle);
    // Deliverable exactly when the notification has a receiver slot, and to that slot.
    let target = crate::uintr::sender_lookup(table, index).map(|(s, _)| s);
    if target != n.uslot.checked_sub(1) {
        c.violation(format_args!(
            "sender entry {handle:#x}: delivers to {target:?}, its notification {ntfn:#x} has receiver slot {:?}",
            n.uslot.checked_sub(1)
        ));
    }
    // Walked by hand: a link is followed only from an entry known to be live.
    let (mut e, mut count, mut bad, mut found) = (n.sender_head, 0, false, false);
    while e != 0 && count <= abi::uintr::MAX_SENDERS_PER_NOTIFICATION {
        if !live(e) {
            bad = true;
            break;
        }
        let (t, i) = crate::uintr::decode_sender_handle(e);
        bad |= crate::uintr::sender_entry_meta(t, i).0 != ntfn;
        found |= e == handle;
        count += 1;
        e = crate::uintr::sender_next(e);
    }
    if bad || !found || count != n.senders as usize {
        c.violation(format_args!("notification {ntfn:#x}: its sender list has {count} entries (a foreign or dead one: {bad}, entry {handle:#x} on it: {found}), it counts {}", n.senders));
    }
}

/// Each live sender table: its entries belong to caps that name them, its count is right, its
/// thread names it, and a cap vouches for its memory. A scoped check looks only at the tables
/// whose cap it saw, below their high-water mark.
fn check_sender_tables(c: &mut Checker, tb: &Tables, full: bool) {
    let objs = &tb.objs[..tb.nobjs];
    crate::uintr::for_each_sender_table(|table, owner, used, hwm| {
        let vouched = caps_at(objs, table).iter().any(|o| o.kind == abi::object::UINTR_SENDER_TABLE as u8);
        if !full && !vouched {
            return;
        }
        if !vouched && !tb.truncated {
            c.violation(format_args!("sender table {table:#x}: no cap to it"));
        }
        // SAFETY: a table's owner is live (its destruction unbinds the table).
        if let Some(t) = unsafe { owner.as_ref() } {
            if t.uintr.table != table {
                c.violation(format_args!("sender table {table:#x}: its thread names table {:#x}", t.uintr.table));
            }
            if t.uintr.suist != crate::uintr::suist_for(table) {
                c.violation(format_args!("sender table {table:#x}: its thread's suist is {:#x}", t.uintr.suist));
            }
        }
        let mut n = 0;
        for i in 0..if full { abi::uintr::SENDER_ENTRIES } else { hwm as usize } {
            let (ntfn, slot) = crate::uintr::sender_entry_meta(table, i);
            if ntfn == 0 {
                continue;
            }
            n += 1;
            if i >= hwm as usize {
                c.violation(format_args!("sender table {table:#x}: entry {i} at or above its high-water mark {hwm}"));
            }
            let ok = matches!(KSlots.get(slot).cap, Cap::Notification { obj, uintr, .. } if obj == ntfn && uintr == table | i as u64);
            if !ok {
                c.violation(format_args!(
                    "sender table {table:#x}: entry {i} (notification {ntfn:#x}) is not held by the cap in {slot:#x}"
                ));
            }
        }
        if n != used as usize {
            c.violation(format_args!("sender table {table:#x}: {n} entries, counted {used}"));
        }
    });
}

/// Every descendant of the Untyped in `s` lies inside it, below its watermark.
fn check_untyped(c: &mut Checker, s: SlotRef, base: u64, size_bits: u8, free_index: u64) {
    let me = KSlots.get(s);
    let end = base + (1u64 << size_bits);
    if free_index > 1u64 << size_bits {
        c.violation(format_args!("untyped {base:#x}/{size_bits}: watermark {free_index:#x} past its end"));
    }
    let mut n = me.mdb.next;
    let mut steps = 0;
    while n != NO_SLOT && steps < 1 << 16 {
        let child = KSlots.get(n);
        if !cdt::is_parent_of(&me, &child) {
            break;
        }
        if let Some((b, len)) = child.cap.region() {
            if b < base || b + len > end || b + len > base + free_index {
                c.violation(format_args!("untyped {base:#x}/{size_bits} (watermark {free_index:#x}): descendant {:?} outside it or above the watermark", child.cap));
            }
        }
        n = child.mdb.next;
        steps += 1;
    }
}

fn record(tb: &mut Tables, cap: Cap) {
    if let (Cap::Tcb { obj }, Some((tcbs, n))) = (cap, tb.tcbs.as_mut()) {
        if !tcbs[..*n].contains(&obj) {
            if *n < MAX_TCBS {
                tcbs[*n] = obj;
                *n += 1;
            } else {
                tb.truncated = true;
            }
        }
    }
    if let Cap::CNode { base, radix, .. } = cap {
        if !tb.cnodes[..tb.ncnodes].iter().any(|&(b, _)| b == base) {
            if tb.ncnodes < MAX_CNODES {
                tb.cnodes[tb.ncnodes] = (base, radix);
                tb.ncnodes += 1;
            } else {
                tb.truncated = true;
            }
        }
    }
    let (Some((kind, _)), Some((base, mut len))) = (cap.object(), cap.region()) else { return };
    let (size_bits, mapped) = match cap {
        Cap::Frame { size_bits, mapped, .. } => (size_bits, mapped),
        Cap::PageTable { mapped, .. } => (0, mapped),
        Cap::Untyped { .. } => return,
        _ => (0, None),
    };
    // `region` names small objects by their first byte (enough for parenthood); here they
    // need their real extent.
    len = match cap {
        Cap::Tcb { .. } => 1 << abi::object::TCB_BITS,
        Cap::Endpoint { .. } => 1 << abi::object::ENDPOINT_BITS,
        Cap::Notification { .. } => 1 << abi::object::NOTIFICATION_BITS,
        _ => len,
    };
    if tb.nobjs < MAX_OBJECTS {
        tb.objs[tb.nobjs] = Obj { base, len, kind, size_bits, mapped };
        tb.nobjs += 1;
    } else {
        tb.truncated = true;
    }
}

/// Distinct objects never share memory. Device frames are exempt (they are not kernel
/// memory and may be mapped by several holders); equal caps to one object are one object.
fn check_overlaps(c: &mut Checker, tb: &mut Tables) {
    let objs = &mut tb.objs[..tb.nobjs];
    objs.sort_unstable_by_key(|o| (o.base, o.len, o.kind));
    // The object reaching furthest so far: anything starting before its end overlaps it.
    let mut reach: Option<Obj> = None;
    for o in objs.iter() {
        if o.kind == FRAME_KIND && !crate::mm::is_ram(o.base) {
            continue;
        }
        if let Some(r) = reach {
            let same = r.base == o.base && r.len == o.len && r.kind == o.kind;
            if !same && o.base < r.base + r.len {
                c.violation(format_args!(
                    "objects overlap: type {} at {:#x}+{:#x} and type {} at {:#x}+{:#x}",
                    r.kind, r.base, r.len, o.kind, o.base, o.len
                ));
            }
            if o.base + o.len <= r.base + r.len {
                continue;
            }
        }
        reach = Some(*o);
    }
}

/// The recorded caps to the object at `base` (the table is sorted by then).
fn caps_at(objs: &[Obj], base: u64) -> &[Obj] {
    let from = objs.partition_point(|o| o.base < base);
    let to = objs.partition_point(|o| o.base <= base);
    &objs[from..to]
}

/// Every online hart's `satp` names the kernel's table or a page table some cap vouches for
/// (`objs`: every object of the system, sorted). Other harts move only between roots read
/// under the lock, or to the kernel's.
fn check_hart_roots(c: &mut Checker, objs: &[Obj]) {
    let kernel = crate::mm::kspace::root() as u64;
    for h in 0..platform::image::MAX_HARTS {
        let cpu = crate::percpu::of(h);
        let satp = cpu.active_satp.load(Ordering::Acquire);
        if !cpu.online.load(Ordering::Acquire) || satp == 0 {
            continue;
        }
        let root = ((satp & ((1 << 44) - 1)) as u64) << 12;
        if root != kernel && !caps_at(objs, root).iter().any(|o| o.kind == PT_KIND) {
            c.violation(format_args!("hart {h}: satp names {root:#x}, which is no page table"));
        }
    }
}

/// Every valid entry in the user half of `root` is vouched for by a cap recording it.
fn check_vspace(c: &mut Checker, tb: &Tables, asid: u16, root: u64) {
    let objs = &tb.objs[..tb.nobjs];
    if !caps_at(objs, root).iter().any(|o| o.kind == PT_KIND && o.mapped == Some((asid, PT_ROOT))) {
        c.violation(format_args!("ASID {asid}: root {root:#x} has no VSpace cap"));
    }
    walk(c, objs, asid, root, 2, 0);
}

fn walk(c: &mut Checker, objs: &[Obj], asid: u16, table: u64, level: u32, va_base: u64) {
    let entries = if level == 2 { ENTRIES / 2 } else { ENTRIES };
    for i in 0..entries {
        let pte: Pte = at::<[Pte; ENTRIES]>(table)[i];
        if !pte.is_valid() {
            continue;
        }
        let va = va_base | ((i as u64) << (12 + 9 * level));
        if va >= USER_TOP as u64 {
            continue;
        }
        let pa = pte.pa() as u64;
        if pte.is_leaf() {
            let bits = 12 + 9 * level as u8;
            let ok = caps_at(objs, pa)
                .iter()
                .any(|o| o.kind == FRAME_KIND && o.size_bits == bits && o.mapped == Some((asid, va)));
            if !ok {
                c.violation(format_args!(
                    "ASID {asid}: page {pa:#x} at {va:#x} (level {level}) has no frame cap recording it"
                ));
            }
        } else if level == 0 {
            c.violation(format_args!("ASID {asid}: level-0 entry at {va:#x} points to a table"));
        } else {
            let ok = caps_at(objs, pa).iter().any(|o| o.kind == PT_KIND && o.mapped == Some((asid, va)));
            if !ok {
                c.violation(format_args!(
                    "ASID {asid}: table {pa:#x} at {va:#x} (level {level}) has no page-table cap recording it"
                ));
                continue;
            }
            walk(c, objs, asid, pa, level - 1, va);
        }
    }
}
