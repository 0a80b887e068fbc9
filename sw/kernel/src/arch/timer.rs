//! The per-hart tick: Sstc's `stimecmp` where the hart has it, SBI TIME otherwise.
use super::csr::*;
use crate::percpu::PerCpu;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// 2 ms, seL4's default tick; also keeps boot checks short in the RTL simulation.
pub const TICK_HZ: u64 = 500;
static USE_SSTC: AtomicBool = AtomicBool::new(false);
static TICK_INTERVAL: AtomicU64 = AtomicU64::new(0);

/// Decide once, on the boot hart: Sstc only if the device tree advertises it on every hart
/// and the firmware really enabled it (menvcfg.STCE), which a probe read tells.
pub fn init(m: &devtree::Machine) -> bool {
    TICK_INTERVAL.store(m.timebase_hz / TICK_HZ, Ordering::Relaxed);
    let sstc = m.all_sstc() && crate::mm::probe::csr_readable_stimecmp();
    USE_SSTC.store(sstc, Ordering::Relaxed);
    sstc
}

pub fn uses_sstc() -> bool {
    USE_SSTC.load(Ordering::Relaxed)
}

fn program(deadline: u64) {
    if uses_sstc() {
        csrw!("0x14d", deadline as usize); // stimecmp
    } else {
        let _ = sbi_defs::call::set_timer(deadline);
    }
}

/// Start this hart's periodic tick.
pub fn start() {
    program(super::cpu::time() + TICK_INTERVAL.load(Ordering::Relaxed));
    csrs!("sie", SIE_STIE);
}

pub fn stop() {
    csrc!("sie", SIE_STIE);
}

pub fn on_interrupt(cpu: &PerCpu) {
    cpu.ticks.fetch_add(1, Ordering::Relaxed);
    // The next deadline is relative to now, so a slow (simulated) hart never storms.
    program(super::cpu::time() + TICK_INTERVAL.load(Ordering::Relaxed));
}
