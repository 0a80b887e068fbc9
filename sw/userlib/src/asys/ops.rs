//! The future an async invocation returns. The invocations themselves are written once, in
//! `vspace`, `untyped`, `cnode` and `tcb` (`crate::invoke::invocations!`): each async-capable
//! one has an `_async` twin there with the same arguments, returning an [`Op`] of the same
//! result; the debug output calls are here. Through the thread's installed client when there
//! is one, else the sync way.
//!
//! Each op is an [`Op`]: the call itself and how its reply becomes the result, no bigger than
//! the call (a task holding one stays small: it is copied into its slot when spawned).
use super::{call, Call, Request};
use crate::invoke::{Reply, Result};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// An async invocation in flight; resolves to what the sync function returns.
#[must_use = "futures do nothing unless awaited"]
pub struct Op<T> {
    call: Call,
    map: fn(Reply) -> T,
}

impl<T> Future for Op<T> {
    type Output = Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Result<T>> {
        let map = self.map;
        Pin::new(&mut self.call).poll(cx).map(|c| c.into_result().map(map))
    }
}

impl<T> Op<T> {
    /// The request this invocation sends (for [`super::Direct`], which queues requests
    /// itself): the table in `crate::invoke::invocations!` stays the one place that knows
    /// each invocation's arguments. Building the op to take this costs no client look-up.
    #[inline]
    pub fn request(&self) -> &Request {
        self.call.request()
    }

    /// An invocation as the typed functions write it (`crate::invoke::invocations!`: each
    /// async-capable one has an `_async` twin in its module, e.g. `vspace::page_map_async`).
    #[inline]
    pub(crate) fn invocation(cap: usize, l: usize, mrs: &[usize], caps: &[usize], map: fn(Reply) -> T) -> Op<T> {
        // Every async-capable invocation fits a request (at most 3 caps and 14 words).
        let r = Request::invocation(cap, l, mrs, caps).expect("fits a request");
        Op { call: call(r), map }
    }
}

/// Console output of up to 16 bytes with this process's Console cap (`debug::console`);
/// resolves to how many the kernel's console ring took (0 when it is full).
pub fn put_string(bytes: &[u8]) -> Op<usize> {
    Op { call: call(Request::put_string(crate::debug::console(), bytes)), map: |r| r.mr(0) }
}

/// One byte, as `put_string`: resolves to 1 if the ring took it, 0 if it is full.
pub fn put_char(c: u8) -> Op<usize> {
    Op { call: call(Request::put_char(crate::debug::console(), c)), map: |r| r.mr(0) }
}
