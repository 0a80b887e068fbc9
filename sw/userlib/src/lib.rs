//! The library every user program links: system calls and debug output. The async runtime,
//! rings, IPC and U-notification bindings will grow here.
#![no_std]

pub mod debug;
pub mod syscall;
