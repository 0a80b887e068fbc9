//! Bringing the other harts up through SBI HSM, and taking them down again.
use crate::arch::{self, cpu, ipi, timer};
use crate::percpu::{self, PerCpu};
use crate::{kprintln, mm};
use core::sync::atomic::Ordering;

/// Every hart, boot or secondary, ends its bring-up here.
pub fn come_online() {
    let cpu = percpu::this();
    let starts = cpu.starts.fetch_add(1, Ordering::AcqRel) + 1;
    timer::start();
    ipi::enable();
    // User code may read cycle, time and instret itself (benchmarks; the firmware allows S).
    crate::arch::csr::csrw!("scounteren", 0b111);
    crate::uintr::init_hart();
    crate::fpu::init_hart(cpu, starts > 1);
    cpu.online.store(true, Ordering::Release);
    cpu::interrupts_on();
    kprintln!(
        "[kernel] hart {} online{}",
        cpu.hart,
        match starts {
            1 if is_boot(cpu) => " (boot hart)",
            1 => "",
            _ => " (restarted)",
        }
    );
}

static BOOT_HART: spin::Once<usize> = spin::Once::new();

fn is_boot(cpu: &PerCpu) -> bool {
    *BOOT_HART.call_once(|| cpu.hart) == cpu.hart
}

pub fn start_secondaries(m: &devtree::Machine) {
    let me = cpu::hart_id();
    for h in m.harts.iter().filter(|h| h.id != me) {
        start(h.id);
    }
}

pub fn start(hart: usize) {
    let r = sbi_defs::call::hart_start(hart, arch::entry::secondary_entry_phys(), 0);
    if !r.is_ok() {
        kprintln!("[kernel] hart {hart}: SBI hart_start failed ({})", r.error);
    }
}

pub extern "C" fn secondary_main(hart: usize, _opaque: usize) -> ! {
    percpu::install(hart);
    arch::trap::install();
    mm::kspace::activate();
    come_online();
    cpu::idle()
}

/// Runs in this hart's IPI handler: leave the kernel through SBI HSM. A later `hart_start`
/// re-enters at `_secondary_start` with a fresh stack.
pub fn stop_this_hart(cpu: &PerCpu) -> ! {
    timer::stop();
    cpu.online.store(false, Ordering::Release);
    let r = sbi_defs::call::hart_stop();
    panic!("SBI hart_stop returned {}", r.error);
}
