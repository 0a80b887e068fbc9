//! `JoinHandle`: await a task's output; drop it (or call `abort`) to cancel the task.
use super::slot::{SlotCore, Status};
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

/// The spawner's end of a task. Awaiting it gives the task's output. Dropping it cancels the
/// task: its future is dropped at once (or, if the task dropped its own handle while running,
/// when that poll returns). Not `Send`: it touches executor-only state.
#[must_use = "dropping a JoinHandle cancels the task; use detach() to let it run"]
pub struct JoinHandle<T> {
    core: &'static SlotCore,
    storage: *mut u8,
    _out: PhantomData<T>,
}

impl<T> JoinHandle<T> {
    pub(crate) fn new(core: &'static SlotCore, storage: *mut u8) -> JoinHandle<T> {
        JoinHandle { core, storage, _out: PhantomData }
    }

    /// Whether the task has finished (its output is waiting here).
    pub fn is_finished(&self) -> bool {
        self.core.status.get() == Status::Complete
    }

    /// Cancel the task (drop its future) without waiting for it; the same as dropping the
    /// handle, spelled out.
    pub fn abort(self) {}

    /// Let the task run to completion on its own; its output is dropped when it arrives.
    pub fn detach(self) {
        self.core.join_interest.set(false);
        self.core.join_waker.take();
        if self.core.status.get() == Status::Complete {
            self.core.drop_output(self.storage);
        }
        self.core.hdr.release_ref();
        core::mem::forget(self);
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = T;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
        let c = self.core;
        match c.status.get() {
            Status::Complete => {
                c.status.set(Status::Done);
                // SAFETY: Complete means the task's output, a T, is in the storage; Done now
                // says it was moved out.
                Poll::Ready(unsafe { (self.storage as *const T).read() })
            }
            Status::Pending | Status::Running => {
                let w = c.join_waker.take();
                c.join_waker.set(Some(match w {
                    Some(w) if w.will_wake(cx.waker()) => w,
                    _ => cx.waker().clone(),
                }));
                Poll::Pending
            }
            Status::Done | Status::Free => panic!("JoinHandle polled after it returned"),
        }
    }
}

impl<T> Drop for JoinHandle<T> {
    fn drop(&mut self) {
        let c = self.core;
        c.join_interest.set(false);
        match c.status.get() {
            Status::Pending => c.drop_future(self.storage),
            // The task is dropping its own handle: the executor drops it after this poll.
            Status::Running => c.cancel.set(true),
            Status::Complete => c.drop_output(self.storage),
            Status::Done | Status::Free => {}
        }
        c.join_waker.take();
        c.hdr.release_ref();
    }
}
