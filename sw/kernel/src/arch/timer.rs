//! The per-hart timer: Sstc's `stimecmp` where the hart has it, SBI TIME otherwise. Each hart
//! programs it for the earlier of its next scheduler tick and the head of its kernel-deadline
//! list (`crate::deadline`), so one timer serves both.
use super::csr::*;
use crate::percpu::PerCpu;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use platform::image::MAX_HARTS;

/// 2 ms, seL4's default tick; also keeps boot checks short in the RTL simulation.
pub const TICK_HZ: u64 = 500;
static USE_SSTC: AtomicBool = AtomicBool::new(false);
static TICK_INTERVAL: AtomicU64 = AtomicU64::new(0);

#[allow(clippy::declare_interior_mutable_const)]
const NONE: AtomicU64 = AtomicU64::new(u64::MAX);
/// Per hart: when its next scheduler tick is due, the earliest kernel deadline on its list
/// (written by any hart under the kernel lock; u64::MAX = none) and what its timer is set to
/// (that hart only). Read by the hart itself, also without the lock.
static NEXT_TICK: [AtomicU64; MAX_HARTS] = [NONE; MAX_HARTS];
static EARLIEST: [AtomicU64; MAX_HARTS] = [NONE; MAX_HARTS];
static PROGRAMMED: [AtomicU64; MAX_HARTS] = [NONE; MAX_HARTS];
/// Per hart: its periodic tick is off (it runs a thread that nothing else on it competes with;
/// kernel deadlines still program the timer). Read by other harts to know a thread they make
/// ready there needs an IPI (nobody would see it otherwise).
static TICKLESS: [AtomicBool; MAX_HARTS] = [const { AtomicBool::new(false) }; MAX_HARTS];

/// Decide once, on the boot hart: Sstc only if the device tree advertises it on every hart
/// and the firmware really enabled it (menvcfg.STCE), which a probe read tells.
pub fn init(m: &devtree::Machine) -> bool {
    TICK_INTERVAL.store(m.timebase_hz / TICK_HZ, Ordering::Relaxed);
    let sstc = m.all_sstc() && crate::mm::probe::csr_readable_stimecmp();
    USE_SSTC.store(sstc, Ordering::Relaxed);
    sstc
}

/// The scheduler tick's period in timebase ticks (2 ms).
pub fn tick_interval() -> u64 {
    TICK_INTERVAL.load(Ordering::Relaxed)
}

pub fn uses_sstc() -> bool {
    USE_SSTC.load(Ordering::Relaxed)
}

fn program(h: usize, deadline: u64) {
    PROGRAMMED[h].store(deadline, Ordering::Relaxed);
    if uses_sstc() {
        csrw!("0x14d", deadline as usize); // stimecmp
    } else {
        let _ = sbi_defs::call::set_timer(deadline);
    }
}

fn hart() -> usize {
    crate::percpu::this().hart
}

/// Start this hart's periodic tick.
pub fn start() {
    let h = hart();
    NEXT_TICK[h].store(super::cpu::time() + TICK_INTERVAL.load(Ordering::Relaxed), Ordering::Relaxed);
    program(h, NEXT_TICK[h].load(Ordering::Relaxed).min(EARLIEST[h].load(Ordering::Relaxed)));
    csrs!("sie", SIE_STIE);
}

/// On the way to user mode, for hart `h` (this one, or an idle one a thread is handed to), lock
/// held: `alone` = the thread about to run is the only one `h` could run and no waiter there
/// depends on a kernel entry to be woken, so the tick would only interrupt it; otherwise the
/// tick runs. The idle loop leaves the state alone. Records the state and returns whether it
/// changed, in which case `h` must `apply_tick` before it enters user mode (it may do that
/// after letting the lock go: the timer is its own; without Sstc that is an SBI call).
pub fn decide_tickless(h: usize, alone: bool) -> bool {
    if TICKLESS[h].load(Ordering::Relaxed) == alone {
        return false;
    }
    TICKLESS[h].store(alone, Ordering::Relaxed);
    let next = if alone { u64::MAX } else { super::cpu::time() + TICK_INTERVAL.load(Ordering::Relaxed) };
    NEXT_TICK[h].store(next, Ordering::Relaxed);
    true
}

/// Set this hart's timer for its tick state and deadlines.
pub fn apply_tick() {
    let h = hart();
    program(h, NEXT_TICK[h].load(Ordering::Relaxed).min(EARLIEST[h].load(Ordering::Relaxed)));
}

/// Whether hart `h` runs without its tick (see `decide_tickless`).
pub fn is_tickless(h: usize) -> bool {
    TICKLESS[h].load(Ordering::Relaxed)
}

pub fn stop() {
    csrc!("sie", SIE_STIE);
}

/// A timer interrupt on this hart, after `deadline::expire` (where that runs): account the
/// tick if one is due, and set the timer for the next event. True if a tick was due.
pub fn on_interrupt(cpu: &PerCpu) -> bool {
    let h = cpu.hart;
    let now = super::cpu::time();
    let tick = now >= NEXT_TICK[h].load(Ordering::Relaxed);
    if tick {
        cpu.ticks.fetch_add(1, Ordering::Relaxed);
        // The next tick is relative to now, so a slow (simulated) hart never storms.
        NEXT_TICK[h].store(now + TICK_INTERVAL.load(Ordering::Relaxed), Ordering::Relaxed);
    }
    let next_tick = NEXT_TICK[h].load(Ordering::Relaxed);
    // A deadline already due was not expired here: it came due after `deadline::expire` read
    // the time, or the interrupt was taken without the kernel lock (boot checks). Come back
    // shortly rather than at once (no storm while it cannot be expired), and never leave it to
    // a tick that may be off.
    let earliest = EARLIEST[h].load(Ordering::Relaxed);
    let retry = now + TICK_INTERVAL.load(Ordering::Relaxed) / 20;
    program(h, next_tick.min(if earliest > now { earliest } else { retry }));
    tick
}

/// The earliest kernel deadline on hart `h`'s list changed (kernel lock held).
pub fn set_earliest(h: usize, at: u64) {
    EARLIEST[h].store(at, Ordering::Relaxed);
}

pub fn earliest(h: usize) -> u64 {
    EARLIEST[h].load(Ordering::Relaxed)
}

/// On this hart: if its list now has a deadline earlier than the timer is set to, bring the
/// timer forward (a later one is left alone: the early interrupt finds nothing and re-arms).
/// After arming here, and on every IPI, since another hart may have queued one here.
pub fn sync() {
    let h = hart();
    let earliest = EARLIEST[h].load(Ordering::Relaxed);
    if earliest < PROGRAMMED[h].load(Ordering::Relaxed) {
        program(h, earliest);
    }
}
