//! Signalling and waiting: the kernel (or an emulated `uipi`) setting pending bits, Wait and
//! Poll on a U-notification, and the parking of blocked waiters' slots on their hart (see the
//! module docs in `mod.rs`).
use super::{hardware, release, slot_owner, this_hart, uintc};
use crate::kcell::KCell;
use crate::object::notification::Notification;
use crate::object::tcb::{State, Tcb};
use crate::{ipc, percpu, sched, stats};
use abi::{stat, uintr::MAX_VECTOR};
use caps::Error;
use platform::image::MAX_HARTS;

/// Per hart: whether the slots of waiters parked there are Active now, and those slots. A row
/// starts a line (every kernel entry and exit reads `active`; rows sharing lines missed when
/// another hart parked or switched).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Parked {
    active: bool,
    slots: [u64; platform::uintc::MAX_SLOTS / 64],
}

static PARKED: KCell<[Parked; MAX_HARTS]> =
    KCell::new([Parked { active: false, slots: [0; platform::uintc::MAX_SLOTS / 64] }; MAX_HARTS]);

fn parked(h: usize) -> &'static mut Parked {
    // SAFETY: under the kernel lock.
    unsafe { &mut PARKED.get()[h] }
}

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
    let p = parked(h);
    p.slots[s as usize / 64] |= 1 << (s % 64);
    uintc::set_low(s, h, hardware() && p.active);
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
    parked(t.uintr.park_hart as usize).slots[s as usize / 64] &= !(1 << (s % 64));
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
    let words = parked(h).slots;
    for (w, mut bits) in words.into_iter().enumerate() {
        while bits != 0 {
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            f((w * 64 + b) as u16);
        }
    }
}

/// Make the slots parked on hart `h` Active (nothing delegated there: their signal interrupts
/// the kernel) or not (a receiver runs there and must not see their bits).
pub(super) fn set_active(h: usize, on: bool) {
    if parked(h).active == on {
        return;
    }
    parked(h).active = on;
    for_parked(h, |s| uintc::set_active(s, on));
    debug_assert_eq!(h, this_hart());
    super::switch::requiet();
}

/// Whether the slots parked on hart `h` are Active now.
pub(super) fn active(h: usize) -> bool {
    parked(h).active
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

/// Whether waiters parked on this hart are noticed only by polling on a kernel entry (their
/// slots are inactive while a receiver runs here): then the tick must keep bounding that.
pub fn parked_unwatched() -> bool {
    let p = parked(this_hart());
    hardware() && !p.active && p.slots.iter().any(|&w| w != 0)
}

/// A kernel entry from user mode on the hardware path.
pub fn on_kernel_entry() {
    if hardware() && !parked(this_hart()).active {
        poll_parked();
    }
}
