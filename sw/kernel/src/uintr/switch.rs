//! Moving a thread's user-interrupt state between its TCB and a hart's CSRs: saved on every
//! trap from user mode, loaded when the hart switches to another thread (writing only the CSRs
//! that differ), and the receiver slot made Active where its thread runs.
use super::{park, this_hart, ueip, uintc, UINTR_BITS, USIP};
use crate::arch::csr::{csrc, csrr, csrs, csrw_n};
use crate::kcell::KCell;
use crate::object::tcb::Tcb;
use crate::percpu;
use core::ptr::null_mut;
use core::sync::atomic::Ordering;
use platform::{csr, image::MAX_HARTS};

/// What a hart's user-interrupt CSRs hold (hardware), so that a switch writes only what
/// differs: CSR writes drain Rocket's pipeline, and most threads never touch these. Each hart
/// reads and writes only its own entry, also outside the lock (`save_on_trap`).
#[derive(Clone, Copy, PartialEq, Eq)]
struct Csrs {
    ustatus: usize,
    utvec: usize,
    uscratch: usize,
    uepc: usize,
    ucause: usize,
    utval: usize,
    sideleg: usize,
    /// sie bits 0/4/8: the thread's uie under sideleg, the kernel's choice elsewhere.
    sie: usize,
    suist: usize,
    suirs: usize,
    /// The six user fields above (and `uie`) are all 0: what nearly every thread has, so a
    /// switch between two such threads compares and writes `suist` alone (`switch_to`).
    user_zero: bool,
}

const CSRS_RESET: Csrs = Csrs {
    ustatus: 0,
    utvec: 0,
    uscratch: 0,
    uepc: 0,
    ucause: 0,
    utval: 0,
    sideleg: 0,
    sie: USIP,
    suist: 0,
    suirs: 0,
    user_zero: true,
};
/// Per hart, on a cache line (two) of its own: the thread whose state its CSRs hold (it may
/// since have run elsewhere: its `loaded_on` says) and what the CSRs hold. Every trap from user
/// mode writes its hart's entry, outside the lock, and every switch reads both; neighbouring
/// harts' entries must not share its lines (the owners were one line all harts wrote).
#[repr(C, align(64))]
struct HartCsrs {
    owner: *mut Tcb,
    csrs: Csrs,
}
static CSRS: KCell<[HartCsrs; MAX_HARTS]> =
    KCell::new([const { HartCsrs { owner: null_mut(), csrs: CSRS_RESET } }; MAX_HARTS]);

/// Hart `h`'s entry, for `PerCpu::uintr_csrs`.
pub fn entry_addr(h: usize) -> usize {
    // SAFETY: an address only.
    unsafe { &raw mut (*CSRS.as_ptr())[h] as usize }
}

/// This hart's entry through `PerCpu::uintr_csrs` (the same entry as `owner_of`/`csrs_of` of
/// this hart).
#[inline(always)]
fn mine() -> &'static mut HartCsrs {
    // SAFETY: set by `percpu::install` to this hart's entry; only this hart uses it (see
    // `owner_of`, `csrs_of`).
    unsafe { &mut *(percpu::this().uintr_csrs as *mut HartCsrs) }
}

fn owner_of(h: usize) -> &'static mut *mut Tcb {
    // SAFETY: under the kernel lock; a field of its own, apart from `csrs_of`'s.
    unsafe { &mut (*CSRS.as_ptr())[h].owner }
}

fn csrs_of(h: usize) -> &'static mut Csrs {
    // SAFETY: only hart `h` uses entry `h`, and not reentrantly (traps from user mode only).
    unsafe { &mut (*CSRS.as_ptr())[h].csrs }
}

/// Whether this hart is quiet (`PerCpu::uintr_quiet`): nothing is delegated or routed (so a
/// thread still loaded here is plain), and the slots parked here are Active; the user CSRs
/// hold a plain thread's values (usually 0: `Csrs::user_zero`). A switch to a plain thread
/// then moves the owner, writes the user CSRs that differ (none between two threads whose
/// U-CSRs read 0) and compares `suist` (`switch_to`), and a trap that finds the U-CSRs still 0
/// stores nothing (`save_on_trap`).
#[inline(always)]
fn quiet() -> bool {
    percpu::this().uintr_quiet.load(Ordering::Relaxed)
}

/// Recompute this hart's `quiet` after its CSRs' copy or its parked slots' activity changed
/// (hardware only: emulation never takes the quiet path).
pub(super) fn requiet() {
    let h = this_hart();
    let c = csrs_of(h);
    let quiet = super::hardware() && c.sideleg == 0 && c.suirs == 0 && c.sie == USIP && park::active(h);
    percpu::this().uintr_quiet.store(quiet, Ordering::Relaxed);
}

/// This hart's CSRs to their reset values (boot, hardware only).
pub fn reset_hart() {
    let h = this_hart();
    let c = csrs_of(h);
    *c = CSRS_RESET;
    write_all(c);
    requiet();
}

fn write_all(c: &Csrs) {
    csrw_n!(csr::SIDELEG, c.sideleg);
    csrw_n!(csr::USTATUS, c.ustatus);
    csrw_n!(csr::UTVEC, c.utvec);
    csrw_n!(csr::USCRATCH, c.uscratch);
    csrw_n!(csr::UEPC, c.uepc);
    csrw_n!(csr::UCAUSE, c.ucause);
    csrw_n!(csr::UTVAL, c.utval);
    csrc!("sie", UINTR_BITS & !c.sie);
    csrs!("sie", c.sie);
    csrw_n!(csr::SUIST, c.suist);
    csrw_n!(csr::SUIRS, c.suirs);
}

/// First thing on a trap from user mode, before the hart says it left user mode (so a hart
/// that stalls this thread finds its state in the TCB): copy the U-CSRs out. True: the hart
/// is quiet (`PerCpu::uintr_quiet`; only this hart changes that, and not before the trap's
/// kernel work).
#[inline(always)]
pub fn save_on_trap(t: *mut Tcb) -> bool {
    if !super::hardware() {
        return false;
    }
    // SAFETY: the thread that trapped here is live and runs on no other hart.
    let u = unsafe { &mut (*t).uintr };
    // Loaded before the CSR reads, which take a few cycles anyway: used right after them,
    // each load made the branch on it wait.
    let (was_quiet, user_zero) = (quiet(), u.user_zero);
    let (ustatus, uie, utvec, uscratch, uepc, ucause, utval): (usize, usize, usize, usize, usize, usize, usize);
    // One block: all seven reads issue back to back, then the stores (a read's result is
    // ready only at write-back on Rocket, so a store right after each read waited for it).
    // SAFETY: reads CSRs only.
    unsafe {
        core::arch::asm!(
            "csrr {0}, {n0}", "csrr {1}, {n1}", "csrr {2}, {n2}", "csrr {3}, {n3}",
            "csrr {4}, {n4}", "csrr {5}, {n5}", "csrr {6}, {n6}",
            out(reg) ustatus, out(reg) uie, out(reg) utvec, out(reg) uscratch,
            out(reg) uepc, out(reg) ucause, out(reg) utval,
            n0 = const csr::USTATUS, n1 = const csr::UIE, n2 = const csr::UTVEC, n3 = const csr::USCRATCH,
            n4 = const csr::UEPC, n5 = const csr::UCAUSE, n6 = const csr::UTVAL,
            options(nomem, nostack),
        )
    };
    let zero = (ustatus | uie | utvec | uscratch | uepc | ucause | utval) == 0;
    let h = percpu::hart();
    if zero && user_zero && was_quiet {
        // Zero in the TCB (`user_zero`) already, and so in the hart's copy: on a quiet hart
        // that is what this thread's switch-in or last trap left there.
        return true;
    }
    (u.ustatus, u.uie, u.utvec, u.uscratch, u.uepc, u.ucause, u.utval) =
        (ustatus, uie, utvec, uscratch, uepc, ucause, utval);
    u.user_zero = zero;
    let c = csrs_of(h);
    if zero && c.user_zero && c.sideleg == 0 {
        // The hart's copy says all of this already (nothing delegated: `sie` holds no uie).
        return was_quiet;
    }
    (c.ustatus, c.utvec, c.uscratch, c.uepc, c.ucause, c.utval) = (ustatus, utvec, uscratch, uepc, ucause, utval);
    c.sie = (c.sie & !c.sideleg) | uie;
    c.user_zero = zero;
    requiet();
    quiet()
}

/// Whether `u` holds nothing routed to a hart: no receiver slot, nothing delegated, no device
/// sources. Such a thread's state is its seven U-CSRs and `suist` (a sender table, if it has
/// one, is only read by its own `uipi.send`s): nothing to release when it leaves a hart.
#[inline(always)]
fn plain(u: &super::ThreadState) -> bool {
    // One test of the or, not a branch per field: the fields are on one line.
    (u.slot as u64 | u.sideleg as u64 | u.ueip) == 0
}

/// On the way to user mode with `t` on this hart. True: waiters parked here are noticed only
/// by polling on kernel entries (`park::parked_unwatched`), so the hart keeps its tick. The
/// common switch (IPC between plain threads on a quiet hart) inline in the exits, everything
/// else in `switch_any`.
#[inline(always)]
pub fn switch_to(t: &mut Tcb) -> bool {
    let h = this_hart();
    if !(quiet() && plain(&t.uintr)) {
        switch_any(t);
        return park::parked_unwatched();
    }
    // Quiet: a thread still loaded here is plain (nothing to release), and nothing is
    // delegated. `t` may be that thread, going on after its system call.
    let HartCsrs { owner, csrs: c } = mine();
    if !core::ptr::eq(*owner, t) {
        // SAFETY: an owner is live (tcb_destroyed clears it).
        if let Some(p) = unsafe { owner.as_mut() }.filter(|p| p.uintr.loaded_on as usize == h + 1) {
            p.uintr.loaded_on = 0;
        }
        *owner = t;
    }
    t.uintr.loaded_on = h as u8 + 1;
    if !(t.uintr.user_zero && c.user_zero) {
        load_plain(&t.uintr, c);
    }
    let suist = suist_of(&t.uintr);
    if c.suist != suist {
        csrw_n!(csr::SUIST, suist);
        c.suist = suist;
    }
    false
}

/// The six user CSRs of plain thread `u` into a quiet hart (those that differ). Nothing is
/// delegated, so `uie` reads 0 and `sie` stays the kernel's, and no user could have set a
/// `uip` bit: the routing, `sip` and the quiet flag stay as they are.
#[inline(never)]
fn load_plain(u: &super::ThreadState, c: &mut Csrs) {
    // The routing, `sie` and `suist` (`switch_to` compares it next) stay as the hart has them.
    let want = Csrs { sideleg: c.sideleg, sie: c.sie, suist: c.suist, suirs: c.suirs, ..wanted(u) };
    write_differing(c, &want);
    *c = want;
}

/// `switch_to` for any thread and previous owner. Cold: out of the exits' straight line.
#[cold]
#[inline(never)]
fn switch_any(t: &mut Tcb) {
    let h = this_hart();
    let owner = owner_of(h);
    if core::ptr::eq(*owner, t) && t.uintr.loaded_on as usize == h + 1 {
        if super::hardware() {
            park::set_active(h, t.uintr.sideleg & USIP == 0);
        } else {
            super::emulate::inject(t);
        }
        return;
    }
    // SAFETY: an owner is live (tcb_destroyed clears it). One that has since been loaded on
    // another hart is that hart's to release.
    let prev = unsafe { owner.as_mut() }.filter(|p| p.uintr.loaded_on as usize == h + 1);
    if super::hardware() && plain(&t.uintr) && prev.as_ref().is_none_or(|p| plain(&p.uintr)) {
        // The common switch (IPC between threads that receive no user interrupts): nothing to
        // release, no slot to route; only CSRs that differ are written (usually `suist` alone).
        let c = csrs_of(h);
        let last_plain = prev.is_some();
        if let Some(p) = prev {
            p.uintr.loaded_on = 0;
        }
        if last_plain && t.uintr.user_zero && c.user_zero && c.sideleg == 0 && c.suirs == 0 && c.sie == USIP {
            // Both states are all zero but for the sender table: `suist` is all that can
            // differ. The last thread in user mode here was the plain previous owner (nothing
            // delegated to it), so no user could have set a `uip` bit since a full load.
            let suist = suist_of(&t.uintr);
            if c.suist != suist {
                csrw_n!(csr::SUIST, suist);
                c.suist = suist;
            }
        } else {
            load_csrs(t, h);
        }
        t.uintr.loaded_on = h as u8 + 1;
        *owner = t;
        park::set_active(h, true);
        return;
    }
    {
        if let Some(prev) = prev {
            release(prev);
        }
        if super::hardware() {
            load_csrs(t, h);
            ueip::load(t, h);
        }
        if let Some(s) = t.uintr.slot.checked_sub(1) {
            uintc::set_low(s, h, true);
        }
        t.uintr.loaded_on = h as u8 + 1;
        *owner = t;
    }
    if super::hardware() {
        park::set_active(h, t.uintr.sideleg & USIP == 0);
    } else {
        super::emulate::inject(t);
    }
}

/// Whether `t` may be handed to idle hart `h` (`sched::hand_off`), which then enters user mode
/// with it without the lock: only a thread with nothing routed to a hart (`plain`), coming
/// after a plain one (an idle hart keeps only such a thread loaded, `on_idle`), so all that
/// hart still has to do is write its own CSRs. Some(true): it has to (`handoff_finish`);
/// Some(false): they already hold `t`'s state, or there are none (emulation: a plain thread
/// has nothing to inject either). Lock held, nothing changed.
pub fn handoff_check(t: &Tcb, h: usize) -> Option<bool> {
    if !plain(&t.uintr) {
        return None;
    }
    // `loaded_on` says it alone: whoever takes hart `h`'s CSRs from a thread clears its
    // `loaded_on`, so the waker need not read `h`'s owner (a line `h` writes) in the common
    // case of a partner coming back to the hart that still holds its state.
    if t.uintr.loaded_on as usize == h + 1 {
        debug_assert!(core::ptr::eq(*owner_of(h), t));
        return Some(false);
    }
    let owner = *owner_of(h);
    // SAFETY: an owner is live (`forget`).
    match unsafe { owner.as_ref() }.filter(|p| p.uintr.loaded_on as usize == h + 1) {
        Some(p) if !plain(&p.uintr) => None,
        _ => Some(super::hardware()),
    }
}

/// `t` was handed to hart `h` (lock held): the bookkeeping `switch_to` would do there, that
/// hart's CSRs aside. The parked slots of an idle hart are Active already (`on_idle`), as a
/// plain thread wants them.
pub fn handoff_commit(t: &mut Tcb, h: usize) {
    if t.uintr.loaded_on as usize == h + 1 {
        return;
    }
    let owner = owner_of(h);
    // SAFETY: as above; a plain previous owner has nothing to release.
    if let Some(p) = unsafe { owner.as_mut() }.filter(|p| p.uintr.loaded_on as usize == h + 1) {
        p.uintr.loaded_on = 0;
    }
    t.uintr.loaded_on = h as u8 + 1;
    *owner = t;
}

/// On hart `h`, without the lock, on its way to user mode with the thread handed to it: load
/// its CSRs if `handoff_check` said so. Only `t`'s U-CSR copy is read (whoever changes it
/// first waits for this hart to leave user mode, `reload`) and only this hart's CSRs and
/// their cache entry are written.
pub fn handoff_finish(t: &Tcb, h: usize, load: bool) {
    if load {
        load_csrs(t, h);
    }
}

/// This hart has nothing to run.
pub fn on_idle() {
    let h = this_hart();
    let owner = owner_of(h);
    // SAFETY: as above.
    if let Some(prev) = unsafe { owner.as_mut() }.filter(|p| p.uintr.loaded_on as usize == h + 1) {
        if super::hardware() && plain(&prev.uintr) {
            // Its state is only U-CSRs and `suist` (nothing delegated, no slot or source), which
            // an idle hart does not use: keep it loaded, so that the thread coming back here (a
            // cross-hart IPC partner, usually) finds its CSRs already in place. A table unbound
            // meanwhile reloads the thread (`reload`), and the hart sends nothing while idle.
            park::set_active(h, true);
            return;
        }
        release(prev);
    }
    *owner = null_mut();
    if super::hardware() {
        let c = csrs_of(h);
        apply(c, Csrs { sideleg: 0, sie: USIP, suist: 0, suirs: 0, ..*c });
        park::set_active(h, true);
    }
}

/// The thread no longer runs on the hart whose CSRs hold its state: deactivate its slot.
pub fn release(t: &mut Tcb) {
    if t.uintr.loaded_on == 0 {
        return;
    }
    if let Some(s) = t.uintr.slot.checked_sub(1) {
        if !t.uintr.parked {
            uintc::set_active(s, false);
        }
    }
    ueip::unload(t, t.uintr.loaded_on as usize - 1);
    t.uintr.loaded_on = 0;
}

/// The CSRs as thread `u` has them.
#[inline(always)]
fn wanted(u: &super::ThreadState) -> Csrs {
    Csrs {
        ustatus: u.ustatus,
        utvec: u.utvec,
        uscratch: u.uscratch,
        uepc: u.uepc,
        ucause: u.ucause,
        utval: u.utval,
        sideleg: u.sideleg,
        // uie is mie under sideleg; the bits not delegated are the kernel's: USIP for
        // parked waiters, nothing else.
        sie: (u.uie & u.sideleg) | (USIP & !u.sideleg),
        suist: suist_of(u),
        suirs: u.slot.checked_sub(1).map_or(0, |s| (1 << 63) | s as usize),
        user_zero: (u.ustatus | u.utvec | u.uscratch | u.uepc | u.ucause | u.utval | (u.uie & u.sideleg)) == 0,
    }
}

#[inline(always)]
fn load_csrs(t: &Tcb, h: usize) {
    apply(csrs_of(h), wanted(&t.uintr));
    // Software-set pending bits belong to whoever set them: none carries over.
    if csrr!("sip") & UINTR_BITS != 0 {
        csrc!("sip", UINTR_BITS);
    }
}

#[inline(always)]
fn suist_of(u: &super::ThreadState) -> usize {
    debug_assert_eq!(u.suist, super::suist_for(u.table));
    u.suist
}

/// Make the hart's CSRs hold `want`, writing only the ones that differ.
#[inline(always)]
fn apply(c: &mut Csrs, want: Csrs) {
    if *c == want {
        return;
    }
    write_differing(c, &want);
    *c = want;
    requiet();
}

/// Write the CSRs whose value in `want` differs from the hart's copy `c` (left as it is).
#[inline(always)]
fn write_differing(c: &Csrs, want: &Csrs) {
    macro_rules! put {
        ($csr:expr, $f:ident) => {
            if c.$f != want.$f {
                csrw_n!($csr, want.$f);
            }
        };
    }
    put!(csr::SIDELEG, sideleg);
    put!(csr::USTATUS, ustatus);
    put!(csr::UTVEC, utvec);
    put!(csr::USCRATCH, uscratch);
    put!(csr::UEPC, uepc);
    put!(csr::UCAUSE, ucause);
    put!(csr::UTVAL, utval);
    if c.sie != want.sie {
        csrc!("sie", UINTR_BITS & !want.sie);
        csrs!("sie", want.sie);
    }
    put!(csr::SUIST, suist);
    put!(csr::SUIRS, suirs);
}

/// Thread `t` is being destroyed: no hart may keep it as the owner of its CSRs.
pub fn forget(t: &mut Tcb) {
    for h in 0..MAX_HARTS {
        if core::ptr::eq(*owner_of(h), t) {
            *owner_of(h) = null_mut();
        }
    }
}
