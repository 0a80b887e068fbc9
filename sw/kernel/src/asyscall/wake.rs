//! Where handlers run. A thread whose handler sleeps calls WakeSyscallHandler; the kernel picks
//! the hart with the lowest execution priority below the caller's (an idle hart is lowest, a
//! hart inside the kernel cannot be preempted, any other counts as the priority of the thread
//! it runs) and sends it an IPI; with no such hart the handler runs inside the wake call,
//! emptying the ring (restarting the call after each preemption budget, so the lock is let go
//! in between): nothing waits for a timer tick.
//!
//! An idle hart serving a handler keeps polling its request ring for a while after it ran dry
//! (the handler's window, `adapt`), with the handler's flag still saying awake, so a busy client
//! never traps; then it sleeps the handler: flag set, ring re-checked (aring's
//! announce/fence/re-check), and only if still empty is the handler marked asleep. The client publishes, fences, then reads the flag
//! (aring's `take`), so one of the two sees the other: no lost wake-up. A hart that leaves idle
//! to run a thread hands its handlers on (or sleeps them), and a busy hart woken for a handler
//! runs one batch per IPI and sends itself another while work remains. A thread may restrict
//! the harts that serve its handler (`harts.rs`): `pick` and the idle harts' take-over honour it.
use super::exec::{self, Drained};
use super::harts::allowed;
use crate::arch::{self, ipi::Msg};
use crate::ipc::{A0, A1};
use crate::object::tcb::Tcb;
use crate::percpu::{self, PerCpu};
use crate::{lock, sched, stats};
use abi::{asys::BATCH, error, stat};
use core::sync::atomic::{AtomicU64, Ordering};
use platform::image::MAX_HARTS;

/// The poll window's bounds, in scheduler ticks' fifths (0.4 ms) and ticks (4 ms): it starts
/// at the lower one.
fn poll_min() -> u64 {
    arch::timer::tick_interval() / 5
}
fn poll_max() -> u64 {
    arch::timer::tick_interval() * 2
}

/// A wake of `t`'s sleeping handler: its window doubles when the thread came back within twice
/// the window (its pauses are just longer than the window: each one cost it a trap and an IPI),
/// and halves after a quiet spell of 16 windows, between `poll_min` and `poll_max`.
fn adapt(t: &mut Tcb) {
    let Some(at) = t.asys.slept_at.take() else { return };
    let w = window(t);
    let gap = arch::cpu::time().wrapping_sub(at);
    t.asys.poll = if gap < 2 * w {
        (2 * w).min(poll_max())
    } else if gap > 16 * w {
        (w / 2).max(poll_min())
    } else {
        w
    };
}

fn window(t: &Tcb) -> u64 {
    t.asys.poll.max(poll_min())
}
/// Handlers one hart looks after at once (more wait for a later turn or another hart).
const MAX_SERVED: usize = 64;

fn this_hart() -> usize {
    percpu::this().hart
}

/// Hart `h`'s execution priority as a target: -1 idle, the running thread's priority, None
/// if it cannot take the handler now (in the kernel, or offline).
fn exec_prio(h: usize) -> Option<i32> {
    let cpu = percpu::of(h);
    if !cpu.online.load(Ordering::Acquire) {
        return None;
    }
    let cur = sched::current_of(h);
    if cur.is_null() {
        return Some(-1);
    }
    // SAFETY: a hart's current thread is live (lock held).
    cpu.in_user.load(Ordering::Acquire).then(|| unsafe { (*cur).prio } as i32)
}

fn served_by(h: usize) -> usize {
    let mut n = 0;
    super::for_each(|t| n += (t.asys.run == Some(h)) as usize);
    n
}

/// The hart to run `t`'s handler: among the harts its mask allows (`harts.rs`), the lowest
/// execution priority below the thread's, idle harts serving the fewest handlers first. Never
/// this hart.
fn pick(t: &Tcb) -> Option<usize> {
    let me = this_hart();
    (0..MAX_HARTS)
        .filter(|&h| h != me && allowed(t, h))
        .filter_map(|h| exec_prio(h).filter(|&p| p < t.prio as i32).map(|p| (p, served_by(h), h)))
        .min()
        .map(|(_, _, h)| h)
}

/// Mark the handler asleep: flags set (request ring; also the reply ring's producer flag if
/// `blocked` on a full one), then a re-check. True if it sleeps, false if work arrived (it
/// stays awake). A broken ring closes the buffer (and it "sleeps").
fn sleep(t: &mut Tcb, blocked: bool) -> bool {
    let Some(req) = t.asys.req.as_ref() else { return true };
    req.prepare_sleep();
    if blocked {
        if let Some(rep) = t.asys.rep.as_mut() {
            rep.prepare_sleep();
            match rep.free_now() {
                Ok(0) => {
                    t.asys.run = None;
                    return true;
                }
                Ok(_) => rep.cancel_sleep(),
                Err(_) => {
                    exec::close(t, true);
                    return true;
                }
            }
        }
    }
    match exec::ready(t) {
        Ok(false) => {
            t.asys.run = None;
            t.asys.slept_at = Some(arch::cpu::time());
            true
        }
        Ok(true) => {
            if let Some(req) = t.asys.req.as_ref() {
                req.cancel_sleep();
            }
            false
        }
        Err(()) => {
            exec::close(t, true);
            true
        }
    }
}

/// Sleep `t`'s awake handler if its request ring is empty (its hart mask changed: the next
/// wake picks a hart again); with work queued it stays with its hart until it next sleeps.
pub(super) fn sleep_if_idle(t: &mut Tcb) {
    let _ = sleep(t, false);
}

/// WakeSyscallHandler by `me`: a0 = 0 or an error code, a1 = requests run inside the call.
pub fn syscall(me: &mut Tcb) {
    let (code, ran) = wake(me);
    me.ctx.regs[A0] = code;
    me.ctx.regs[A1] = ran;
}

fn wake(me: &mut Tcb) -> (usize, usize) {
    if !me.asys.on || !super::frames_alive(me) {
        exec::close(me, false);
        return (error::ILLEGAL_OPERATION, 0);
    }
    stats::count(stat::ASYS_WAKES);
    adapt(me);
    let here = this_hart();
    if let Some(h) = me.asys.run {
        // Awake already (the flag was cleared by a race with its sleep): poke its hart.
        if h != here {
            arch::ipi::send(h, Msg::Asys);
        }
        return (0, 0);
    }
    if let Some(h) = pick(me) {
        stats::count(stat::ASYS_WAKE_REMOTE);
        me.asys.run = Some(h);
        arch::ipi::send(h, Msg::Asys);
        return (0, 0);
    }
    // No hart below us: run it here, now.
    stats::count(stat::ASYS_WAKE_INLINE);
    me.asys.run = Some(here);
    let (ran, why) = exec::drain(me, usize::MAX);
    match why {
        Drained::Closed => return (error::ILLEGAL_OPERATION, ran),
        Drained::Empty | Drained::Blocked if sleep(me, why == Drained::Blocked) => {}
        _ => {
            // More to do: let the lock go and come back (the thread re-executes its ecall).
            me.asys.run = None;
            me.ctx.sepc = me.restart_pc;
        }
    }
    (0, ran)
}

/// Walked by reference below: moving one (into a `for` loop's iterator) copies all of it.
type Served = heapless::Vec<*mut Tcb, MAX_SERVED>;

/// Whether handler `t` is hart `h`'s to serve (`idle`: `h` runs no thread): given to it, or,
/// for an idle hart its mask allows, given to a busy hart that has not served it yet.
fn is_mine(t: &Tcb, h: usize, idle: bool) -> bool {
    t.asys.run == Some(h)
        || (idle && allowed(t, h) && t.asys.run.is_some_and(|x| x != h && !sched::current_of(x).is_null()))
}

/// Whether hart `h` has any handler to serve: the idle loop and every exit from it ask this
/// first, under the lock, so a hart with none pays a walk of the (usually empty) list and
/// nothing else (building the lists below moves kilobytes; under the lock that held up the
/// other side of every cross-hart IPC).
pub(crate) fn any_mine(h: usize) -> bool {
    if super::handlers() == 0 {
        return false;
    }
    let idle = sched::current_of(h).is_null();
    let mut any = false;
    super::for_each(|t| any |= is_mine(t, h, idle));
    any
}

/// Handlers this hart serves, as pointers (the list may change while we run requests), into
/// `v`. An idle hart also takes over handlers given to a busy hart that has not served them.
fn mine(h: usize, v: &mut Served) {
    let idle = sched::current_of(h).is_null();
    super::for_each(|t| {
        if is_mine(t, h, idle) && v.push(t as *mut Tcb).is_ok() {
            t.asys.run = Some(h);
        }
    });
}

/// Run one batch of each of this hart's handlers; into `idle` the ones still awake with
/// nothing to do (to poll); true if any made progress.
fn serve_batch(h: usize, idle: &mut Served) -> bool {
    let mut progressed = false;
    let mut list = Served::new();
    mine(h, &mut list);
    for &p in list.iter() {
        // Running an earlier handler's requests may have deleted this thread.
        if !super::is_registered(p) {
            continue;
        }
        // SAFETY: registered, hence live (lock held).
        let t = unsafe { &mut *p };
        if t.asys.run != Some(h) {
            continue;
        }
        crate::preempt::reset();
        let (ran, why) = exec::drain(t, BATCH);
        progressed |= ran > 0;
        match why {
            Drained::More => progressed = true,
            Drained::Empty => {
                let _ = idle.push(p);
            }
            Drained::Blocked => progressed |= !sleep(t, true),
            Drained::Closed => {}
        }
    }
    progressed
}

/// An IPI said "handler" (lock held). An idle hart leaves it to its idle loop; a busy one runs
/// a batch now and sends itself another IPI while work remains.
pub fn on_mail(cpu: &PerCpu) {
    if !lock::held() || sched::current_of(cpu.hart).is_null() {
        return;
    }
    let mut idle = Served::new();
    let progressed = serve_batch(cpu.hart, &mut idle);
    let mut more = progressed;
    for &p in idle.iter() {
        if super::is_registered(p) {
            // SAFETY: registered, hence live.
            more |= !sleep(unsafe { &mut *p }, false);
        }
    }
    if more {
        arch::ipi::send(cpu.hart, Msg::Asys);
    }
}

/// The idle loop found nothing to run (lock held). Serve this hart's handlers: true if the
/// loop should look again at once (work done, or polling saw something).
pub fn on_idle(cpu: &PerCpu) -> bool {
    let h = cpu.hart;
    if !any_mine(h) {
        return false;
    }
    let mut idle = Served::new();
    let progressed = serve_batch(h, &mut idle);
    if progressed {
        return true;
    }
    if idle.is_empty() {
        return false;
    }
    // Poll the empty rings without the lock: only their published tails are read (through the
    // kernel window, so a ring whose frame goes meanwhile is harmless), the answer is a hint.
    let mut watch: heapless::Vec<(*const AtomicU64, u64), MAX_SERVED> = heapless::Vec::new();
    let mut until = 0;
    for &p in &idle {
        // SAFETY: registered and live (lock held).
        until = until.max(window(unsafe { &*p }));
        // SAFETY: as above.
        if let Some(c) = unsafe { (*p).asys.req.as_ref() } {
            let w = c.tail_word();
            // SAFETY: inside a frame of the thread's buffer, in the kernel window.
            let _ = watch.push((w, unsafe { (*w).load(Ordering::Acquire) }));
        }
    }
    lock::release();
    let seen = poll(cpu, &watch, arch::cpu::time() + until);
    lock::acquire();
    if !seen {
        for &p in idle.iter() {
            if super::is_registered(p) {
                // SAFETY: registered, hence live.
                let t = unsafe { &mut *p };
                if t.asys.run == Some(h) {
                    sleep(t, false);
                }
            }
        }
    }
    true
}

/// Spin until a watched tail moves, mail or an interrupt arrives, or the time reaches `until`;
/// true if a tail moved or there is something else to do.
fn poll(cpu: &PerCpu, watch: &[(*const AtomicU64, u64)], until: u64) -> bool {
    use crate::arch::csr::*;
    cpu.polling.store(true, Ordering::SeqCst);
    let mut seen = false;
    // The time only every 64 turns: without a `time` CSR each read is a trap to the firmware.
    let mut turn = 0u32;
    while !turn.is_multiple_of(64) || arch::cpu::time() < until {
        turn = turn.wrapping_add(1);
        // SAFETY: kernel-window addresses of RAM (see on_idle).
        if watch.iter().any(|&(w, v)| unsafe { (*w).load(Ordering::Relaxed) } != v)
            || cpu.mailbox.load(Ordering::Relaxed) != 0
            || csrr!("sip") & csrr!("sie") != 0
        {
            seen = true;
            break;
        }
        core::hint::spin_loop();
    }
    cpu.polling.store(false, Ordering::SeqCst);
    seen || cpu.mailbox.load(Ordering::SeqCst) != 0
}

/// The idle loop is about to run a thread (lock held): handlers awake here would be left with
/// nobody polling them, so each sleeps, or, with work waiting, goes to another hart (or stays
/// for this one to serve between the thread's instructions, through a self-IPI).
pub fn leaving_idle(cpu: &PerCpu) {
    let h = cpu.hart;
    if !any_mine(h) {
        return;
    }
    let mut self_mail = false;
    let mut list = Served::new();
    mine(h, &mut list);
    for &p in list.iter() {
        // SAFETY: listed, hence live.
        let t = unsafe { &mut *p };
        if sleep(t, false) {
            continue;
        }
        match pick(t) {
            Some(o) => {
                t.asys.run = Some(o);
                arch::ipi::send(o, Msg::Asys);
            }
            None => self_mail = true,
        }
    }
    if self_mail {
        arch::ipi::send(h, Msg::Asys);
    }
}
