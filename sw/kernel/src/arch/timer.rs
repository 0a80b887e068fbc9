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

/// Per hart, on a line of its own (each hart reads its row on every exit; rows that shared a
/// line missed whenever another hart programmed its timer): when its next scheduler tick is
/// due, the earliest kernel deadline on its list (written by any hart under the kernel lock;
/// u64::MAX = none), what its timer is set to (that hart only), and whether its periodic tick
/// is off (it runs a thread that nothing else on it competes with; kernel deadlines still
/// program the timer; read by other harts to know a thread they make ready there needs an IPI,
/// nobody would see it otherwise). Read by the hart itself, also without the lock.
#[repr(align(64))]
struct HartTimer {
    next_tick: AtomicU64,
    earliest: AtomicU64,
    programmed: AtomicU64,
    tickless: AtomicBool,
}

static TIMERS: [HartTimer; MAX_HARTS] = [const {
    HartTimer {
        next_tick: AtomicU64::new(u64::MAX),
        earliest: AtomicU64::new(u64::MAX),
        programmed: AtomicU64::new(u64::MAX),
        tickless: AtomicBool::new(false),
    }
}; MAX_HARTS];

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
    TIMERS[h].programmed.store(deadline, Ordering::Relaxed);
    if uses_sstc() {
        csrw!("0x14d", deadline as usize); // stimecmp
    } else {
        let _ = sbi_defs::call::set_timer(deadline);
    }
}

fn hart() -> usize {
    crate::percpu::hart()
}

/// Start this hart's periodic tick.
pub fn start() {
    let h = hart();
    TIMERS[h].next_tick.store(super::cpu::time() + TICK_INTERVAL.load(Ordering::Relaxed), Ordering::Relaxed);
    program(h, TIMERS[h].next_tick.load(Ordering::Relaxed).min(TIMERS[h].earliest.load(Ordering::Relaxed)));
    csrs!("sie", SIE_STIE);
}

/// On the way to user mode, for hart `h` (this one, or an idle one a thread is handed to), lock
/// held: `alone` = the thread about to run is the only one `h` could run and no waiter there
/// depends on a kernel entry to be woken, so the tick would only interrupt it; otherwise the
/// tick runs. The idle loop leaves the state alone. Records the state and returns whether it
/// changed, in which case `h` must `apply_tick` before it enters user mode (it may do that
/// after letting the lock go: the timer is its own; without Sstc that is an SBI call). The
/// unchanged case inline: it is every IPC's.
#[inline(always)]
pub fn decide_tickless(h: usize, alone: bool) -> bool {
    if TIMERS[h].tickless.load(Ordering::Relaxed) == alone {
        return false;
    }
    change_tick(h, alone)
}

#[cold]
#[inline(never)]
fn change_tick(h: usize, alone: bool) -> bool {
    TIMERS[h].tickless.store(alone, Ordering::Relaxed);
    let next = if alone { u64::MAX } else { super::cpu::time() + TICK_INTERVAL.load(Ordering::Relaxed) };
    TIMERS[h].next_tick.store(next, Ordering::Relaxed);
    true
}

/// Set this hart's timer for its tick state and deadlines.
pub fn apply_tick() {
    let h = hart();
    program(h, TIMERS[h].next_tick.load(Ordering::Relaxed).min(TIMERS[h].earliest.load(Ordering::Relaxed)));
}

/// Whether hart `h` runs without its tick (see `decide_tickless`).
pub fn is_tickless(h: usize) -> bool {
    TIMERS[h].tickless.load(Ordering::Relaxed)
}

pub fn stop() {
    csrc!("sie", SIE_STIE);
}

/// A timer interrupt on this hart, after `deadline::expire` (where that runs): account the
/// tick if one is due, and set the timer for the next event (`more_due`: expire stopped at its
/// batch with deadlines left, so at once). True if a tick was due.
pub fn on_interrupt(cpu: &PerCpu, more_due: bool) -> bool {
    let h = cpu.hart;
    let now = super::cpu::time();
    let tick = now >= TIMERS[h].next_tick.load(Ordering::Relaxed);
    if tick {
        cpu.ticks.fetch_add(1, Ordering::Relaxed);
        // The next tick is relative to now, so a slow (simulated) hart never storms.
        TIMERS[h].next_tick.store(now + TICK_INTERVAL.load(Ordering::Relaxed), Ordering::Relaxed);
    }
    let next_tick = TIMERS[h].next_tick.load(Ordering::Relaxed);
    // A deadline already due was not expired here: it came due after `deadline::expire` read
    // the time, or the interrupt was taken without the kernel lock (boot checks). Come back
    // shortly rather than at once (no storm while it cannot be expired), and never leave it to
    // a tick that may be off.
    let earliest = TIMERS[h].earliest.load(Ordering::Relaxed);
    let retry = now + TICK_INTERVAL.load(Ordering::Relaxed) / 20;
    program(
        h,
        next_tick.min(if more_due {
            now
        } else if earliest > now {
            earliest
        } else {
            retry
        }),
    );
    tick
}

/// The earliest kernel deadline on hart `h`'s list changed (kernel lock held).
pub fn set_earliest(h: usize, at: u64) {
    TIMERS[h].earliest.store(at, Ordering::Relaxed);
}

pub fn earliest(h: usize) -> u64 {
    TIMERS[h].earliest.load(Ordering::Relaxed)
}

/// On this hart: if its list now has a deadline earlier than the timer is set to, bring the
/// timer forward (a later one is left alone: the early interrupt finds nothing and re-arms).
/// After arming here, and on every IPI, since another hart may have queued one here.
pub fn sync() {
    let h = hart();
    let earliest = TIMERS[h].earliest.load(Ordering::Relaxed);
    if earliest < TIMERS[h].programmed.load(Ordering::Relaxed) {
        program(h, earliest);
    }
}
