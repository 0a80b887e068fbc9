//! User threads. Only the root task exists so far; TCB objects, scheduling and IPC come with
//! the capability kernel.
use crate::arch::{self, trap::UserContext};
use core::sync::atomic::{AtomicU64, Ordering};

static YIELDS: AtomicU64 = AtomicU64::new(0);

pub fn count_yield() {
    YIELDS.fetch_add(1, Ordering::Relaxed);
}

/// Nothing else to run: this hart idles.
pub fn stop_current() -> ! {
    arch::cpu::idle()
}

/// The root task's register state at its entry point.
pub fn initial_context(entry: usize, stack_top: usize) -> UserContext {
    let mut ctx = UserContext::new();
    ctx.sepc = entry;
    ctx.regs[2] = stack_top;
    ctx
}
