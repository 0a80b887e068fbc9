//! State owned by the server's one thread: every task, the park hook and the executor run on
//! it, never at the same time, so a cell that lends `&mut` for the length of a closure (which
//! must not await, and does not re-enter the same cell) is all the sharing it needs.
use core::cell::UnsafeCell;

pub struct Local<T>(UnsafeCell<T>);

// SAFETY: used by the server's single thread only (see the module docs); `with` calls do not
// nest on one cell, which the closures' code keeps to.
unsafe impl<T> Sync for Local<T> {}

impl<T> Local<T> {
    pub const fn new(v: T) -> Local<T> {
        Local(UnsafeCell::new(v))
    }

    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: see the module docs: one thread, no nesting on this cell.
        f(unsafe { &mut *self.0.get() })
    }
}
