//! Region markers for the cycle-accurate simulation (hw/sim/README.md, "Profiler").
//!
//! `begin::<ID>()` retires `slti x0, x0, ID` and `end::<ID>()` retires `sltiu x0, x0, ID`: HINT
//! encodings the ISA sets aside for custom use, so they change no state on any RISC-V core (QEMU,
//! the board) and cost one issue slot. The Verilator harness recognises them in the write-back
//! stage and counts, per hart and region, how often and how many cycles lay between a begin and
//! the next end (printed at exit; `+profile-region=ID` profiles only those cycles). Works in any
//! privilege mode, so user programs and the kernel can use the same markers.
#![no_std]

/// Region ids are 0..=MAX_ID (the HINT's 12-bit immediate, kept non-negative).
pub const MAX_ID: u16 = 2047;

/// Start region `ID` on this hart (a begin of an open region restarts it).
#[inline(always)]
pub fn begin<const ID: u16>() {
    const { assert!(ID <= MAX_ID, "region id out of range") };
    // Not `nomem`: the compiler must keep the marker in place among the memory accesses it brackets.
    #[cfg(target_arch = "riscv64")]
    // SAFETY: a HINT: no register, memory or CSR changes.
    unsafe {
        core::arch::asm!("slti x0, x0, {id}", id = const ID, options(nostack, preserves_flags))
    }
}

/// End region `ID` on this hart (an end without a begin is ignored).
#[inline(always)]
pub fn end<const ID: u16>() {
    const { assert!(ID <= MAX_ID, "region id out of range") };
    #[cfg(target_arch = "riscv64")]
    // SAFETY: a HINT, as in `begin`.
    unsafe {
        core::arch::asm!("sltiu x0, x0, {id}", id = const ID, options(nostack, preserves_flags))
    }
}

/// `f` bracketed as region `ID`.
#[inline(always)]
pub fn region<const ID: u16, R>(f: impl FnOnce() -> R) -> R {
    begin::<ID>();
    let r = f();
    end::<ID>();
    r
}
