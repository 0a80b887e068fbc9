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

/// One interrupt, by cause code (kernel lock held).
pub fn handle(code: usize, cpu: &PerCpu) {
    match code {
        IRQ_S_TIMER => {
            arch::timer::on_interrupt(cpu);
            crate::sched::tick();
        }
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
        arch::timer::on_interrupt(cpu);
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
