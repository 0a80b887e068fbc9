//! The big kernel lock (as seL4 SMP): every kernel entry from user mode, and the idle loop's
//! look at the ready queues, runs under it. A ticket lock, so harts are served in order.
//!
//! A waiter that has spun long (`SPIN_BEFORE_SLEEP`) sleeps in `wfi` and the hart that hands
//! the lock to its ticket wakes it with an IPI. On real harts this almost never happens (holds
//! are bounded far below the spin), but under QEMU with more vCPUs than free host cores a pure
//! ticket lock convoys: each hand-over waits until the host schedules the one vCPU whose ticket
//! is next while the others burn the host cores spinning; kernel entries fell to a few hundred
//! per second on a 2-core host. Sleeping waiters give those cores to the holder and the next.
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use platform::image::MAX_HARTS;

/// Starts a cache line: the holder's own bookkeeping (`HOLD`) and the sleepers' mask must not
/// invalidate the line the waiters are reading.
#[repr(align(64))]
struct Line<T>(T);
impl<T> core::ops::Deref for Line<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// The two ticket counters on one line: arrivals `amoadd` `next`, waiters spin on `serving`.
/// Apart, a hart that takes the lock after another (each side of a cross-hart IPC) missed on
/// both, ~50 cycles each on the 4-core RTL; together the arrival's AMO brings `serving` along.
/// The cost, an arrival disturbing the spinners' line, is only paid when there are spinners.
#[repr(C)]
struct Tickets {
    next: AtomicUsize,
    serving: AtomicUsize,
}
static TICKETS: Line<Tickets> = Line(Tickets { next: AtomicUsize::new(0), serving: AtomicUsize::new(0) });
/// Written by the holder only: the cycle count when the lock was taken and the longest hold
/// since the last reset (`abi::stat::LOCK_HOLD_MAX`): how long one hart can keep every other
/// out of the kernel. The hold times are measured only once asked for (`timed`, set by the
/// first read with reset): two cycle reads, a compare and a store to this shared line on every
/// kernel entry otherwise. Who holds the lock is each hart's own flag (`PerCpu::holds_lock`):
/// a holder word here was a store, so a miss, on every lock hand-over between harts.
struct Hold {
    timed: AtomicBool,
    since: AtomicU64,
    max: AtomicU64,
}
static HOLD: Line<Hold> =
    Line(Hold { timed: AtomicBool::new(false), since: AtomicU64::new(0), max: AtomicU64::new(0) });

/// Spin iterations (a load each) before a waiter sleeps: ~10^5-10^6 cycles on Rocket, several
/// worst-case lock holds; well under a host scheduler slice under QEMU.
const SPIN_BEFORE_SLEEP: u32 = 20_000;
const NOT_SLEEPING: usize = usize::MAX;
/// Per hart, the ticket it sleeps waiting for; and a mask of sleeping harts, so `release`
/// costs one load when nobody sleeps.
static SLEEPS_ON: [AtomicUsize; MAX_HARTS] = [const { AtomicUsize::new(NOT_SLEEPING) }; MAX_HARTS];
static SLEEPERS: Line<AtomicUsize> = Line(AtomicUsize::new(0));

pub fn acquire() {
    let ticket = TICKETS.next.fetch_add(1, Ordering::Relaxed);
    let mut spins = 0;
    while TICKETS.serving.load(Ordering::Acquire) != ticket {
        // The holder may be waiting for this hart to leave a freed VSpace root.
        crate::mm::root_retire::answer(crate::percpu::this());
        spins += 1;
        if spins == SPIN_BEFORE_SLEEP {
            sleep_until_served(ticket);
            spins = 0;
        }
        core::hint::spin_loop();
    }
    crate::percpu::this().holds_lock.store(true, Ordering::Relaxed);
    if HOLD.timed.load(Ordering::Relaxed) {
        HOLD.since.store(crate::arch::cpu::cycles(), Ordering::Relaxed);
    }
}

#[inline(always)]
pub fn release() {
    debug_assert!(held());
    if HOLD.timed.load(Ordering::Relaxed) {
        let held_for = crate::arch::cpu::cycles().wrapping_sub(HOLD.since.load(Ordering::Relaxed));
        // Only the holder writes; a plain compare is enough.
        if held_for > HOLD.max.load(Ordering::Relaxed) {
            HOLD.max.store(held_for, Ordering::Relaxed);
        }
    }
    crate::percpu::this().holds_lock.store(false, Ordering::Relaxed);
    // SeqCst here and in `sleep_until_served` (Dekker): either the waiter sees the new `serving`
    // and does not sleep, or we see it in SLEEPERS and wake it.
    let next = TICKETS.serving.fetch_add(1, Ordering::SeqCst) + 1;
    if SLEEPERS.load(Ordering::SeqCst) != 0 {
        wake_holder_of(next);
    }
}

/// Sleep until `release` hands `ticket` over (or any interrupt: the caller re-checks). Only
/// with the software interrupt enabled in `sie`, which the wake-up IPI needs to end `wfi`.
#[cold]
fn sleep_until_served(ticket: usize) {
    use crate::arch::{cpu, csr::*};
    let h = cpu::hart_id();
    if h >= MAX_HARTS || csrr!("sie") & SIE_SSIE == 0 {
        return;
    }
    SLEEPS_ON[h].store(ticket, Ordering::SeqCst);
    SLEEPERS.fetch_or(1 << h, Ordering::SeqCst);
    if TICKETS.serving.load(Ordering::SeqCst) != ticket {
        // The wake-up stays pending in sip and is taken (an empty mailbox) on the way out.
        cpu::wait_for_interrupt();
    }
    SLEEPERS.fetch_and(!(1 << h), Ordering::SeqCst);
    SLEEPS_ON[h].store(NOT_SLEEPING, Ordering::SeqCst);
}

#[cold]
fn wake_holder_of(ticket: usize) {
    for (h, t) in SLEEPS_ON.iter().enumerate() {
        if t.load(Ordering::SeqCst) == ticket {
            crate::arch::ipi::send(h, crate::arch::ipi::Msg::Wake);
        }
    }
}

/// The longest hold so far (cycles of the holding hart), optionally starting over; the first
/// reset starts the measuring (0 until then). Called by the holder.
pub fn max_hold(reset: bool) -> u64 {
    if reset {
        if !HOLD.timed.load(Ordering::Relaxed) {
            // This hold counts from here: `release` must not see a `since` from before.
            HOLD.since.store(crate::arch::cpu::cycles(), Ordering::Relaxed);
            HOLD.timed.store(true, Ordering::Relaxed);
        }
        HOLD.max.swap(0, Ordering::Relaxed)
    } else {
        HOLD.max.load(Ordering::Relaxed)
    }
}

/// This hart holds the lock (for assertions).
pub fn held() -> bool {
    crate::arch::cpu::hart_id() != usize::MAX && crate::percpu::this().holds_lock.load(Ordering::Relaxed)
}
