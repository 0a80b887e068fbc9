//! User-level device interrupts through the PLIC's U-mode contexts (docs/uintr-spec.md section 1:
//! mip.UEIP is the PLIC's U context for the hart). IRQSetUIntr on a machine that has one per
//! hart (and a UINTC) ties the source to the notification's receiver thread and to that
//! thread's hart, whose affinity is then fixed. While the thread runs there, the source is
//! enabled in the hart's U context and `sideleg` delegates UEIP: the interrupt reaches the
//! thread's handler, which claims and completes it at the context's page, with no kernel entry.
//! While the thread is switched out the source is masked in that context (it stays pending at
//! the PLIC and fires at the thread's first user instruction back); while the thread is parked
//! in Wait the kernel's own context takes it instead, only to wake the thread.
use super::{reload, UEIP};
use crate::object::tcb::Tcb;
use crate::plic;
use abi::uintr::MAX_DIRECT_IRQ;
use platform::image::MAX_HARTS;

/// By hart id: the PLIC U context (None everywhere: no direct routing).
static mut U_CONTEXT: [Option<u16>; MAX_HARTS] = [None; MAX_HARTS];
static mut AVAILABLE: bool = false;

fn u_context(h: usize) -> Option<u16> {
    // SAFETY: written once at boot.
    unsafe { U_CONTEXT[h] }
}

/// Boot hart: direct routing needs the UINTC's CSRs (sideleg) and a U context on every hart.
pub fn init(m: &devtree::Machine) {
    let Some(p) = m.plic else { return };
    let all = !m.harts.is_empty() && m.harts.iter().all(|h| p.u_context.get(h.id).copied().flatten().is_some());
    // SAFETY: once, before any thread exists.
    unsafe {
        U_CONTEXT = p.u_context;
        AVAILABLE = all && super::hardware();
    }
}

pub fn available() -> bool {
    // SAFETY: written once at boot.
    unsafe { AVAILABLE }
}

/// Physical address of hart `h`'s U-context page (threshold, claim/complete), for BootInfo.
pub fn context_page(h: usize) -> Option<usize> {
    u_context(h).filter(|_| available()).map(plic::context_page)
}

/// IRQSetUIntr: route `irq` to the thread that owns receiver slot `slot`. Returns the thread
/// and its hart, or None (the caller forwards through the kernel instead).
pub fn bind(slot: u16, irq: u32) -> Option<(*mut Tcb, usize)> {
    if irq as usize > MAX_DIRECT_IRQ || !available() {
        return None;
    }
    let t = super::slot_owner(slot)?;
    if t.uintr.ueip == 0 {
        t.uintr.ueip_hart = t.affinity as u8;
    }
    reload(t);
    t.uintr.ueip |= 1 << irq;
    t.uintr.sideleg |= UEIP;
    // uie is a view of sie under sideleg: an enable the thread wrote before UEIP was delegated
    // was dropped, so asking for the route turns it on (ustatus.UIE still gates it).
    t.uintr.uie |= UEIP;
    Some((t as *mut Tcb, t.uintr.ueip_hart as usize))
}

/// Routing of `irq` to `t` ends. A claim the thread never completed is completed here, so the
/// source is not left in flight for its next owner.
pub fn unbind(t: &mut Tcb, irq: u32) {
    let bit = 1u64 << irq;
    if t.uintr.ueip & bit == 0 {
        return;
    }
    reload(t);
    if let Some(ctx) = u_context(t.uintr.ueip_hart as usize) {
        // The PLIC takes a completion only for a source enabled in that context; the threshold
        // keeps the brief enable from interrupting whoever runs on that hart now.
        plic::set_threshold(ctx, 1);
        plic::set_enabled(ctx, irq, true);
        plic::complete(ctx, irq);
        plic::set_enabled(ctx, irq, false);
        plic::set_threshold(ctx, 0);
    }
    t.uintr.ueip &= !bit;
    if t.uintr.ueip == 0 {
        t.uintr.sideleg &= !UEIP;
        t.uintr.uie &= !UEIP;
    }
}

/// `t` is loaded on hart `h`: its sources interrupt it there. The threshold is reset in case
/// the previous thread raised it through its own mapping of the page.
pub fn load(t: &Tcb, h: usize) {
    if t.uintr.ueip == 0 || h != t.uintr.ueip_hart as usize {
        return;
    }
    if let Some(ctx) = u_context(h) {
        plic::set_threshold(ctx, 0);
        plic::set_enabled_low64(ctx, t.uintr.ueip);
    }
}

/// `t` leaves hart `h`: its sources wait at the PLIC.
pub fn unload(t: &Tcb, h: usize) {
    if t.uintr.ueip == 0 || h != t.uintr.ueip_hart as usize {
        return;
    }
    if let Some(ctx) = u_context(h) {
        plic::set_enabled_low64(ctx, 0);
    }
}

/// SetAffinity: a thread with direct sources stays on their hart.
pub fn may_move(t: &Tcb, hart: usize) -> bool {
    t.uintr.ueip == 0 || hart == t.uintr.ueip_hart as usize
}

/// A direct source fired in the kernel's context (its thread is parked): wake the thread; it
/// takes the interrupt itself once back in user mode.
pub fn parked_source_fired(t: &mut Tcb) {
    if t.uintr.parked {
        super::wake(t, 0);
    }
}
