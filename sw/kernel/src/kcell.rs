//! A home for kernel-global state without `static mut`: the cell says nothing about who may
//! touch it; each accessor states its discipline (the kernel lock, or one hart's own entry)
//! in its SAFETY comment.
use core::cell::UnsafeCell;

pub struct KCell<T>(UnsafeCell<T>);

// SAFETY: every access goes through `get`/`as_ptr`, whose callers serialise it.
unsafe impl<T> Sync for KCell<T> {}

impl<T> KCell<T> {
    pub const fn new(v: T) -> Self {
        KCell(UnsafeCell::new(v))
    }

    pub const fn as_ptr(&self) -> *mut T {
        self.0.get()
    }

    /// # Safety
    /// No other reference to the contents is live while the result is used: the caller holds
    /// the lock (or the per-hart ownership) that serialises this cell.
    #[allow(clippy::mut_from_ref)] // the point of the cell; exclusivity is the caller's contract
    pub unsafe fn get(&self) -> &mut T {
        // SAFETY: exclusivity is the caller's contract.
        unsafe { &mut *self.0.get() }
    }
}
