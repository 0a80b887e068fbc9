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
