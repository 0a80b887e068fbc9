//! Instruction fetch after new code is mapped. A loader (e.g. `userlib::process`) writes a
//! program into frames through a data mapping on one hart, then maps them executable for a
//! thread that may run on any hart. RISC-V does not keep instruction fetch coherent with
//! stores: a hart is only guaranteed to fetch what was stored after it executes `fence.i`
//! (Rocket's I-cache is not coherent; QEMU does not care). So every executable mapping bumps an
//! epoch, and a hart executes `fence.i` before it next enters user mode if the epoch moved
//! since its last `fence.i`: one load and compare per return to user, a `fence.i` only after a
//! new X mapping (rare: process start). The stores precede the Page_Map call on the writing
//! hart, and the kernel lock orders that call before the other hart's return to user.
//! Not covered: a thread already running on another hart that jumps into freshly mapped code
//! without entering the kernel (user code that generates code must then synchronise itself).
use core::sync::atomic::{AtomicU64, Ordering};

/// A line of its own: every return to user mode reads it; in a line other harts write (the
/// linker had put it beside the per-entry preemption budget) the read missed (~140 cycles).
#[repr(align(64))]
struct Line<T>(T);

/// Executable mappings made so far (starts at 1, so every hart fences before its first entry).
static EPOCH: Line<AtomicU64> = Line(AtomicU64::new(1));

/// A user page was just mapped executable.
pub fn code_mapped() {
    EPOCH.0.fetch_add(1, Ordering::Release);
}

/// Before entering user mode on this hart: make instruction fetch see every store made before
/// the latest executable mapping.
#[inline(always)]
pub fn sync_before_user() {
    // The epoch this hart last synchronised with is in its `PerCpu` (`fetch_epoch`): one load
    // relative to `tp`, not an index into a table of its own.
    let seen = &crate::percpu::this().fetch_epoch;
    let now = EPOCH.0.load(Ordering::Acquire);
    if seen.load(Ordering::Relaxed) != now {
        // SAFETY: fence.i only orders this hart's instruction fetch after earlier memory writes.
        unsafe { core::arch::asm!(".option push", ".option arch, +zifencei", "fence.i", ".option pop") };
        seen.store(now, Ordering::Relaxed);
    }
}
