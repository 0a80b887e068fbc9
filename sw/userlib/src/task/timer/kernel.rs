//! [`KernelClock`]: the timebase for time and the thread's kernel deadline for wake-ups.
use super::Clock;
use core::sync::atomic::{AtomicUsize, Ordering};

/// The clock of a thread that receives a U-notification (it is bound to one, registered as its
/// receiver, and parks in its Wait): time is the timebase (`crate::time::now`), and a wake-up
/// is the thread's kernel deadline raising `vector` on that U-notification.
pub struct KernelClock {
    vector: AtomicUsize,
}

impl KernelClock {
    pub const fn new(vector: usize) -> KernelClock {
        KernelClock { vector: AtomicUsize::new(vector) }
    }

    pub fn vector(&self) -> usize {
        self.vector.load(Ordering::Relaxed)
    }
}

impl Clock for KernelClock {
    fn now(&self) -> u64 {
        crate::time::now()
    }

    fn arm(&self, at: Option<u64>) {
        // The wheel asks for at most its range (2^48 ticks) ahead, well inside the kernel's
        // limit; a refusal means the thread is no U-notification receiver: a set-up error that
        // would otherwise hang its sleeps for good.
        if let Err(e) = crate::syscall::set_deadline(at.unwrap_or(abi::deadline::CANCEL as u64), self.vector()) {
            panic!(
                "SetDeadline({at:?}, vector {}) refused: error {} ({}): is this thread its U-notification's receiver?",
                self.vector(),
                e.code,
                e.detail
            );
        }
    }
}
