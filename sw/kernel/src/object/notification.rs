//! Notifications: a word of badge bits that Signal ORs in and Wait/Poll take out, a queue of
//! waiting threads, and optionally a bound TCB that receives signals while blocked on an
//! endpoint.
use super::at;
use super::endpoint::{enqueue, unlink};
use super::tcb::{self, State, Tcb};
use crate::{ipc, sched};
use caps::{Error, Slots as _};
use core::ptr::null_mut;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum NtfnState {
    Idle,
    Waiting,
    Active,
}

#[repr(C)]
pub struct Notification {
    pub state: NtfnState,
    /// Hart + 1 of a Wait that spins for this notification's signal without the lock (0: none):
    /// a hint, valid while that hart's `PerCpu::spin_on` names this notification
    /// (`sched::deliver_to_spinner`).
    pub spinner: u8,
    pub head: *mut Tcb,
    pub tail: *mut Tcb,
    pub word: u64,
    pub bound: *mut Tcb,
    /// UINTC receiver slot + 1 of the bound thread (0: not a U-notification). See crate::uintr.
    pub uslot: u16,
    /// Sender-table entries that signal this notification: how many, and the first of their
    /// list (a handle; 0: none). See crate::uintr::sender.
    pub senders: u16,
    pub sender_head: u64,
}

const _: () = assert!(core::mem::size_of::<Notification>() <= 1 << abi::object::NOTIFICATION_BITS);

pub fn create(pa: u64) {
    at::<core::mem::MaybeUninit<Notification>>(pa).write(Notification {
        state: NtfnState::Idle,
        spinner: 0,
        head: null_mut(),
        tail: null_mut(),
        word: 0,
        bound: null_mut(),
        uslot: 0,
        senders: 0,
        sender_head: 0,
    });
}

fn deliver(t: &mut Tcb, badge: u64) {
    t.ctx.regs[ipc::A0] = badge as usize;
    sched::wake(t);
}

/// seL4 sendSignal. A U-notification takes the badge as a vector number: one past the last
/// vector is an error (it used to fold silently onto another vector).
pub fn signal(pa: u64, badge: u64) -> Result<(), caps::Error> {
    let n = at::<Notification>(pa);
    if n.uslot != 0 {
        return crate::uintr::kernel_signal(n, badge);
    }
    match n.state {
        NtfnState::Idle => {
            // SAFETY: a bound TCB is live (unbound before it is destroyed).
            if let Some(b) = unsafe { n.bound.as_mut() } {
                if b.state == State::BlockedOnReceive {
                    tcb::cancel_ipc(b);
                    deliver(b, badge);
                    return Ok(());
                }
            }
            // A Wait spinning for it on another hart gets the signal straight into its
            // registers and leaves without the lock.
            if n.spinner != 0 {
                let h = n.spinner as usize - 1;
                n.spinner = 0;
                if sched::deliver_to_spinner(h, pa, badge, n.bound) {
                    return Ok(());
                }
            }
            n.word = badge;
            n.state = NtfnState::Active;
        }
        NtfnState::Waiting => {
            // SAFETY: the queue is non-empty in Waiting.
            let t = unsafe { &mut *n.head };
            unlink(&mut n.head, &mut n.tail, t);
            if n.head.is_null() {
                n.state = NtfnState::Idle;
            }
            t.blocked_on = 0;
            deliver(t, badge);
        }
        NtfnState::Active => n.word |= badge,
    }
    Ok(())
}

/// A blocking Wait on `pa` would block, with nothing signalled and nobody else waiting (a plain
/// notification: a U-notification's waiter parks in `uintr::wait`).
pub fn would_block_alone(pa: u64) -> bool {
    let n = at::<Notification>(pa);
    n.uslot == 0 && n.state == NtfnState::Idle
}

/// A Wait by a thread on hart `h` spins for the signal of the notification at `pa` (lock held).
pub fn note_spinner(pa: u64, h: usize) {
    at::<Notification>(pa).spinner = h as u8 + 1;
}

/// seL4 receiveSignal: Wait (blocking) or Poll.
pub fn wait(me: &mut Tcb, pa: u64, blocking: bool) {
    let n = at::<Notification>(pa);
    if n.uslot != 0 {
        return crate::uintr::wait(me, n, pa, blocking);
    }
    n.spinner = 0;
    match n.state {
        NtfnState::Active => {
            me.ctx.regs[ipc::A0] = n.word as usize;
            n.word = 0;
            n.state = NtfnState::Idle;
        }
        _ if blocking => {
            me.state = State::BlockedOnNotification;
            me.blocked_on = pa;
            enqueue(&mut n.head, &mut n.tail, me);
            n.state = NtfnState::Waiting;
        }
        _ => me.ctx.regs[ipc::A0] = 0,
    }
}

/// A thread about to receive on an endpoint takes a pending signal of its bound notification
/// first. Returns true if it did (the receive is over).
pub fn take_bound_signal(me: &mut Tcb) -> bool {
    if me.bound_ntfn == 0 {
        return false;
    }
    let n = at::<Notification>(me.bound_ntfn);
    if n.state != NtfnState::Active {
        return false;
    }
    me.ctx.regs[ipc::A0] = n.word as usize;
    n.word = 0;
    n.state = NtfnState::Idle;
    true
}

pub fn remove_waiter(t: &mut Tcb) {
    crate::uintr::unpark(t);
    let n = at::<Notification>(t.blocked_on);
    unlink(&mut n.head, &mut n.tail, t);
    if n.head.is_null() && n.state == NtfnState::Waiting {
        n.state = NtfnState::Idle;
    }
    t.blocked_on = 0;
}

pub fn bind(n: &mut Notification, t: &mut Tcb) -> Result<(), Error> {
    if !n.bound.is_null() || n.state == NtfnState::Waiting {
        return Err(Error::IllegalOperation);
    }
    n.bound = t;
    t.bound_ntfn = crate::mm::virt_to_phys(n as *mut Notification as usize) as u64;
    Ok(())
}

pub fn unbind(n: &mut Notification) {
    // SAFETY: a bound TCB is live.
    if let (true, Some(t)) = (n.uslot != 0, unsafe { n.bound.as_mut() }) {
        // Its kernel deadline would have no receiver slot to raise its vector on.
        crate::deadline::cancel(t);
    }
    crate::uintr::free_receiver(n);
    // SAFETY: a bound TCB is live.
    if let Some(t) = unsafe { n.bound.as_mut() } {
        t.bound_ntfn = 0;
    }
    n.bound = null_mut();
}

/// The last cap is gone: waiters restart (and find their cap invalid), the binding ends.
pub fn destroy(pa: u64) {
    let n = at::<Notification>(pa);
    unbind(n);
    super::irq::forget_notification(pa);
    let _ = restart_waiters(pa, false);
}

/// Restart the threads waiting on the notification; with `budgeted`, a unit of the preemption
/// budget each, `Preempted` when it runs out (as `endpoint::restart_waiters`).
pub fn restart_waiters(pa: u64, budgeted: bool) -> Result<(), caps::Error> {
    let n = at::<Notification>(pa);
    while !n.head.is_null() {
        // SAFETY: non-empty queue of live TCBs.
        let t = unsafe { &mut *n.head };
        remove_waiter(t);
        t.state = State::Inactive;
        tcb::restart(t);
        if budgeted && !crate::preempt::charge(1) {
            return Err(caps::Error::Preempted);
        }
    }
    n.state = NtfnState::Idle;
    Ok(())
}

/// A notification a thread may Wait on: not bound to another thread.
pub fn can_wait(pa: u64, me: &Tcb) -> bool {
    let n = at::<Notification>(pa);
    n.bound.is_null() || core::ptr::eq(n.bound, me)
}

/// The labels a Call on a Notification cap treats as invocations (ours: U-notifications);
/// any other Call signals, as in seL4.
pub fn is_invocation(label: usize) -> bool {
    matches!(label, abi::label::NOTIFICATION_REGISTER_RECEIVER | abi::label::NOTIFICATION_REGISTER_SENDER)
}

/// NotificationRegisterReceiver / NotificationRegisterSender (see abi::label and crate::uintr).
pub fn invoke(me: &mut Tcb, cap: caps::Cap, slot: caps::SlotRef, m: &ipc::Msg) -> super::InvResult {
    let caps::Cap::Notification { obj, badge, rights, uintr } = cap else { return Err(Error::InvalidCapability(0)) };
    let index = match m.label {
        abi::label::NOTIFICATION_REGISTER_RECEIVER => {
            if !rights.read {
                return Err(Error::InvalidCapability(0));
            }
            crate::uintr::register_receiver(obj)?
        }
        _ => {
            m.need(0, 1)?;
            let caps::Cap::Tcb { obj: t } = m.caps[0].0 else { return Err(Error::InvalidCapability(1)) };
            if !rights.write {
                return Err(Error::InvalidCapability(0));
            }
            if uintr != 0 {
                // One entry per cap: mint another copy for another entry.
                return Err(Error::IllegalOperation);
            }
            let (handle, index) = crate::uintr::register_sender(obj, badge, at(t), slot)?;
            let mut s = super::KSlots.get(slot);
            s.cap = caps::Cap::Notification { obj, badge, rights, uintr: handle };
            super::KSlots.set(slot, s);
            index
        }
    };
    ipc::set_mr(me, 0, index);
    Ok(1)
}
