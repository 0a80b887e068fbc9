//! The part of an executor that other threads and interrupt handlers touch: the inbox of woken
//! tasks, the list of free task slots, the sleep flag and the park hook. Everything here is
//! lock-free, so a waker may run in a user-interrupt handler that interrupted the executor in
//! the middle of any of these operations.
use super::header::Header;
use super::park::Park;
use core::cell::{Cell, UnsafeCell};
use core::sync::atomic::{fence, AtomicBool, AtomicU32, Ordering};

/// "No slot": end of a list.
pub(crate) const NIL: u32 = u32::MAX;

pub(crate) struct Shared {
    /// Stack (push any thread, take-all by the executor) of woken slot indices, linked through
    /// `Header::next`. The executor reverses each batch, so wake order is kept.
    inbox: AtomicU32,
    /// Stack of free slot indices, linked through `Header::free_next`: pushed by whoever drops
    /// a slot's last reference, popped only by the executor's thread (a single popper, so no
    /// ABA problem).
    free: AtomicU32,
    /// The executor announced that it is about to park (same protocol as the rings: announce,
    /// fence, re-check, park).
    asleep: AtomicBool,
    /// The future given to `block_on` was woken.
    pub(crate) root_woken: AtomicBool,
    /// Set once by `Executor::claim`, before any waker can exist.
    park: UnsafeCell<Option<&'static dyn Park>>,
    /// Tasks woken by the executor's own thread outside any interrupt handler
    /// ([`super::wake_local`]), oldest first, linked through `Header::next`: plain stores, no
    /// CAS, no fence (the thread is not asleep: it is the one waking).
    local_head: Cell<u32>,
    local_tail: Cell<*const Header>,
}

// SAFETY: all fields are atomics except `park`, which is written once before any other thread
// can reach this executor (claim happens before spawn, which happens before any waker exists)
// and only read afterwards, and the local list, which only the executor's thread touches
// (`wake_local`'s contract), never from an interrupt handler.
unsafe impl Sync for Shared {}

impl Shared {
    pub const fn new() -> Shared {
        Shared {
            inbox: AtomicU32::new(NIL),
            free: AtomicU32::new(NIL),
            asleep: AtomicBool::new(false),
            root_woken: AtomicBool::new(false),
            park: UnsafeCell::new(None),
            local_head: Cell::new(NIL),
            local_tail: Cell::new(core::ptr::null()),
        }
    }

    /// # Safety
    /// Only from `claim`, before any task exists.
    pub unsafe fn set_park(&self, park: &'static dyn Park) {
        // SAFETY: nobody reads it yet (caller's promise).
        unsafe { *self.park.get() = Some(park) };
    }

    fn park_hook(&self) -> &'static dyn Park {
        // SAFETY: written once before any reader exists (see `Sync` above).
        unsafe { (*self.park.get()).expect("executor used before claim") }
    }

    /// The hook's busy-executor poll (see `Park::poll_busy`).
    pub fn poll_busy(&self) {
        self.park_hook().poll_busy();
    }

    /// The hook's flush (see `Park::flush`).
    pub fn flush(&self) {
        self.park_hook().flush();
    }

    /// Queue a woken slot. The caller set its SCHEDULED bit, so it is in no list now.
    pub fn push_inbox(&self, hdr: &Header) {
        let idx = hdr.index();
        let mut head = self.inbox.load(Ordering::Relaxed);
        loop {
            hdr.next.store(head, Ordering::Relaxed);
            // Release: the link (and whatever the waker did before waking) is visible to the
            // executor's acquiring take.
            match self.inbox.compare_exchange_weak(head, idx, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// Take every queued slot, most recently woken first (linked through `Header::next`).
    pub fn take_inbox(&self) -> u32 {
        if self.inbox.load(Ordering::Relaxed) == NIL {
            return NIL; // the common case when busy: no write, the line stays shared
        }
        self.inbox.swap(NIL, Ordering::Acquire)
    }

    /// Queue a slot woken by the executor's own thread (see `local_head`). The caller set its
    /// SCHEDULED bit, so it is in no list now.
    pub fn push_local(&self, hdr: &Header) {
        hdr.next.store(NIL, Ordering::Relaxed);
        let tail = self.local_tail.replace(hdr);
        if tail.is_null() {
            self.local_head.set(hdr.index());
        } else {
            // SAFETY: a slot in the list holds its queue reference, so it is alive.
            unsafe { &*tail }.next.store(hdr.index(), Ordering::Relaxed);
        }
    }

    /// Take the locally woken slots, oldest first (linked through `Header::next`). Executor
    /// thread only.
    pub fn take_local(&self) -> u32 {
        self.local_tail.set(core::ptr::null());
        self.local_head.replace(NIL)
    }

    pub fn push_free(&self, hdr: &Header) {
        let mut head = self.free.load(Ordering::Relaxed);
        loop {
            hdr.free_next.store(head, Ordering::Relaxed);
            match self.free.compare_exchange_weak(head, hdr.index(), Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(now) => head = now,
            }
        }
    }

    /// Pop a free slot; `free_next` reads the link of a listed slot. Executor thread only.
    pub fn pop_free(&self, free_next: impl Fn(u32) -> u32) -> Option<u32> {
        let mut head = self.free.load(Ordering::Acquire);
        while head != NIL {
            match self.free.compare_exchange_weak(head, free_next(head), Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => return Some(head),
                Err(now) => head = now,
            }
        }
        None
    }

    /// After queueing work: wake the executor if it announced sleep. The fence pairs with the
    /// one in `prepare_sleep`, so either we see the flag or the executor's re-check sees the
    /// work.
    pub fn notify(&self) {
        fence(Ordering::SeqCst);
        if self.asleep.load(Ordering::Relaxed)
            && self.asleep.compare_exchange(true, false, Ordering::Relaxed, Ordering::Relaxed).is_ok()
        {
            self.park_hook().unpark_from_irq();
        }
    }

    /// Park unless work arrived: announce, re-check, park. Executor thread only.
    pub fn sleep(&self) {
        self.asleep.store(true, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        let work = self.inbox.load(Ordering::Relaxed) != NIL
            || self.local_head.get() != NIL
            || self.root_woken.load(Ordering::Relaxed);
        if !work {
            self.park_hook().park();
        }
        self.asleep.store(false, Ordering::Relaxed);
    }
}
