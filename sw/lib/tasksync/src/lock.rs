//! The short lock around a primitive's wait list. A spin lock, because its holders only link
//! or unlink a node (a few dozen instructions) and may run on any hart; user-interrupt handlers
//! never spin on it, they only `try_with` (see `Semaphore::release`), so a handler cannot
//! deadlock against the code it interrupted.
use crate::list::WaitList;
use crate::sync::{spin_hint, AtomicBool, Ordering, UnsafeCell};

pub(crate) struct ListLock {
    held: AtomicBool,
    list: UnsafeCell<WaitList>,
}

// SAFETY: the list (raw pointers into pinned futures) is only reached through `with`/`try_with`,
// which hold `held` for the whole access, so accesses from different harts never overlap.
unsafe impl Sync for ListLock {}
// SAFETY: as above; the pointers are not tied to the thread that queued them.
unsafe impl Send for ListLock {}

impl ListLock {
    crate::sync::const_unless_loom! {
        pub fn new() -> ListLock {
            ListLock { held: AtomicBool::new(false), list: UnsafeCell::new(WaitList::new()) }
        }
    }

    /// Run `f` on the list with the lock held, spinning while another hart holds it. Not from
    /// a user-interrupt handler (the interrupted code may hold it).
    pub fn with<R>(&self, f: impl FnOnce(&mut WaitList) -> R) -> R {
        while self.held.compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            // Read-only while it is held, so the line is not bounced between the spinners.
            while self.held.load(Ordering::Relaxed) {
                spin_hint();
            }
        }
        self.run(f)
    }

    /// [`ListLock::with`] if the lock is free now, else `None` without waiting.
    pub fn try_with<R>(&self, f: impl FnOnce(&mut WaitList) -> R) -> Option<R> {
        self.held.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_ok().then(|| self.run(f))
    }

    fn run<R>(&self, f: impl FnOnce(&mut WaitList) -> R) -> R {
        // SAFETY: `held` is ours, so nobody else is in the list.
        let r = self.list.with_mut(|l| f(unsafe { &mut *l }));
        self.held.store(false, Ordering::Release);
        r
    }
}
