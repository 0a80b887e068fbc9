//! `yield_now()`: let every other ready task of the same or higher priority run first.
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// Re-queue the current task at the back of its priority and return at its next turn.
pub fn yield_now() -> YieldNow {
    YieldNow(false)
}

#[must_use = "futures do nothing unless awaited"]
pub struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            return Poll::Ready(());
        }
        self.0 = true;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}
