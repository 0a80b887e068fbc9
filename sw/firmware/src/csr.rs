//! CSR access by name, plus probes that survive CSRs the hardware lacks.

/// Write `$v` to a CSR that may not exist and read it back. Returns `None` if the access
/// trapped: a temporary `mtvec` points just past the access, so an illegal-instruction trap
/// lands on the "failed" path in M-mode without any handler. M-mode runs with MIE = 0, so only
/// the probed instruction can trap here.
macro_rules! probe_write {
    ($csr:literal, $v:expr) => {{
        let value: usize = $v;
        let ok: usize;
        let back: usize;
        unsafe {
            core::arch::asm!(
                "csrr {saved}, mtvec",
                "la {tmp}, 1f",
                "csrw mtvec, {tmp}",
                "li {ok}, 1",
                concat!("csrw ", $csr, ", {value}"),
                concat!("csrr {back}, ", $csr),
                "j 2f",
                ".balign 4",
                "1: li {ok}, 0",
                "li {back}, 0",
                "2: csrw mtvec, {saved}",
                saved = out(reg) _, tmp = out(reg) _, ok = out(reg) ok, back = out(reg) back,
                value = in(reg) value, options(nostack));
        }
        (ok != 0).then_some(back)
    }};
}

/// Read a CSR that may not exist (`None` if it trapped).
macro_rules! probe_read {
    ($csr:literal) => {{
        let ok: usize;
        let v: usize;
        unsafe {
            core::arch::asm!(
                "csrr {saved}, mtvec",
                "la {tmp}, 1f",
                "csrw mtvec, {tmp}",
                "li {ok}, 1",
                concat!("csrr {v}, ", $csr),
                "j 2f",
                ".balign 4",
                "1: li {ok}, 0",
                "li {v}, 0",
                "2: csrw mtvec, {saved}",
                saved = out(reg) _, tmp = out(reg) _, ok = out(reg) ok, v = out(reg) v, options(nostack));
        }
        (ok != 0).then_some(v)
    }};
}

pub(crate) use ::csr::{csrc, csrr, csrs, csrw};
pub(crate) use {probe_read, probe_write};

// mstatus fields
pub const MSTATUS_SIE: usize = 1 << 1;
pub const MSTATUS_MIE: usize = 1 << 3;
pub const MSTATUS_SPIE: usize = 1 << 5;
pub const MSTATUS_MPIE: usize = 1 << 7;
pub const MSTATUS_SPP: usize = 1 << 8;
pub const MSTATUS_MPP_MASK: usize = 3 << 11;
pub const MSTATUS_MPP_S: usize = 1 << 11;
pub const MSTATUS_MPP_M: usize = 3 << 11;
pub const MSTATUS_FS_MASK: usize = 3 << 13;
pub const MSTATUS_XS_INITIAL: usize = 1 << 15;

// interrupt bits (mip/mie/mideleg)
pub const IRQ_SSI: usize = 1 << 1;
pub const IRQ_MSI: usize = 1 << 3;
pub const IRQ_STI: usize = 1 << 5;
pub const IRQ_MTI: usize = 1 << 7;
pub const IRQ_SEI: usize = 1 << 9;
pub const IRQ_USI: usize = 1 << platform::csr::USIP_BIT;
pub const IRQ_UTI: usize = 1 << platform::csr::UTIP_BIT;
pub const IRQ_UEI: usize = 1 << platform::csr::UEIP_BIT;

// exception causes
pub const EXC_INST_MISALIGNED: usize = 0;
pub const EXC_INST_ACCESS: usize = 1;
pub const EXC_ILLEGAL: usize = 2;
pub const EXC_BREAKPOINT: usize = 3;
pub const EXC_LOAD_MISALIGNED: usize = 4;
pub const EXC_LOAD_ACCESS: usize = 5;
pub const EXC_STORE_MISALIGNED: usize = 6;
pub const EXC_STORE_ACCESS: usize = 7;
pub const EXC_ECALL_U: usize = 8;
pub const EXC_ECALL_S: usize = 9;
pub const EXC_INST_PAGE: usize = 12;
pub const EXC_LOAD_PAGE: usize = 13;
pub const EXC_STORE_PAGE: usize = 15;

pub const INTERRUPT: usize = 1 << 63;

/// Read a doubleword at an S-mode virtual address the way S-mode would see it (MPRV: S-mode
/// translation and PMP), for SBI calls that pass pointers. `None` if the access faults; a
/// temporary `mtvec` turns the fault into that answer. Call only from a trap taken from S-mode
/// (mstatus.MPP = S). A fault here is a trap from M-mode, which overwrites mstatus.MPP/MPIE
/// and mepc: mstatus is restored whole below, mepc comes back from the trap frame.
pub fn read_smode_u64(addr: usize) -> Option<u64> {
    const MPRV: usize = 1 << 17;
    let ok: usize;
    let v: usize;
    // SAFETY: MPRV is set only around the one load and always cleared again.
    unsafe {
        core::arch::asm!(
            "csrr {saved}, mtvec",
            "csrr {status}, mstatus",
            "la {tmp}, 1f",
            "csrw mtvec, {tmp}",
            "li {ok}, 1",
            "csrs mstatus, {mprv}",
            "ld {v}, 0({addr})",
            "j 2f",
            ".balign 4",
            "1: li {ok}, 0",
            "li {v}, 0",
            "2: csrw mstatus, {status}",
            "csrw mtvec, {saved}",
            saved = out(reg) _, status = out(reg) _, tmp = out(reg) _, ok = out(reg) ok, v = out(reg) v,
            addr = in(reg) addr, mprv = in(reg) MPRV, options(nostack));
    }
    (ok != 0).then_some(v as u64)
}
