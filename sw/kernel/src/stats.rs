//! Kernel event counters (read by user space with DebugStat; see `abi::stat`). Per hart, so
//! counting never contends; summed when read.
use crate::percpu;
use abi::stat;
use core::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use platform::image::MAX_HARTS;

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
#[allow(clippy::declare_interior_mutable_const)]
pub const ROW: Row = Row([ZERO; stat::COUNT]);
/// One hart's counters (in its `PerCpu`) on cache lines of their own: no line bounces between
/// harts.
#[repr(align(64))]
pub struct Row([AtomicU64; stat::COUNT]);
/// Bytes of retyped objects alive (under the kernel lock, but kept atomic for simplicity).
static OBJECT_BYTES: AtomicI64 = AtomicI64::new(0);

/// Only this hart writes its row, so a plain load and store (no `amoadd`: an AMO waits for
/// the store buffer and the D$ on Rocket, and this is on every kernel entry) cannot lose a
/// count; readers on other harts see each store whole.
#[inline(always)]
pub fn count(which: usize) {
    let c = &percpu::this().stats.0[which];
    c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
}

pub fn object_bytes_made(n: u64) {
    OBJECT_BYTES.fetch_add(n as i64, Ordering::Relaxed);
}

pub fn object_bytes_freed(n: u64) {
    OBJECT_BYTES.fetch_sub(n as i64, Ordering::Relaxed);
}

/// Counter `which` summed over harts; None for an unknown number.
pub fn read(which: usize) -> Option<u64> {
    match which {
        stat::OBJECT_BYTES => Some(OBJECT_BYTES.load(Ordering::Relaxed).max(0) as u64),
        stat::LOCK_HOLD_MAX => Some(crate::lock::max_hold(false)),
        w if w == stat::LOCK_HOLD_MAX | stat::RESET => Some(crate::lock::max_hold(true)),
        stat::DEADLINES_ARMED => Some(crate::deadline::armed()),
        stat::ASYS_HANDLERS => Some(crate::asyscall::handlers()),
        stat::UINTR_SLOTS_USED | stat::UINTR_ENTRIES_USED | stat::UINTR_TABLES_USED => crate::uintr::stat(which),
        // `sched::leave_direct` leaves its switches to the fastpath counters (one per IPC
        // that switched on its hart).
        stat::SWITCHES => Some(sum(stat::SWITCHES) + sum(stat::FASTPATH_CALL) + sum(stat::FASTPATH_REPLY_RECV)),
        w if w < stat::COUNT => Some(sum(w)),
        _ => None,
    }
}

fn sum(which: usize) -> u64 {
    (0..MAX_HARTS).map(|h| percpu::of(h).stats.0[which].load(Ordering::Relaxed)).sum()
}
