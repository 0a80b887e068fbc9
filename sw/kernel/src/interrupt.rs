//! Interrupts the kernel takes, whether a user thread or the idle loop was interrupted: the
//! tick, IPIs and device interrupts from the PLIC.
use crate::arch::{self, csr::*};
use crate::percpu::PerCpu;

const IRQ_S_EXTERNAL: usize = 9;
const SIP_SSIP: usize = 1 << 1;
const SIP_STIP: usize = 1 << 5;
const SIP_SEIP: usize = 1 << 9;
/// A user software interrupt the kernel takes: a waiter parked in U-notification Wait.
const IRQ_U_SOFT: usize = 0;
const SIP_USIP: usize = 1 << IRQ_U_SOFT;

/// One interrupt that stopped a user thread, by cause code (kernel lock held): the tick may
/// end its slice.
pub fn handle(code: usize, cpu: &PerCpu) {
    if code == IRQ_S_TIMER {
        let more = crate::deadline::expire();
        if arch::timer::on_interrupt(cpu, more) {
            crate::sched::tick();
        }
    } else {
        dispatch(code, cpu);
    }
}

/// One interrupt taken in the kernel itself (only where it runs with interrupts enabled, the
/// boot checks, without the kernel lock): no thread to preempt, so the tick only re-arms the
/// timer, and parked U-notification waiters (lock-protected state) wait for a user-mode entry.
pub fn handle_in_kernel(code: usize, cpu: &PerCpu) {
    match code {
        IRQ_S_TIMER => {
            arch::timer::on_interrupt(cpu, false);
        }
        IRQ_U_SOFT => {}
        _ => dispatch(code, cpu),
    }
}

/// Everything but the tick, the same from either mode. An unknown cause is reported and
/// dropped: nothing a user can raise may stop the kernel.
fn dispatch(code: usize, cpu: &PerCpu) {
    match code {
        IRQ_S_SOFT => arch::ipi::on_interrupt(cpu),
        IRQ_S_EXTERNAL => crate::object::irq::handle_external(),
        IRQ_U_SOFT => crate::uintr::poll_parked(),
        _ => crate::kprintln!("[kernel] hart {}: spurious interrupt {code}", cpu.hart),
    }
}

/// The idle loop runs with interrupts masked: handle whatever is pending.
pub fn poll(cpu: &PerCpu) {
    let sip = csrr!("sip") & csrr!("sie");
    if sip & SIP_STIP != 0 {
        let more = crate::deadline::expire();
        arch::timer::on_interrupt(cpu, more);
    }
    if sip & SIP_SSIP != 0 {
        arch::ipi::on_interrupt(cpu);
    }
    if sip & SIP_SEIP != 0 {
        crate::object::irq::handle_external();
    }
    if sip & SIP_USIP != 0 {
        crate::uintr::poll_parked();
    }
}

pub fn enable_external() {
    csrs!("sie", SIP_SEIP);
}
