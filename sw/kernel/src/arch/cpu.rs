//! This hart: its id (kept in tp), interrupt masking and sleeping.
use super::csr::*;

/// The hart id. `tp` holds a pointer to this hart's `PerCpu` from the first Rust instruction on.
pub fn hart_id() -> usize {
    let tp: usize;
    // SAFETY: reads a register.
    unsafe { core::arch::asm!("mv {0}, tp", out(reg) tp) };
    if tp == 0 {
        return usize::MAX; // before percpu::install: only early panics see this
    }
    crate::percpu::this().hart
}

pub fn interrupts_on() {
    csrs!("sstatus", SSTATUS_SIE);
}

pub fn interrupts_off() -> bool {
    let was = csrr!("sstatus") & SSTATUS_SIE != 0;
    // A write to sstatus drains Rocket's pipeline; after a trap SIE is clear already.
    if was {
        csrc!("sstatus", SSTATUS_SIE);
    }
    was
}

/// Sleep until an interrupt is pending (it is taken if enabled).
pub fn wait_for_interrupt() {
    // SAFETY: wfi only waits.
    unsafe { core::arch::asm!("wfi", options(nomem, nostack)) };
}

/// Park this hart for good: interrupts on, sleeping in `wfi`, never spinning.
pub fn idle() -> ! {
    interrupts_on();
    let cpu = crate::percpu::this();
    loop {
        wait_for_interrupt();
        cpu.idle_wakeups.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
        if crate::sched::started() {
            crate::sched::idle_loop()
        }
    }
}

/// The time CSR (emulated by the firmware on harts without one).
pub fn time() -> u64 {
    csrr!("time") as u64
}

pub fn cycles() -> u64 {
    csrr!("cycle") as u64
}
