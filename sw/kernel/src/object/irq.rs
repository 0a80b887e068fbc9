//! IRQControl and IRQHandler: device interrupts from the PLIC, delivered as signals on a
//! notification. All device interrupts go to the boot hart's S-mode context; a delivered IRQ
//! stays masked until its handler is acknowledged (seL4's IRQHandler_Ack). IRQSetUIntr may
//! instead hand the source to a user thread through its hart's U-mode context
//! (`crate::uintr::ueip`); the kernel then keeps it masked in its own context except while
//! that thread is parked in Wait.
use super::{at, cap_at, tcb::Tcb, InvResult, KSlots};
use crate::ipc::Msg;
use crate::kcell::KCell;
use crate::plic;
use abi::{label, uintr};
use caps::{cspace::lookup_slot_exact, Cap, Error};
use core::ptr::null_mut;

const MAX_IRQS: usize = 1024;

#[derive(Clone, Copy)]
struct IrqState {
    issued: bool,
    ntfn: u64,
    badge: u64,
    /// Routed to this thread's U context (IRQSetUIntr, direct): null otherwise.
    direct: *mut Tcb,
}

const IDLE: IrqState = IrqState { issued: false, ntfn: 0, badge: 0, direct: null_mut() };
static IRQS: KCell<[IrqState; MAX_IRQS]> = KCell::new([IDLE; MAX_IRQS]);
static mut PLIC: Option<(u32, u16)> = None; // (sources, the kernel's context)

fn irqs() -> &'static mut [IrqState; MAX_IRQS] {
    // SAFETY: under the kernel lock.
    unsafe { IRQS.get() }
}

fn plic() -> Option<(u32, u16)> {
    // SAFETY: written once at boot.
    unsafe { PLIC }
}

fn set_enabled(irq: u32, on: bool) {
    if let Some((_, ctx)) = plic() {
        plic::set_enabled(ctx, irq, on);
    }
}

/// Route every source to `hart`'s S context, all masked, threshold 0.
pub fn init(m: &devtree::Machine, hart: usize) {
    let Some(p) = m.plic else { return };
    let Some(ctx) = p.s_context.get(hart).copied().flatten() else { return };
    let sources = p.sources.min(MAX_IRQS as u32 - 1);
    // SAFETY: once, on the boot hart, before any user code.
    unsafe { PLIC = Some((sources, ctx)) };
    for irq in 1..=sources {
        plic::set_priority(irq, 1);
        set_enabled(irq, false);
    }
    plic::set_threshold(ctx, 0);
    crate::interrupt::enable_external();
}

/// Claim, complete, mask, signal; the source stays masked until Ack. A direct source only
/// gets here while its thread is parked in Wait: it wakes the thread, which then takes it as
/// UEIP.
pub fn handle_external() {
    let Some((_, ctx)) = plic() else { return };
    loop {
        let irq = plic::claim(ctx);
        if irq == 0 {
            return;
        }
        // Complete while still enabled (a PLIC may ignore completions of disabled sources, as
        // Rocket's does), then mask: a level source still asserted stays pending, not claimed.
        plic::complete(ctx, irq);
        set_enabled(irq, false);
        let st = irqs()[irq as usize];
        // SAFETY: a direct owner is live (unbound before it is destroyed).
        if let Some(t) = unsafe { st.direct.as_mut() } {
            crate::uintr::ueip::parked_source_fired(t);
        } else if st.ntfn != 0 {
            // A badge that is no vector of a U-notification drops the interrupt (reported).
            if super::notification::signal(st.ntfn, st.badge).is_err() {
                crate::kprintln!("[kernel] IRQ {irq}: badge {:#x} is no U-notification vector; dropped", st.badge);
            }
        }
    }
}

/// Direct routing ends (handler cleared or deleted, notification or receiver gone).
fn end_direct(irq: u32) {
    let st = &mut irqs()[irq as usize];
    // SAFETY: as above.
    if let Some(t) = unsafe { st.direct.as_mut() } {
        crate::uintr::ueip::unbind(t, irq);
    }
    st.direct = null_mut();
}

pub fn clear_handler(irq: u32) {
    end_direct(irq);
    set_enabled(irq, false);
    irqs()[irq as usize] = IDLE;
}

/// A notification is going away: no IRQ may signal it any more.
pub fn forget_notification(ntfn: u64) {
    for irq in 0..MAX_IRQS {
        if irqs()[irq].ntfn == ntfn {
            end_direct(irq as u32);
            irqs()[irq].ntfn = 0;
        }
    }
}

/// The notification lost its receiver slot: its direct sources fall back to plain signals on
/// it (masked in the kernel's context until Ack, as after a delivery).
pub fn receiver_gone(ntfn: u64) {
    for irq in 0..MAX_IRQS {
        if irqs()[irq].ntfn == ntfn && !irqs()[irq].direct.is_null() {
            end_direct(irq as u32);
        }
    }
}

/// Thread `t`, parked in Wait, takes its direct sources in the kernel's context (on) or gives
/// them back to its U context (off).
pub fn route_parked(t: &Tcb, on: bool) {
    let mask = t.uintr.ueip;
    for irq in (1..=uintr::MAX_DIRECT_IRQ as u32).filter(|i| mask & (1 << i) != 0) {
        set_enabled(irq, on);
    }
}

pub fn invoke_control(me: &mut Tcb, m: &Msg) -> InvResult {
    if m.label != label::IRQ_ISSUE_IRQ_HANDLER {
        return Err(Error::IllegalOperation);
    }
    m.need(3, 1)?;
    let (irq, index, depth) = (m.mr(me, 0), m.mr(me, 1), m.mr(me, 2));
    let sources = plic().map_or(0, |p| p.0) as usize;
    if irq == 0 || irq > sources {
        return Err(Error::RangeError { min: 1, max: sources as u64 });
    }
    if irqs()[irq].issued {
        return Err(Error::RevokeFirst);
    }
    if depth > 64 {
        return Err(Error::RangeError { min: 1, max: 64 });
    }
    let dest = lookup_slot_exact(&KSlots, m.caps[0].0, index as u64, depth as u8).map_err(Error::FailedLookup)?;
    if !cap_at(dest).is_null() {
        return Err(Error::DeleteFirst);
    }
    caps::cdt::insert(&mut KSlots, control_slot(), dest, Cap::IrqHandler { irq: irq as u32 })?;
    irqs()[irq].issued = true;
    Ok(0)
}

/// The slot holding IRQControl (the parent of every IRQHandler cap), recorded at boot.
static mut CONTROL_SLOT: u64 = 0;
pub fn set_control_slot(s: u64) {
    // SAFETY: once at boot.
    unsafe { CONTROL_SLOT = s };
}
fn control_slot() -> u64 {
    // SAFETY: written once at boot.
    unsafe { CONTROL_SLOT }
}

pub fn invoke_handler(me: &mut Tcb, cap: Cap, m: &Msg) -> InvResult {
    let Cap::IrqHandler { irq } = cap else { return Err(Error::InvalidCapability(0)) };
    match m.label {
        label::IRQ_ACK_IRQ => {
            // A direct source is completed by its thread at the U context.
            if irqs()[irq as usize].direct.is_null() {
                set_enabled(irq, true);
            }
            Ok(0)
        }
        label::IRQ_SET_IRQ_HANDLER | label::IRQ_SET_UINTR => {
            m.need(0, 1)?;
            let Cap::Notification { obj, badge, rights, .. } = m.caps[0].0 else {
                return Err(Error::InvalidCapability(1));
            };
            if !rights.write {
                return Err(Error::InvalidCapability(1));
            }
            let to_uintr = m.label == label::IRQ_SET_UINTR;
            // SetUIntr: the notification must have a receiver.
            let receiver = at::<super::notification::Notification>(obj).uslot;
            if to_uintr && receiver == 0 {
                return Err(Error::IllegalOperation);
            }
            end_direct(irq);
            let st = &mut irqs()[irq as usize];
            st.ntfn = obj;
            st.badge = badge;
            if !to_uintr {
                set_enabled(irq, true);
                return Ok(0);
            }
            match crate::uintr::ueip::bind(receiver - 1, irq) {
                Some((t, hart)) => {
                    st.direct = t;
                    // SAFETY: bind returns a live thread. A receiver already parked in Wait
                    // takes the source in the kernel's context, as park() arranges.
                    set_enabled(irq, unsafe { (*t).uintr.parked });
                    crate::ipc::set_mr(me, 0, uintr::IRQ_DIRECT);
                    crate::ipc::set_mr(me, 1, crate::sched::index_of_hart(hart));
                    Ok(2)
                }
                None => {
                    set_enabled(irq, true);
                    crate::ipc::set_mr(me, 0, uintr::IRQ_FORWARDED);
                    Ok(1)
                }
            }
        }
        label::IRQ_CLEAR_IRQ_HANDLER => {
            end_direct(irq);
            irqs()[irq as usize].ntfn = 0;
            set_enabled(irq, false);
            Ok(0)
        }
        _ => Err(Error::IllegalOperation),
    }
}
