//! Kernel deadlines (`abi::deadline`, system call SetDeadline): a thread arms one absolute time
//! and a vector; when the time passes, the kernel raises that vector on the thread's own
//! U-notification receiver slot, the way a Signal does (the kernel as sender). The user-space
//! timer wheel (`userlib::task::timer`) keeps its earliest timer armed here and blocks in
//! U-notification Wait.
//!
//! Resources: one deadline per thread, stored in its TCB (no pool to exhaust: the memory is the
//! TCB's, charged to an Untyped). Each hart keeps its armed threads in a queue ordered by time
//! (then by arming order), and programs its timer (SBI TIME or Sstc, `arch::timer`) for the
//! earlier of its next scheduler tick and the queue's first. The queue is an AVL tree linked
//! through the TCBs (`timeq`): arming, cancelling and expiring cost O(log n) in the deadlines
//! armed on the hart, whatever their times (a sorted list, as seL4 MCS's release queue is, lets
//! a thread that arms one deadline per thread it owns hold the lock for a walk of them all). A
//! timer interrupt fires at most `EXPIRE_BATCH` deadlines and comes back at once for the rest.
//!
//! Life cycle: arming replaces the previous deadline; a time already past fires at once.
//! Suspend takes the thread off its hart's list but keeps the deadline in the TCB; Resume puts
//! it back (firing it if it passed meanwhile), so a suspended thread costs its hart nothing and
//! a resumed one still wakes. SetAffinity moves it to the new hart's list. Deleting the thread,
//! or unbinding its U-notification, cancels it; if its receiver slot goes through a withdrawn
//! UintrControl grant, the deadline fires into nothing at its time. All of it runs under the
//! kernel lock.
use crate::arch::{self, ipi::Msg};
use crate::ipc::{A0, A1};
use crate::kcell::KCell;
use crate::object::tcb::Tcb;
use crate::{percpu, stats};
use abi::{deadline, error, stat, uintr::MAX_VECTOR};
use platform::image::MAX_HARTS;

/// A thread's deadline (in its TCB).
#[derive(Clone, Copy, Debug)]
pub struct Armed {
    /// Absolute time in timebase ticks; 0 = none.
    pub at: u64,
    pub vector: u8,
    /// On hart `hart`'s queue (false while the thread is suspended with a deadline kept).
    pub queued: bool,
    pub hart: u8,
    /// Arming order: equal times expire in it (and keys stay distinct).
    pub seq: u64,
    pub links: timeq::Links<Tcb>,
}

impl Default for Armed {
    fn default() -> Armed {
        Armed { at: 0, vector: 0, queued: false, hart: 0, seq: 0, links: timeq::Links::new() }
    }
}

// SAFETY: the links are the TCB's own, and the key (time, arming order) is set before the
// thread is queued and not changed while it is.
unsafe impl timeq::Node for Tcb {
    fn links(&self) -> &timeq::Links<Tcb> {
        &self.deadline.links
    }
    fn links_mut(&mut self) -> &mut timeq::Links<Tcb> {
        &mut self.deadline.links
    }
    fn key(&self) -> (u64, u64) {
        (self.deadline.at, self.deadline.seq)
    }
}

/// One hart's armed threads, earliest first.
type Queue = timeq::Tree<Tcb>;

/// Deadlines one timer interrupt fires at most (the rest: the timer comes back at once).
const EXPIRE_BATCH: usize = 16;

static LISTS: KCell<[Queue; MAX_HARTS]> = KCell::new([Queue::new(); MAX_HARTS]);
/// Arming order (kernel lock held).
static ARMED_SEQ: KCell<u64> = KCell::new(0);

fn lists() -> &'static mut [Queue; MAX_HARTS] {
    debug_assert!(crate::lock::held());
    // SAFETY: only under the kernel lock.
    unsafe { LISTS.get() }
}

fn this_hart() -> usize {
    percpu::this().hart
}

// ---- the system call -----------------------------------------------------------------------

/// SetDeadline(a0 = time or CANCEL, a1 = vector) by `me`: a0 = 0 or an error code, a1 = the
/// deadline replaced (0 = none) or the error's detail.
pub fn set_deadline(me: &mut Tcb) {
    let (at, vector) = (me.ctx.regs[A0] as u64, me.ctx.regs[A1]);
    let (code, detail) = match arm(me, at, vector) {
        Ok(prev) => (error::NO_ERROR, prev),
        Err(e) => e,
    };
    me.ctx.regs[A0] = code;
    me.ctx.regs[A1] = detail as usize;
}

fn arm(t: &mut Tcb, at: u64, vector: usize) -> Result<u64, (usize, u64)> {
    if at == deadline::CANCEL as u64 {
        return Ok(cancel(t));
    }
    if vector > MAX_VECTOR {
        return Err((error::INVALID_ARGUMENT, 1));
    }
    if t.uintr.slot == 0 {
        return Err((error::ILLEGAL_OPERATION, 0));
    }
    let now = arch::cpu::time();
    let latest = now.saturating_add(deadline::MAX_AHEAD);
    if at > latest {
        return Err((error::RANGE_ERROR, latest));
    }
    let prev = cancel(t);
    t.deadline.at = at;
    t.deadline.vector = vector as u8;
    if at <= now {
        fire(t);
    } else {
        enqueue(t, t.affinity);
    }
    Ok(prev)
}

// ---- hooks for the thread's life cycle -------------------------------------------------------

/// Disarm; returns the deadline it had (0 = none). Thread deleted, receiver slot gone.
pub fn cancel(t: &mut Tcb) -> u64 {
    unlink(t);
    core::mem::replace(&mut t.deadline.at, 0)
}

/// Suspended: off its hart's list, kept in the TCB.
pub fn on_suspend(t: &mut Tcb) {
    unlink(t);
}

/// Resumed: back on its hart's list, or fired if it passed while suspended.
pub fn on_resume(t: &mut Tcb) {
    if t.deadline.at == 0 || t.deadline.queued {
        return;
    }
    if t.deadline.at <= arch::cpu::time() {
        fire(t);
    } else {
        enqueue(t, t.affinity);
    }
}

/// Its affinity changed: the deadline follows it to the new hart's list.
pub fn on_affinity(t: &mut Tcb) {
    if t.deadline.queued && t.deadline.hart as usize != t.affinity {
        unlink(t);
        enqueue(t, t.affinity);
    }
}

// ---- the lists -------------------------------------------------------------------------------

/// Put `t` (armed, on no queue) on hart `h`'s queue, and make that hart's timer cover it.
fn enqueue(t: &mut Tcb, h: usize) {
    debug_assert!(!t.deadline.queued && t.deadline.at != 0);
    // SAFETY: under the kernel lock.
    let seq = unsafe { ARMED_SEQ.get() };
    *seq += 1;
    t.deadline.seq = *seq;
    let q = &mut lists()[h];
    let tp: *mut Tcb = t;
    // SAFETY: `t` is live and on no queue; deletion and slot loss take it off (`unlink`).
    unsafe { q.insert(tp) };
    t.deadline.queued = true;
    t.deadline.hart = h as u8;
    if q.first() == tp {
        arch::timer::set_earliest(h, t.deadline.at);
        if h == this_hart() {
            arch::timer::sync();
        } else {
            // That hart programs its own timer: an IPI makes it look (arch::ipi::on_interrupt).
            arch::ipi::send(h, Msg::Kick);
        }
    }
}

/// Take `t` off its hart's queue, if it is on one. Its hart's timer may now fire early once,
/// which `expire` shrugs off.
fn unlink(t: &mut Tcb) {
    if !t.deadline.queued {
        return;
    }
    let h = t.deadline.hart as usize;
    let q = &mut lists()[h];
    let tp: *mut Tcb = t;
    let was_first = q.first() == tp;
    // SAFETY: `queued` says it is on hart `h`'s queue.
    unsafe { q.remove(tp) };
    t.deadline.queued = false;
    if was_first {
        update_earliest(h);
    }
}

fn update_earliest(h: usize) {
    let head = lists()[h].first();
    // SAFETY: a listed TCB is live.
    arch::timer::set_earliest(h, if head.is_null() { u64::MAX } else { unsafe { (*head).deadline.at } });
}

/// Raise `t`'s vector; the deadline is spent.
fn fire(t: &mut Tcb) {
    t.deadline.at = 0;
    stats::count(stat::DEADLINES_FIRED);
    if let Some(s) = t.uintr.slot.checked_sub(1) {
        crate::uintr::deliver(s, 1 << t.deadline.vector);
    }
}

/// A timer interrupt on this hart (kernel lock held): fire the deadlines that have passed, at
/// most `EXPIRE_BATCH`. The caller then re-arms the timer (`arch::timer::on_interrupt`), at
/// once if this returns true (the batch ended with more to look at).
pub fn expire() -> bool {
    let h = this_hart();
    let now = arch::cpu::time();
    for _ in 0..EXPIRE_BATCH {
        let head = lists()[h].first();
        // SAFETY: a queued TCB is live.
        let Some(t) = (unsafe { head.as_mut() }) else { return false };
        if t.deadline.at > now {
            return false;
        }
        unlink(t);
        fire(t);
    }
    true
}

/// DebugStat DEADLINES_ARMED: deadlines on every hart's list.
pub fn armed() -> u64 {
    lists().iter().map(|q| q.len() as u64).sum()
}

// ---- the consistency checker -----------------------------------------------------------------

/// Every queue is a well-formed tree (links, balance, order), of the length it records, made of
/// live threads that say they are on it, each with a vector; no other thread says it is queued;
/// each hart's timer knows its first.
pub fn check(violation: &mut dyn FnMut(core::fmt::Arguments)) {
    let mut threads = 0usize;
    let mut flagged = [0usize; MAX_HARTS];
    crate::object::tcb::for_each(|t| {
        threads += 1;
        if t.deadline.queued {
            match flagged.get_mut(t.deadline.hart as usize) {
                Some(n) => *n += 1,
                None => {
                    violation(format_args!("tcb {:#x}: deadline on hart {} (no such list)", t.pa(), t.deadline.hart))
                }
            }
        }
    });
    for (h, q) in lists().iter().enumerate() {
        let mut bad = None;
        // SAFETY: each element is judged live (a TCB whose deadline says it is queued here)
        // before the tree reads its links.
        let shape = unsafe {
            q.check(threads, |p| {
                let ok = crate::object::tcb::is_live(p) && {
                    let d = &(*p).deadline;
                    d.queued && d.hart as usize == h && d.at != 0 && d.vector as usize <= MAX_VECTOR
                };
                if !ok && bad.is_none() {
                    bad = Some(p);
                }
                ok
            })
        };
        if let Some(p) = bad {
            violation(format_args!("deadline queue of hart {h}: {p:?} is no thread armed and queued here"));
        } else if let Err(e) = shape {
            violation(format_args!("deadline queue of hart {h}: {e:?}"));
        }
        if q.len() != flagged[h] {
            violation(format_args!(
                "deadline queue of hart {h}: {} entries, {} threads say they are on it",
                q.len(),
                flagged[h]
            ));
        }
        let first = q.first();
        // SAFETY: checked above (a live queued TCB) unless reported.
        let want = if first.is_null() || bad.is_some() { u64::MAX } else { unsafe { (*first).deadline.at } };
        if bad.is_none() && arch::timer::earliest(h) != want {
            violation(format_args!(
                "hart {h}'s timer expects deadline {} but its queue's first is {}",
                arch::timer::earliest(h),
                want
            ));
        }
    }
}
