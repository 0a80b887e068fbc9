//! CSR access by name: `csrr!("mstatus")`, `csrw!("stvec", v)`, `csrs!`/`csrc!` (set/clear
//! bits). The name is pasted into the instruction, so any name or number the assembler knows
//! works in any privilege mode the caller runs in.
#![no_std]

#[macro_export]
macro_rules! csrr {
    ($csr:literal) => {{
        let v: usize;
        unsafe { core::arch::asm!(concat!("csrr {0}, ", $csr), out(reg) v, options(nomem, nostack)) };
        v
    }};
}

#[macro_export]
macro_rules! csrw {
    ($csr:literal, $v:expr) => {{
        let v: usize = $v;
        unsafe { core::arch::asm!(concat!("csrw ", $csr, ", {0}"), in(reg) v, options(nostack)) };
    }};
}

#[macro_export]
macro_rules! csrs {
    ($csr:literal, $v:expr) => {{
        let v: usize = $v;
        unsafe { core::arch::asm!(concat!("csrs ", $csr, ", {0}"), in(reg) v, options(nostack)) };
    }};
}

#[macro_export]
macro_rules! csrc {
    ($csr:literal, $v:expr) => {{
        let v: usize = $v;
        unsafe { core::arch::asm!(concat!("csrc ", $csr, ", {0}"), in(reg) v, options(nostack)) };
    }};
}

/// The same by CSR number, a constant expression (`csrr_n!(platform::csr::UTVEC)`): for CSRs the
/// assembler has no name for, such as the user-interrupt ones, numbered in one place.
#[macro_export]
macro_rules! csrr_n {
    ($n:expr) => {{
        let v: usize;
        unsafe { core::arch::asm!("csrr {0}, {n}", out(reg) v, n = const $n, options(nomem, nostack)) };
        v
    }};
}

#[macro_export]
macro_rules! csrw_n {
    ($n:expr, $v:expr) => {{
        let v: usize = $v;
        unsafe { core::arch::asm!("csrw {n}, {0}", in(reg) v, n = const $n, options(nostack)) };
    }};
}

#[macro_export]
macro_rules! csrs_n {
    ($n:expr, $v:expr) => {{
        let v: usize = $v;
        unsafe { core::arch::asm!("csrs {n}, {0}", in(reg) v, n = const $n, options(nostack)) };
    }};
}

#[macro_export]
macro_rules! csrc_n {
    ($n:expr, $v:expr) => {{
        let v: usize = $v;
        unsafe { core::arch::asm!("csrc {n}, {0}", in(reg) v, n = const $n, options(nostack)) };
    }};
}
