//! Accesses that are allowed to fault: the trap handler resumes at a fix-up label instead of
//! panicking. Used by the boot checks and for feature probes.
use crate::percpu;
use core::sync::atomic::Ordering;

/// Try a byte store; false if it faulted.
pub fn try_write_u8(addr: usize, value: u8) -> bool {
    let ok: usize;
    let slot = &percpu::this().fault_fixup as *const _ as usize;
    // SAFETY: a fault at the store resumes at 1: (kernel_trap clears the fix-up).
    unsafe {
        core::arch::asm!(
            "la {t}, 1f",
            "sd {t}, 0({slot})",
            "li {ok}, 1",
            "sb {v}, 0({addr})",
            "sd zero, 0({slot})",
            "j 2f",
            ".balign 4",
            "1: li {ok}, 0",
            "2:",
            t = out(reg) _, slot = in(reg) slot, ok = out(reg) ok, v = in(reg) value, addr = in(reg) addr,
            options(nostack));
    }
    ok != 0
}

/// Try a byte load; None if it faulted.
pub fn try_read_u8(addr: usize) -> Option<u8> {
    let ok: usize;
    let v: usize;
    let slot = &percpu::this().fault_fixup as *const _ as usize;
    // SAFETY: as above.
    unsafe {
        core::arch::asm!(
            "la {t}, 1f",
            "sd {t}, 0({slot})",
            "li {ok}, 1",
            "lbu {v}, 0({addr})",
            "sd zero, 0({slot})",
            "j 2f",
            ".balign 4",
            "1: li {ok}, 0",
            "li {v}, 0",
            "2:",
            t = out(reg) _, slot = in(reg) slot, ok = out(reg) ok, v = out(reg) v, addr = in(reg) addr,
            options(nostack));
    }
    (ok != 0).then_some(v as u8)
}

/// A byte of the current user address space (the one in satp), with sstatus.SUM set for the
/// access; None if it is not mapped readable.
pub fn try_read_user_u8(va: usize) -> Option<u8> {
    if va >= abi::layout::USER_TOP {
        return None;
    }
    const SUM: usize = 1 << 18;
    crate::arch::csr::csrs!("sstatus", SUM);
    let v = try_read_u8(va);
    crate::arch::csr::csrc!("sstatus", SUM);
    v
}

/// `stimecmp` is usable only if the firmware set menvcfg.STCE; otherwise the access traps.
pub fn csr_readable_stimecmp() -> bool {
    let ok: usize;
    let slot = &percpu::this().fault_fixup as *const _ as usize;
    // SAFETY: as above; an illegal-instruction trap resumes at 1:.
    unsafe {
        core::arch::asm!(
            "la {t}, 1f",
            "sd {t}, 0({slot})",
            "li {ok}, 1",
            "csrr {t}, 0x14d", // stimecmp
            "sd zero, 0({slot})",
            "j 2f",
            ".balign 4",
            "1: li {ok}, 0",
            "2:",
            t = out(reg) _, slot = in(reg) slot, ok = out(reg) ok, options(nostack));
    }
    let _ = percpu::this().fault_fixup.load(Ordering::Relaxed);
    ok != 0
}
