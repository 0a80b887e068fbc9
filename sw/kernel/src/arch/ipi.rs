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
    /// End a `wfi` in `lock::acquire`: the sleeper's ticket is being served. Nothing to do.
    Wake = 1 << 3,
    /// Serve the async-syscall handlers given to this hart (crate::asyscall::wake).
    Asys = 1 << 4,
}

pub fn send(hart: usize, msg: Msg) {
    let cpu = percpu::of(hart);
    // SeqCst on both sides (here and in `watch_mailbox`): either this load sees the hart still
    // polling, and then its last look at the mailbox comes after our post, or we send the IPI.
    cpu.mailbox.fetch_or(msg as usize, Ordering::SeqCst);
    if cpu.polling.load(Ordering::SeqCst) {
        return;
    }
    let r = sbi_defs::call::send_ipi(HartMask { mask: 1, base: hart });
    assert!(r.is_ok(), "SBI send_ipi to hart {hart} failed: {}", r.error);
}

/// An IPI with no mail: wake hart `hart` from `wfi` (a thread was handed to it,
/// `sched::hand_off`).
pub fn wake_up(hart: usize) {
    let r = sbi_defs::call::send_ipi(HartMask { mask: 1, base: hart });
    assert!(r.is_ok(), "SBI send_ipi to hart {hart} failed: {}", r.error);
}

/// Drop a pending IPI whose mail (if any) the caller is about to read from the mailbox.
#[inline(always)]
pub fn clear_pending() {
    if csrr!("sip") & SIE_SSIE != 0 {
        csrc!("sip", SIE_SSIE);
    }
}

/// The idle loop, before it sleeps: watch the mailbox for up to `cycles` (leaving early if an
/// interrupt is pending). A request posted meanwhile costs its sender no SBI call and this
/// hart no M-mode interrupt and no wake-up from `wfi`, which is most of a cross-hart IPC when
/// the partner answers quickly. A thread handed over (`sched::hand_off`, on the same line), or
/// the slot claimed for one, ends the watch too. Returns whether there is mail or a hand-over,
/// and the hand-over slot as last seen: no look after the one that ended the watch, since
/// each look at a claimed slot takes the line back from the waker writing it. `polling` stays
/// set: the caller clears it where it stops looking at the mailbox (before it sleeps, takes
/// the lock or enters user mode), so a sender racing with the end of the watch does not send a
/// needless IPI.
pub fn watch_mailbox(cpu: &PerCpu, cycles: u64) -> (bool, usize) {
    cpu.polling.store(true, Ordering::SeqCst);
    let t0 = super::cpu::cycles();
    loop {
        // The mailbox, then the slot: when the first load misses (a waker took the line), the
        // second reads the same fresh copy, so a claim is seen at once; the other order looked
        // again after the miss and took the line back once more.
        let mail = cpu.mailbox.load(Ordering::Relaxed);
        let slot = cpu.handoff.load(Ordering::Relaxed);
        if slot != crate::sched::HANDOFF_OPEN {
            return (mail != 0 || slot != crate::sched::HANDOFF_NONE, slot);
        }
        if mail != 0 {
            return (true, slot);
        }
        if csrr!("sip") & csrr!("sie") != 0 || super::cpu::cycles().wrapping_sub(t0) >= cycles {
            return (false, slot);
        }
        core::hint::spin_loop();
    }
}

pub fn enable() {
    csrs!("sie", SIE_SSIE);
}

pub fn on_interrupt(cpu: &PerCpu) {
    csrc!("sip", SIE_SSIE);
    cpu.ipis.fetch_add(1, Ordering::Relaxed);
    take_mail(cpu);
}

/// Act on what other harts posted (after an IPI, or found by `watch_mailbox`). A Kick needs
/// nothing more: the caller is on its way to the scheduler.
pub fn take_mail(cpu: &PerCpu) {
    let msgs = cpu.mailbox.swap(0, Ordering::AcqRel);
    if msgs & Msg::Stop as usize != 0 {
        crate::smp::stop_this_hart(cpu);
    }
    // Another hart may have queued a kernel deadline here that our timer does not cover yet.
    super::timer::sync();
    if msgs & Msg::Asys as usize != 0 {
        crate::asyscall::wake::on_mail(cpu);
    }
}
