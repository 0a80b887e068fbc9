//! Endpoints: synchronous IPC rendezvous. An endpoint is a queue of threads all waiting to send
//! or all waiting to receive (seL4's EPState).
use super::at;
use super::tcb::{self, State, Tcb};
use crate::{ipc, sched};
use core::ptr::null_mut;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EpState {
    Idle,
    Send,
    Recv,
}

#[repr(C)]
pub struct Endpoint {
    pub state: EpState,
    pub head: *mut Tcb,
    pub tail: *mut Tcb,
}

const _: () = assert!(core::mem::size_of::<Endpoint>() <= 1 << abi::object::ENDPOINT_BITS);

pub fn create(pa: u64) {
    at::<core::mem::MaybeUninit<Endpoint>>(pa).write(Endpoint {
        state: EpState::Idle,
        head: null_mut(),
        tail: null_mut(),
    });
}

pub fn enqueue(head: &mut *mut Tcb, tail: &mut *mut Tcb, t: &mut Tcb) {
    t.ep_next = null_mut();
    t.ep_prev = *tail;
    if tail.is_null() {
        *head = t;
    } else {
        // SAFETY: queued TCBs are live.
        unsafe { (**tail).ep_next = t };
    }
    *tail = t;
}

pub fn unlink(head: &mut *mut Tcb, tail: &mut *mut Tcb, t: &mut Tcb) {
    // SAFETY: queued TCBs are live.
    unsafe {
        if t.ep_prev.is_null() {
            *head = t.ep_next;
        } else {
            (*t.ep_prev).ep_next = t.ep_next;
        }
        if t.ep_next.is_null() {
            *tail = t.ep_prev;
        } else {
            (*t.ep_next).ep_prev = t.ep_prev;
        }
    }
    t.ep_next = null_mut();
    t.ep_prev = null_mut();
}

fn pop(ep: &mut Endpoint) -> &'static mut Tcb {
    // SAFETY: called only on a non-empty queue of live TCBs.
    let t = unsafe { &mut *ep.head };
    unlink(&mut ep.head, &mut ep.tail, t);
    if ep.head.is_null() {
        ep.state = EpState::Idle;
    }
    t
}

/// Remove a blocked sender or receiver from the endpoint it waits on.
pub fn remove_waiter(t: &mut Tcb) {
    let ep = at::<Endpoint>(t.blocked_on);
    unlink(&mut ep.head, &mut ep.tail, t);
    if ep.head.is_null() {
        ep.state = EpState::Idle;
    }
    t.blocked_on = 0;
}

/// Parameters of a send, from the sender's cap.
#[derive(Clone, Copy)]
pub struct SendArgs {
    pub badge: u64,
    pub can_grant: bool,
    pub can_grant_reply: bool,
    pub is_call: bool,
    pub blocking: bool,
}

/// seL4 sendIPC.
pub fn send(me: &mut Tcb, ep_pa: u64, a: SendArgs) {
    let ep = at::<Endpoint>(ep_pa);
    match ep.state {
        EpState::Recv => {
            let r = pop(ep);
            r.blocked_on = 0;
            ipc::transfer(me, r, a.badge, a.can_grant, ep_pa);
            let reply_grant = r.recv_can_grant;
            sched::wake(r);
            if a.is_call {
                if a.can_grant || a.can_grant_reply {
                    setup_caller(me, r, reply_grant);
                } else {
                    me.state = State::Inactive;
                }
            }
        }
        _ if a.blocking => {
            me.state = State::BlockedOnSend;
            me.blocked_on = ep_pa;
            me.send_badge = a.badge;
            me.send_can_grant = a.can_grant;
            me.send_can_grant_reply = a.can_grant_reply;
            me.send_is_call = a.is_call;
            enqueue(&mut ep.head, &mut ep.tail, me);
            ep.state = EpState::Send;
        }
        _ => {} // NBSend with no receiver: dropped
    }
}

/// The caller now waits for a reply; the receiver holds the reply cap in its caller slot.
pub fn setup_caller(caller: &mut Tcb, receiver: &mut Tcb, can_grant: bool) {
    caller.state = State::BlockedOnReply;
    let slot = receiver.slot(tcb::CALLER);
    super::delete_slot(slot);
    super::set_reply(slot, caller, can_grant);
}

/// seL4 receiveIPC (the bound notification has been checked by the caller).
pub fn receive(me: &mut Tcb, ep_pa: u64, blocking: bool, can_grant: bool) {
    let ep = at::<Endpoint>(ep_pa);
    match ep.state {
        EpState::Send => {
            let s = pop(ep);
            s.blocked_on = 0;
            ipc::transfer(s, me, s.send_badge, s.send_can_grant, ep_pa);
            if s.send_is_call {
                if s.send_can_grant || s.send_can_grant_reply {
                    setup_caller(s, me, can_grant);
                } else {
                    s.state = State::Inactive;
                }
            } else {
                sched::wake(s);
            }
        }
        _ if blocking => {
            me.state = State::BlockedOnReceive;
            me.blocked_on = ep_pa;
            me.recv_can_grant = can_grant;
            enqueue(&mut ep.head, &mut ep.tail, me);
            ep.state = EpState::Recv;
        }
        _ => {
            // NBRecv with nothing to receive: badge 0 (seL4 doNBRecvFailedTransfer).
            me.ctx.regs[ipc::A0] = 0;
        }
    }
}

/// The endpoint's last cap is gone: everyone waiting on it restarts its system call (and will
/// then find its cap invalid). `prepare_delete` has restarted them already, a budget unit
/// each; whoever queued since is only whoever reaches the deleted slot itself.
pub fn destroy(pa: u64) {
    let _ = restart_waiters(pa, false);
}

/// Restart the threads queued on the endpoint; with `budgeted`, a unit of the preemption
/// budget each, `Preempted` when it runs out (the rest stay queued).
pub fn restart_waiters(pa: u64, budgeted: bool) -> Result<(), caps::Error> {
    let ep = at::<Endpoint>(pa);
    while !ep.head.is_null() {
        let t = pop(ep);
        t.blocked_on = 0;
        t.state = State::Inactive;
        tcb::restart(t);
        if budgeted && !crate::preempt::charge(1) {
            return Err(caps::Error::Preempted);
        }
    }
    Ok(())
}

/// A thread's part in CNode_CancelBadgedSends (in its TCB).
#[derive(Clone, Copy, Default)]
pub struct Cancel {
    /// The pass this thread runs, while preempted: endpoint, badge, the key its restart will
    /// have, its stamp.
    pass: Option<(u64, u64, u64, u64)>,
    /// The stamp of the last pass that looked at this thread on a send queue.
    seen: u64,
}

/// `Tcb::call_key` of an async request (the count of the thread's requests below it).
pub const ASYNC_KEY: u64 = 1 << 63;

/// The key the restart of the invocation keyed `key` will have: a sync call's is the thread's
/// next entry; an async request keeps its key until it is answered.
pub fn next_key(key: u64) -> u64 {
    if key & ASYNC_KEY != 0 {
        key
    } else {
        key + 1
    }
}

/// Stamps of cancel passes (kernel lock held): each pass has its own.
static PASSES: crate::kcell::KCell<u64> = crate::kcell::KCell::new(0);

fn new_pass() -> u64 {
    // SAFETY: under the kernel lock.
    let n = unsafe { PASSES.get() };
    *n += 1;
    *n
}

/// CNode_CancelBadgedSends by `me`: the senders with `badge` queued when the pass began
/// restart their send; the others keep their order. Preemptible: a budget unit per sender
/// looked at. A sender looked at is stamped with the pass and goes to the tail (it is taken
/// off, if it matches), so the senders not yet looked at are always at the head: a restarted
/// call (`me.call_key` is what its preempted run expected) goes on from there, and the pass
/// ends when its own stamp comes round to the head. Senders that queue meanwhile may or may
/// not be looked at; a pass preempted for good (the thread moved elsewhere) leaves its senders
/// rotated, nothing else.
pub fn cancel_badged_sends(me: &mut Tcb, pa: u64, badge: u64) -> Result<(), caps::Error> {
    let ep = at::<Endpoint>(pa);
    let pass = match me.cancel.pass.take() {
        Some((p, b, key, stamp)) if p == pa && b == badge && key == me.call_key => stamp,
        _ => new_pass(),
    };
    while ep.state == EpState::Send {
        // SAFETY: a send queue is not empty, and its TCBs are live.
        if unsafe { (*ep.head).cancel.seen } == pass {
            break;
        }
        if !crate::preempt::charge(1) {
            me.cancel.pass = Some((pa, badge, next_key(me.call_key), pass));
            return Err(caps::Error::Preempted);
        }
        let t = pop(ep);
        t.cancel.seen = pass;
        if t.send_badge == badge {
            t.blocked_on = 0;
            t.state = State::Inactive;
            tcb::restart(t);
        } else {
            enqueue(&mut ep.head, &mut ep.tail, t);
            ep.state = EpState::Send;
        }
    }
    Ok(())
}
