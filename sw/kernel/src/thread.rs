//! User threads. Only the root task exists so far; TCB objects, scheduling and IPC come with
//! the capability kernel.
use crate::arch::{self, trap::UserContext};
use core::sync::atomic::{AtomicU64, Ordering};

static YIELDS: AtomicU64 = AtomicU64::new(0);

pub fn count_yield() {
    YIELDS.fetch_add(1, Ordering::Relaxed);
}

/// The current thread faulted with no one to handle it. The root task is the only thread so
/// far, so the run is over, and it failed (rather than hanging until a test times out).
pub fn stop_current() -> ! {
    crate::kprintln!("[kernel] the root task cannot continue: ending the run");
    arch::exit::fail(4)
}

/// The root task's register state at its entry point.
pub fn initial_context(entry: usize, stack_top: usize) -> UserContext {
    let mut ctx = UserContext::new();
    ctx.sepc = entry;
    ctx.regs[2] = stack_top;
    ctx
}
