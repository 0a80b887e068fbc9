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

/// `IDLE_TIME`'s word in a hart's row: during an idle pass `IDLE_MARK | (pass start - total
/// so far)`, else the total. One word, written only by its hart: a reader on another hart sees
/// either state whole and adds the pass in progress itself (a hart asleep for the whole window
/// still shows it idle).
const IDLE_MARK: u64 = 1 << 63;

/// Idle time is measured only once asked for (`IDLE_TIME | RESET`, `start_idle_timing`): on
/// our cores `time` traps to the firmware (a few hundred cycles), and the end of an idle pass
/// is on the path of every hand-over to an idle hart, so the IPC benchmarks do not pay it.
static IDLE_TIMED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

/// `IDLE_TIME | RESET` (debug capability checked by the caller): idle passes are timed from
/// now on. Every other hart is kicked out of its idle pass, so one asleep since before this
/// starts a timed pass at once instead of counting nothing until its next wake-up.
pub fn start_idle_timing() {
    if IDLE_TIMED.swap(true, Ordering::SeqCst) {
        return;
    }
    let me = percpu::this().hart;
    for h in (0..MAX_HARTS).filter(|&h| h != me && percpu::of(h).online.load(Ordering::Acquire)) {
        crate::arch::ipi::send(h, crate::arch::ipi::Msg::Kick);
    }
}

/// The idle loop starts watching or sleeping with nothing to do (one time read, if timed).
#[inline(always)]
pub fn idle_begin() {
    if !IDLE_TIMED.load(Ordering::Relaxed) {
        return;
    }
    let c = &percpu::this().stats.0[stat::IDLE_TIME];
    let total = c.load(Ordering::Relaxed);
    c.store(IDLE_MARK | crate::arch::cpu::time().wrapping_sub(total), Ordering::Relaxed);
}

/// ... and stops (one time read): the pass is added to the total.
#[inline(always)]
pub fn idle_end() {
    let c = &percpu::this().stats.0[stat::IDLE_TIME];
    let w = c.load(Ordering::Relaxed);
    if w & IDLE_MARK != 0 {
        c.store(crate::arch::cpu::time().wrapping_sub(w & !IDLE_MARK), Ordering::Relaxed);
    }
}

fn idle_time(h: usize) -> u64 {
    let w = percpu::of(h).stats.0[stat::IDLE_TIME].load(Ordering::Relaxed);
    if w & IDLE_MARK != 0 {
        crate::arch::cpu::time().saturating_sub(w & !IDLE_MARK)
    } else {
        w
    }
}

/// DebugStat: counter `which` summed over harts, or with `stat::ONE_HART` hart index `index`'s
/// alone; None for an unknown number or hart.
pub fn read_debug(which: usize, index: usize) -> Option<u64> {
    if which & stat::ONE_HART == 0 {
        return read(which);
    }
    let h = crate::sched::hart_of_index(index)?;
    match which & !stat::ONE_HART {
        stat::IDLE_TIME => Some(idle_time(h)),
        stat::OBJECT_BYTES
        | stat::LOCK_HOLD_MAX
        | stat::DEADLINES_ARMED
        | stat::ASYS_HANDLERS
        | stat::UINTR_SLOTS_USED
        | stat::UINTR_ENTRIES_USED
        | stat::UINTR_TABLES_USED
        | stat::CONSOLE_QUEUED
        | stat::CONSOLE_WRITTEN
        | stat::CONSOLE_DROPPED
        | stat::CONSOLE_WRITTEN_LOCKED => None,
        w if w < stat::COUNT => Some(percpu::of(h).stats.0[w].load(Ordering::Relaxed)),
        _ => None,
    }
}

/// Counter `which` summed over harts; None for an unknown number.
pub fn read(which: usize) -> Option<u64> {
    match which {
        w if w == stat::IDLE_TIME | stat::RESET => {
            start_idle_timing();
            read(stat::IDLE_TIME)
        }
        stat::IDLE_TIME => {
            Some((0..MAX_HARTS).filter(|&h| percpu::of(h).online.load(Ordering::Acquire)).map(idle_time).sum())
        }
        stat::OBJECT_BYTES => Some(OBJECT_BYTES.load(Ordering::Relaxed).max(0) as u64),
        stat::LOCK_HOLD_MAX => Some(crate::lock::max_hold(false)),
        w if w == stat::LOCK_HOLD_MAX | stat::RESET => Some(crate::lock::max_hold(true)),
        stat::DEADLINES_ARMED => Some(crate::deadline::armed()),
        stat::ASYS_HANDLERS => Some(crate::asyscall::handlers()),
        stat::CONSOLE_QUEUED | stat::CONSOLE_WRITTEN | stat::CONSOLE_DROPPED | stat::CONSOLE_WRITTEN_LOCKED => {
            crate::console::stat(which)
        }
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
