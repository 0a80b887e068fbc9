//! User interrupts (uintr-spec.md section 6): per-thread U-mode interrupt state, U-notifications
//! (a Notification with a UINTC receiver slot for its bound thread, and sender-table entries
//! for the threads that signal it), the kernel as a sender, and blocking Wait.
//!
//! Two back ends behind one model. With a UINTC (named in the device tree) the state lives in
//! the hart's CSRs while a thread runs: it is saved on every trap from user mode (so the TCB is
//! current whenever the thread is in the kernel, whichever hart looks at it) and loaded when a
//! hart switches to a different thread, which also makes a receiver's slot Active on that hart;
//! the hart that last ran a thread deactivates its slot when it runs another or idles. Without
//! one, `emulate` applies the same contract to the TCB copy and injects the user trap on the way
//! out. Everything here runs under the kernel lock except `save_on_trap`.
//!
//! Blocking Wait on the hardware: the waiter's slot stays routed to its hart ("parked"). While
//! that hart runs a thread that is not a receiver (or idles), `sideleg` does not delegate USIP,
//! so a signal to a parked slot interrupts the kernel, which wakes the waiter. While it runs
//! another receiver the parked slots are inactive (that receiver must not see their bits) and
//! are polled on each kernel entry there, which the tick bounds.
mod emulate;
mod sender;
pub mod ueip;
mod uintc;

use crate::kcell::KCell;
use crate::arch::csr::{csrc, csrr, csrr_n, csrs, csrw_n};
use crate::object::tcb::{State, Tcb};
use crate::object::{at, notification::Notification};
use crate::{ipc, percpu, sched, stats};
use abi::{stat, uintr::MAX_VECTOR};
use caps::Error;
use core::ptr::null_mut;
use platform::{csr, image::MAX_HARTS};

pub(crate) const UIE: usize = 1;
pub(crate) const UPIE: usize = 1 << 4;
pub(crate) const USIP: usize = 1 << csr::USIP_BIT;
pub(crate) const UEIP: usize = 1 << csr::UEIP_BIT;
const UINTR_BITS: usize = (1 << csr::USIP_BIT) | (1 << csr::UTIP_BIT) | (1 << csr::UEIP_BIT);

/// A thread's user-interrupt state (the U-CSRs of uintr-spec.md section 1 and what the kernel
/// gave it).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ThreadState {
    pub utvec: usize,
    pub uscratch: usize,
    pub uepc: usize,
    pub ucause: usize,
    pub utval: usize,
    /// UIE and UPIE only.
    pub ustatus: usize,
    pub uie: usize,
    /// Interrupts delegated to this thread: USIP once it is a receiver, UEIP with `ueip`.
    pub sideleg: usize,
    /// PLIC sources routed to this thread's U context on hart `ueip_hart` (`ueip`).
    pub ueip: u64,
    pub ueip_hart: u8,
    /// Emulation: the software-written USIP bit of `uip`.
    pub uip_soft: usize,
    /// Receiver slot + 1 (0: not a receiver) and sender table + 1 (0: none).
    pub slot: u16,
    pub table: u16,
    /// Hart + 1 whose CSRs hold this state and where the slot is Active (0: none).
    pub loaded_on: u8,
    /// Blocked in Wait on its slot, parked on hart `park_hart`.
    pub parked: bool,
    pub park_hart: u8,
}

struct HartState {
    /// The thread whose state this hart's CSRs hold (it may since have run elsewhere: its
    /// `loaded_on` says).
    owner: *mut Tcb,
    /// Slots of waiters parked on this hart, and whether they are Active now.
    parked: [u64; platform::uintc::MAX_SLOTS / 64],
    parked_active: bool,
}

#[allow(clippy::declare_interior_mutable_const)]
const HART_INIT: HartState =
    HartState { owner: null_mut(), parked: [0; platform::uintc::MAX_SLOTS / 64], parked_active: false };
static HARTS: KCell<[HartState; MAX_HARTS]> = KCell::new([HART_INIT; MAX_HARTS]);

/// Per slot: the notification and the thread it was registered for.
#[derive(Clone, Copy)]
struct SlotOwner {
    ntfn: u64,
    tcb: *mut Tcb,
}
static OWNERS: KCell<[SlotOwner; platform::uintc::MAX_SLOTS]> =
    KCell::new([SlotOwner { ntfn: 0, tcb: null_mut() }; platform::uintc::MAX_SLOTS]);

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
}

const CSRS_RESET: Csrs =
    Csrs { ustatus: 0, utvec: 0, uscratch: 0, uepc: 0, ucause: 0, utval: 0, sideleg: 0, sie: USIP, suist: 0, suirs: 0 };
static CSRS: KCell<[Csrs; MAX_HARTS]> = KCell::new([CSRS_RESET; MAX_HARTS]);

fn csrs_of(h: usize) -> &'static mut Csrs {
    // SAFETY: only hart `h` uses entry `h`, and not reentrantly (traps from user mode only).
    unsafe { &mut (*CSRS.as_ptr())[h] }
}

fn harts() -> &'static mut [HartState; MAX_HARTS] {
    // SAFETY: under the kernel lock.
    unsafe { HARTS.get() }
}

fn owners() -> &'static mut [SlotOwner; platform::uintc::MAX_SLOTS] {
    // SAFETY: under the kernel lock.
    unsafe { OWNERS.get() }
}

fn this_hart() -> usize {
    percpu::this().hart
}

/// Boot hart, before any thread exists: pick the back end from the device tree.
pub fn init(m: &devtree::Machine) {
    let hw = m.uintc.map(|u| (crate::mm::phys_to_virt(u.reg.base), u.slots as usize));
    uintc::init(hw);
    sender::init();
    ueip::init(m);
}

/// Every hart: nothing delegated, no table, no slot; USIP enabled for parked waiters.
pub fn init_hart() {
    if hardware() {
        let c = csrs_of(this_hart());
        *c = CSRS_RESET;
        write_all(c);
    }
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

#[inline(always)]
pub fn hardware() -> bool {
    uintc::hardware()
}

/// `BootInfo::uintr_mode` and `uintr_slots`.
pub fn abi_mode() -> (usize, usize) {
    (if hardware() { abi::uintr::MODE_HARDWARE } else { abi::uintr::MODE_EMULATED }, uintc::count())
}

/// Gauges for DebugStat.
pub fn stat(which: usize) -> Option<u64> {
    Some(match which {
        stat::UINTR_SLOTS_USED => uintc::used(),
        stat::UINTR_ENTRIES_USED => sender::entries_used(),
        stat::UINTR_TABLES_USED => sender::tables_used(),
        _ => return None,
    } as u64)
}

// ---- switching -------------------------------------------------------------------------

/// First thing on a trap from user mode, before the hart says it left user mode (so a hart
/// that stalls this thread finds its state in the TCB): copy the U-CSRs out.
#[inline(always)]
pub fn save_on_trap(t: *mut Tcb) {
    if !hardware() {
        return;
    }
    // SAFETY: the thread that trapped here is live and runs on no other hart.
    let u = unsafe { &mut (*t).uintr };
    u.ustatus = csrr_n!(csr::USTATUS);
    u.uie = csrr_n!(csr::UIE);
    u.utvec = csrr_n!(csr::UTVEC);
    u.uscratch = csrr_n!(csr::USCRATCH);
    u.uepc = csrr_n!(csr::UEPC);
    u.ucause = csrr_n!(csr::UCAUSE);
    u.utval = csrr_n!(csr::UTVAL);
    let c = csrs_of(percpu::this().hart);
    (c.ustatus, c.utvec, c.uscratch, c.uepc, c.ucause, c.utval) = (u.ustatus, u.utvec, u.uscratch, u.uepc, u.ucause, u.utval);
    c.sie = (c.sie & !c.sideleg) | u.uie;
}

/// On the way to user mode with `t` on this hart.
pub fn switch_to(t: &mut Tcb) {
    let h = this_hart();
    let hs = &mut harts()[h];
    if !core::ptr::eq(hs.owner, t) || t.uintr.loaded_on as usize != h + 1 {
        // SAFETY: an owner is live (tcb_destroyed clears it).
        if let Some(prev) = unsafe { hs.owner.as_mut() } {
            release(prev);
        }
        if hardware() {
            load_csrs(t, h);
            ueip::load(t, h);
        }
        if let Some(s) = t.uintr.slot.checked_sub(1) {
            uintc::set_low(s, h, true);
        }
        t.uintr.loaded_on = h as u8 + 1;
        hs.owner = t;
    }
    if hardware() {
        set_parked_active(h, t.uintr.sideleg & USIP == 0);
    } else {
        emulate::inject(t);
    }
}

/// This hart has nothing to run.
pub fn on_idle() {
    let h = this_hart();
    let hs = &mut harts()[h];
    // SAFETY: as above.
    if let Some(prev) = unsafe { hs.owner.as_mut() } {
        release(prev);
    }
    hs.owner = null_mut();
    if hardware() {
        let c = csrs_of(h);
        apply(c, Csrs { sideleg: 0, sie: USIP, suist: 0, suirs: 0, ..*c });
        set_parked_active(h, true);
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

fn load_csrs(t: &Tcb, h: usize) {
    let u = &t.uintr;
    let c = csrs_of(h);
    apply(
        c,
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
            suist: u.table.checked_sub(1).map_or(0, sender::suist),
            suirs: u.slot.checked_sub(1).map_or(0, |s| (1 << 63) | s as usize),
        },
    );
    // Software-set pending bits belong to whoever set them: none carries over.
    if csrr!("sip") & UINTR_BITS != 0 {
        csrc!("sip", UINTR_BITS);
    }
}

/// Make the hart's CSRs hold `want`, writing only the ones that differ.
fn apply(c: &mut Csrs, want: Csrs) {
    macro_rules! put {
        ($csr:expr, $f:ident) => {
            if c.$f != want.$f {
                csrw_n!($csr, want.$f);
            }
        };
    }
    if *c == want {
        return;
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
    *c = want;
}

/// Force `t`'s state to be reloaded before it next runs in user mode (the kernel changed what
/// it may use). If it is in user mode on another hart, wait until that hart has left it.
pub(crate) fn reload(t: &mut Tcb) {
    if let Some(h) = t.current_on.filter(|&h| h != this_hart()) {
        sched::kick(h);
    }
    release(t);
}

/// The thread receiver slot `s` was registered for.
pub(crate) fn slot_owner(s: u16) -> Option<&'static mut Tcb> {
    // SAFETY: the slot's thread is live while the slot is allocated.
    unsafe { owners().get(s as usize)?.tcb.as_mut() }
}

// ---- registration --------------------------------------------------------------------

/// NotificationRegisterReceiver: a slot for the notification's bound thread.
pub fn register_receiver(ntfn: u64) -> Result<usize, Error> {
    let n = at::<Notification>(ntfn);
    if let Some(s) = n.uslot.checked_sub(1) {
        return Ok(s as usize);
    }
    // SAFETY: a bound TCB is live.
    let Some(t) = (unsafe { n.bound.as_mut() }) else { return Err(Error::IllegalOperation) };
    // The UINTC's slots are a fixed pool: only threads UintrControl allowed may take one.
    if t.uintr_grants & abi::uintr::GRANT_RECEIVE as u8 == 0 {
        return Err(Error::IllegalOperation);
    }
    let s = uintc::alloc().ok_or(Error::NotEnoughMemory { available: 0 })?;
    owners()[s as usize] = SlotOwner { ntfn, tcb: t };
    n.uslot = s + 1;
    t.uintr.slot = s + 1;
    t.uintr.sideleg |= USIP;
    sender::retarget(ntfn, Some(s));
    reload(t);
    Ok(s as usize)
}

/// NotificationRegisterSender (vector `badge`): an entry in `t`'s sender table. Returns (the
/// handle the invoked cap keeps, the entry index).
pub fn register_sender(ntfn: u64, badge: u64, t: &mut Tcb) -> Result<(u64, usize), Error> {
    if badge > MAX_VECTOR as u64 {
        return Err(Error::RangeError { min: 0, max: MAX_VECTOR as u64 });
    }
    let mut new_table = false;
    let id = match t.uintr.table.checked_sub(1) {
        Some(id) => id,
        // Sender tables are a fixed pool too: a first entry needs the grant.
        None if t.uintr_grants & abi::uintr::GRANT_SEND as u8 == 0 => return Err(Error::IllegalOperation),
        None => {
            new_table = true;
            sender::alloc_table(t).ok_or(Error::NotEnoughMemory { available: 0 })?
        }
    };
    let slot = at::<Notification>(ntfn).uslot.checked_sub(1);
    let Some(r) = sender::alloc_entry(id, ntfn, slot, badge) else {
        if new_table {
            sender::release(id as usize);
        }
        return Err(Error::NotEnoughMemory { available: 0 });
    };
    if new_table {
        t.uintr.table = id + 1;
        reload(t);
    }
    Ok(r)
}

/// A cap was deleted: a registered sender cap frees its entry.
pub fn cap_deleted(cap: &caps::Cap) {
    if let caps::Cap::Notification { uintr, .. } = *cap {
        if uintr != 0 {
            if let Some(owner) = sender::free_entry(uintr) {
                // SAFETY: a table's owner is live (tcb_destroyed releases its table first).
                let t = unsafe { &mut *owner };
                t.uintr.table = 0;
                reload(t);
            }
        }
    }
}

/// The notification's receiver slot goes (unbind, or the notification or thread is
/// destroyed): entries pointing at it stop delivering, the slot is reset and free.
pub fn free_receiver(n: &mut Notification) {
    let Some(s) = n.uslot.checked_sub(1) else { return };
    let ntfn = owners()[s as usize].ntfn;
    // The slot's thread is live: this runs before it is destroyed.
    if let Some(t) = slot_owner(s) {
        crate::object::irq::receiver_gone(ntfn);
        unpark(t);
        reload(t);
        t.uintr.slot = 0;
        t.uintr.sideleg &= !USIP;
        if t.state == State::BlockedOnNotification && t.blocked_on == ntfn {
            // A Wait on what is now a plain notification: restart it.
            crate::object::tcb::restart(t);
        }
    }
    sender::retarget(ntfn, None);
    drain_sends();
    uintc::free(s);
    owners()[s as usize] = SlotOwner { ntfn: 0, tcb: null_mut() };
    n.uslot = 0;
}

/// Entries were just invalidated: let no `uipi.send` that read one of them before that land
/// after this returns. The uipi unit finishes a send after the instruction retires (the
/// entry load, then the UINTC write), but it is busy until then and a `fence` waits for it;
/// every hart passes one on kernel entry (the Release store of `in_user`). So once each hart
/// that is in user mode has been kicked out of it, nothing is in flight (this hart drained at
/// its own entry). The emulation sends under the kernel lock: nothing to drain.
fn drain_sends() {
    if hardware() {
        sched::kick_others(|_| true);
    }
}

// ---- who may hold the fixed resources -------------------------------------------------

/// UintrControl_Grant: set what user-interrupt hardware a thread may hold; what it holds
/// under a withdrawn grant is freed at once (its receiver slot, its sender table).
pub fn invoke_control(me: &mut Tcb, m: &ipc::Msg) -> crate::object::InvResult {
    if m.label != abi::label::UINTR_CONTROL_GRANT {
        return Err(Error::IllegalOperation);
    }
    m.need(1, 1)?;
    let caps::Cap::Tcb { obj } = m.caps[0].0 else { return Err(Error::InvalidCapability(1)) };
    let grants = m.mr(me, 0);
    let all = abi::uintr::GRANT_RECEIVE | abi::uintr::GRANT_SEND;
    if grants & !all != 0 {
        return Err(Error::InvalidArgument(0));
    }
    let t = at::<Tcb>(obj);
    t.uintr_grants = grants as u8;
    if grants & abi::uintr::GRANT_RECEIVE == 0 {
        if let Some(s) = t.uintr.slot.checked_sub(1) {
            let ntfn = owners()[s as usize].ntfn;
            free_receiver(at::<Notification>(ntfn));
        }
    }
    if grants & abi::uintr::GRANT_SEND == 0 {
        if let Some(id) = t.uintr.table.checked_sub(1) {
            // The entries' caps keep handles whose table is gone: harmless (sender.rs).
            sender::release(id as usize);
            t.uintr.table = 0;
            drain_sends();
            reload(t);
        }
    }
    Ok(0)
}

/// Thread `t` is being destroyed (already suspended): its table goes; no hart may keep it.
pub fn tcb_destroyed(t: &mut Tcb) {
    release(t);
    if let Some(id) = t.uintr.table.checked_sub(1) {
        sender::release(id as usize);
        t.uintr.table = 0;
    }
    for hs in harts().iter_mut() {
        if core::ptr::eq(hs.owner, t) {
            hs.owner = null_mut();
        }
    }
}

// ---- signalling and waiting --------------------------------------------------------------

/// Set `bits` in slot `s`'s pending word on behalf of the kernel or an emulated `uipi`, and
/// make it noticed: a parked waiter wakes; in emulation a receiver running on another hart is
/// interrupted so it takes the user interrupt on its way back.
pub fn deliver(s: u16, bits: u64) {
    uintc::or_pending(s, bits);
    let Some(t) = slot_owner(s) else { return };
    if t.uintr.parked {
        let bits = uintc::take(s);
        if bits != 0 {
            wake(t, bits);
        }
    } else if !hardware() {
        if let Some(h) = uintc::emu_active_on(s).filter(|&h| h != this_hart()) {
            if percpu::of(h).in_user.load(core::sync::atomic::Ordering::Acquire) {
                crate::arch::ipi::send(h, crate::arch::ipi::Msg::Kick);
            }
        }
    }
}

/// seL4 Signal on a U-notification (or an IRQ bound to one): vector `badge`.
pub fn kernel_signal(n: &Notification, badge: u64) -> Result<(), Error> {
    if badge > MAX_VECTOR as u64 {
        return Err(Error::RangeError { min: 0, max: MAX_VECTOR as u64 });
    }
    let s = n.uslot - 1;
    stats::count(stat::UINTR_KERNEL_SENDS);
    deliver(s, 1 << badge);
    Ok(())
}

/// Wait or Poll by the receiver on its U-notification `ntfn`: take the pending word, or block
/// until there is one.
pub fn wait(me: &mut Tcb, n: &mut Notification, ntfn: u64, blocking: bool) {
    let s = n.uslot - 1;
    let bits = uintc::take(s);
    if bits != 0 || !blocking {
        me.ctx.regs[ipc::A0] = bits as usize;
        return;
    }
    me.state = State::BlockedOnNotification;
    me.blocked_on = ntfn;
    crate::object::endpoint::enqueue(&mut n.head, &mut n.tail, me);
    n.state = crate::object::notification::NtfnState::Waiting;
    park(me);
}

fn park(t: &mut Tcb) {
    let h = this_hart();
    let s = t.uintr.slot - 1;
    release(t);
    t.uintr.parked = true;
    t.uintr.park_hart = h as u8;
    let hs = &mut harts()[h];
    hs.parked[s as usize / 64] |= 1 << (s % 64);
    uintc::set_low(s, h, hardware() && hs.parked_active);
    if t.uintr.ueip != 0 {
        crate::object::irq::route_parked(t, true);
    }
}

/// The waiter leaves Wait (woken, cancelled or destroyed).
pub fn unpark(t: &mut Tcb) {
    if !t.uintr.parked {
        return;
    }
    let s = t.uintr.slot - 1;
    harts()[t.uintr.park_hart as usize].parked[s as usize / 64] &= !(1 << (s % 64));
    t.uintr.parked = false;
    uintc::set_active(s, false);
    if t.uintr.ueip != 0 {
        crate::object::irq::route_parked(t, false);
    }
}

pub(crate) fn wake(t: &mut Tcb, bits: u64) {
    // remove_waiter unparks.
    crate::object::notification::remove_waiter(t);
    t.ctx.regs[ipc::A0] = bits as usize;
    stats::count(stat::UINTR_WAIT_WAKEUPS);
    sched::make_runnable(t);
}

fn for_parked(h: usize, mut f: impl FnMut(u16)) {
    let words = harts()[h].parked;
    for (w, mut bits) in words.into_iter().enumerate() {
        while bits != 0 {
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            f((w * 64 + b) as u16);
        }
    }
}

fn set_parked_active(h: usize, on: bool) {
    if harts()[h].parked_active == on {
        return;
    }
    harts()[h].parked_active = on;
    for_parked(h, |s| uintc::set_active(s, on));
}

/// Wake every waiter parked on this hart whose slot has bits: on the USIP interrupt the kernel
/// takes, in the idle loop, and on kernel entries while the parked slots are inactive.
pub fn poll_parked() {
    let h = this_hart();
    for_parked(h, |s| {
        let bits = uintc::take(s);
        if let (true, Some(t)) = (bits != 0, slot_owner(s)) {
            wake(t, bits);
        }
    });
}

/// A kernel entry from user mode on the hardware path.
pub fn on_kernel_entry() {
    if hardware() && !harts()[this_hart()].parked_active {
        poll_parked();
    }
}

/// An illegal instruction in `t`: emulate it if it is a user-interrupt one and there is no
/// hardware for it. True if handled.
pub fn emulate_illegal(t: &mut Tcb, stval: usize) -> bool {
    if hardware() {
        return false;
    }
    let Some(insn) = emulate::fetch(t, stval) else { return false };
    let done = emulate::instruction(t, insn);
    if done {
        stats::count(stat::UINTR_EMULATED);
    }
    done
}
