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

/// An enabled interrupt is pending (`wfi` would return at once).
pub fn interrupt_pending() -> bool {
    csrr!("sip") & csrr!("sie") != 0
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

/// Spin `n` cycles without touching memory (a wait that must leave a cache line alone).
pub fn spin_cycles(n: u64) {
    let t0 = cycles();
    while cycles().wrapping_sub(t0) < n {
        core::hint::spin_loop();
    }
}

/// Take the cache line holding `p` in a writable state now, with an atomic OR of zero that
/// changes nothing (lock held: nobody writes the line without it). For a line this hart reads
/// and then writes that another hart wrote last (an IPC partner's TCB line, the endpoint, a
/// hart's scheduler row) that is one miss instead of a read miss and then an upgrade when the
/// first store comes (~40 cycles each through the 4-core RTL's broadcast coherence). On a line
/// this hart holds already it costs about a store.
#[inline(always)]
pub fn own_line<T>(p: *const T) {
    let word = p as usize & !7;
    // SAFETY: `word` is inside the object `p` points to (aligned down to 8 bytes, objects are
    // at least 8-byte aligned) and the OR of zero leaves its value as it is.
    unsafe { core::arch::asm!("amoor.d zero, zero, ({0})", in(reg) word, options(nostack, preserves_flags)) };
}
