//! S-mode CSR access (the shared `csr` macros) and the S-level bit and cause numbers.
pub(crate) use ::csr::{csrc, csrr, csrs, csrw, csrw_n};

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
