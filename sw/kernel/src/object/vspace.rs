//! Sv39 address spaces built from capabilities: PageTable objects (the root one owns an ASID)
//! and frames of 4 KiB, 2 MiB and 1 GiB; their Map/Unmap/GetAddress invocations.
use super::{
    asid, at,
    tcb::{self, Tcb},
    InvResult, KSlots,
};
use crate::ipc::Msg;
use abi::{label, layout::USER_TOP};
use caps::{cap::PT_ROOT, cspace::LookupFault, Cap, Error, Rights, Slots};
use sv39::{Flags, Pte, ENTRIES};

/// seL4_RISCV_ExecuteNever.
const ATTR_EXECUTE_NEVER: usize = 1;

type Table = [Pte; ENTRIES];

fn table(pa: u64) -> &'static mut Table {
    at::<Table>(pa)
}

fn index(va: u64, level: u32) -> usize {
    ((va >> (12 + 9 * level)) & 511) as usize
}

fn level_of(size_bits: u8) -> u32 {
    match size_bits {
        30 => 2,
        21 => 1,
        _ => 0,
    }
}

/// The user half of a new VSpace root shares nothing; the upper half is the kernel's.
pub fn copy_kernel_half(root: u64) {
    let k = table(crate::mm::kspace::root() as u64);
    let t = table(root);
    t[ENTRIES / 2..].copy_from_slice(&k[ENTRIES / 2..]);
}

/// Moves whenever something `satp_of` reads may have changed: a slot that held or gets a
/// PageTable cap (`KSlots::set`: a thread's VTABLE slot only ever holds one), or an ASID
/// table entry. A line of its own: every exit to user mode reads it. Under the kernel lock.
#[repr(align(64))]
struct SpacesGen(core::sync::atomic::AtomicU64);
static SPACES_GEN: SpacesGen = SpacesGen(core::sync::atomic::AtomicU64::new(1));

/// See `SPACES_GEN` (lock held).
pub fn spaces_changed() {
    use core::sync::atomic::Ordering::Relaxed;
    SPACES_GEN.0.store(SPACES_GEN.0.load(Relaxed) + 1, Relaxed);
    crate::sched::cancel_spins();
}

/// satp and ASID a thread runs with: its VSpace if it has a valid one, else the kernel's own
/// table (user half empty: the thread faults at once, and the fault is reported). Kept in the
/// TCB while nothing it depends on moved (`SPACES_GEN`): an IPC switch then costs a compare.
#[inline(always)]
pub fn satp_of(t: &Tcb) -> (usize, usize) {
    let gen = SPACES_GEN.0.load(core::sync::atomic::Ordering::Relaxed);
    let (g, satp, asid) = t.satp_cache.get();
    if g == gen {
        return (satp, asid);
    }
    let (satp, asid) = compute_satp(t);
    t.satp_cache.set((gen, satp, asid));
    (satp, asid)
}

/// The consistency checker: `t`'s kept satp and ASID, and what they should be, if it keeps a
/// current pair that differs.
pub fn stale_satp(t: &Tcb) -> Option<((usize, usize), (usize, usize))> {
    let (g, satp, asid) = t.satp_cache.get();
    let now = compute_satp(t);
    (g == SPACES_GEN.0.load(core::sync::atomic::Ordering::Relaxed) && (satp, asid) != now)
        .then_some(((satp, asid), now))
}

#[cold]
#[inline(never)]
fn compute_satp(t: &Tcb) -> (usize, usize) {
    if let Cap::PageTable { base, mapped: Some((asid, PT_ROOT)) } = t.slots[tcb::VTABLE].cap {
        if asid::vspace_of(asid) == Some(base) {
            return (sv39::SATP_MODE_SV39 | (base as usize >> 12), asid as usize);
        }
    }
    (sv39::SATP_MODE_SV39 | (crate::mm::kspace::root() >> 12), usize::MAX - 1)
}

/// The VSpace root a cap names, if it is a root with a live ASID.
fn root_of(cap: Cap) -> Result<(u64, u16), Error> {
    match cap {
        Cap::PageTable { base, mapped: Some((asid, PT_ROOT)) } if asid::vspace_of(asid) == Some(base) => {
            Ok((base, asid))
        }
        Cap::PageTable { mapped: Some((_, PT_ROOT)), .. } => Err(Error::FailedLookup(LookupFault::InvalidRoot)),
        _ => Err(Error::InvalidCapability(1)),
    }
}

/// Walk from `root` towards `va`, stopping at `level` or at the first entry that does not
/// point to a table. Returns the entry and its level.
fn walk(root: u64, va: u64, level: u32) -> (&'static mut Pte, u32) {
    let mut t = root;
    let mut l = 2;
    loop {
        let pte = &mut table(t)[index(va, l)];
        if l == level || !pte.is_valid() || pte.is_leaf() {
            return (pte, l);
        }
        t = pte.pa() as u64;
        l -= 1;
    }
}

fn check_user_range(va: usize, size: usize) -> Result<(), Error> {
    if va.checked_add(size).is_none_or(|e| e > USER_TOP) {
        return Err(Error::InvalidArgument(0));
    }
    Ok(())
}

pub fn invoke_page_table(me: &mut Tcb, slot: u64, cap: Cap, m: &Msg) -> InvResult {
    let Cap::PageTable { base, mapped } = cap else { return Err(Error::InvalidCapability(0)) };
    match m.label {
        label::RISCV_PAGE_TABLE_MAP => {
            m.need(2, 1)?;
            let va = m.mr(me, 0);
            if mapped.is_some() {
                return Err(Error::InvalidCapability(0));
            }
            let (root, asid) = root_of(m.caps[0].0)?;
            check_user_range(va, 1)?;
            let (pte, level) = walk(root, va as u64, 1);
            if pte.is_valid() || level == 0 {
                return Err(Error::DeleteFirst);
            }
            *pte = Pte::new(base as usize, Flags::V);
            crate::sched::tlb_changed(asid);
            let aligned = va as u64 & !((1u64 << (12 + 9 * level)) - 1);
            KSlots.set_cap(slot, Cap::PageTable { base, mapped: Some((asid, aligned)) });
            Ok(0)
        }
        label::RISCV_PAGE_TABLE_UNMAP => {
            // Copies of a mapped table carry its mapping: while one exists, unmapping (and then
            // remapping) through this one would leave the copy naming a stale place, and the
            // last delete would tear down the wrong entry and free a table still in the MMU
            // (seL4: RevokeFirst unless final).
            if mapped.is_some() && !caps::cdt::is_final(&KSlots, slot) {
                return Err(Error::RevokeFirst);
            }
            match mapped {
                Some((_, PT_ROOT)) => return Err(Error::RevokeFirst),
                Some((asid, va)) => {
                    unlink_table(asid, va, base);
                    // Its contents go too, as in seL4: the pages behind it are unreachable.
                    table(base).iter_mut().for_each(|p| *p = Pte::default());
                    crate::sched::shootdown(Some(asid));
                }
                None => {}
            }
            KSlots.set_cap(slot, Cap::PageTable { base, mapped: None });
            Ok(0)
        }
        _ => Err(Error::IllegalOperation),
    }
}

/// Remove the parent entry that points at page table `base`, if it still does.
fn unlink_table(asid: u16, va: u64, base: u64) {
    let Some(root) = asid::vspace_of(asid) else { return };
    for level in [2, 1] {
        let (pte, l) = walk(root, va, level);
        if l == level && pte.is_valid() && !pte.is_leaf() && pte.pa() as u64 == base {
            *pte = Pte::default();
            return;
        }
    }
}

/// The last cap of a page table went away.
pub fn destroy_page_table(base: u64, mapped: Option<(u16, u64)>) {
    match mapped {
        Some((asid, PT_ROOT)) => {
            asid::release(asid, base);
            crate::sched::shootdown(Some(asid));
            // Harts out of user mode may still have it in satp; none may once its page is free.
            crate::mm::root_retire::retire(base);
        }
        Some((asid, va)) => {
            unlink_table(asid, va, base);
            crate::sched::shootdown(Some(asid));
        }
        None => {}
    }
}

/// Unmap a frame from where its cap says it is mapped, if the entry still maps it.
pub fn unmap_frame_at(asid: u16, va: u64, base: u64, size_bits: u8) {
    let Some(root) = asid::vspace_of(asid) else { return };
    let level = level_of(size_bits);
    let (pte, l) = walk(root, va, level);
    if l == level && pte.is_valid() && pte.is_leaf() && pte.pa() as u64 == base {
        *pte = Pte::default();
        crate::sched::shootdown(Some(asid));
    }
}

fn pte_flags(cap_rights: Rights, want: Rights, attr: usize) -> Result<Flags, Error> {
    let r = cap_rights.intersect(want);
    let mut f = Flags::V | Flags::U | Flags::A | Flags::D;
    if r.read {
        f = f | Flags::R;
        if r.write {
            f = f | Flags::W;
        }
    }
    if attr & ATTR_EXECUTE_NEVER == 0 && r.read {
        f = f | Flags::X;
    }
    if !f.contains(Flags::R) && !f.contains(Flags::X) {
        // Neither readable nor executable: a user page with no rights cannot be expressed.
        return Err(Error::InvalidArgument(1));
    }
    Ok(f)
}

pub fn invoke_frame(me: &mut Tcb, slot: u64, cap: Cap, m: &Msg) -> InvResult {
    let Cap::Frame { base, size_bits, rights, mapped } = cap else { return Err(Error::InvalidCapability(0)) };
    match m.label {
        label::RISCV_PAGE_MAP => {
            m.need(3, 1)?;
            let (va, want, attr) = (m.mr(me, 0), m.mr(me, 1), m.mr(me, 2));
            let (root, asid) = root_of(m.caps[0].0)?;
            let size = 1usize << size_bits;
            if va & (size - 1) != 0 {
                return Err(Error::AlignmentError);
            }
            check_user_range(va, size)?;
            // Already mapped: only a remap in place (new rights) is allowed, as in seL4.
            match mapped {
                Some((a, _)) if a != asid => return Err(Error::InvalidCapability(1)),
                Some((_, v)) if v != va as u64 => return Err(Error::InvalidArgument(0)),
                _ => {}
            }
            let flags = pte_flags(rights, Rights::from_word(want as u64), attr)?;
            let level = level_of(size_bits);
            let (pte, l) = walk(root, va as u64, level);
            if l != level {
                return Err(Error::FailedLookup(LookupFault::MissingCapability {
                    bits_left: (12 + 9 * (l + 1)) as u8,
                }));
            }
            // A remap in place rewrites only an entry that still maps this frame: the entry the
            // cap remembers may have gone with its page table and been reused by another.
            let maps_this = pte.is_valid() && pte.is_leaf() && pte.pa() as u64 == base;
            if pte.is_valid() && (mapped.is_none() || !maps_this) {
                return Err(Error::DeleteFirst);
            }
            *pte = Pte::new(base as usize, flags);
            if flags.contains(Flags::X) {
                crate::mm::icache::code_mapped();
            }
            if mapped.is_some() {
                crate::sched::shootdown(Some(asid));
            } else {
                crate::sched::tlb_changed(asid);
            }
            KSlots.set_cap(slot, Cap::Frame { base, size_bits, rights, mapped: Some((asid, va as u64)) });
            Ok(0)
        }
        label::RISCV_PAGE_UNMAP => {
            if let Some((asid, va)) = mapped {
                unmap_frame_at(asid, va, base, size_bits);
            }
            KSlots.set_cap(slot, Cap::Frame { base, size_bits, rights, mapped: None });
            Ok(0)
        }
        label::RISCV_PAGE_GET_ADDRESS => {
            crate::ipc::set_mr(me, 0, base as usize);
            Ok(1)
        }
        _ => Err(Error::IllegalOperation),
    }
}

/// Is `va` mapped for user access in the thread's VSpace with what a fault of `cause` needed?
/// Then the fault came from a stale TLB entry and retrying is enough.
pub fn fault_is_spurious(t: &Tcb, va: usize, cause: usize) -> bool {
    let Cap::PageTable { base, mapped: Some((asid, PT_ROOT)) } = t.slots[tcb::VTABLE].cap else { return false };
    if asid::vspace_of(asid) != Some(base) || va >= USER_TOP {
        return false;
    }
    let (pte, _) = walk(base, va as u64, 0);
    let need = match cause {
        12 => Flags::X,
        15 => Flags::W,
        _ => Flags::R,
    };
    pte.is_valid() && pte.is_leaf() && pte.flags().contains(need | Flags::U)
}

/// Map a frame for the kernel's own boot-time construction of the root task's VSpace (tables
/// come from `alloc`, told the level of the entry that will point to them).
pub fn boot_map(root: u64, va: usize, pa: usize, flags: Flags, alloc: &mut dyn FnMut(u32) -> u64) {
    let mut t = root;
    for level in [2, 1] {
        let pte = &mut table(t)[index(va as u64, level)];
        if !pte.is_valid() {
            let pt = alloc(level);
            *pte = Pte::new(pt as usize, Flags::V);
        }
        t = pte.pa() as u64;
    }
    table(t)[index(va as u64, 0)] = Pte::new(pa, flags | Flags::V | Flags::U | Flags::A | Flags::D);
}

/// Physical address behind a user address in `root` (boot-time ELF loading).
pub fn boot_translate(root: u64, va: usize) -> Option<usize> {
    let (pte, l) = walk(root, va as u64, 0);
    (pte.is_valid() && pte.is_leaf()).then(|| pte.pa() + (va & ((1 << (12 + 9 * l)) - 1)))
}
