//! Kernel deadlines (`abi::deadline`, system call SetDeadline): a thread arms one absolute time
//! and a vector; when the time passes, the kernel raises that vector on the thread's own
//! U-notification receiver slot, the way a Signal does (the kernel as sender). The user-space
//! timer wheel (`userlib::task::timer`) keeps its earliest timer armed here and blocks in
//! U-notification Wait.
//!
//! Resources: one deadline per thread, stored in its TCB (no pool to exhaust: the memory is the
//! TCB's, charged to an Untyped). Each hart keeps its armed threads in a list sorted by time,
//! and programs its timer (SBI TIME or Sstc, `arch::timer`) for the earlier of its next
//! scheduler tick and the list's head. Insertion scans from the latest entry (a thread re-arming
//! later and later, the usual pattern, costs O(1)); in the worst case it is linear in the
//! threads armed on that hart, as seL4 MCS's release queue is.
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
use core::ptr::null_mut;
use platform::image::MAX_HARTS;

/// A thread's deadline (in its TCB).
#[derive(Clone, Copy, Debug)]
pub struct Armed {
    /// Absolute time in timebase ticks; 0 = none.
    pub at: u64,
    pub vector: u8,
    /// On hart `hart`'s list (false while the thread is suspended with a deadline kept).
    pub queued: bool,
    pub hart: u8,
    pub next: *mut Tcb,
    pub prev: *mut Tcb,
}

impl Default for Armed {
    fn default() -> Armed {
        Armed { at: 0, vector: 0, queued: false, hart: 0, next: null_mut(), prev: null_mut() }
    }
}

/// One hart's armed threads, earliest first.
#[derive(Clone, Copy)]
struct List {
    head: *mut Tcb,
    tail: *mut Tcb,
    len: usize,
}

const EMPTY: List = List { head: null_mut(), tail: null_mut(), len: 0 };
static LISTS: KCell<[List; MAX_HARTS]> = KCell::new([EMPTY; MAX_HARTS]);

fn lists() -> &'static mut [List; MAX_HARTS] {
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

/// Put `t` (armed, on no list) on hart `h`'s list, and make that hart's timer cover it.
fn enqueue(t: &mut Tcb, h: usize) {
    debug_assert!(!t.deadline.queued && t.deadline.at != 0);
    let l = &mut lists()[h];
    let tp: *mut Tcb = t;
    // The last entry not later than `t`, from the tail: equal times stay in arming order.
    let mut after = l.tail;
    // SAFETY: listed TCBs are live (deletion and slot loss unlink them).
    while !after.is_null() && unsafe { (*after).deadline.at } > t.deadline.at {
        after = unsafe { (*after).deadline.prev };
    }
    let next = if after.is_null() { l.head } else { unsafe { (*after).deadline.next } };
    t.deadline.prev = after;
    t.deadline.next = next;
    if after.is_null() {
        l.head = tp;
    } else {
        // SAFETY: as above.
        unsafe { (*after).deadline.next = tp };
    }
    if next.is_null() {
        l.tail = tp;
    } else {
        // SAFETY: as above.
        unsafe { (*next).deadline.prev = tp };
    }
    l.len += 1;
    t.deadline.queued = true;
    t.deadline.hart = h as u8;
    if l.head == tp {
        arch::timer::set_earliest(h, t.deadline.at);
        if h == this_hart() {
            arch::timer::sync();
        } else {
            // That hart programs its own timer: an IPI makes it look (arch::ipi::on_interrupt).
            arch::ipi::send(h, Msg::Kick);
        }
    }
}

/// Take `t` off its hart's list, if it is on one. Its hart's timer may now fire early once,
/// which `expire` shrugs off.
fn unlink(t: &mut Tcb) {
    if !t.deadline.queued {
        return;
    }
    let h = t.deadline.hart as usize;
    let l = &mut lists()[h];
    let (prev, next) = (t.deadline.prev, t.deadline.next);
    // SAFETY: list neighbours are live.
    unsafe {
        if prev.is_null() {
            l.head = next;
        } else {
            (*prev).deadline.next = next;
        }
        if next.is_null() {
            l.tail = prev;
        } else {
            (*next).deadline.prev = prev;
        }
    }
    l.len -= 1;
    t.deadline.queued = false;
    t.deadline.next = null_mut();
    t.deadline.prev = null_mut();
    if prev.is_null() {
        update_earliest(h);
    }
}

fn update_earliest(h: usize) {
    let head = lists()[h].head;
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

/// A timer interrupt on this hart (kernel lock held): fire every deadline that has passed.
/// The caller then re-arms the timer (`arch::timer::on_interrupt`).
pub fn expire() {
    let h = this_hart();
    let now = arch::cpu::time();
    loop {
        let head = lists()[h].head;
        // SAFETY: a listed TCB is live.
        let Some(t) = (unsafe { head.as_mut() }) else { break };
        if t.deadline.at > now {
            break;
        }
        unlink(t);
        fire(t);
    }
}

/// DebugStat DEADLINES_ARMED: deadlines on every hart's list.
pub fn armed() -> u64 {
    lists().iter().map(|l| l.len as u64).sum()
}

// ---- the consistency checker -----------------------------------------------------------------

/// Every list is well linked, sorted, of the length it records, made of live threads that say
/// they are on it, each with a vector; no other thread says it is listed; each hart's timer
/// knows its head.
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
    for (h, l) in lists().iter().enumerate() {
        let (mut n, mut prev, mut p, mut last_at) = (0usize, null_mut::<Tcb>(), l.head, 0u64);
        while !p.is_null() {
            if n > threads {
                violation(format_args!("deadline list of hart {h}: longer than the {threads} threads (a cycle?)"));
                return;
            }
            // SAFETY: the checks below are what says whether it is a live TCB.
            let t = unsafe { &*p };
            let d = &t.deadline;
            if !d.queued || d.hart as usize != h || d.prev != prev {
                violation(format_args!(
                    "deadline list of hart {h}: tcb {:#x} not linked as listed here (queued {}, hart {})",
                    t.pa(),
                    d.queued,
                    d.hart
                ));
            }
            if d.at == 0 || d.at < last_at || d.vector as usize > MAX_VECTOR {
                violation(format_args!(
                    "deadline list of hart {h}: tcb {:#x} at {} after {}, vector {}",
                    t.pa(),
                    d.at,
                    last_at,
                    d.vector
                ));
            }
            last_at = d.at;
            prev = p;
            p = d.next;
            n += 1;
        }
        if prev != l.tail || n != l.len || n != flagged[h] {
            violation(format_args!(
                "deadline list of hart {h}: {n} entries walked, {} recorded, {} threads say they are on it, tail ok {}",
                l.len,
                flagged[h],
                prev == l.tail
            ));
        }
        let want = if l.head.is_null() { u64::MAX } else { unsafe { (*l.head).deadline.at } };
        if arch::timer::earliest(h) != want {
            violation(format_args!(
                "hart {h}'s timer expects deadline {} but its list's head is {}",
                arch::timer::earliest(h),
                want
            ));
        }
    }
}
