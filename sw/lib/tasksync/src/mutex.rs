//! The mutex: a one-permit [`Semaphore`] guarding a value, with an optional priority ceiling.
use crate::priority::{NoPriority, TaskPriority};
use crate::semaphore::{Acquire, Semaphore};
use core::cell::UnsafeCell;
use core::future::Future;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use core::pin::Pin;
use core::task::{Context, Poll};

/// An async mutex. Waiters queue by priority, FIFO within one. With a ceiling
/// ([`Mutex::with_ceiling`]) the holder runs at least at the ceiling while it holds the lock
/// (immediate priority ceiling), so tasks between its own priority and the ceiling cannot keep
/// it from releasing the lock.
pub struct Mutex<T, P: TaskPriority = NoPriority> {
    sem: Semaphore<P>,
    ceiling: u8,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, and one guard exists at a time (the
// semaphore's single permit); T: Send because the guard may be taken on any hart.
unsafe impl<T: Send, P: TaskPriority> Sync for Mutex<T, P> {}

impl<T, P: TaskPriority> Mutex<T, P> {
    crate::sync::const_unless_loom! {
        /// A mutex without a ceiling (the holder keeps its own priority).
        pub fn new(value: T) -> Self {
            Self::with_ceiling(0, value)
        }
    }

    crate::sync::const_unless_loom! {
        /// A mutex whose holder runs at priority `ceiling` or its own, whichever is higher: the
        /// highest priority of any task that locks it.
        pub fn with_ceiling(ceiling: u8, value: T) -> Self {
            Mutex { sem: Semaphore::new(1), ceiling, value: UnsafeCell::new(value) }
        }
    }

    pub fn lock(&self) -> Lock<'_, T, P> {
        Lock { mutex: self, acquire: self.sem.acquire() }
    }

    pub fn ceiling(&self) -> u8 {
        self.ceiling
    }
}

/// The future of [`Mutex::lock`].
pub struct Lock<'a, T, P: TaskPriority> {
    mutex: &'a Mutex<T, P>,
    acquire: Acquire<'a, P>,
}

impl<'a, T, P: TaskPriority> Future for Lock<'a, T, P> {
    type Output = MutexGuard<'a, T, P>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `acquire` is pinned with us and never moved out.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above.
        match unsafe { Pin::new_unchecked(&mut this.acquire) }.poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(()) => {
                let boost = P::boost(cx.waker(), this.mutex.ceiling);
                Poll::Ready(MutexGuard { mutex: this.mutex, _boost: boost, _not_send: PhantomData })
            }
        }
    }
}

/// Access to the locked value; dropping it unlocks (and ends the ceiling's boost). Not `Send`:
/// the boost belongs to the task that locked.
pub struct MutexGuard<'a, T, P: TaskPriority> {
    mutex: &'a Mutex<T, P>,
    // Dropped after `drop` has released the lock: the holder keeps the ceiling until then.
    _boost: P::Boost,
    _not_send: PhantomData<*const ()>,
}

impl<'a, T, P: TaskPriority> MutexGuard<'a, T, P> {
    pub(crate) fn mutex(&self) -> &'a Mutex<T, P> {
        self.mutex
    }
}

impl<T, P: TaskPriority> Deref for MutexGuard<'_, T, P> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the guard is the one holder of the permit.
        unsafe { &*self.mutex.value.get() }
    }
}

impl<T, P: TaskPriority> DerefMut for MutexGuard<'_, T, P> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as above, and `&mut self` makes this the only reference.
        unsafe { &mut *self.mutex.value.get() }
    }
}

impl<T, P: TaskPriority> Drop for MutexGuard<'_, T, P> {
    fn drop(&mut self) {
        self.mutex.sem.release();
    }
}
