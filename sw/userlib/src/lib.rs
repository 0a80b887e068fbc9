//! The library every user program links: system calls, the IPC buffer and message registers,
//! typed kernel-object invocations (seL4's, non-MCS), boot info and debug output.
#![cfg_attr(not(test), no_std)]

pub mod asys;
pub mod bootinfo;
pub mod chan;
pub mod cnode;
pub mod debug;
pub mod endpoint;
pub mod invoke;
pub mod ipc;
pub mod irq;
pub mod notification;
pub mod process;
pub mod rt;
pub mod sync;
pub mod syscall;
pub mod task;
pub mod tcb;
pub mod time;
pub mod uintr;
pub mod untyped;
pub mod vspace;

pub use invoke::{Error, Result};
/// Region markers the RTL simulation counts (sw/lib/marker).
pub use marker;
