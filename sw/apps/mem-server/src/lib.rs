//! The memory-allocator server's shared parts: the protocol between the root task, the server
//! and the client (`proto`), the server's bookkeeping of frames and client pages (`pool`) and
//! its limit on async system calls in flight (`gate`), both host-tested. See README.md.
#![cfg_attr(not(test), no_std)]

pub mod gate;
pub mod pool;
pub mod proto;
