//! The sync variant's transport: the same socket requests (`service::handle`, the same socket
//! table) over seL4 sync IPC. The TCP server's threads Call the `sockets` endpoint; this thread
//! receives in its executor's park hook ([`SyncPark`]): where the async variant waits on its
//! U-notification, this one blocks in ReplyRecv/Recv on the endpoint, and the NIC's interrupt
//! comes as the word of the plain notification bound to the thread (Recv returns it: seL4's
//! IRQ path, through the kernel).
//!
//! Each call becomes a handler task. A handler done before the thread next blocks is answered
//! by that ReplyRecv (the caller's reply cap is still in our TCB: seL4's fastpath pair);
//! otherwise the reply cap is saved (CNode_SaveCaller) into a slot of its own before the
//! Recv, and the handler answers through it when done (Send on the reply cap).
use crate::local::Local;
use crate::{poller, service};
use abi::MessageInfo;
use core::future::poll_fn;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::task::{Poll, Waker};
use netproto::{error, SYNC_CALL_BADGE, SYNC_PENDING};
use userlib::chan::Msg;
use userlib::task::{Handle, Park, Priority};
use userlib::{cnode, ipc};

/// Our CNode (the loader's slot 1, guarded so a slot number is a cptr at full depth).
const CNODE: usize = abi::bootinfo::process::CNODE;
const DEPTH: usize = 64;
/// Largest request a Call may carry (a channel message's words).
const MAX_WORDS: usize = 6;

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    /// Received, waiting for the dispatcher to start its handler.
    Queued,
    Running,
    /// Handled; `msg` is the reply, sent by the next ReplyRecv.
    Done,
}

#[derive(Clone, Copy)]
struct Call {
    state: State,
    /// The request while queued, the reply once done.
    msg: Option<Msg>,
    /// Its reply cap is in slot `REPLY_BASE + index`, not in our TCB.
    saved: bool,
}

struct Table {
    calls: [Call; SYNC_PENDING],
    /// The call whose reply cap is still in our TCB (the last one received).
    current: Option<usize>,
    /// Received calls for the dispatcher, oldest first.
    queue: [u16; SYNC_PENDING],
    head: usize,
    len: usize,
    dispatcher: Option<Waker>,
}

static TABLE: Local<Table> = Local::new(Table {
    calls: [Call { state: State::Free, msg: None, saved: false }; SYNC_PENDING],
    current: None,
    queue: [0; SYNC_PENDING],
    head: 0,
    len: 0,
    dispatcher: None,
});

static EP: AtomicUsize = AtomicUsize::new(0);
static REPLY_BASE: AtomicUsize = AtomicUsize::new(0);
/// Calls received, answered by ReplyRecv, and answered later through a saved reply cap.
pub static CALLS: AtomicUsize = AtomicUsize::new(0);
pub static FAST_REPLIES: AtomicUsize = AtomicUsize::new(0);
pub static SAVED_REPLIES: AtomicUsize = AtomicUsize::new(0);

pub fn setup(endpoint: usize, reply_base: usize) {
    EP.store(endpoint, Ordering::Relaxed);
    REPLY_BASE.store(reply_base, Ordering::Relaxed);
}

/// Stage `m` in our IPC buffer; its message info.
fn stage(m: &Msg) -> MessageInfo {
    for (i, &w) in m.words().iter().enumerate() {
        ipc::set_mr(i, w as usize);
    }
    MessageInfo::new(m.label as usize, 0, 0, m.words().len())
}

/// A call just received (its words in our IPC buffer): queue it for a handler task, or answer
/// it at once when it cannot be taken.
fn take_call(info: MessageInfo) {
    CALLS.fetch_add(1, Ordering::Relaxed);
    let mut w = [0u64; MAX_WORDS];
    let n = info.length.min(MAX_WORDS);
    for (i, x) in w.iter_mut().enumerate().take(n) {
        *x = ipc::get_mr(i) as u64;
    }
    let msg = if info.length > MAX_WORDS || info.extra_caps != 0 { None } else { Msg::new(info.label as u32, &w[..n]) };
    // Ok(the dispatcher to wake), or Err: a malformed call, or more calls in flight than the
    // table holds (more caller threads than it was made for).
    let queued = TABLE.with(|t| {
        let k = t.calls.iter().position(|c| c.state == State::Free).ok_or(())?;
        t.calls[k] = Call { state: State::Queued, msg: Some(msg.ok_or(())?), saved: false };
        t.current = Some(k);
        let at = (t.head + t.len) % SYNC_PENDING;
        t.queue[at] = k as u16;
        t.len += 1;
        Ok(t.dispatcher.take())
    });
    match queued {
        Ok(Some(w)) => w.wake(),
        Ok(None) => {}
        Err(()) => ipc::reply(stage(&Msg::new(error::BAD_ARGUMENT, &[]).unwrap_or_default())),
    }
}

/// Block until there is something to do: answer the current call if its handler is done
/// (ReplyRecv), or save its reply cap, then wait on the endpoint.
fn block() {
    let ep = EP.load(Ordering::Relaxed);
    let ready = TABLE.with(|t| {
        let k = t.current.take()?;
        let c = &mut t.calls[k];
        if c.state == State::Done {
            c.state = State::Free;
            return c.msg.take();
        }
        // Not answered yet: the reply cap moves out of the TCB before Recv drops it.
        if cnode::save_caller(CNODE, REPLY_BASE.load(Ordering::Relaxed) + k, DEPTH).is_ok() {
            c.saved = true;
            SAVED_REPLIES.fetch_add(1, Ordering::Relaxed);
        } else {
            // No slot (set-up error): the caller is lost with its cap; the handler's answer
            // goes nowhere.
            c.saved = false;
        }
        None
    });
    let (badge, info) = match ready {
        Some(m) => {
            FAST_REPLIES.fetch_add(1, Ordering::Relaxed);
            ipc::reply_recv(ep, stage(&m))
        }
        None => ipc::recv(ep),
    };
    if badge as u64 & SYNC_CALL_BADGE != 0 {
        take_call(info);
    } else if badge != 0 {
        // The bound notification's word: the NIC's interrupt.
        poller::irq_arrived();
    }
}

/// A handler is done: answer through the saved reply cap, or leave the reply for ReplyRecv.
fn finish(k: usize, reply: Msg) {
    let saved = TABLE.with(|t| {
        let c = &mut t.calls[k];
        if c.saved {
            c.saved = false;
            c.state = State::Free;
            true
        } else if t.current == Some(k) {
            c.state = State::Done;
            c.msg = Some(reply);
            false
        } else {
            // Its cap could not be saved: nobody to answer.
            c.state = State::Free;
            false
        }
    });
    if saved {
        // Send on a reply cap answers its caller and empties the slot.
        ipc::send(REPLY_BASE.load(Ordering::Relaxed) + k, stage(&reply));
    }
}

async fn handle(k: usize, m: Msg) {
    let r = service::handle(m).await;
    finish(k, r);
}

/// The dispatcher: each received call answered at once when it can be (`service::now`), a
/// handler task for the others.
pub async fn serve<const N: usize, const S: usize>(rt: Handle<N, S>, prio: Priority) -> ! {
    loop {
        let (k, m) = poll_fn(|cx| {
            TABLE.with(|t| {
                if t.len == 0 {
                    t.dispatcher = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                let k = t.queue[t.head] as usize;
                t.head = (t.head + 1) % SYNC_PENDING;
                t.len -= 1;
                t.calls[k].state = State::Running;
                Poll::Ready((k, t.calls[k].msg.take().unwrap_or_default()))
            })
        })
        .await;
        if let Some(r) = service::now(&m) {
            finish(k, r);
        } else if rt.spawn(prio, handle(k, m)).map(|h| h.detach()).is_err() {
            finish(k, Msg::new(error::NO_SOCKET, &[]).unwrap_or_default());
        }
    }
}

/// The executor's park hook in the sync variant: the one place this thread blocks.
pub struct SyncPark {
    unparked: AtomicBool,
}

impl SyncPark {
    pub const fn new() -> SyncPark {
        SyncPark { unparked: AtomicBool::new(false) }
    }
}

impl Park for SyncPark {
    fn park(&self) {
        if self.unparked.swap(false, Ordering::Acquire) {
            return;
        }
        // Frames in the receive ring need no interrupt (the ring is memory): run the poller;
        // only a sleep turns the NIC's interrupts on (NAPI style).
        if poller::arm_irq_or_poke() {
            return;
        }
        block();
        poller::quiet_irq();
    }

    fn poll_busy(&self) {
        poller::poke();
    }

    fn unpark_from_irq(&self) {
        // Only this thread runs tasks (no user-interrupt handler, no other thread).
        self.unparked.store(true, Ordering::Release);
    }
}
