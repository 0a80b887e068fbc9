//! A task slot: the header wakers use, the executor-only bookkeeping, and inline storage for
//! the future and then its output (no heap: futures live in place in the executor's static
//! array, which also keeps them pinned).
use super::header::Header;
use core::cell::{Cell, UnsafeCell};
use core::future::Future;
use core::mem::MaybeUninit;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

/// Alignment of every slot's storage (RISC-V's largest fundamental alignment).
pub const STORAGE_ALIGN: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Never used, or back on the free list.
    Free,
    /// The future is in the storage, not being polled.
    Pending,
    /// The future is being polled (a cancel now only sets `cancel`).
    Running,
    /// The output is in the storage, waiting for the `JoinHandle`.
    Complete,
    /// Nothing in the storage; the slot waits for its last references to go.
    Done,
}

/// How to handle the type-erased contents of a slot.
pub(crate) struct TaskVTable {
    /// Poll the future; on `Ready` it is dropped and the output written in its place.
    pub poll: unsafe fn(*mut u8, &mut Context<'_>) -> bool,
    pub drop_future: unsafe fn(*mut u8),
    pub drop_output: unsafe fn(*mut u8),
}

/// The non-generic part of a slot (what a `JoinHandle` needs, whatever the storage size).
pub(crate) struct SlotCore {
    pub hdr: Header,
    // Everything below is touched only by the thread that claimed the executor.
    pub status: Cell<Status>,
    pub prio: Cell<u8>,
    /// A `JoinHandle` exists (else the output is dropped as soon as it is produced).
    pub join_interest: Cell<bool>,
    /// Dropped while running: drop the future when its poll returns.
    pub cancel: Cell<bool>,
    pub vtable: Cell<Option<&'static TaskVTable>>,
    /// Woken when the task completes.
    pub join_waker: Cell<Option<Waker>>,
}

const _: () = assert!(core::mem::size_of::<SlotCore>() <= 64);

#[repr(C, align(16))]
pub(crate) struct Storage<const S: usize>([MaybeUninit<u8>; S]);

/// Cache-line aligned: the slot's bookkeeping (`SlotCore`, 64 bytes) is one line and the
/// future starts on the next, so a task's poll touches as few lines as its future needs (with
/// 64 tasks in flight the slots alone are more than the 16 KiB L1 holds).
#[repr(C, align(64))]
pub(crate) struct Slot<const S: usize> {
    pub core: SlotCore,
    pub storage: UnsafeCell<Storage<S>>,
}

// SAFETY: the header is atomics only; every other field is accessed only by the one thread
// that claimed the executor (`Executor::claim` hands out a !Send handle, and `JoinHandle` is
// !Send), never by wakers.
unsafe impl<const S: usize> Sync for Slot<S> {}

impl<const S: usize> Slot<S> {
    pub const fn new() -> Slot<S> {
        Slot {
            core: SlotCore {
                hdr: Header::new(),
                status: Cell::new(Status::Free),
                prio: Cell::new(0),
                join_interest: Cell::new(false),
                cancel: Cell::new(false),
                vtable: Cell::new(None),
                join_waker: Cell::new(None),
            },
            storage: UnsafeCell::new(Storage([MaybeUninit::uninit(); S])),
        }
    }

    pub fn storage_ptr(&self) -> *mut u8 {
        self.storage.get() as *mut u8
    }

    /// Whether a future of type `F` (and later its output) fits the storage.
    pub const fn fits<F: Future>() -> bool {
        use core::mem::{align_of, size_of};
        size_of::<F>() <= S
            && size_of::<F::Output>() <= S
            && align_of::<F>() <= STORAGE_ALIGN
            && align_of::<F::Output>() <= STORAGE_ALIGN
    }

    /// Build the future with `make` right in the free slot. The caller checked
    /// [`Slot::fits`]. Inlined, so the future is written in place: a future handed over by
    /// value is copied whole (its uninitialised tail too: an async fn's unresumed state is a
    /// few words in a type the size of its largest await), per spawn.
    #[inline(always)]
    pub fn fill_with<F: Future + 'static>(&self, make: impl FnOnce() -> F, prio: u8) {
        // SAFETY: the slot is free (nothing in the storage), the storage is big and aligned
        // enough (`fits`).
        unsafe { (self.storage_ptr() as *mut F).write(make()) };
        let c = &self.core;
        c.vtable.set(Some(vtable_of::<F>()));
        c.status.set(Status::Pending);
        c.prio.set(prio);
        c.join_interest.set(true);
        c.cancel.set(false);
    }
}

impl SlotCore {
    fn vtable(&self) -> &'static TaskVTable {
        self.vtable.get().expect("slot without a task")
    }

    /// Drop the future in `storage` (status Pending or just-returned Running) and release the
    /// alive reference.
    pub fn drop_future(&self, storage: *mut u8) {
        // SAFETY: the status says a future of the vtable's type is there.
        unsafe { (self.vtable().drop_future)(storage) };
        self.status.set(Status::Done);
        self.join_waker.take(); // nobody will complete it
        self.hdr.release_ref();
    }

    /// Drop the output (status Complete).
    pub fn drop_output(&self, storage: *mut u8) {
        // SAFETY: Complete means an output of the vtable's type is there.
        unsafe { (self.vtable().drop_output)(storage) };
        self.status.set(Status::Done);
    }

    /// Poll the pending task once. The caller holds the queue reference, which keeps the slot
    /// (and the borrowed waker) alive throughout.
    pub fn run(&self, storage: *mut u8) {
        if self.cancel.get() {
            self.drop_future(storage);
            return;
        }
        self.status.set(Status::Running);
        let waker = core::mem::ManuallyDrop::new(super::waker::borrowed_task_waker(&self.hdr));
        let mut cx = Context::from_waker(&waker);
        // SAFETY: Pending/Running means a future of the vtable's type is there, pinned in
        // place.
        let ready = unsafe { (self.vtable().poll)(storage, &mut cx) };
        if !ready {
            if self.cancel.get() {
                self.drop_future(storage); // its JoinHandle was dropped during the poll
            } else {
                self.status.set(Status::Pending);
            }
            return;
        }
        self.status.set(Status::Complete);
        if !self.join_interest.get() {
            self.drop_output(storage);
        }
        if let Some(w) = self.join_waker.take() {
            w.wake();
        }
        self.hdr.release_ref(); // the alive reference: the future is gone
    }
}

fn vtable_of<F: Future + 'static>() -> &'static TaskVTable {
    struct Of<F>(F);
    impl<F: Future> Of<F> {
        const VTABLE: TaskVTable =
            TaskVTable { poll: poll::<F>, drop_future: drop_in_place::<F>, drop_output: drop_in_place::<F::Output> };
    }
    &Of::<F>::VTABLE
}

unsafe fn poll<F: Future>(p: *mut u8, cx: &mut Context<'_>) -> bool {
    // SAFETY: the caller guarantees a live, pinned F at p.
    let fut = unsafe { Pin::new_unchecked(&mut *(p as *mut F)) };
    match fut.poll(cx) {
        Poll::Pending => false,
        Poll::Ready(out) => {
            // SAFETY: the future is done: drop it and put its output in the same place (the
            // storage fits both).
            unsafe {
                core::ptr::drop_in_place(p as *mut F);
                (p as *mut F::Output).write(out);
            }
            true
        }
    }
}

unsafe fn drop_in_place<T>(p: *mut u8) {
    // SAFETY: the caller guarantees a live T at p.
    unsafe { core::ptr::drop_in_place(p as *mut T) }
}
