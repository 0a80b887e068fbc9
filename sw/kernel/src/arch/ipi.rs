//! Kernel IPIs: a mailbox word per hart plus an SBI IPI (S-mode software interrupt).
use super::csr::*;
use crate::percpu::{self, PerCpu};
use core::sync::atomic::Ordering;
use sbi_defs::HartMask;

#[derive(Clone, Copy)]
#[repr(usize)]
pub enum Msg {
    /// Answer by counting (self-test).
    Ping = 1 << 0,
    /// Stop this hart through SBI HSM (it can be started again).
    Stop = 1 << 1,
    /// Leave user mode and schedule (reschedule, stall a thread, flush the TLB): taking the
    /// interrupt is the whole point.
    Kick = 1 << 2,
}

pub fn send(hart: usize, msg: Msg) {
    percpu::of(hart).mailbox.fetch_or(msg as usize, Ordering::AcqRel);
    let r = sbi_defs::call::send_ipi(HartMask { mask: 1, base: hart });
    assert!(r.is_ok(), "SBI send_ipi to hart {hart} failed: {}", r.error);
}

pub fn enable() {
    csrs!("sie", SIE_SSIE);
}

pub fn on_interrupt(cpu: &PerCpu) {
    csrc!("sip", SIE_SSIE);
    cpu.ipis.fetch_add(1, Ordering::Relaxed);
    let msgs = cpu.mailbox.swap(0, Ordering::AcqRel);
    if msgs & Msg::Stop as usize != 0 {
        crate::smp::stop_this_hart(cpu);
    }
}
