//! `core::task::Waker`s for task slots and for the future given to `block_on`. Every operation
//! is a few atomic instructions (header.rs, shared.rs): no lock, so wakers may be called from a
//! user-interrupt handler that interrupted the executor, or from another thread.
use super::header::Header;
use super::shared::Shared;
use core::sync::atomic::Ordering;
use core::task::{RawWaker, RawWakerVTable, Waker};

static TASK_VTABLE: RawWakerVTable = RawWakerVTable::new(task_clone, task_wake, task_wake_by_ref, task_drop);

unsafe fn task_clone(p: *const ()) -> RawWaker {
    // SAFETY: a task waker's data is a live Header (the waker holds a reference on it).
    unsafe { &*(p as *const Header) }.add_ref();
    RawWaker::new(p, &TASK_VTABLE)
}

unsafe fn task_wake(p: *const ()) {
    // SAFETY: as above; the waker's reference passes to the run queue or is released.
    unsafe { &*(p as *const Header) }.schedule(true);
}

unsafe fn task_wake_by_ref(p: *const ()) {
    // SAFETY: as above.
    unsafe { &*(p as *const Header) }.schedule(false);
}

unsafe fn task_drop(p: *const ()) {
    // SAFETY: as above.
    unsafe { &*(p as *const Header) }.release_ref();
}

/// Wake `w` from the thread that runs its task's executor, outside any interrupt handler: for
/// a task waker of ours the task goes straight to that executor's local list (a plain
/// append: no inbox CAS and no fence, as `wake` needs for wakers called from anywhere); any
/// other waker is woken as usual.
///
/// # Safety
/// If `w` is a task or `block_on` waker, the calling thread is the one that claimed its executor, and no
/// user-interrupt handler is running (the local list is not interrupt-safe). Code that only
/// ever wakes wakers its own coroutines registered while polled on this thread, outside
/// handlers, meets this.
pub unsafe fn wake_local(w: Waker) {
    if core::ptr::eq(w.vtable(), &TASK_VTABLE) {
        let w = core::mem::ManuallyDrop::new(w);
        // SAFETY: a task waker's data is a live Header, and its reference passes to the local
        // list (or is released); the caller's promise makes the local list ours.
        unsafe { &*(w.data() as *const Header) }.schedule_local(true);
    } else if core::ptr::eq(w.vtable(), &ROOT_VTABLE) {
        // The `block_on` future of an executor of this thread: the flag alone (the thread is
        // running, so there is nobody to unpark).
        // SAFETY: a root waker's data is an executor's 'static Shared.
        unsafe { &*(w.data() as *const Shared) }.root_woken.store(true, Ordering::Relaxed);
    } else {
        w.wake();
    }
}

/// The header of the task `w` wakes, if it is one of our task wakers.
pub(crate) fn task_header(w: &Waker) -> Option<&'static Header> {
    // SAFETY: a task waker's data is a Header in a 'static executor's slot.
    core::ptr::eq(w.vtable(), &TASK_VTABLE).then(|| unsafe { &*(w.data() as *const Header) })
}

/// A waker for `hdr` that does not own a reference: valid only while the caller holds one, and
/// never to be dropped (wrap it in `ManuallyDrop`; `clone` makes an owning one).
pub(crate) fn borrowed_task_waker(hdr: &Header) -> Waker {
    // SAFETY: the vtable's contract holds for a live header.
    unsafe { Waker::from_raw(RawWaker::new(hdr as *const Header as *const (), &TASK_VTABLE)) }
}

static ROOT_VTABLE: RawWakerVTable = RawWakerVTable::new(root_clone, root_wake, root_wake, root_drop);

unsafe fn root_clone(p: *const ()) -> RawWaker {
    RawWaker::new(p, &ROOT_VTABLE)
}

unsafe fn root_wake(p: *const ()) {
    // SAFETY: a root waker's data is an executor's 'static Shared.
    let shared = unsafe { &*(p as *const Shared) };
    shared.root_woken.store(true, Ordering::Release);
    shared.notify();
}

unsafe fn root_drop(_: *const ()) {}

/// The waker of a `block_on` future: sets the executor's root flag. The executor is 'static,
/// so no reference counting is needed (a stale one only causes a spurious root poll).
pub(crate) fn root_waker(shared: &'static Shared) -> Waker {
    // SAFETY: the vtable's contract holds for a 'static Shared.
    unsafe { Waker::from_raw(RawWaker::new(shared as *const Shared as *const (), &ROOT_VTABLE)) }
}
