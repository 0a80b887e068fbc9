//! Async system calls (issue #18; ABI `abi::asys`): a thread's kernel invocations go through
//! its syscall buffer (a request ring and a reply ring in two frames it owns) to its kernel
//! handler, which runs them on another hart (or inside WakeSyscallHandler), so a busy thread
//! makes system calls without trapping.
//!
//! - [`SysBuf`]: where the rings are; `init`, `register` (TCB_RegisterSyscallBuffer).
//! - [`Client`]: a `static` table of calls in flight; `attach` it on its thread, then
//!   [`install`] it: from then on the ordinary invocation API (`vspace::page_map`, ...) of that
//!   thread sends async-capable calls through it and waits for their completion (spinning,
//!   then waking the handler if it sleeps), and the futures of [`ops`] (or [`call`]) let many
//!   coroutines have calls in flight at once, each awaiting its own reply.
//! - [`Direct`]: the buffer driven by a serving loop of its own, with no futures: requests
//!   tagged by the caller, queued in batches, completions taken back as (tag, completion).
//! - Calls that cannot be async (`abi::asys::ASYNC_LABELS` lists the ones that can) stay sync,
//!   and so does everything on a thread with no client installed.
mod client;
mod direct;
mod hook;
pub mod ops;
mod request;

pub use client::{unregister, Client, Step, SysBuf, Ticket};
pub use direct::{Direct, Refused};
pub use hook::{current, install, uninstall};
pub use request::{Completion, Request};

use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// What the hook needs of a client (so the API is not generic over its table size).
pub trait Submit: Sync {
    /// Advance call `t` of request `r`: send it if not sent yet, collect replies, say whether
    /// it completed. With `cx`, register to be woken; without, the caller spins.
    fn poll_call(&self, t: &mut Ticket, r: &Request, cx: Option<&mut Context<'_>>) -> Step;
    /// Abandon call `t` (its reply is dropped when it comes).
    fn drop_call(&self, t: &mut Ticket);
    /// Make sure the kernel handler runs (WakeSyscallHandler).
    fn kick(&self);
}

/// WakeSyscallHandler: Ok(requests run inside the call) or the error code (no buffer).
pub fn wake() -> Result<usize, usize> {
    let r = crate::syscall::sys6(abi::syscall::WAKE_SYSCALL_HANDLER, [0; 6]);
    if r[0] == 0 {
        Ok(r[1])
    } else {
        Err(r[0])
    }
}

/// Run `r` the sync way (the buffer is unusable, or there is none).
fn sync(r: &Request) -> Completion {
    match r.sync() {
        Ok(rep) => Completion {
            code: 0,
            len: rep.info.length as u32,
            words: core::array::from_fn(|i| rep.regs.get(i).copied().unwrap_or(0) as u64),
        },
        Err(e) => Completion {
            code: e.code as u32,
            len: 4,
            words: core::array::from_fn(|i| e.mrs.get(i).copied().unwrap_or(0) as u64),
        },
    }
}

/// Run `r` through `s` and wait for it without an executor: spin on the reply ring, waking
/// the handler now and then in case it went to sleep meanwhile.
pub fn call_blocking(s: &dyn Submit, r: &Request) -> Completion {
    let mut t: Ticket = None;
    let mut spins = 0u32;
    loop {
        match s.poll_call(&mut t, r, None) {
            Step::Done(c) => return c,
            Step::Sync => return sync(r),
            Step::Pending => {}
        }
        spins += 1;
        if spins.is_multiple_of(1 << 14) {
            s.kick();
        }
        core::hint::spin_loop();
    }
}

/// A call in flight: resolves to the completion (the sync result with
/// [`Completion::into_result`]).
#[must_use = "futures do nothing unless awaited"]
pub struct Call {
    /// The thread's client, looked up at the first poll (a call built only for its request,
    /// `ops::Op::request`, costs no look-up): `None` until then.
    s: Option<Option<&'static dyn Submit>>,
    r: Request,
    t: Ticket,
}

/// Send `r` through this thread's installed client (the sync way if there is none), from the
/// first poll on.
#[inline]
pub fn call(r: Request) -> Call {
    Call { s: None, r, t: None }
}

impl Call {
    /// The request this call sends.
    pub fn request(&self) -> &Request {
        &self.r
    }
}

impl Future for Call {
    type Output = Completion;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Completion> {
        let this = &mut *self;
        let Some(s) = *this.s.get_or_insert_with(current) else { return Poll::Ready(sync(&this.r)) };
        match s.poll_call(&mut this.t, &this.r, Some(cx)) {
            Step::Done(c) => Poll::Ready(c),
            Step::Sync => Poll::Ready(sync(&this.r)),
            Step::Pending => Poll::Pending,
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        if let Some(Some(s)) = self.s {
            s.drop_call(&mut self.t);
        }
    }
}
