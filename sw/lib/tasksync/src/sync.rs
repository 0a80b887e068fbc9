//! The atomics and cells the primitives are built from: `core`'s on the target and in plain
//! tests, loom's model-checked ones under `--cfg loom` (as in `aring`). Only relaxed, acquire
//! and release accesses and `SeqCst` fences, which loom models exactly.
#[cfg(not(loom))]
pub(crate) use core::sync::atomic::{fence, AtomicBool, AtomicUsize};
#[cfg(loom)]
pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicUsize};

pub(crate) use core::sync::atomic::Ordering;

/// `core::cell::UnsafeCell` with loom's access API (`with_mut`), so loom can check that every
/// access to lock-protected state is ordered by the lock.
#[cfg(not(loom))]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub const fn new(v: T) -> UnsafeCell<T> {
        UnsafeCell(core::cell::UnsafeCell::new(v))
    }

    pub fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// A spin-wait step: a pause hint on the target, a yield to the model checker under loom (which
/// must see the spinner give way to explore the holder's progress).
pub(crate) fn spin_hint() {
    #[cfg(not(loom))]
    core::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// `const fn` except under loom, whose atomics and cells have no const constructors.
macro_rules! const_unless_loom {
    ($(#[$m:meta])* $v:vis fn $($rest:tt)*) => {
        #[cfg(not(loom))]
        $(#[$m])* $v const fn $($rest)*
        #[cfg(loom)]
        $(#[$m])* $v fn $($rest)*
    };
}
pub(crate) use const_unless_loom;
