//! IRQControl and IRQHandler: device interrupts from the PLIC, delivered as signals on a
//! notification. All device interrupts go to the boot hart's S-mode context; a delivered IRQ
//! stays masked until its handler is acknowledged (seL4's IRQHandler_Ack).
use super::{at, cap_at, tcb::Tcb, InvResult, KSlots};
use crate::ipc::Msg;
use crate::mm::phys_to_virt;
use abi::label;
use caps::{cspace::lookup_slot_exact, Cap, Error};

const MAX_IRQS: usize = 1024;

#[derive(Clone, Copy)]
struct IrqState {
    issued: bool,
    ntfn: u64,
    badge: u64,
}

static mut IRQS: [IrqState; MAX_IRQS] = [IrqState { issued: false, ntfn: 0, badge: 0 }; MAX_IRQS];
static mut PLIC: Option<(usize, u32, usize)> = None; // (window base, sources, context)

fn irqs() -> &'static mut [IrqState; MAX_IRQS] {
    // SAFETY: under the kernel lock.
    unsafe { &mut *(&raw mut IRQS) }
}

fn plic() -> Option<(usize, u32, usize)> {
    // SAFETY: written once at boot.
    unsafe { PLIC }
}

fn reg(off: usize) -> *mut u32 {
    (plic().map_or(0, |p| p.0) + off) as *mut u32
}

fn set_enabled(irq: u32, on: bool) {
    let Some((_, _, ctx)) = plic() else { return };
    let r = reg(0x2000 + 0x80 * ctx + 4 * (irq as usize / 32));
    // SAFETY: PLIC registers, mapped in the kernel window.
    unsafe {
        let v = r.read_volatile();
        let bit = 1 << (irq % 32);
        r.write_volatile(if on { v | bit } else { v & !bit });
    }
}

/// Route every source to `hart`'s S context, all masked, threshold 0.
pub fn init(m: &devtree::Machine, hart: usize) {
    let Some(p) = m.plic else { return };
    let Some(ctx) = p.s_context.get(hart).copied().flatten() else { return };
    let sources = p.sources.min(MAX_IRQS as u32 - 1);
    // SAFETY: once, on the boot hart, before any user code.
    unsafe { PLIC = Some((phys_to_virt(p.reg.base), sources, ctx as usize)) };
    for irq in 1..=sources {
        // SAFETY: PLIC priority registers.
        unsafe { reg(4 * irq as usize).write_volatile(1) };
        set_enabled(irq, false);
    }
    // SAFETY: the context's threshold register.
    unsafe { reg(0x20_0000 + 0x1000 * ctx as usize).write_volatile(0) };
    crate::interrupt::enable_external();
}

/// Claim, signal, complete; the source stays masked until Ack.
pub fn handle_external() {
    let Some((_, _, ctx)) = plic() else { return };
    let claim = reg(0x20_0004 + 0x1000 * ctx);
    loop {
        // SAFETY: the claim/complete register.
        let irq = unsafe { claim.read_volatile() };
        if irq == 0 {
            return;
        }
        set_enabled(irq, false);
        let st = irqs()[irq as usize];
        if st.ntfn != 0 {
            super::notification::signal(st.ntfn, st.badge);
        }
        // SAFETY: as above.
        unsafe { claim.write_volatile(irq) };
    }
}

pub fn clear_handler(irq: u32) {
    set_enabled(irq, false);
    irqs()[irq as usize] = IrqState { issued: false, ntfn: 0, badge: 0 };
}

/// A notification is going away: no IRQ may signal it any more.
pub fn forget_notification(ntfn: u64) {
    for s in irqs().iter_mut().filter(|s| s.ntfn == ntfn) {
        s.ntfn = 0;
    }
}

pub fn invoke_control(me: &mut Tcb, m: &Msg) -> InvResult {
    if m.label != label::IRQ_ISSUE_IRQ_HANDLER {
        return Err(Error::IllegalOperation);
    }
    m.need(3, 1)?;
    let (irq, index, depth) = (m.mr(me, 0), m.mr(me, 1), m.mr(me, 2));
    let sources = plic().map_or(0, |p| p.1) as usize;
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
    let st = &mut irqs()[irq as usize];
    match m.label {
        label::IRQ_ACK_IRQ => {
            set_enabled(irq, true);
            Ok(0)
        }
        label::IRQ_SET_IRQ_HANDLER | label::IRQ_SET_UINTR => {
            m.need(0, 1)?;
            let Cap::Notification { obj, badge, rights, .. } = m.caps[0].0 else { return Err(Error::InvalidCapability(1)) };
            if !rights.write {
                return Err(Error::InvalidCapability(1));
            }
            // SetUIntr: the notification must have a receiver; the interrupt then reaches it as
            // a user interrupt (vector = badge) through the kernel's signal, see crate::uintr.
            if m.label == label::IRQ_SET_UINTR && at::<super::notification::Notification>(obj).uslot == 0 {
                return Err(Error::IllegalOperation);
            }
            st.ntfn = obj;
            st.badge = badge;
            set_enabled(irq, true);
            let _ = me;
            Ok(0)
        }
        label::IRQ_CLEAR_IRQ_HANDLER => {
            st.ntfn = 0;
            set_enabled(irq, false);
            Ok(0)
        }
        _ => Err(Error::IllegalOperation),
    }
}
