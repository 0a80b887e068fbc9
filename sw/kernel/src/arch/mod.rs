//! RISC-V specifics: entry, traps, CSRs, timer, IPIs, machine exit.
pub mod cpu;
pub mod csr;
pub mod entry;
pub mod exit;
pub mod fpu;
pub mod ipi;
pub mod timer;
pub mod trap;
