//! The poller: the task that runs smoltcp. It polls the interface (frames in, frames out,
//! socket state) whenever the NIC has received something, its interrupt came, a request
//! handler changed a socket (`kick`), or smoltcp's next deadline passed (`Interface::poll_at`:
//! a retransmission, TIME_WAIT's end, a half-open connection's limit), then updates the
//! sockets' uses; between those it sleeps. The deadline is a timer of the runtime's wheel
//! (`userlib::task::timer`), i.e. the thread's kernel deadline: no spinning, no tick. The sync
//! variant has no timers (its thread receives no U-notification): it polls on events only.
//! [`NicEvents`] is the thread park hook's view of the NIC: it wakes the poller when the
//! receive ring has frames or the NIC's vector arrived.
//!
//! The NIC's interrupts reach us one of two ways (`setup`): forwarded by the kernel (QEMU:
//! the vector bit on our U-notification, the IRQHandler Acked after the device is quiet), or
//! directly through our hart's PLIC U context (our SoC: the kernel only wakes us from Wait when
//! a source fires; we claim and complete it at the context page ourselves, no kernel entry).
use crate::local::Local;
use crate::{clock, nic, stack};
use core::future::{poll_fn, Future};
use core::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use core::task::{Poll, Waker};
use userlib::chan::{Endpoint, ThreadPark};
use userlib::task::timer::{Clock, KernelClock, Sleep, TimerHandle};

static KICK: AtomicBool = AtomicBool::new(false);
static IRQ_SEEN: AtomicBool = AtomicBool::new(false);
static POLLER: Local<Option<Waker>> = Local::new(None);
/// The NIC's vector bit on our U-notification, and its IRQHandler caps (0: none).
static IRQ_BIT: AtomicU64 = AtomicU64::new(0);
static IRQ_SLOTS: [AtomicUsize; 2] = [AtomicUsize::new(0), AtomicUsize::new(0)];
/// The PLIC U-context page when the NIC's interrupts come directly (0: forwarded).
static PLIC_CTX: AtomicUsize = AtomicUsize::new(0);
/// Direct interrupts claimed at the U context.
pub static CLAIMS: AtomicUsize = AtomicUsize::new(0);
/// Polls of the interface and interrupts acknowledged (for the exit report).
pub static POLLS: AtomicUsize = AtomicUsize::new(0);
pub static IRQS: AtomicUsize = AtomicUsize::new(0);
/// Polls started by smoltcp's deadline rather than an event.
pub static TIMED: AtomicUsize = AtomicUsize::new(0);

pub fn setup(irq_bit: u64, irq_slots: [usize; 2], plic_ctx: usize) {
    IRQ_BIT.store(irq_bit, Ordering::Relaxed);
    for (a, s) in IRQ_SLOTS.iter().zip(irq_slots) {
        a.store(s, Ordering::Relaxed);
    }
    PLIC_CTX.store(plic_ctx, Ordering::Relaxed);
}

/// Direct route: with the device quiet (its interrupt bits cleared), claim and complete
/// whatever it raised at our U context meanwhile, so the PLIC holds nothing pending that
/// would end our next Wait at once. An MMIO read (and a write per source), no kernel entry.
fn settle_direct() {
    let va = PLIC_CTX.load(Ordering::Relaxed);
    if va == 0 {
        return;
    }
    // SAFETY: the root task mapped our hart's U-context page there (NetConfig::plic_ctx_vaddr).
    let ctx = unsafe { userlib::uintr::PlicContext::new(va) };
    loop {
        let id = ctx.claim();
        if id == 0 {
            break;
        }
        ctx.complete(id);
        CLAIMS.fetch_add(1, Ordering::Relaxed);
    }
}

/// Something changed that smoltcp must act on: run the poller.
pub fn kick() {
    KICK.store(true, Ordering::Relaxed);
    wake();
}

fn wake() -> bool {
    match POLLER.with(|p| p.take()) {
        Some(w) => {
            w.wake();
            true
        }
        None => false,
    }
}

/// The NIC's interrupt came by another way than our U-notification (the sync variant's bound
/// notification): acknowledge it and run smoltcp.
pub fn irq_arrived() {
    IRQ_SEEN.store(true, Ordering::Relaxed);
    wake();
}

/// Wake the poller if it has work (the receive ring is read in memory: no kernel entry);
/// true if it was asleep and is now woken.
pub fn poke() -> bool {
    ready() && wake()
}

/// Before a sleep that only the NIC's interrupt (or a call) can end: let the device interrupt
/// us, then look at its rings again; true if the poller has work after all (interrupts are off
/// again then). The sync variant's park hook; the async one's does this as announce/check.
pub fn arm_irq_or_poke() -> bool {
    nic().interrupts(true);
    core::sync::atomic::fence(Ordering::SeqCst);
    if poke() {
        nic().interrupts(false);
        return true;
    }
    false
}

/// Running again: the rings are read directly, no interrupts needed.
pub fn quiet_irq() {
    nic().interrupts(false);
}

fn ready() -> bool {
    KICK.load(Ordering::Relaxed) || IRQ_SEEN.load(Ordering::Relaxed) || nic().has_work()
}

/// How long the poller waits for the client's SENDRECVs before an egress pass (see `run`):
/// about the client's work on four requests on the RTL.
const GATHER_US: u64 = 50;

pub async fn run(timers: Option<TimerHandle>) {
    let nic = nic();
    // The wake-up the thread's kernel deadline holds (timer ticks), if it is still ahead.
    let mut armed: Option<u64> = None;
    // Its timer on the wheel: kept from one sleep to the next while its time stays the one
    // wanted (a new one is a wheel insertion, and the old one's drop an unlink), so it may
    // fire while we run: that is an early wake-up, which finds nothing due.
    let mut sleep = core::pin::pin!(None::<Sleep>);
    // When the poller began to wait for the client's SENDRECVs (`GATHER_US`).
    let mut gathering: Option<u64> = None;
    loop {
        // Requests just handed to the client come back as SENDRECVs a little apart (it works
        // on each): their replies wait for the last of them (bounded), so one egress pass
        // sends them all. Sending the first ones at once made the last one miss the pass and
        // wait behind the next frames' ingress, a round late (each a pass over the sockets).
        if KICK.load(Ordering::Relaxed) && crate::service::BACK.load(Ordering::Relaxed) > 0 && !nic.has_work() {
            let t = clock::now_us();
            if t.saturating_sub(*gathering.get_or_insert(t)) < GATHER_US {
                Endpoint::check(&crate::SERVER);
                userlib::task::yield_now().await;
                continue;
            }
            // Not coming (a client that went quiet): stop waiting for it.
            crate::service::BACK.store(0, Ordering::Relaxed);
        }
        gathering = None;
        if IRQ_SEEN.swap(false, Ordering::Relaxed) {
            // Quiet the device first, then let the kernel unmask its source (it stays masked
            // from the moment the kernel forwarded it until this Ack).
            nic.ack_interrupt();
            for slot in IRQ_SLOTS.iter().map(|s| s.load(Ordering::Relaxed)).filter(|&s| s != 0) {
                let _ = userlib::irq::handler_ack(slot);
            }
            IRQS.fetch_add(1, Ordering::Relaxed);
        }
        // A handler changed a socket (data to send, most likely): the egress pass for sure.
        // Frames alone: only if smoltcp has something due (`Stack::poll_out`).
        let kicked = KICK.swap(false, Ordering::Relaxed);
        let now = clock::now();
        let (before, frames) = stack::with(|s| (s.stats.half_open_dropped, s.poll_in(now, nic)));
        // Kept SENDRECVs whose data came (or whose socket ended) are answered right here,
        // before the egress pass: the client works on them meanwhile.
        let answered = crate::service::answer_kept(frames);
        let (after, known) = stack::with(|s| {
            let known = s.poll_out(now, nic, !kicked, answered);
            (s.stats.half_open_dropped, known)
        });
        if after > before {
            userlib::println!("[net-server] dropped {} half-open connections ({} so far)", after - before, after);
        }
        POLLS.fetch_add(1, Ordering::Relaxed);
        // The handlers this run woke (or the client, given answers) go first: they mostly kick
        // us again at once, and then smoltcp's deadline (a pass over every socket) is not
        // needed yet. When the run worked it out already (frames only), there is nothing to
        // put off.
        if known.is_none() {
            // Answers given: the client's first SENDRECVs are most likely in the channel already
            // (it works on each answer as it comes): the dispatcher runs in this turn, not the
            // next.
            if answered {
                Endpoint::check(&crate::SERVER);
            }
            // A run that only sent (no frame came in) while the next frames already wait (the
            // client's next requests, answering what it sent): they are taken at once, not
            // after a turn of the executor; that run, which takes frames, yields as usual.
            if frames || !nic.has_work() {
                userlib::task::yield_now().await;
            }
        }
        if ready() {
            continue;
        }
        // The client's next requests (its answers to what this run handed it, most likely)
        // are waiting: the dispatcher takes them first (they mostly kick us), rather than this
        // task going to sleep and the park hook finding them.
        if Endpoint::check(&crate::SERVER) {
            userlib::task::yield_now().await;
            if ready() {
                continue;
            }
        }
        // The deadline the run worked out still stands: nothing ran smoltcp since (a handler
        // that changes a socket kicks us, and then we ran again above).
        let next = match known {
            Some(next) => next,
            None => stack::with(|s| s.deadline(clock::now())),
        };
        // smoltcp's next deadline as a timer (ticks of the timebase). One already passed
        // polls again after the other tasks had a turn, unless the NIC has no room for what
        // smoltcp wants to send (it says "now" then): that waits for a transmit to finish
        // (`has_work`), or the poller would spin until the device catches up.
        let at = if nic.tx_starved() { None } else { next.map(clock::ticks_at) };
        let now = clock::ticks();
        if at.is_some_and(|t| t <= now) {
            TIMED.fetch_add(1, Ordering::Relaxed);
            userlib::task::yield_now().await;
            continue;
        }
        // A deadline that moved later (or went away) keeps the earlier wake-up already armed:
        // moving the kernel deadline is a SetDeadline each time (a delayed ACK's timer moves
        // with every request), while a wake-up that comes early only finds nothing due here
        // and arms the right one then.
        armed = armed.filter(|&t| t > now);
        let at = match (at, armed) {
            (Some(a), Some(t)) => Some(a.min(t)),
            (a, t) => a.or(t),
        };
        armed = at;
        match timers.zip(at) {
            Some((_, t)) if sleep.as_ref().as_pin_ref().is_some_and(|s| s.deadline() == t) => {}
            want => sleep.set(want.map(|(h, t)| h.sleep_until(t))),
        }
        poll_fn(|cx| {
            if ready() {
                return Poll::Ready(());
            }
            if let Some(s) = sleep.as_mut().as_pin_mut() {
                if s.poll(cx).is_ready() {
                    TIMED.fetch_add(1, Ordering::Relaxed);
                    sleep.set(None);
                    return Poll::Ready(());
                }
            }
            POLLER.with(|p| *p = Some(cx.waker().clone()));
            Poll::Pending
        })
        .await;
    }
}

/// The NIC as an event source of the thread's park hook.
pub struct NicEvents {
    pub park: &'static ThreadPark,
}

impl Endpoint for NicEvents {
    /// About to sleep: the NIC may interrupt us again (the park hook's fence and re-check
    /// follow); while we run it does not (NAPI style: the hook and the poller read its rings).
    fn announce(&self) {
        nic().interrupts(true);
        settle_direct();
    }

    fn check(&self) -> bool {
        let bit = IRQ_BIT.load(Ordering::Relaxed);
        if self.park.take_bits(bit) != 0 {
            IRQ_SEEN.store(true, Ordering::Relaxed);
        }
        ready() && wake()
    }

    fn cancel(&self) {
        nic().interrupts(false);
    }
}

/// The poller's clock: the thread's kernel deadline as `KernelClock` sets it, but set only when
/// the thread is about to block (the park hook's announcement, after its spin), not each time
/// the timer wheel's next expiry changes. A thread that parks mostly finds work while it spins
/// (a client's request, a frame), and a SetDeadline is a kernel entry and the firmware's timer
/// (~7 k cycles on the RTL): the first park of a burst paid it while requests waited. A deadline
/// not withdrawn before a Wait may end it early: the poller then finds nothing due and sleeps
/// again (after the right one is set).
pub struct LazyClock {
    clock: KernelClock,
    /// The wake-up the wheel asked for last (0: none), and whether the kernel has it yet.
    want: AtomicU64,
    stale: AtomicBool,
}

impl LazyClock {
    pub const fn new(clock: KernelClock) -> LazyClock {
        LazyClock { clock, want: AtomicU64::new(0), stale: AtomicBool::new(false) }
    }
}

impl Clock for LazyClock {
    fn now(&self) -> u64 {
        self.clock.now()
    }

    fn arm(&self, at: Option<u64>) {
        self.want.store(at.unwrap_or(0), Ordering::Relaxed);
        self.stale.store(true, Ordering::Relaxed);
    }
}

impl Endpoint for LazyClock {
    /// About to block: the kernel gets the wake-up the wheel wants (before the park hook's
    /// last look at the rings and its Wait).
    fn announce(&self) {
        if self.stale.swap(false, Ordering::Relaxed) {
            let at = self.want.load(Ordering::Relaxed);
            self.clock.arm((at != 0).then_some(at));
        }
    }

    fn check(&self) -> bool {
        false
    }

    fn cancel(&self) {}
}
