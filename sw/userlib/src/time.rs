//! Time: the timebase counter (CLINT `mtime`), in ticks of `BootInfo::timebase_hz`
//! (platform.toml's `clock.timebase_hz` on our SoC, the device tree's everywhere).
//!
//! Read with `rdtime` unless the process has the CLINT's mtime page mapped (read-only: the
//! kernel hands out that one page, `BootInfo::timer_frame`) and said so with [`use_mtime`]:
//! then it is a load. On cores without a `time` CSR (Rocket) `rdtime` traps to the firmware,
//! which emulates it (~400 cycles); the load is an uncached read of the same counter.

#[cfg(target_arch = "riscv64")]
static MTIME: core::sync::atomic::AtomicUsize = core::sync::atomic::AtomicUsize::new(0);

/// Read the timebase at `va` from now on (0: `rdtime` again).
///
/// # Safety
/// `va` must stay mapped, readable and 8-byte aligned, and hold the CLINT's `mtime`.
#[cfg(target_arch = "riscv64")]
pub unsafe fn use_mtime(va: usize) {
    MTIME.store(va, core::sync::atomic::Ordering::Relaxed);
}

/// The timebase counter now.
#[cfg(target_arch = "riscv64")]
#[inline(always)]
pub fn now() -> u64 {
    let va = MTIME.load(core::sync::atomic::Ordering::Relaxed);
    if va != 0 {
        // SAFETY: `use_mtime`'s contract; a 64-bit load of mtime is one access on RV64.
        return unsafe { (va as *const u64).read_volatile() };
    }
    let t: u64;
    // SAFETY: reads a counter (scounteren allows it; the firmware emulates it where absent).
    unsafe { core::arch::asm!("rdtime {0}", out(reg) t, options(nomem, nostack)) };
    t
}

#[cfg(not(target_arch = "riscv64"))]
pub fn now() -> u64 {
    unimplemented!("the timebase exists only on the RISC-V target; host tests supply a Clock")
}

/// Converts between timebase ticks and time units at a known frequency.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timebase {
    pub hz: u64,
}

impl Timebase {
    pub const fn new(hz: u64) -> Timebase {
        Timebase { hz }
    }

    /// Ticks in `us` microseconds, rounded up (a sleep never ends early).
    pub const fn from_micros(&self, us: u64) -> u64 {
        (us as u128 * self.hz as u128).div_ceil(1_000_000) as u64
    }

    pub const fn from_millis(&self, ms: u64) -> u64 {
        self.from_micros(ms.saturating_mul(1000))
    }

    /// Whole microseconds in `ticks`.
    pub const fn to_micros(&self, ticks: u64) -> u64 {
        (ticks as u128 * 1_000_000 / self.hz as u128) as u64
    }
}
