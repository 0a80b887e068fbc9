//! S-mode CSR access by name.
macro_rules! csrr {
    ($csr:literal) => {{
        let v: usize;
        unsafe { core::arch::asm!(concat!("csrr {0}, ", $csr), out(reg) v, options(nomem, nostack)) };
        v
    }};
}
macro_rules! csrw {
    ($csr:literal, $v:expr) => {{
        let v: usize = $v;
        unsafe { core::arch::asm!(concat!("csrw ", $csr, ", {0}"), in(reg) v, options(nostack)) };
    }};
}
macro_rules! csrs {
    ($csr:literal, $v:expr) => {{
        let v: usize = $v;
        unsafe { core::arch::asm!(concat!("csrs ", $csr, ", {0}"), in(reg) v, options(nostack)) };
    }};
}
macro_rules! csrc {
    ($csr:literal, $v:expr) => {{
        let v: usize = $v;
        unsafe { core::arch::asm!(concat!("csrc ", $csr, ", {0}"), in(reg) v, options(nostack)) };
    }};
}
pub(crate) use {csrc, csrr, csrs, csrw};

pub const SSTATUS_SIE: usize = 1 << 1;
pub const SIE_SSIE: usize = 1 << 1;
pub const SIE_STIE: usize = 1 << 5;
pub const INTERRUPT: usize = 1 << 63;
pub const IRQ_S_SOFT: usize = 1;
pub const IRQ_S_TIMER: usize = 5;
pub const EXC_ILLEGAL: usize = 2;
pub const EXC_LOAD_PAGE: usize = 13;
pub const EXC_STORE_PAGE: usize = 15;
pub const EXC_LOAD_ACCESS: usize = 5;
pub const EXC_STORE_ACCESS: usize = 7;
