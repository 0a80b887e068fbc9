//! Preemption points (as seL4's): long invocations charge their work to a per-entry budget
//! and, when it runs out with their state consistent, answer `Error::Preempted`. The system
//! call layer then restarts the call (the thread re-executes its `ecall`), so the kernel lock
//! is released, pending interrupts are taken and other harts get their turn before the work
//! goes on. What is charged: a unit per capability a Revoke or a Delete deletes (the last cap
//! of a CNode or TCB has what the object holds deleted first, depth first,
//! `object::prepare_delete`), a unit per 64 slots looked at, a unit per 4 KiB a Retype zeroes,
//! a unit per thread restarted when the last cap of the endpoint or notification it waits on
//! goes; TCB Configure/SetSpace empty an old CSpace root that is a CNode's last cap the same
//! way before replacing it.
//!
//! Not yet bounded this way: the finalisation of an empty CNode (a scan of its slots: about
//! 2^radix loads, which the Untyped's size bounds).
use crate::kcell::KCell;
use platform::image::MAX_HARTS;

/// Units of work per kernel entry: 64 deletions or 256 KiB zeroed.
pub const BUDGET: u32 = 64;
/// Bytes a Retype zeroes per unit.
pub const ZERO_CHUNK: u64 = 4096;

/// A line per hart: every kernel entry writes its own, which must not evict what other harts
/// read (it shared a line with the I-cache epoch every exit reads).
#[repr(align(64))]
struct Left(u32);
static LEFT: KCell<[Left; MAX_HARTS]> = KCell::new([const { Left(BUDGET) }; MAX_HARTS]);

fn left() -> &'static mut u32 {
    // SAFETY: each hart touches only its own entry, under the kernel lock.
    unsafe { &mut LEFT.get()[crate::percpu::this().hart].0 }
}

/// A new kernel entry from user mode: a full budget.
pub fn reset() {
    *left() = BUDGET;
}

/// Charge `units`; false once the budget is spent (the caller stops at a consistent point).
pub fn charge(units: u32) -> bool {
    let l = left();
    *l = l.saturating_sub(units);
    *l > 0
}
