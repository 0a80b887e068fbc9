//! No hart keeps a freed VSpace root in `satp`. The kernel runs on the user's table (its upper
//! half is the kernel's), and harts outside the lock keep whatever root they last used: a
//! thread waiting for the lock after a trap, a Wait spinning for its signal
//! (`fastpath::spin_for_signal`), an idle hart whose last thread's VSpace is gone. Shootdowns
//! reach harts in user mode only. Once the root's page is retyped (a frame a user can write),
//! any page walk such a hart does, kernel addresses included, would read entries an attacker
//! chose. So when a root goes (`vspace::destroy_page_table`), every hart whose `satp` still names
//! it moves to the kernel's own table before the page can be reused: the holder of the lock
//! asks (`PerCpu::leave_root`) and waits; each lock-free loop a hart can be in ends at
//! `lock::acquire`, whose spin answers (`answer`). The lock holder is never waited for (it
//! moves itself at once).
use crate::percpu::{self, PerCpu};
use core::sync::atomic::Ordering;
use platform::image::MAX_HARTS;

/// satp's PPN field (the ASID and mode sit above it).
const PPN_MASK: usize = (1 << 44) - 1;

/// The kernel's own address space as `switch_space` takes it: its root, and the ASID of a
/// thread without a VSpace (`vspace::satp_of`, hardware ASID 0).
fn kernel_space() -> (usize, usize) {
    (sv39::SATP_MODE_SV39 | (crate::mm::kspace::root() >> 12), usize::MAX - 1)
}

/// The hart's `satp` names the root, or it is about to: a thread handed to it
/// (`PerCpu::handoff_satp`, written under the lock) enters user mode with that satp without
/// the lock. An old `handoff_satp` that matches costs one needless answer.
fn uses_root(cpu: &PerCpu, ppn: usize) -> bool {
    cpu.active_satp.load(Ordering::Acquire) & PPN_MASK == ppn
        || (cpu.in_user.load(Ordering::Acquire) && cpu.handoff_satp.load(Ordering::Acquire) & PPN_MASK == ppn)
}

/// The VSpace root at `root` is gone (lock held): once this returns no hart's `satp` names it.
pub fn retire(root: u64) {
    let ppn = root as usize >> 12;
    let me = percpu::this();
    if uses_root(me, ppn) {
        let (satp, asid) = kernel_space();
        crate::mm::tlb::switch_space(me, satp, asid);
    }
    for h in (0..MAX_HARTS).filter(|&h| h != me.hart) {
        let cpu = percpu::of(h);
        if !cpu.online.load(Ordering::Acquire) || !uses_root(cpu, ppn) {
            continue;
        }
        cpu.leave_root.store(true, Ordering::SeqCst);
        // Out of user mode, `wfi` or a watch: every way from there leads to `lock::acquire`.
        crate::arch::ipi::send(h, crate::arch::ipi::Msg::Kick);
        while cpu.leave_root.load(Ordering::Acquire) && cpu.online.load(Ordering::Acquire) {
            core::hint::spin_loop();
        }
        crate::stats::count(abi::stat::ROOT_RETIRES);
    }
}

/// Called by a hart spinning without the lock: if the holder asked, move to the kernel's table.
#[inline(always)]
pub fn answer(cpu: &PerCpu) {
    if cpu.leave_root.load(Ordering::Relaxed) {
        leave(cpu);
    }
}

#[cold]
#[inline(never)]
fn leave(cpu: &PerCpu) {
    let (satp, asid) = kernel_space();
    crate::mm::tlb::switch_space(cpu, satp, asid);
    cpu.leave_root.store(false, Ordering::Release);
}
