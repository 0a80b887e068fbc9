//! A task's priority reached through its waker, for the blocking primitives (`crate::sync`):
//! the priority a waiter queues at, and the mutex ceiling's raise of the holder.
//!
//! Only for the waker of the task being polled, on its executor's thread (the priority is
//! executor-thread state): the primitives pass the `Context` their poll was given.
use super::slot::SlotCore;
use super::waker::task_header;
use core::marker::PhantomData;
use core::task::Waker;

fn task_core(w: &Waker) -> Option<&'static SlotCore> {
    let hdr = task_header(w)?;
    let offset = core::mem::offset_of!(SlotCore, hdr);
    // SAFETY: a task waker's header is the `hdr` field of a SlotCore in a 'static executor.
    Some(unsafe { &*((hdr as *const _ as *const u8).sub(offset) as *const SlotCore) })
}

/// The priority of the task `w` wakes; `None` for any other waker (`block_on`'s own future).
pub(crate) fn priority_of(w: &Waker) -> Option<u8> {
    task_core(w).map(|c| c.prio.get())
}

/// Raises a task's priority until dropped (then puts back what it was at the raise). Not
/// `Send`: the priority belongs to the executor's thread.
pub struct PriorityBoost {
    core: Option<&'static SlotCore>,
    old: u8,
    _not_send: PhantomData<*const ()>,
}

/// Raise the task `w` wakes (being polled now) to at least `to`; it takes effect at the task's
/// next wake (a running task is in no run queue). Nothing for a non-task waker.
pub(crate) fn boost(w: &Waker, to: u8) -> PriorityBoost {
    let core = task_core(w);
    let old = core.map_or(0, |c| c.prio.replace(c.prio.get().max(to)));
    PriorityBoost { core, old, _not_send: PhantomData }
}

impl Drop for PriorityBoost {
    fn drop(&mut self) {
        if let Some(c) = self.core {
            c.prio.set(self.old);
        }
    }
}
